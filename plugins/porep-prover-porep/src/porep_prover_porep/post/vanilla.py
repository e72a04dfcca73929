# SPDX-License-Identifier: Apache-2.0
"""FallbackPoSt vanilla proofs: made from a sealed replica (its tree_r_last
and comm_c), verified as storage-proofs-post's FallbackPoSt::verify checks
them, and laid out in a partition's sector slots as filecoin-proofs'
single_partition_vanilla_proofs lays them out.

    sector_proof(proof, replica, sector_id, randomness)   generate_single_vanilla_proof
    SparseReplica(proof, leaf, comm_c)                    a replica for benchmarks and tests, any size
    verify(proof, sector_proofs, randomness, partition)   every check below, VanillaProofError naming the first
    slots(proof, sector_proofs)                           the circuit's values, a slot each

verify checks, for each sector: comm_r = Poseidon-2(comm_c, comm_r_last);
each inclusion proof's root is comm_r_last, its leaf's index is the
challenge the randomness and sector id give at its place, and its path
hashes up to its root (every level of every proof in one batch); every
domain element below r. A WinningPoSt's one sector proof fills the 66
slots, an inclusion proof each; a WindowPoSt partition's sectors fill a slot
each, the last repeated into any slot left (filecoin-proofs pads so).
"""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from porep_prover.errors import ScalarRangeError, VanillaProofError

from .. import poseidon
from ..circuit.por import Path
from ..fr32 import R
from ..proofs import MerkleProof
from ..trees import SparseTree, path_index
from .bincode import FallbackSectorProof, SectorProof
from .challenges import sector_challenges
from .circuit import SlotValues
from .registered import PoStProof


class Openings(Protocol):
    @property
    def root(self) -> bytes: ...

    def proof(self, index: int) -> MerkleProof: ...


class Replica(Protocol):
    """What a PoSt reads of a sealed sector: tree_r_last's openings and comm_c."""
    tree_r_last: Openings

    @property
    def comm_c(self) -> bytes: ...


class SparseReplica:
    """A replica for benchmarks and tests, never a sector (nothing sealed, no
    storage proved): tree_r_last of the proof's shape whose every leaf is one
    value (trees.SparseTree: only the opened paths are hashed, so any size is
    opened in milliseconds) and a comm_c given; leaf and comm_c below r."""

    def __init__(self, proof: PoStProof, leaf: bytes, comm_c: bytes):
        self.tree_r_last = SparseTree("poseidon", proof.nodes, proof.tree, leaf, {})
        self.comm_c = comm_c


def sector_proof(proof: PoStProof, replica: Replica, sector_id: int, randomness: bytes, partition: int = 0,
                 slot: int = 0) -> FallbackSectorProof:
    """A sector's vanilla proof for a PoSt of proof's kind (its slot of its
    partition, for a WindowPoSt under API version 1.0)."""
    challenges = sector_challenges(proof, randomness, sector_id, partition, slot)
    comm_c, comm_r_last = replica.comm_c, replica.tree_r_last.root
    comm_r = poseidon.hash_one([comm_c, comm_r_last])
    inclusion = tuple(replica.tree_r_last.proof(c) for c in challenges)
    return FallbackSectorProof(sector_id, comm_r, (SectorProof(inclusion, comm_c, comm_r_last),))


def _int(value: bytes, where: str) -> int:
    got = int.from_bytes(value, "little")
    if got >= R:
        raise VanillaProofError("not below r", where)
    return got


def merkle_roots(proofs: list[MerkleProof], where: list[str]) -> list[bytes]:
    """Each proof's root recomputed from its leaf and path, a level of every proof at once."""
    levels = [e for p in proofs[:1] for path in p.paths for e in path]
    cur = np.frombuffer(b"".join(p.leaf for p in proofs), np.uint8).reshape(-1, 32).copy()
    flat = [[e for path in p.paths for e in path] for p in proofs]
    for k, first in enumerate(levels):
        arity = len(first.hashes) + 1
        hashes = np.frombuffer(b"".join(h for f in flat for h in f[k].hashes), np.uint8).reshape(-1, arity - 1, 32)
        at = np.asarray([f[k].index for f in flat])
        children = np.empty((len(proofs), arity, 32), np.uint8)
        for p in range(arity):
            rows = at == p
            children[rows, :p] = hashes[rows, :p]
            children[rows, p] = cur[rows]
            children[rows, p + 1:] = hashes[rows, p:]
        try:
            cur = poseidon.hash_batch(arity, children)
        except ScalarRangeError as exc:
            bad = int(str(exc).split()[1])
            raise VanillaProofError(f"an element of its path's level {k} is not below r", where[bad]) from None
    return [row.tobytes() for row in cur]


def verify(proof: PoStProof, sector_proofs: Sequence[FallbackSectorProof], randomness: bytes,
           partition: int = 0) -> None:
    """Every sector's vanilla proof checked (see the module) against the
    challenges of its slot of the partition; VanillaProofError naming the
    first failure."""
    opened: list[MerkleProof] = []
    where: list[str] = []
    for i, sp in enumerate(sector_proofs):
        field = f"vanilla_proofs[{i}]"
        s = sp.sectors[0]
        for name, value in (("comm_r", sp.comm_r), ("comm_c", s.comm_c), ("comm_r_last", s.comm_r_last)):
            _int(value, f"{field}.{name}")
        if poseidon.hash_one([s.comm_c, s.comm_r_last]) != sp.comm_r:
            raise VanillaProofError("comm_r is not Poseidon-2(comm_c, comm_r_last)", f"{field}.comm_r")
        challenges = sector_challenges(proof, randomness, sp.sector_id, partition, i)
        for n, (m, challenge) in enumerate(zip(s.inclusion_proofs, challenges, strict=True)):
            at = f"{field}.inclusion_proofs[{n}]"
            _int(m.leaf, f"{at}.leaf")
            if m.root != s.comm_r_last:
                raise VanillaProofError("its root is not the sector's comm_r_last", f"{at}.root")
            index = path_index(tuple(e for path in m.paths for e in path))
            if index != challenge:
                raise VanillaProofError(f"opens leaf {index}, the challenge (sector {sp.sector_id}, randomness "
                                        f"given) is leaf {challenge}", at)
            opened.append(m)
            where.append(at)
    for m, root, at in zip(opened, merkle_roots(opened, where), where):
        if root != m.root:
            raise VanillaProofError("its path does not hash up to its root", at)


def _path(m: MerkleProof) -> Path:
    return Path(tuple((e.index, tuple(int.from_bytes(h, "little") for h in e.hashes))
                      for path in m.paths for e in path))


def slots(proof: PoStProof, sector_proofs: Sequence[FallbackSectorProof]) -> list[SlotValues]:
    """The partition's sector slots' values (verify first: every element is taken below r)."""
    out: list[SlotValues] = []
    for sp in sector_proofs:
        s = sp.sectors[0]
        commitments = [int.from_bytes(x, "little") for x in (sp.comm_r, s.comm_c, s.comm_r_last)]
        per = proof.challenge_count
        for k in range(0, len(s.inclusion_proofs), per):
            chunk = s.inclusion_proofs[k:k + per]
            out.append(SlotValues(*commitments, tuple(int.from_bytes(m.leaf, "little") for m in chunk),
                                  tuple(_path(m) for m in chunk)))
    while len(out) < proof.sector_count:
        out.append(out[-1])
    return out
