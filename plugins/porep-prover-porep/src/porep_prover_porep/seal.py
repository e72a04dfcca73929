# SPDX-License-Identifier: Apache-2.0
"""Sealing a sector here, as rust-fil-proofs seals it, and its commit-phase-1 output.

precommit1 (PC1): tree_d and comm_d over the unsealed data, the replica id, the SDR
labels of every layer. precommit2 (PC2): tree_c over the column hashes (comm_c),
the replica (each node: last layer's label + data node in Fr), tree_r_last over it
(comm_r_last), comm_r = Poseidon-2(comm_c, comm_r_last). commit1 (C1): each
partition's challenges from the seed (interactive PoRep: node =
1 + sha256(replica_id || seed || j as u32 LE) mod (nodes - 1)) and their vanilla
proofs. Only sector sizes whose trees are one base tree are sealed here (2 KiB,
8 MiB, 512 MiB).

Everything is deterministic in its inputs; the sector lives in memory. A
sector is sealed under its registered proof's porep_id and API version, or
under a PorepConfig given (another chain's).

C1 reads a sealed sector through SealedSector (its trees' openings, its
labels, its nodes' parents), so that the same openings are made of a sector
sealed here and of a sparse one (sparse.py).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from porep_prover.errors import InvalidInputError

from . import _native, graph, poseidon
from .fr32 import FR32_MASK, NODE_SIZE, as_nodes, sha256_fr32
from .proofs import C1Output, Column, ColumnProof, LabelingProof, MerkleProof, ReplicaColumnProof, VanillaProof
from .registered import PorepConfig, SealProof, seal_proof
from .trees import MerkleTree, column_hashes, poseidon_tree, sha256_tree

LABEL_PARENTS = 37


class Openings(Protocol):
    """A tree as C1 reads it: its root and a leaf's inclusion proof."""

    @property
    def root(self) -> bytes: ...

    def proof(self, index: int) -> MerkleProof: ...


class SealedSector(Protocol):
    """What C1 reads of a sealed sector: its registered proof, replica id and
    commitments, its trees' openings, a node's label in a layer (1-based)
    and a node's 14 parents (DRG then expander)."""
    proof: SealProof
    replica_id: bytes
    tree_d: Openings
    tree_c: Openings
    tree_r_last: Openings

    @property
    def comm_d(self) -> bytes: ...

    @property
    def comm_r(self) -> bytes: ...

    def label(self, layer: int, node: int) -> bytes: ...

    def node_parents(self, node: int) -> list[int]: ...


@dataclass
class PreCommit1:
    """What PC1 leaves: the data, tree_d, the replica id, the graph and the labels."""
    proof: SealProof
    data: np.ndarray            # (nodes, 32)
    tree_d: MerkleTree
    replica_id: bytes
    parents: np.ndarray         # (nodes, 14)
    labels: np.ndarray          # (layers, nodes, 32)

    @property
    def comm_d(self) -> bytes:
        return self.tree_d.root

    def label(self, layer: int, node: int) -> bytes:
        return self.labels[layer - 1, node].tobytes()

    def node_parents(self, node: int) -> list[int]:
        return [int(p) for p in self.parents[node]]


class TreeCommitments:
    """comm_c and comm_r of a sector with a tree_c and a tree_r_last (sealed or sparse)."""
    tree_c: Openings
    tree_r_last: Openings

    @property
    def comm_c(self) -> bytes:
        return self.tree_c.root

    @property
    def comm_r(self) -> bytes:
        return poseidon.hash_one([self.tree_c.root, self.tree_r_last.root])


@dataclass
class Sealed(PreCommit1, TreeCommitments):
    """What PC2 adds: tree_c, the replica and tree_r_last."""
    tree_c: MerkleTree
    replica: np.ndarray         # (nodes, 32)
    tree_r_last: MerkleTree


def bytes32(name: str, value) -> bytes:
    """value as bytes when it is 32 bytes; InvalidInputError naming it otherwise."""
    if not isinstance(value, (bytes, bytearray)) or len(value) != 32:
        raise InvalidInputError(f"{name} is 32 bytes")
    return bytes(value)


