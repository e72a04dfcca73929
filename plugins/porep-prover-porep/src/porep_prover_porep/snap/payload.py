# SPDX-License-Identifier: Apache-2.0
"""A SnapDeals update job's payload (kind snap-update), and the partition
proofs it carries, checked before anything is synthesized.

Payloads, every key checked (InvalidInputError naming it):

    the daemon's (a cuzk SNAP_DEALS_UPDATE request):
        {"vanilla_proofs": PATH, "registered_proof": N (RegisteredUpdateProof), "sector_size": BYTES
         (0: the proof's), "comm_r_old": HEX, "comm_r_new": HEX, "comm_d_new": HEX,
         "sector_number": N, "miner_id": N}
    a preload's (PreloadSRS, EvictSRS):  {"sector_size": BYTES}
    the Python API's and bench batch's: the same, with vanilla_proofs also as
        bytes (the file's content) or a list of PartitionProofs' bytes, the
        commitments also as bytes, registered_proof also as a name, "h" (the
        update's h, default the proof's hs[3], as filecoin-proofs encodes),
        "params" (a .params file); bench batch adds "seed", unused

A commitment is its 32 bytes, or the CID curio takes it from (CIDv1,
fil-commitment-sealed with poseidon-bls12_381-a2-fc1 for comm_r_old and
comm_r_new, fil-commitment-unsealed with sha2-256-trunc254-padded for
comm_d_new), a canonical Fr. The file holds every partition's proof (the
proof's partition count of them) as bincode writes a Vec<Vec<u8>>
(post.bincode.write_list), each a PartitionProof as filecoin-proofs-api
serializes it. They are read and verified (vanilla.verify) once a process:
VanillaProofError naming the field.
"""
from __future__ import annotations

import collections
import hashlib
import os
import threading
from dataclasses import dataclass

from porep_prover.errors import InvalidInputError, VanillaProofError

from ..fr32 import R
from ..payload import keys_checked, uint_of
from ..post.payload import vanilla_items
from . import bincode, challenges, vanilla
from .bincode import PartitionProof
from .registered import BY_SIZE, UpdateProof, update_proof

KEYS = {"vanilla_proofs", "registered_proof", "sector_size", "comm_r_old", "comm_r_new", "comm_d_new", "h",
        "sector_number", "miner_id", "params", "seed"}
PRELOAD_KEYS = {"sector_size", "registered_proof", "params", "seed"}
KEEP_READ = 2
SEALED, UNSEALED = (0xF102, 0xB401), (0xF101, 0x1012)      # (codec, multihash) of comm_r's and comm_d's CIDs
COMMITMENTS = {"comm_r_old": SEALED, "comm_r_new": SEALED, "comm_d_new": UNSEALED}


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while at < len(data) and shift < 63:
        value |= (data[at] & 0x7F) << shift
        at += 1
        if not data[at - 1] & 0x80:
            return value, at
        shift += 7
    raise ValueError("a truncated varint")


def commitment_of(value, name: str) -> int:
    """A commitment's Fr from its 32 bytes or its CID's (hex or bytes); InvalidInputError naming it."""
    what = f"snap-update payload: {name}"
    if isinstance(value, str):
        try:
            value = bytes.fromhex(value)
        except ValueError:
            raise InvalidInputError(f"{what} must be hex") from None
    if not isinstance(value, (bytes, bytearray)):
        raise InvalidInputError(f"{what} is 32 bytes or a CID, not {type(value).__name__}")
    value = bytes(value)
    if len(value) != 32:
        try:
            version, at = _varint(value, 0)
            codec, at = _varint(value, at)
            code, at = _varint(value, at)
            length, at = _varint(value, at)
        except ValueError:
            version = -1
        if version != 1 or (codec, code) != COMMITMENTS[name] or length != 32 or len(value) != at + 32:
            kind = "unsealed" if name == "comm_d_new" else "sealed"
            raise InvalidInputError(f"{what} is neither 32 bytes nor a {kind} commitment's CID ({len(value)} bytes)")
        value = value[at:]
    got = int.from_bytes(value, "little")
    if got >= R:
        raise InvalidInputError(f"{what} is not a canonical Fr")
    return got


def commitment_cid(value: int, name: str) -> bytes:
    """The CID of a commitment, as curio sends it (tests, and payloads made here)."""
    codec, code = COMMITMENTS[name]
    head = b"".join(_varint_bytes(x) for x in (1, codec, code, 32))
    return head + value.to_bytes(32, "little")


