# SPDX-License-Identifier: Apache-2.0
"""A verifier of PoRep vanilla proofs (a commit-phase-1 output), stricter than
rust-fil-proofs' own: every Merkle path reaches its root at the challenged leaf,
every column's leaf is its Poseidon hash, every label is recomputed from the
parents' columns (the DRG parents' labels in the same layer, the expander
parents' in the layer below), the encoding is recomputed from the data, and the
roots agree with comm_d and comm_r across all proofs. A failure raises
VanillaProofError naming the field (a path into the output's JSON).

The graph (each challenge's parents) and the replica id are those of a
porep_id and an API version: the registered proof's, or the PorepConfig a
job gives; an output made under another is refused (its parents' columns
are not the graph's).
"""
from __future__ import annotations

from porep_prover.errors import VanillaProofError

from . import graph, poseidon
from .fr32 import R
from .proofs import PATH_NAMES, C1Output, ColumnProof, LabelingProof, MerkleProof, VanillaProof
from .registered import PorepConfig, SealProof, seal_proof
from .seal import LABEL_PARENTS, challenges, label_of
from .trees import path_index, path_root



def _check(ok: bool, where: str, message: str) -> None:
    if not ok:
        raise VanillaProofError(message, where)


def _merkle(p: MerkleProof, where: str, hasher: str, leaf_index: int, root: bytes | None) -> None:
    at = f"{where}.data.{p.kind}"
    path = tuple(e for level in p.paths for e in level)
    _check(path_index(path) == leaf_index, f"{at}.{PATH_NAMES[p.kind][0]}",
           f"the path is for leaf {path_index(path)}, not {leaf_index}")
    try:
        reached = path_root(hasher, p.leaf, path)
    except Exception as exc:      # an element not below r: the path cannot be hashed
        raise VanillaProofError(f"the path does not hash: {exc}", at) from None
    _check(reached == p.root, f"{at}.root", "the path from the leaf does not reach the root")
    if root is not None:
        _check(p.root == root, f"{at}.root", "the root is not the commitment")


def _column(cp: ColumnProof, where: str, node: int, proof: SealProof, comm_c: bytes) -> None:
    _check(cp.column.index == node, f"{where}.column.index", f"column {cp.column.index}, node {node} expected")
    try:
        leaf = poseidon.hash_one(list(cp.column.rows))
    except Exception:
        raise VanillaProofError("a label is not below r", f"{where}.column.rows") from None
    _check(cp.inclusion_proof.leaf == leaf, f"{where}.inclusion_proof.data.{cp.inclusion_proof.kind}.leaf",
           "the leaf is not the column's hash")
    _merkle(cp.inclusion_proof, f"{where}.inclusion_proof", "poseidon", node, comm_c)


def _label(replica_id: bytes, lp: LabelingProof) -> bytes:
    return label_of(replica_id, lp.layer_index, lp.node, lp.parents)


def _labels(p: VanillaProof, where: str, proof: SealProof, challenge: int, replica_id: bytes) -> None:
    rcp = p.replica_column_proofs
    for layer, lp in enumerate(p.labeling_proofs, 1):
        at = f"{where}.labeling_proofs[{layer - 1}]"
        _check(lp.layer_index == layer, f"{at}.layer_index", f"layer {lp.layer_index}, {layer} expected")
        _check(lp.node == challenge, f"{at}.node", f"node {lp.node}, the challenge {challenge} expected")
        base = [c.column.rows[layer - 1] for c in rcp.drg_parents]
        parents = base if layer == 1 else base + [c.column.rows[layer - 2] for c in rcp.exp_parents]
        for k in range(LABEL_PARENTS):
            _check(lp.parents[k] == parents[k % len(parents)], f"{at}.parents[{k}]",
                   "not the parent's label in its column")
        _check(_label(replica_id, lp) == rcp.c_x.column.rows[layer - 1], f"{where}.replica_column_proofs.c_x."
               f"column.rows[{layer - 1}]", f"the label of layer {layer} does not recompute from its parents")
    ep, last = p.encoding_proof, p.labeling_proofs[-1]
    at = f"{where}.encoding_proof"
    _check(ep.layer_index == proof.layers, f"{at}.layer_index", f"layer {ep.layer_index}, {proof.layers} expected")
    _check(ep.node == challenge, f"{at}.node", f"node {ep.node}, the challenge {challenge} expected")
    for k in range(LABEL_PARENTS):
        _check(ep.parents[k] == last.parents[k], f"{at}.parents[{k}]", "not the last layer's parent label")
    key = int.from_bytes(_label(replica_id, ep), "little")
    data = int.from_bytes(p.comm_d_proofs.leaf, "little")
    _check(data < R, f"{where}.comm_d_proofs.data.{p.comm_d_proofs.kind}.leaf", "the data node is not below r")
    encoded = ((key + data) % R).to_bytes(32, "little")
    _check(p.comm_r_last_proof.leaf == encoded, f"{where}.comm_r_last_proof.data.{p.comm_r_last_proof.kind}.leaf",
           "the replica node is not the encoding of the data node")


