# SPDX-License-Identifier: Apache-2.0
"""storage-proofs-update's PartitionProof as filecoin-proofs-api hands it
over (bincode 1, as post.bincode reads PoSt's):

    PartitionProof   comm_c [32], apex_leafs: Vec<[32]>, challenge_proofs: Vec<ChallengeProof>
    ChallengeProof   proof_r_old: MerkleProof (TreeR), proof_d_new: MerkleProof (TreeD:
                     Single, binary), proof_r_new: MerkleProof (TreeR)

read(data, proof) reads one partition's for a registered update proof:
every count and length is held to the proof's shape before anything is
allocated (apex leaves, challenges, each tree's kind, levels and arities,
positions below the arity), and nothing may follow; VanillaProofError
names the field. write is its inverse. A 32 GiB partition's is 561,768
bytes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from porep_prover.errors import VanillaProofError

from ..post.bincode import BincodeReader, read_merkle, write_merkle
from ..proofs import KINDS, MerkleProof
from .registered import UpdateProof

MAX_BYTES = 1 << 22         # a 64 GiB partition's proof is ~600 KB


@dataclass(frozen=True)
class ChallengeProof:
    """A challenge's openings: the old replica's TreeR, the new data's TreeD, the new replica's TreeR."""
    proof_r_old: MerkleProof
    proof_d_new: MerkleProof
    proof_r_new: MerkleProof


@dataclass(frozen=True)
class PartitionProof:
    """A partition's vanilla proof: comm_c, its apex leaves of TreeD, its challenges' openings."""
    comm_c: bytes
    apex_leafs: tuple[bytes, ...]
    challenge_proofs: tuple[ChallengeProof, ...]


def tree_r_shape(proof: UpdateProof) -> tuple[str, list[list[int]]]:
    """TreeR's proof kind and each path's levels' arities (base, then sub and top)."""
    arities = proof.tree_arities
    extra = sum(1 for a in proof.tree[1:] if a)
    parts = [arities[:len(arities) - extra]] + [[a] for a in arities[len(arities) - extra:]]
    return KINDS[extra], parts


def read(data: bytes, proof: UpdateProof, where: str = "vanilla_proofs") -> PartitionProof:
    """A PartitionProof of an update of proof's (see the module);
    VanillaProofError naming the field that does not fit."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise VanillaProofError(f"bytes expected, got {type(data).__name__}", where)
    if len(data) > MAX_BYTES:
        raise VanillaProofError(f"{len(data)} bytes, at most {MAX_BYTES}", where)
    r = BincodeReader(bytes(data), where)
    kind, parts = tree_r_shape(proof)
    d_parts = [[2] * proof.challenge_bits]
    comm_c = r.element("comm_c")
    r.count("apex_leafs", proof.apex_leaves)
    apex = tuple(r.element(f"apex_leafs[{i}]") for i in range(proof.apex_leaves))
    r.count("challenge_proofs", proof.challenges)
    out = []
    for i in range(proof.challenges):
        field = f"challenge_proofs[{i}]"
        old = read_merkle(r, f"{field}.proof_r_old", kind, parts)
        d_new = read_merkle(r, f"{field}.proof_d_new", "Single", d_parts)
        new = read_merkle(r, f"{field}.proof_r_new", kind, parts)
        out.append(ChallengeProof(old, d_new, new))
    if r.at != len(r.data):
        raise r.fail(f"{len(r.data) - r.at} bytes past the proof's end", "")
    return PartitionProof(comm_c, apex, tuple(out))


def write(p: PartitionProof) -> bytes:
    """bincode::serialize of a PartitionProof."""
    out = [p.comm_c, struct.pack("<Q", len(p.apex_leafs)), *p.apex_leafs, struct.pack("<Q", len(p.challenge_proofs))]
    for c in p.challenge_proofs:
        out += [write_merkle(c.proof_r_old), write_merkle(c.proof_d_new), write_merkle(c.proof_r_new)]
    return b"".join(out)
