# SPDX-License-Identifier: Apache-2.0
"""The commit-phase-1 output and its vanilla proofs, as rust-fil-proofs shapes them.

Field for field the serde structures of filecoin-proofs-api's
SealCommitPhase1Output and storage-proofs' stacked::Proof, MerkleProof,
ReplicaColumnProof, ColumnProof, Column, LabelingProof and EncodingProof; every
domain element is 32 bytes (canonical little-endian Fr, or an fr32 SHA-256 digest
in the comm_d tree). c1_json reads and writes them; vanilla verifies them.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PathElement:
    """One level of a Merkle path: the siblings, and the position the node takes among them."""
    hashes: tuple[bytes, ...]
    index: int


# a proof's kind by its number of paths (base, sub, top), and its paths' names as serde and bincode write them
KINDS = ("Single", "Sub", "Top")
PATH_NAMES = {"Single": ("path",), "Sub": ("base_proof", "sub_proof"), "Top": ("base_proof", "sub_proof", "top_proof")}


@dataclass(frozen=True)
class MerkleProof:
    """An inclusion proof. kind "Single" has one path; "Sub" a base and a sub-tree path;
    "Top" base, sub and top paths (rust-fil-proofs' ProofData variants)."""
    kind: str
    root: bytes
    leaf: bytes
    paths: tuple[tuple[PathElement, ...], ...]


@dataclass(frozen=True)
class Column:
    """A node's labels in every layer (rows[l - 1] is layer l)."""
    index: int
    rows: tuple[bytes, ...]


@dataclass(frozen=True)
class ColumnProof:
    column: Column
    inclusion_proof: MerkleProof


@dataclass(frozen=True)
class ReplicaColumnProof:
    c_x: ColumnProof
    drg_parents: tuple[ColumnProof, ...]
    exp_parents: tuple[ColumnProof, ...]


@dataclass(frozen=True)
class LabelingProof:
    """The 37 parent labels a node's label in a layer hashes (EncodingProof has this shape too)."""
    parents: tuple[bytes, ...]
    layer_index: int
    node: int


@dataclass(frozen=True)
class VanillaProof:
    """One challenge's proof."""
    comm_d_proofs: MerkleProof
    comm_r_last_proof: MerkleProof
    replica_column_proofs: ReplicaColumnProof
    labeling_proofs: tuple[LabelingProof, ...]
    encoding_proof: LabelingProof


@dataclass(frozen=True)
class C1Output:
    """SealCommitPhase1Output: vanilla_proofs[partition][challenge]."""
    registered_proof: str
    vanilla_proofs: tuple[tuple[VanillaProof, ...], ...]
    comm_r: bytes
    comm_d: bytes
    replica_id: bytes
    seed: bytes
    ticket: bytes
