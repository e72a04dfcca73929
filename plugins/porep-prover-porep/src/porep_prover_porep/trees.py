# SPDX-License-Identifier: Apache-2.0
"""Filecoin's Merkle trees over 32-byte nodes.

tree_d (comm_d): binary, each parent fr32(sha256(left || right)). tree_c and
tree_r_last: arity 8, each parent Poseidon-8 of its children; tree_c's leaves are
the column hashes, Poseidon of a node's labels in every layer (arity = layers: 2 or
11). A tree keeps every row: rows[0] the leaves, rows[-1] the root alone.
"""
from __future__ import annotations

import hashlib

import numpy as np

from porep_prover.errors import InvalidInputError

from . import _native, poseidon
from .fr32 import as_nodes, truncate
from .proofs import MerkleProof, PathElement


class MerkleTree:
    """A complete tree of one arity; `hasher` is "sha256" or "poseidon"."""

    def __init__(self, leaves, arity: int, hasher: str):
        if hasher not in ("sha256", "poseidon") or (hasher == "sha256" and arity != 2) or \
                (hasher == "poseidon" and arity not in poseidon.ARITIES):
            raise InvalidInputError(f"a {hasher!r} tree of arity {arity!r}")
        row = as_nodes(leaves, "leaves")
        width = row.shape[0]
        while width > 1 and width % arity == 0:
            width //= arity
        if row.shape[0] < arity or width != 1:
            raise InvalidInputError(f"{row.shape[0]} leaves: a power of {arity}, at least {arity}, expected")
        self.arity, self.hasher, self.rows = arity, hasher, [row]
        while row.shape[0] > 1:
            if hasher == "sha256":
                parent = np.empty((row.shape[0] // 2, 32), np.uint8)
                _native.sha256_pairs(row.reshape(-1, 64), parent)
            else:
                parent = poseidon.hash_batch(arity, row.reshape(-1, arity, 32))
            self.rows.append(parent)
            row = parent

    @property
    def root(self) -> bytes:
        return self.rows[-1][0].tobytes()

    @property
    def leaves(self) -> int:
        return self.rows[0].shape[0]

    def proof(self, index: int) -> MerkleProof:
        """The inclusion proof of leaf `index` (rust-fil-proofs' single-tree proof)."""
        if not isinstance(index, int) or not 0 <= index < self.leaves:
            raise InvalidInputError(f"leaf {index!r} of a tree of {self.leaves}")
        path, at = [], index
        for row in self.rows[:-1]:
            group, position = divmod(at, self.arity)
            siblings = [row[group * self.arity + i].tobytes() for i in range(self.arity) if i != position]
            path.append(PathElement(tuple(siblings), position))
            at = group
        return MerkleProof("Single", self.root, self.rows[0][index].tobytes(), (tuple(path),))


def sha256_tree(leaves) -> MerkleTree:
    """tree_d over unsealed data's nodes (comm_d = its root)."""
    return MerkleTree(leaves, 2, "sha256")


def poseidon_tree(leaves, arity: int = 8) -> MerkleTree:
    """An arity-8 Poseidon tree (tree_c over column hashes, tree_r_last over the replica)."""
    return MerkleTree(leaves, arity, "poseidon")


def column_hashes(labels: np.ndarray) -> np.ndarray:
    """Poseidon of each node's column: labels (layers, nodes, 32) -> (nodes, 32)."""
    if labels.ndim != 3 or labels.shape[2] != 32:
        raise InvalidInputError(f"labels of shape {labels.shape}, (layers, nodes, 32) expected")
    return poseidon.hash_batch(labels.shape[0], np.ascontiguousarray(labels.transpose(1, 0, 2)))


def node_hash(hasher: str, children: list[bytes]) -> bytes:
    """One parent from its children: fr32(sha256(concatenation)) or Poseidon of len(children)."""
    if hasher == "sha256":
        return truncate(hashlib.sha256(b"".join(children)).digest())
    return poseidon.hash_one(children)


def path_root(hasher: str, leaf: bytes, path: tuple[PathElement, ...]) -> bytes:
    """The root a path leads to from a leaf: at each level the node goes in at its index."""
    node = leaf
    for element in path:
        children = list(element.hashes)
        if not 0 <= element.index <= len(children):
            raise InvalidInputError(f"position {element.index} among {len(children) + 1} children")
        children.insert(element.index, node)
        node = node_hash(hasher, children)
    return node


def path_index(path: tuple[PathElement, ...]) -> int:
    """The leaf a path is for: its positions read as digits, the first the least significant."""
    index, weight = 0, 1
    for element in path:
        index += element.index * weight
        weight *= len(element.hashes) + 1
    return index