def _varint_bytes(x: int) -> bytes:
    out = bytearray()
    while True:
        out.append(x & 0x7F | (0x80 if x > 0x7F else 0))
        x >>= 7
        if not x:
            return bytes(out)


def _proof_of(obj: dict) -> UpdateProof:
    size = uint_of(obj, "sector_size", what="snap-update payload")
    given = obj.get("registered_proof")
    if given is not None:
        proof = update_proof(given)
        if size not in (None, 0, proof.sector_size):
            raise InvalidInputError(f"snap-update payload: sector_size {size} is not {proof.name}'s "
                                    f"({proof.sector_size})")
        return proof
    if size not in BY_SIZE:
        raise InvalidInputError(f"snap-update payload: registered_proof, or a sector_size of an update proof "
                                f"({', '.join(map(str, BY_SIZE))})")
    return BY_SIZE[size]


@dataclass(frozen=True)
class SnapPayload:
    """A payload read: the registered proof, the partition proofs' source (None
    for a preload), the commitments (comm_r_old, comm_d_new, comm_r_new), h and
    a parameters file."""
    proof: UpdateProof
    source: object
    commitments: tuple[int, int, int]
    h: int
    params: str | None

    @classmethod
    def of(cls, obj) -> "SnapPayload":
        """From a payload dict; InvalidInputError naming what is wrong."""
        keys_checked(obj, KEYS, "snap-update", "porep_prover_porep.snap.payload")
        proof = _proof_of(obj)
        params = obj.get("params")
        if params is not None and (not isinstance(params, str) or not os.path.isfile(params)):
            raise InvalidInputError(f"snap-update payload: params must name a parameters file that exists, got "
                                    f"{params!r:.80}")
        source = obj.get("vanilla_proofs")
        if source is None:
            if set(obj) - PRELOAD_KEYS:
                raise InvalidInputError("snap-update payload: vanilla_proofs, or a preload's sector_size "
                                        "(registered_proof, params) alone")
            return cls(proof, None, (0, 0, 0), proof.default_h, params)
        missing = [name for name in ("comm_r_old", "comm_d_new", "comm_r_new") if obj.get(name) is None]
        if missing:
            raise InvalidInputError(f"snap-update payload: {', '.join(missing)} (32 bytes or a CID) needed")
        h = uint_of(obj, "h", what="snap-update payload")
        h = proof.default_h if h is None else h
        challenges.h_select(proof, h)
        comms = tuple(commitment_of(obj[name], name) for name in ("comm_r_old", "comm_d_new", "comm_r_new"))
        return cls(proof, source, comms, h, params)              # type: ignore[arg-type]

    def partition_proofs(self) -> list[PartitionProof]:
        """Every partition's proof, read and verified once a process (see the module)."""
        if self.source is None:
            raise InvalidInputError("snap-update payload: a preload's payload carries no vanilla proofs")
        return _checked(self)

    def public_inputs(self, k: int) -> list[int]:
        """Partition k's public inputs as a verifier computes them."""
        return challenges.public_inputs(self.proof, k, self.h, *self.commitments)


_READ: collections.OrderedDict[tuple, list[PartitionProof]] = collections.OrderedDict()
_READ_LOCK = threading.Lock()


def _checked(p: SnapPayload) -> list[PartitionProof]:
    items = vanilla_items(p.source, "snap-update payload")
    key = (hashlib.sha256(b"".join(hashlib.sha256(x).digest() for x in items)).digest(), p.proof.name,
           p.commitments, p.h)
    with _READ_LOCK:
        if key in _READ:
            _READ.move_to_end(key)
            return _READ[key]
    if len(items) != p.proof.partitions:
        raise VanillaProofError(f"{len(items)} partition proofs, a {p.proof.name} update has {p.proof.partitions}",
                                "vanilla_proofs")
    proofs = [bincode.read(x, p.proof, f"vanilla_proofs[{k}]") for k, x in enumerate(items)]
    for k, pp in enumerate(proofs):
        vanilla.verify(p.proof, pp, k, p.h, *p.commitments, where=f"vanilla_proofs[{k}]")
    with _READ_LOCK:
        _READ[key] = proofs
        while len(_READ) > KEEP_READ:
            _READ.popitem(last=False)
    return proofs
