# SPDX-License-Identifier: Apache-2.0
"""A commit-phase-1 output's partition in the circuit's terms, and the public
inputs a verifier computes for it.

partition_values(c1, k) reads partition k's vanilla proofs into the values
the circuit allocates (stacked.PartitionValues); public_inputs(c1, k) is
storage-proofs-porep's generate_public_inputs, computed from the public
values alone (replica id, commitments, seed: the challenges, their graph
parents under the job's porep_id and API version), never from the vanilla
proofs, so that a proof made from a tampered output cannot verify against
them.
"""
from __future__ import annotations

from porep_prover.errors import VanillaProofError

from .. import graph
from ..fr32 import R
from ..proofs import C1Output, ColumnProof, MerkleProof
from ..registered import PorepConfig, SealProof, seal_proof
from ..seal import challenges
from .stacked import ChallengeValues, ColumnValues, Layout, PartitionValues, Path


def layout_of(proof: SealProof) -> Layout:
    """The circuit shape of a registered proof's partitions."""
    return Layout(proof.layers, proof.challenges_per_partition, proof.nodes, proof.tree)


def _int(domain: bytes, where: str) -> int:
    value = int.from_bytes(domain, "little")
    if value >= R:
        raise VanillaProofError("not below r", where)
    return value


def _path(p: MerkleProof, where: str) -> Path:
    return Path(tuple((e.index, tuple(_int(h, where) for h in e.hashes)) for level in p.paths for e in level))


def _column(c: ColumnProof, where: str) -> ColumnValues:
    return ColumnValues(tuple(_int(r, where) for r in c.column.rows), _path(c.inclusion_proof, where))


def partition_values(c1: C1Output, k: int) -> PartitionValues:
    """Partition k's values; VanillaProofError for an element not below r."""
    proofs = c1.vanilla_proofs[k]
    out = []
    for i, p in enumerate(proofs):
        where = f"vanilla_proofs[{k}][{i}]"
        rcp = p.replica_column_proofs
        out.append(ChallengeValues(
            p.labeling_proofs[0].node, _int(p.comm_d_proofs.leaf, where), _path(p.comm_d_proofs, where),
            tuple(_column(c, where) for c in rcp.drg_parents), tuple(_column(c, where) for c in rcp.exp_parents),
            _path(p.comm_r_last_proof, where), _path(rcp.c_x.inclusion_proof, where)))
    first = proofs[0]
    return PartitionValues(_int(c1.replica_id, "replica_id"), _int(c1.comm_d, "comm_d"), _int(c1.comm_r, "comm_r"),
                           _int(first.comm_r_last_proof.root, "comm_r_last"),
                           _int(first.replica_column_proofs.c_x.inclusion_proof.root, "comm_c"), tuple(out))


def public_inputs(c1: C1Output, k: int, config: PorepConfig | None = None) -> list[int]:
    """generate_public_inputs of partition k: replica_id, comm_d, comm_r, then per
    challenge its tree_d index, its 14 parents' tree_c indices, the challenge,
    its tree_r_last and tree_c indices (the one not included); the parents
    those of config's graph (default: the registered proof's)."""
    proof = seal_proof(c1.registered_proof)
    config = config or proof.config
    out = [_int(c1.replica_id, "replica_id"), _int(c1.comm_d, "comm_d"), _int(c1.comm_r, "comm_r")]
    for challenge in challenges(proof, c1.replica_id, c1.seed, k):
        parents = graph.node_parents(proof.nodes, challenge, config.porep_id, config.api_v11)
        out += [challenge, *parents, challenge, challenge, challenge]
    return out
