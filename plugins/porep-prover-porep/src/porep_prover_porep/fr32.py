# SPDX-License-Identifier: Apache-2.0
"""Fr in Filecoin's byte forms, and fr32 padding.

A "domain" element is 32 bytes: an Fr element below r, little-endian, in normal
(not Montgomery) form. A SHA-256 digest becomes one by "fr32 truncation": its last
byte's top two bits cleared (below 2^254 < r). Unsealed sector data is fr32-padded:
every 254 bits of a piece become a 32-byte node whose top two bits are zero, so
127 raw bytes fill 4 nodes (128 bytes).
"""
from __future__ import annotations

import hashlib

import numpy as np

from porep_prover.errors import InvalidInputError, ScalarRangeError

R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
NODE_SIZE = 32
FR32_MASK = 0x3F


def truncate(digest: bytes) -> bytes:
    """A 32-byte digest as a domain element: its last byte & 0x3f."""
    if len(digest) != NODE_SIZE:
        raise InvalidInputError(f"a digest of {len(digest)} bytes, 32 expected")
    return digest[:31] + bytes([digest[31] & FR32_MASK])


def sha256_fr32(*parts: bytes) -> bytes:
    """fr32(sha256(parts concatenated))."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return truncate(h.digest())


def to_int(domain: bytes) -> int:
    """A domain element's value; ScalarRangeError when not below r."""
    if len(domain) != NODE_SIZE:
        raise InvalidInputError(f"a field element of {len(domain)} bytes, 32 expected")
    value = int.from_bytes(domain, "little")
    if value >= R:
        raise ScalarRangeError("a field element is not below r")
    return value


def from_int(value: int) -> bytes:
    """The domain bytes of an integer in [0, r)."""
    if not 0 <= value < R:
        raise ScalarRangeError("a field element is not in [0, r)")
    return value.to_bytes(NODE_SIZE, "little")


def as_nodes(data, what: str = "data") -> np.ndarray:
    """A bytes-like object or uint8 array of 32-byte nodes as a C-contiguous (n, 32) uint8 array."""
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) else np.asarray(data)
    if arr.dtype != np.uint8 or arr.size % NODE_SIZE:
        raise InvalidInputError(f"{what}: {arr.size} elements of {arr.dtype}, whole 32-byte uint8 nodes expected")
    return np.ascontiguousarray(arr.reshape(-1, NODE_SIZE))


def pad(raw: bytes) -> bytes:
    """fr32-pad raw bytes (a multiple of 127): each 254 bits, little-endian, into a 32-byte node."""
    if len(raw) % 127:
        raise InvalidInputError(f"{len(raw)} raw bytes: fr32 padding takes a multiple of 127")
    out = bytearray()
    step = 127 * 8192       # bounded working memory: 8 bits a byte in the unpacked form
    for start in range(0, len(raw), step):
        bits = np.unpackbits(np.frombuffer(raw, np.uint8, min(step, len(raw) - start), start), bitorder="little")
        nodes = np.zeros((bits.size // 254, 256), np.uint8)
        nodes[:, :254] = bits.reshape(-1, 254)
        out += np.packbits(nodes, axis=1, bitorder="little").tobytes()
    return bytes(out)


def unpad(padded: bytes) -> bytes:
    """The raw bytes of fr32-padded data (a multiple of 128 bytes whose nodes' top two bits are zero)."""
    if len(padded) % 128:
        raise InvalidInputError(f"{len(padded)} padded bytes: a multiple of 128 expected")
    nodes = np.unpackbits(np.frombuffer(padded, np.uint8), bitorder="little").reshape(-1, 256)
    if nodes[:, 254:].any():
        raise InvalidInputError("a padded node has its top two bits set")
    return np.packbits(nodes[:, :254].reshape(-1), bitorder="little").tobytes()
