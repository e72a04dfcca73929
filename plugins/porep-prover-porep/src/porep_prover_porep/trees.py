# SPDX-License-Identifier: Apache-2.0
"""Filecoin's Merkle trees over 32-byte nodes.

tree_d (comm_d): binary, each parent fr32(sha256(left || right)). tree_c and
tree_r_last: arity 8, each parent Poseidon-8 of its children; tree_c's leaves are
the column hashes, Poseidon of a node's labels in every layer (arity = layers: 2 or
11). A tree keeps every row: rows[0] the leaves, rows[-1] the root alone.

SparseTree is a tree of any of Filecoin's sizes and shapes (a 32 GiB sector's
tree_c of 2^30 leaves, eight base trees under a sub-tree level) whose every
leaf is one default value but a few: only the nodes above those few are
hashed, every other node is the root of an all-default subtree of its level
(default_roots, made once per shape and leaf value).
"""
from __future__ import annotations

import functools
import hashlib
from typing import Mapping

import numpy as np

from porep_prover.errors import InvalidInputError

from . import _native, poseidon
from .fr32 import as_nodes, truncate
from .proofs import KINDS, MerkleProof, PathElement
from .registered import tree_arities



def hash_children(hasher: str, arity: int, children: np.ndarray) -> np.ndarray:
    """Each parent of a batch of children, (n, arity, 32) -> (n, 32), on all cores."""
    if hasher == "sha256":
        parent = np.empty((children.shape[0], 32), np.uint8)
        _native.sha256_pairs(np.ascontiguousarray(children).reshape(-1, 64), parent)
        return parent
    return poseidon.hash_batch(arity, children)


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
            parent = hash_children(hasher, arity, row.reshape(-1, arity, 32))
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


@functools.lru_cache(maxsize=64)
def default_roots(hasher: str, arities: tuple[int, ...], leaf: bytes) -> tuple[bytes, ...]:
    """The root of an all-`leaf` subtree at each level, the leaf first and the
    whole tree's root last (one hash a level; kept per shape and leaf)."""
    out = [leaf]
    for arity in arities:
        out.append(node_hash(hasher, [out[-1]] * arity))
    return tuple(out)


class SparseTree:
    """A tree of `nodes` leaves of shape (base, sub, top) arities, 0 where a
    level is absent (tree_d: (2, 0, 0)), every leaf `default` but those given
    ({index: 32 bytes}). A proof splits its path as rust-fil-proofs' does: the
    base tree's levels, then the sub-tree's and the top's level (kinds Single,
    Sub, Top). InvalidInputError for a leaf past the tree or not 32 bytes;
    ScalarRangeError for a Poseidon leaf not below r."""

    def __init__(self, hasher: str, nodes: int, shape: tuple[int, int, int], default: bytes,
                 leaves: Mapping[int, bytes]):
        if hasher not in ("sha256", "poseidon") or (hasher == "sha256") != (shape == (2, 0, 0)):
            raise InvalidInputError(f"a {hasher!r} tree of shape {shape!r}")
        self.hasher, self.arities = hasher, tuple(tree_arities(nodes, shape))
        width = 1
        for arity in self.arities:
            width *= arity
        if width != nodes or not self.arities:
            raise InvalidInputError(f"a tree of {nodes} leaves is not of shape {shape}")
        self.nodes = nodes
        self.parts = (len(self.arities) - sum(a > 0 for a in shape[1:]),) + tuple(1 for a in shape[1:] if a)
        self.defaults = default_roots(hasher, self.arities, bytes(default))
        for index, leaf in leaves.items():
            if not isinstance(index, int) or not 0 <= index < nodes or len(leaf) != 32:
                raise InvalidInputError(f"leaf {index!r} of a tree of {nodes}: 32 bytes at an index below {nodes}")
        self.rows: list[dict[int, bytes]] = [{i: bytes(v) for i, v in leaves.items()}]
        for level, arity in enumerate(self.arities):
            below = self.rows[-1]
            groups = sorted({i // arity for i in below})
            at = {g: j for j, g in enumerate(groups)}
            children = np.empty((len(groups), arity, 32), np.uint8)
            children[:] = np.frombuffer(self.defaults[level], np.uint8)
            for i, value in below.items():
                children[at[i // arity], i % arity] = np.frombuffer(value, np.uint8)
            parents = hash_children(hasher, arity, children) if groups else children[:, 0]
            self.rows.append({g: parents[j].tobytes() for j, g in enumerate(groups)})

    def node(self, level: int, index: int) -> bytes:
        """The node at `index` of a level (0: the leaves)."""
        return self.rows[level].get(index, self.defaults[level])

    @property
    def root(self) -> bytes:
        return self.node(len(self.arities), 0)

    def proof(self, index: int) -> MerkleProof:
        """The inclusion proof of leaf `index`: its paths split into base, sub and top."""
        if not isinstance(index, int) or not 0 <= index < self.nodes:
            raise InvalidInputError(f"leaf {index!r} of a tree of {self.nodes}")
        path, at = [], index
        for level, arity in enumerate(self.arities):
            group, position = divmod(at, arity)
            siblings = tuple(self.node(level, group * arity + i) for i in range(arity) if i != position)
            path.append(PathElement(siblings, position))
            at = group
        cuts, paths = 0, []
        for length in self.parts:
            paths.append(tuple(path[cuts:cuts + length]))
            cuts += length
        return MerkleProof(KINDS[len(self.parts) - 1], self.root, self.node(0, index), tuple(paths))
