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


from ..post.bincode import BincodeReader, read_merkle, tree_r_shape, write_merkle
from ..proofs import MerkleProof
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


def read(data: bytes, proof: UpdateProof, where: str = "vanilla_proofs") -> PartitionProof:
    """A PartitionProof of an update of proof's (see the module);
    VanillaProofError naming the field that does not fit."""
    r = BincodeReader.of(data, where, MAX_BYTES)
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