def precommit1(registered_proof: str, data, prover_id: bytes, sector_id: int, ticket: bytes,
               config: PorepConfig | None = None) -> PreCommit1:
    """PC1 over fr32-padded sector data (exactly the sector's size; every node below r),
    under config (default: the registered proof's porep_id and API version)."""
    proof = seal_proof(registered_proof)
    config = config or proof.config
    if proof.tree != (8, 0, 0):
        raise InvalidInputError(f"{proof.name}: sectors of {proof.sector_size} bytes are not sealed here")
    nodes = as_nodes(data, "sector data")
    if nodes.shape[0] != proof.nodes:
        raise InvalidInputError(f"{nodes.shape[0] * NODE_SIZE} bytes of data for a {proof.sector_size}-byte sector")
    high = np.flatnonzero(nodes[:, 31] > FR32_MASK)
    if high.size:
        raise InvalidInputError(f"node {high[0]} of the data has its top two bits set: data must be fr32-padded")
    tree_d = sha256_tree(nodes)
    replica_id = graph.replica_id(bytes32("prover_id", prover_id), sector_id, bytes32("ticket", ticket),
                                  tree_d.root, config.porep_id)
    parents = graph.parents_table(proof.nodes, config.porep_id, config.api_v11)
    labels = graph.labels(replica_id, proof.layers, parents)
    return PreCommit1(proof, nodes, tree_d, replica_id, parents, labels)


def precommit2(pc1: PreCommit1) -> Sealed:
    """PC2: tree_c, the replica (encoded data) and tree_r_last."""
    tree_c = poseidon_tree(column_hashes(pc1.labels))
    replica = np.empty_like(pc1.data)
    _native.fr_add(np.ascontiguousarray(pc1.labels[-1]), pc1.data, replica)
    return Sealed(pc1.proof, pc1.data, pc1.tree_d, pc1.replica_id, pc1.parents, pc1.labels,
                  tree_c, replica, poseidon_tree(replica))


def challenges(proof: SealProof, replica_id: bytes, seed: bytes, partition: int) -> list[int]:
    """Partition k's interactive PoRep challenges (never node 0)."""
    count = proof.challenges_per_partition
    out = []
    for i in range(count):
        j = count * partition + i
        digest = hashlib.sha256(replica_id + seed + j.to_bytes(4, "little")).digest()
        out.append(int.from_bytes(digest, "little") % (proof.nodes - 1) + 1)
    return out


def label_parents(sector: SealedSector, node: int, layer: int) -> tuple[bytes, ...]:
    """The 37 parent labels node's label in `layer` (1-based) hashes: its DRG
    parents' in the layer, from layer 2 on its expander parents' in the layer
    below, repeated in that order."""
    row = sector.node_parents(node)
    data = [sector.label(layer, p) for p in row[:graph.DRG_DEGREE]]
    if layer > 1:
        data += [sector.label(layer - 1, p) for p in row[graph.DRG_DEGREE:]]
    return tuple(data[k % len(data)] for k in range(LABEL_PARENTS))


def label_of(replica_id: bytes, layer: int, node: int, parents: tuple[bytes, ...]) -> bytes:
    """SDR's label of a node in a layer from its 37 parent labels (node 0 hashes none)."""
    return sha256_fr32(replica_id, layer.to_bytes(4, "big"), node.to_bytes(8, "big"), bytes(20), *parents)


def _column_proof(sealed: SealedSector, node: int) -> ColumnProof:
    column = Column(node, tuple(sealed.label(layer, node) for layer in range(1, sealed.proof.layers + 1)))
    return ColumnProof(column, sealed.tree_c.proof(node))


def vanilla_proof(sealed: SealedSector, challenge: int) -> VanillaProof:
    """One challenge's proof: its data, replica and column openings, labels and encoding."""
    row = sealed.node_parents(challenge)
    columns = ReplicaColumnProof(_column_proof(sealed, challenge),
                                 tuple(_column_proof(sealed, p) for p in row[:graph.DRG_DEGREE]),
                                 tuple(_column_proof(sealed, p) for p in row[graph.DRG_DEGREE:]))
    layers = sealed.proof.layers
    labeling = tuple(LabelingProof(label_parents(sealed, challenge, layer), layer, challenge)
                     for layer in range(1, layers + 1))
    return VanillaProof(sealed.tree_d.proof(challenge), sealed.tree_r_last.proof(challenge), columns, labeling,
                        LabelingProof(labeling[-1].parents, layers, challenge))


def commit1(sealed: SealedSector, ticket: bytes, seed: bytes) -> C1Output:
    """C1: every partition's challenges from the seed and their vanilla proofs."""
    seed = bytes32("seed", seed)
    proofs = tuple(tuple(vanilla_proof(sealed, c) for c in challenges(sealed.proof, sealed.replica_id, seed, k))
                   for k in range(sealed.proof.partitions))
    return C1Output(sealed.proof.name, proofs, sealed.comm_r, sealed.comm_d, sealed.replica_id, seed,
                    bytes32("ticket", ticket))


def seal_sector(data, registered_proof: str, prover_id: bytes, sector_id: int, ticket: bytes,
                seed: bytes, config: PorepConfig | None = None) -> C1Output:
    """PC1, PC2 and C1 of one sector (under config: see precommit1): its commit-phase-1 output."""
    sealed = precommit2(precommit1(registered_proof, data, prover_id, sector_id, ticket, config))
    return commit1(sealed, ticket, seed)
