# SPDX-License-Identifier: Apache-2.0
"""The SDR graph: each node's 6 DRG parents (bucket sampling driven by ChaCha8)
and 8 expander parents (a 3-round Feistel permutation over BLAKE2b), seeded from
the porep_id, and the SDR labels over them.

Seeds: sha256("Filecoin_DRSample" || porep_id)[:28] for the DRG,
sha256("Filecoin_Feistel" || porep_id) read as four u64 little-endian for the
Feistel keys.
"""
from __future__ import annotations

import hashlib

import numpy as np

from porep_prover.errors import InvalidInputError

from . import _native
from .fr32 import sha256_fr32

DRG_DEGREE, EXP_DEGREE = 6, 8
PARENTS = DRG_DEGREE + EXP_DEGREE
MAX_NODES = 1 << 31       # 64 GiB sectors; the graph's indices are u32


def _porep_id(porep_id: bytes) -> bytes:
    if not isinstance(porep_id, (bytes, bytearray)) or len(porep_id) != 32:
        raise InvalidInputError("a porep_id is 32 bytes")
    return bytes(porep_id)


def drg_seed(porep_id: bytes) -> bytes:
    """The DRG's 28-byte ChaCha8 seed prefix."""
    return hashlib.sha256(b"Filecoin_DRSample" + _porep_id(porep_id)).digest()[:28]


def feistel_keys(porep_id: bytes) -> np.ndarray:
    """The expander's four Feistel keys (uint64)."""
    return np.frombuffer(hashlib.sha256(b"Filecoin_Feistel" + _porep_id(porep_id)).digest(), "<u8").astype(np.uint64)


def _nodes(nodes: int) -> int:
    if not isinstance(nodes, int) or not 2 < nodes <= MAX_NODES or nodes & (nodes - 1):
        raise InvalidInputError(f"a graph of {nodes!r} nodes: a power of two in [4, 2^31]")
    return nodes


def node_parents(nodes: int, node: int, porep_id: bytes, api_v11: bool) -> list[int]:
    """One node's 14 parents: DRG then expander."""
    if not isinstance(node, int) or not 0 <= node < _nodes(nodes):
        raise InvalidInputError(f"node {node!r} of a graph of {nodes} nodes")
    return (_native.drg(drg_seed(porep_id), node, api_v11)
            + _native.expander(feistel_keys(porep_id), nodes, node, api_v11))


def parents_table(nodes: int, porep_id: bytes, api_v11: bool) -> np.ndarray:
    """Every node's parents, (nodes, 14) uint32 (the parents cache), on all cores."""
    table = np.empty((_nodes(nodes), PARENTS), np.uint32)
    _native.parents(drg_seed(porep_id), feistel_keys(porep_id), api_v11, table)
    return table


def replica_id(prover_id: bytes, sector_id: int, ticket: bytes, comm_d: bytes, porep_id: bytes) -> bytes:
    """fr32(sha256(prover_id || sector_id as u64 BE || ticket || comm_d || porep_id))."""
    for name, value in (("prover_id", prover_id), ("ticket", ticket), ("comm_d", comm_d)):
        if not isinstance(value, (bytes, bytearray)) or len(value) != 32:
            raise InvalidInputError(f"{name} is 32 bytes")
    if not isinstance(sector_id, int) or not 0 <= sector_id < 1 << 64:
        raise InvalidInputError(f"sector_id {sector_id!r} is not a u64")
    return sha256_fr32(prover_id, sector_id.to_bytes(8, "big"), ticket, comm_d, _porep_id(porep_id))


def labels(replica: bytes, layers: int, table: np.ndarray) -> np.ndarray:
    """The SDR labels (layers, nodes, 32) of a replica id under a parents table."""
    if not isinstance(replica, (bytes, bytearray)) or len(replica) != 32:
        raise InvalidInputError("a replica_id is 32 bytes")
    if not isinstance(layers, int) or not 1 <= layers <= 15:
        raise InvalidInputError(f"{layers!r} layers: 1 to 15")
    table = np.ascontiguousarray(table, dtype=np.uint32)
    if table.ndim != 2 or table.shape[1] != PARENTS:
        raise InvalidInputError(f"a parents table of shape {table.shape}, (nodes, 14) expected")
    out = np.empty((layers, _nodes(table.shape[0]), 32), np.uint8)
    _native.labels(bytes(replica), table, out)
    return out
