# SPDX-License-Identifier: Apache-2.0
"""rust-fil-proofs' FallbackPoStSectorProof as filecoin-proofs-api hands it
over (bincode 1: little-endian, u64 lengths of Vec, u32 enum tags, usize as
u64, every domain element 32 bytes with no length):

    FallbackPoStSectorProof  sector_id u64, comm_r [32], vanilla_proof: Vec<SectorProof>
    SectorProof              inclusion_proofs: Vec<MerkleProof>, comm_c [32], comm_r_last [32]
    MerkleProof              u32 tag, then 0 Single: root, leaf, path
                                           1 Sub:    base path, sub path, root, leaf
                                           2 Top:    base path, sub path, top path, root, leaf
    path                     Vec<{hashes: Vec<[32]>, index: u64}>, the leaf's level first

read(data, proof) reads one for a registered PoSt proof: every count and
length is checked against what the proof's shape allows before anything is
allocated (a sector's one SectorProof, its challenges' inclusion proofs,
tree_r_last's kind, levels and arities, positions below the arity), and
nothing may follow; VanillaProofError names the field. write is its inverse
(tests, and vanilla proofs made here).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Protocol

from porep_prover.errors import VanillaProofError

from ..proofs import KINDS, PATH_NAMES, MerkleProof, PathElement
from .registered import PoStProof

MAX_BYTES = 1 << 24         # a 64 GiB WinningPoSt sector's proof is ~170 KB


@dataclass(frozen=True)
class SectorProof:
    """A sector's openings: its challenges' inclusion proofs in tree_r_last, comm_c, comm_r_last."""
    inclusion_proofs: tuple[MerkleProof, ...]
    comm_c: bytes
    comm_r_last: bytes


@dataclass(frozen=True)
class FallbackSectorProof:
    """FallbackPoStSectorProof: a sector's id, comm_r and vanilla proof (one SectorProof)."""
    sector_id: int
    comm_r: bytes
    sectors: tuple[SectorProof, ...]


class TreeShaped(Protocol):
    """A registered proof whose tree_r_last has Filecoin's shape: tree (base
    arity, sub-tree arity or 0, top-tree arity or 0) and its levels' arities."""
    @property
    def tree(self) -> tuple[int, int, int]: ...

    @property
    def tree_arities(self) -> list[int]: ...


def tree_r_shape(proof: TreeShaped) -> tuple[str, list[list[int]]]:
    """tree_r_last's proof kind and each path's levels' arities (base, then sub and top)."""
    arities = proof.tree_arities
    extra = sum(1 for a in proof.tree[1:] if a)
    parts = [arities[:len(arities) - extra]] + [[a] for a in arities[len(arities) - extra:]]
    return KINDS[extra], parts


class BincodeReader:
    """Bincode bytes read in order, every length checked against what is left
    before it is taken: fail() and take()'s errors are VanillaProofErrors
    naming the field at where.field and the byte they stopped at."""

    def __init__(self, data: bytes, where: str):
        self.data, self.at, self.where = memoryview(data), 0, where

    @classmethod
    def of(cls, data: object, where: str, max_bytes: int) -> "BincodeReader":
        """A reader of data, checked to be bytes of at most max_bytes first
        (VanillaProofError at where when not)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise VanillaProofError(f"bytes expected, got {type(data).__name__}", where)
        if len(data) > max_bytes:
            raise VanillaProofError(f"{len(data)} bytes, at most {max_bytes}", where)
        return cls(bytes(data), where)

    def fail(self, message: str, field: str) -> VanillaProofError:
        return VanillaProofError(f"{message} (byte {self.at})", f"{self.where}.{field}" if field else self.where)

    def take(self, n: int, field: str) -> bytes:
        if self.at + n > len(self.data):
            raise self.fail(f"{len(self.data) - self.at} bytes left, {n} needed", field)
        out = bytes(self.data[self.at:self.at + n])
        self.at += n
        return out

    def u64(self, field: str) -> int:
        return struct.unpack("<Q", self.take(8, field))[0]

    def count(self, field: str, expected: int) -> None:
        """A Vec's length, which must be expected (read before anything of it is)."""
        got = self.u64(field)
        if got != expected:
            raise self.fail(f"{got} elements, {expected} expected", field)

    def element(self, field: str) -> bytes:
        return self.take(32, field)