def verify(c1: C1Output, prover_id: bytes | None = None, sector_id: int | None = None,
           config: PorepConfig | None = None) -> None:
    """Check every vanilla proof of a commit-phase-1 output under config (default:
    the registered proof's porep_id and API version); with the prover and sector
    ids, the replica id too (it binds the ticket). Raises VanillaProofError."""
    proof = seal_proof(c1.registered_proof)
    config = config or proof.config
    if prover_id is not None and sector_id is not None:
        _check(graph.replica_id(prover_id, sector_id, c1.ticket, c1.comm_d, config.porep_id) == c1.replica_id,
               "replica_id", "not the replica id of this prover, sector, ticket and comm_d")
    _check(int.from_bytes(c1.replica_id, "little") < R, "replica_id", "not below r")
    _check(len(c1.vanilla_proofs) == proof.partitions, "vanilla_proofs", f"{proof.partitions} partitions expected")
    if not c1.vanilla_proofs or not c1.vanilla_proofs[0]:
        raise VanillaProofError("no proofs", "vanilla_proofs")
    first = c1.vanilla_proofs[0][0]
    comm_c = first.replica_column_proofs.c_x.inclusion_proof.root
    comm_r_last = first.comm_r_last_proof.root
    try:
        comm_r = poseidon.hash_one([comm_c, comm_r_last])
    except Exception:
        raise VanillaProofError("comm_c or comm_r_last is not below r", "vanilla_proofs") from None
    _check(comm_r == c1.comm_r, "comm_r", "not Poseidon(comm_c, comm_r_last) of the proofs")
    variant = f"vanilla_proofs.{proof.vanilla_variant}"
    for k, partition in enumerate(c1.vanilla_proofs):
        expected = challenges(proof, c1.replica_id, c1.seed, k)
        _check(len(partition) == len(expected), f"{variant}[{k}]", f"{len(expected)} challenges expected")
        for i, (p, challenge) in enumerate(zip(partition, expected)):
            where = f"{variant}[{k}][{i}]"
            _merkle(p.comm_d_proofs, f"{where}.comm_d_proofs", "sha256", challenge, c1.comm_d)
            _merkle(p.comm_r_last_proof, f"{where}.comm_r_last_proof", "poseidon", challenge, comm_r_last)
            parents = graph.node_parents(proof.nodes, challenge, config.porep_id, config.api_v11)
            rcp, at = p.replica_column_proofs, f"{where}.replica_column_proofs"
            _column(rcp.c_x, f"{at}.c_x", challenge, proof, comm_c)
            for j, cp in enumerate(rcp.drg_parents):
                _column(cp, f"{at}.drg_parents[{j}]", parents[j], proof, comm_c)
            for j, cp in enumerate(rcp.exp_parents):
                _column(cp, f"{at}.exp_parents[{j}]", parents[graph.DRG_DEGREE + j], proof, comm_c)
            _labels(p, where, proof, challenge, c1.replica_id)
