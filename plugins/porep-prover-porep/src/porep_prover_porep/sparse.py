# SPDX-License-Identifier: Apache-2.0
"""A commit-phase-1 output over a sparse sector, at any registered size (2 KiB
to 64 GiB): an input for benchmarks and tests of the prover, never a sector.
Nothing was sealed; no storage is proved by it.

The circuit sees a sector only through its C1 output: each challenged node's
data and replica openings, its column and its 14 parents' columns with their
tree_c openings, and the roots. So a sector is laid out whose trees are
sparse (every leaf off the challenged nodes one value) and whose challenged
nodes are labelled exactly as SDR labels them:

- data: every node `data_node` (zeros by default: a committed-capacity
  sector, whose comm_d is the empty piece's). The challenges come from the
  replica id, which comes from comm_d, so the data cannot depend on them.
- off the challenged nodes, a node's label in layer l is OFF_PATH_LABELS[l - 1]
  in every sector: its column is the same everywhere, hence one tree_c leaf;
  its replica node is that column's last label + data_node, hence one
  tree_r_last leaf. A challenged node whose parent is off the challenged
  nodes reads the parent's label from that column (the DRG parents' in the
  layer, the expander parents' in the layer below) exactly as the circuit
  reads it from the parent's opened column, so the columns and the label rule
  agree wherever the circuit checks them. (No off-path node's own label
  follows from its parents: nothing checks one.)
- a challenged node's label in each layer is SDR's label of its parents'
  labels (seal.label_parents, seal.label_of), the layers in order and the
  challenged nodes ascending in each, so that a challenged parent (always a
  lower node in the layer, or any node in the layer below) is labelled
  first; its replica node is its last label + data_node in Fr.
- the challenges are Filecoin's interactive ones from the seed and replica id
  (seal.challenges); the openings are made by seal.commit1, as a sector
  sealed here is opened.

Every tree is a trees.SparseTree of Filecoin's shape for the size (tree_d
binary SHA-256; tree_c and tree_r_last 8-ary Poseidon with the sub-tree and
top levels of 32 and 64 GiB): only the challenged nodes' paths are hashed.
The output passes vanilla.verify and its witness satisfies the partition
circuit; tests/test_sparse.py checks it against a sector laid out in full
from the same leaves and sealed by seal.precommit2 and seal.commit1.
"""
from __future__ import annotations

import functools

import numpy as np

from porep_prover.errors import InvalidInputError

from . import _native, graph, poseidon
from .fr32 import FR32_MASK, sha256_fr32
from .proofs import C1Output
from .registered import PorepConfig, SealProof, seal_proof
from .seal import TreeCommitments, bytes32, challenges, commit1, label_of, label_parents
from .trees import SparseTree

MAX_LAYERS = 15
# every off-path node's label in layer l (any values below r would do: the circuit checks none of them)
OFF_PATH_LABELS = tuple(sha256_fr32(b"porep_prover_porep sparse sector: off-path label", layer.to_bytes(4, "big"))
                        for layer in range(1, MAX_LAYERS + 1))


def _fr_add(a: bytes, b: bytes) -> bytes:
    out = np.empty((1, 32), np.uint8)
    _native.fr_add(np.frombuffer(a, np.uint8).reshape(1, 32), np.frombuffer(b, np.uint8).reshape(1, 32), out)
    return out.tobytes()


@functools.lru_cache(maxsize=16)
def off_path_leaves(layers: int, data_node: bytes) -> tuple[bytes, bytes]:
    """The tree_c and tree_r_last leaf of every node off the challenged ones:
    its column's hash and its replica node (kept per layer count and data)."""
    column = OFF_PATH_LABELS[:layers]
    return poseidon.hash_one(list(column)), _fr_add(column[-1], data_node)


class SparseSector(TreeCommitments):
    """A sparse sector laid out for one prover, sector, ticket and seed (see
    the module): what seal.commit1 reads of a sealed sector (seal.SealedSector).
    labels[l - 1]: the challenged nodes' labels in layer l; every other
    node's is OFF_PATH_LABELS[l - 1]."""

    def __init__(self, proof: SealProof, prover_id: bytes, sector_id: int, ticket: bytes, seed: bytes,
                 config: PorepConfig, data_node: bytes):
        self.proof, self.config = proof, config
        self.tree_d = SparseTree("sha256", proof.nodes, (2, 0, 0), data_node, {})
        self.replica_id = graph.replica_id(prover_id, sector_id, ticket, self.tree_d.root, config.porep_id)
        self.challenged = sorted({c for k in range(proof.partitions)
                                  for c in challenges(proof, self.replica_id, seed, k)})
        self.parents = {c: graph.node_parents(proof.nodes, c, config.porep_id, config.api_v11)
                        for c in self.challenged}
        self.labels: list[dict[int, bytes]] = []
        for layer in range(1, proof.layers + 1):
            self.labels.append({})
            for node in self.challenged:
                self.labels[-1][node] = label_of(self.replica_id, layer, node, label_parents(self, node, layer))
        columns = np.frombuffer(b"".join(self.label(layer, c) for c in self.challenged
                                         for layer in range(1, proof.layers + 1)), np.uint8)
        hashes = poseidon.hash_batch(proof.layers, columns.reshape(-1, proof.layers, 32))
        column_leaf, replica_leaf = off_path_leaves(proof.layers, data_node)
        self.tree_c = SparseTree("poseidon", proof.nodes, proof.tree, column_leaf,
                                 {c: hashes[i].tobytes() for i, c in enumerate(self.challenged)})
        self.tree_r_last = SparseTree("poseidon", proof.nodes, proof.tree, replica_leaf,
                                      {c: _fr_add(self.labels[-1][c], data_node) for c in self.challenged})

    def label(self, layer: int, node: int) -> bytes:
        """A node's label in a layer (1-based)."""
        return self.labels[layer - 1].get(node, OFF_PATH_LABELS[layer - 1])

    def node_parents(self, node: int) -> list[int]:
        """A challenged node's 14 parents (DRG, then expander), in the config's graph."""
        return self.parents[node]

    @property
    def comm_d(self) -> bytes:
        return self.tree_d.root



def sparse_sector(registered_proof: str, prover_id: bytes, sector_id: int, ticket: bytes, seed: bytes,
                  config: PorepConfig | None = None, data_node: bytes = bytes(32)) -> SparseSector:
    """The sparse sector of these inputs (config: the registered proof's porep_id
    and API version by default; data_node: every data node, fr32: its last
    byte's top two bits clear). InvalidInputError naming a bad input."""
    proof = seal_proof(registered_proof)
    if proof.layers > MAX_LAYERS:
        raise InvalidInputError(f"{proof.name}: {proof.layers} layers, at most {MAX_LAYERS}")
    data_node = bytes32("data_node", data_node)
    if data_node[31] > FR32_MASK:
        raise InvalidInputError("data_node has its top two bits set: a data node is fr32-padded")
    return SparseSector(proof, bytes32("prover_id", prover_id), sector_id, bytes32("ticket", ticket),
                        bytes32("seed", seed), config or proof.config, data_node)


def sparse_c1(registered_proof: str, prover_id: bytes, sector_id: int, ticket: bytes, seed: bytes,
              config: PorepConfig | None = None, data_node: bytes = bytes(32)) -> C1Output:
    """The commit-phase-1 output of the sparse sector of these inputs (see
    sparse_sector): rust-fil-proofs' SealCommitPhase1Output, for benchmarks
    and tests, never a sector's."""
    return commit1(sparse_sector(registered_proof, prover_id, sector_id, ticket, seed, config, data_node),
                   ticket, seed)