def _path(r: BincodeReader, field: str, arities: list[int]) -> tuple[PathElement, ...]:
    r.count(field, len(arities))
    out = []
    for i, arity in enumerate(arities):
        r.count(f"{field}[{i}].hashes", arity - 1)
        hashes = tuple(r.element(f"{field}[{i}].hashes[{k}]") for k in range(arity - 1))
        index = r.u64(f"{field}[{i}].index")
        if index >= arity:
            raise r.fail(f"position {index} among {arity} children", f"{field}[{i}].index")
        out.append(PathElement(hashes, index))
    return tuple(out)


def read_merkle(r: BincodeReader, field: str, kind: str, parts: list[list[int]]) -> MerkleProof:
    """A MerkleProof of kind read from r, its paths' levels of the arities in
    parts (a list of them a path): VanillaProofError naming field where its
    tag, lengths or paths do not fit."""
    tag = struct.unpack("<I", r.take(4, f"{field}.data"))[0]
    if tag >= len(KINDS) or KINDS[tag] != kind:
        raise r.fail(f"a {KINDS[tag] if tag < len(KINDS) else f'tag {tag}'} proof, tree_r_last's are {kind}",
                     f"{field}.data")
    names = PATH_NAMES[kind]
    if kind == "Single":
        root, leaf = r.element(f"{field}.root"), r.element(f"{field}.leaf")
        return MerkleProof(kind, root, leaf, (_path(r, f"{field}.path", parts[0]),))
    paths = tuple(_path(r, f"{field}.{name}", arities) for name, arities in zip(names, parts))
    root, leaf = r.element(f"{field}.root"), r.element(f"{field}.leaf")
    return MerkleProof(kind, root, leaf, paths)


def read(data: bytes, proof: PoStProof, where: str = "vanilla_proof") -> FallbackSectorProof:
    """A FallbackPoStSectorProof of a sector of proof's (see the module);
    VanillaProofError naming the field that does not fit."""
    r = BincodeReader.of(data, where, MAX_BYTES)
    kind, parts = tree_r_shape(proof)
    sector_id, comm_r = r.u64("sector_id"), r.element("comm_r")
    r.count("vanilla_proof.sectors", 1)
    field = "vanilla_proof.sectors[0].inclusion_proofs"
    r.count(field, proof.sector_challenges)
    inclusion = tuple(read_merkle(r, f"{field}[{i}]", kind, parts) for i in range(proof.sector_challenges))
    comm_c = r.element("vanilla_proof.sectors[0].comm_c")
    comm_r_last = r.element("vanilla_proof.sectors[0].comm_r_last")
    if r.at != len(r.data):
        raise r.fail(f"{len(r.data) - r.at} bytes past the proof's end", "")
    return FallbackSectorProof(sector_id, comm_r, (SectorProof(inclusion, comm_c, comm_r_last),))


def _write_path(path: tuple[PathElement, ...]) -> bytes:
    out = [struct.pack("<Q", len(path))]
    for e in path:
        out += [struct.pack("<Q", len(e.hashes)), *e.hashes, struct.pack("<Q", e.index)]
    return b"".join(out)


def write_merkle(p: MerkleProof) -> bytes:
    """p in bincode, as read_merkle reads it."""
    tag = struct.pack("<I", KINDS.index(p.kind))
    paths = b"".join(_write_path(path) for path in p.paths)
    return tag + (p.root + p.leaf + paths if p.kind == "Single" else paths + p.root + p.leaf)


def write(p: FallbackSectorProof) -> bytes:
    """bincode::serialize of a FallbackPoStSectorProof."""
    out = [struct.pack("<Q", p.sector_id), p.comm_r, struct.pack("<Q", len(p.sectors))]
    for s in p.sectors:
        out += [struct.pack("<Q", len(s.inclusion_proofs)), *(write_merkle(m) for m in s.inclusion_proofs),
                s.comm_c, s.comm_r_last]
    return b"".join(out)


def read_list(data: bytes, where: str = "vanilla_proofs", limit: int = 1 << 16) -> list[bytes]:
    """A list of byte strings as bincode writes a Vec<Vec<u8>> (how a job's
    vanilla proofs travel in one file); VanillaProofError past limit items or
    the data's end."""
    r = BincodeReader(bytes(data), where)
    n = r.u64("")
    if n > limit or n * 8 > len(r.data) - r.at:
        raise r.fail(f"{n} items", "")
    out = [r.take(r.u64(f"[{i}]"), f"[{i}]") for i in range(n)]
    if r.at != len(r.data):
        raise r.fail(f"{len(r.data) - r.at} bytes past the list's end", "")
    return out


def write_list(items) -> bytes:
    """bincode::serialize of a Vec<Vec<u8>>."""
    return struct.pack("<Q", len(items)) + b"".join(struct.pack("<Q", len(x)) + bytes(x) for x in items)
