# SPDX-License-Identifier: Apache-2.0
"""Updating a sealed sector's replica with new data, as storage-proofs-update
encodes it (encode_into), and its partition proofs (prove_inner):

    tree_d_new      binary SHA-256 tree over the new data (comm_d_new its root)
    comm_r_old      Poseidon-2(comm_c, root of tree_r_old)
    phi, rho        challenges.phi(comm_d_new, comm_r_old); node i's rho is
                    rho(phi, i >> (log2 nodes - h))
    new replica     node i: old replica's node i + new data's node i * rho, in Fr
    tree_r_new      TreeR over the new replica; comm_r_new = Poseidon-2(comm_c, its root)
    partition k     comm_c, its apex leaves (tree_d_new's row log2(apex leaves) +
                    log2(partitions) below the root, the k-th run of them), and per
                    challenge the openings of tree_r_old, tree_d_new and tree_r_new

update(sealed, data, h) updates a sector sealed here (seal.Sealed: its
replica, tree_r_last and comm_c; sizes whose TreeR is one base tree);
sparse_update(proof) makes the update of a sparse replica of any size
(every old replica node one value, the new data all zeros, so the new
replica is the old and only the challenged paths are hashed): an input for
benchmarks and tests, never a sector.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from porep_prover import FrArray
from porep_prover.errors import InvalidInputError

from .. import poseidon
from ..fr32 import FR32_MASK, as_nodes, to_int
from ..proofs import MerkleProof
from ..trees import MerkleTree, SparseTree, poseidon_tree, sha256_tree
from . import challenges as ch
from .bincode import ChallengeProof, PartitionProof
from .registered import BY_SIZE, UpdateProof


class Openings(Protocol):
    @property
    def root(self) -> bytes: ...

    def proof(self, index: int) -> MerkleProof: ...


class TreeD(Openings, Protocol):
    def node(self, level: int, index: int) -> bytes: ...


@dataclass
class UpdatedSector:
    """A sector's update: the trees it is opened in, its commitments and h."""
    proof: UpdateProof
    h: int
    comm_c: bytes
    tree_r_old: Openings
    tree_d_new: TreeD
    tree_r_new: Openings

    @property
    def comm_r_old(self) -> bytes:
        return poseidon.hash_one([self.comm_c, self.tree_r_old.root])

    @property
    def comm_d_new(self) -> bytes:
        return self.tree_d_new.root

    @property
    def comm_r_new(self) -> bytes:
        return poseidon.hash_one([self.comm_c, self.tree_r_new.root])

    def partition_proof(self, k: int) -> PartitionProof:
        """Partition k's vanilla proof (EmptySectorUpdate::prove_inner)."""
        p = self.proof
        level = p.challenge_bits - p.partition_bits - p.apex_bits
        apex = tuple(self.tree_d_new.node(level, k * p.apex_leaves + i) for i in range(p.apex_leaves))
        proofs = tuple(ChallengeProof(self.tree_r_old.proof(c), self.tree_d_new.proof(c), self.tree_r_new.proof(c))
                       for c in ch.challenges(p, to_int(self.comm_r_new), k))
        return PartitionProof(self.comm_c, apex, proofs)

    def partition_proofs(self) -> list[PartitionProof]:
        return [self.partition_proof(k) for k in range(self.proof.partitions)]


class _FullTreeD:
    """A MerkleTree read as TreeD: its rows' nodes."""

    def __init__(self, tree: MerkleTree):
        self.tree = tree
        self.root = tree.root

    def node(self, level: int, index: int) -> bytes:
        return self.tree.rows[level][index].tobytes()

    def proof(self, index: int) -> MerkleProof:
        return self.tree.proof(index)


def rhos(proof: UpdateProof, h: int, comm_d_new: bytes, comm_r_old: bytes) -> list[int]:
    """Every rho of an update, one per value of a node's h high bits."""
    ch.h_select(proof, h)
    phi = ch.phi(to_int(comm_d_new), to_int(comm_r_old))
    return [ch.rho(phi, high) for high in range(1 << h)]


def encode(proof: UpdateProof, replica: np.ndarray, data: np.ndarray, h: int, comm_d_new: bytes,
           comm_r_old: bytes) -> np.ndarray:
    """The new replica (nodes, 32): replica + data * rho, each node's rho by its h high bits."""
    values = FrArray.from_ints(rhos(proof, h, comm_d_new, comm_r_old))
    per_node = FrArray(np.repeat(values.limbs, proof.nodes >> h, axis=0))
    new = FrArray.from_bytes(replica.tobytes()) + FrArray.from_bytes(data.tobytes()) * per_node
    return np.frombuffer(new.to_bytes(), np.uint8).reshape(-1, 32).copy()


class SealedReplica(Protocol):
    """What an update reads of a sector sealed here: its replica, tree_r_last and comm_c."""
    replica: np.ndarray
    tree_r_last: MerkleTree

    @property
    def comm_c(self) -> bytes: ...


def update(sealed: SealedReplica, data, h: int | None = None) -> UpdatedSector:
    """The update of a sealed sector with new data (fr32-padded, the sector's
    size), under h (default: the proof's hs[3]); InvalidInputError for data
    that does not fit or a sector whose TreeR is not one base tree."""
    proof = BY_SIZE.get(sealed.replica.shape[0] * 32)
    if proof is None or proof.tree != (8, 0, 0):
        raise InvalidInputError(f"sectors of {sealed.replica.shape[0] * 32} bytes are not updated here")
    h = proof.default_h if h is None else h
    nodes = as_nodes(data, "new data")
    if nodes.shape[0] != proof.nodes or np.any(nodes[:, 31] > FR32_MASK):
        raise InvalidInputError(f"the new data is {proof.sector_size} bytes, fr32-padded")
    tree_d = sha256_tree(nodes)
    comm_r_old = poseidon.hash_one([sealed.comm_c, sealed.tree_r_last.root])
    new = encode(proof, sealed.replica, nodes, h, tree_d.root, comm_r_old)
    return UpdatedSector(proof, h, sealed.comm_c, sealed.tree_r_last, _FullTreeD(tree_d), poseidon_tree(new))


def sparse_update(proof: UpdateProof, leaf: bytes, comm_c: bytes, h: int | None = None) -> UpdatedSector:
    """The update of a sparse replica (every node `leaf`) with all-zero data:
    benchmark and test input of any size, never a sector (see the module)."""
    tree_r = SparseTree("poseidon", proof.nodes, proof.tree, leaf, {})
    tree_d = SparseTree("sha256", proof.nodes, (2, 0, 0), bytes(32), {})
    return UpdatedSector(proof, proof.default_h if h is None else h, comm_c, tree_r, tree_d, tree_r)
