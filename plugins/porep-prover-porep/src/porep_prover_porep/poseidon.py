# SPDX-License-Identifier: Apache-2.0
"""Poseidon as neptune and Filecoin use it (arities 2, 8 and 11, and 4 for
the PoSt sub-trees of rust-fil-proofs' test shapes), in native code.

Elements are 32-byte domain values (canonical little-endian Fr). `hash_batch` takes a
batch (n, arity, 32) and returns (n, 32), on all cores; `hash_one` one preimage.
The constants are neptune's: Grain LFSR round constants, the Cauchy MDS matrix,
8 full rounds and 55 / 56 / 57 / 57 partial ones; the Merkle domain tag 2^arity - 1.
"""
from __future__ import annotations

import numpy as np

from porep_prover.errors import InvalidInputError

from . import _native

ARITIES = (2, 4, 8, 11)
PARTIAL_ROUNDS = {2: 55, 4: 56, 8: 57, 11: 57}
FULL_ROUNDS = 8


def hash_batch(arity: int, preimages, plain: bool = False) -> np.ndarray:
    """Poseidon of each preimage: (n, arity, 32) uint8 in, (n, 32) out. plain=True runs
    the unoptimized round schedule (the same permutation). ScalarRangeError names an
    element not below r."""
    if arity not in ARITIES:
        raise InvalidInputError(f"Poseidon of arity {arity!r}: {ARITIES} are built")
    arr = np.ascontiguousarray(preimages, dtype=np.uint8)
    if arr.ndim == 2 and arr.shape[1] == 32 * arity:
        arr = arr.reshape(-1, arity, 32)
    if arr.ndim != 3 or arr.shape[1:] != (arity, 32):
        raise InvalidInputError(f"preimages of shape {arr.shape}, (n, {arity}, 32) expected")
    out = np.empty((arr.shape[0], 32), np.uint8)
    _native.poseidon(arity, arr, out, plain)
    return out


def hash_one(elements: list[bytes]) -> bytes:
    """Poseidon of one preimage of 2, 4, 8 or 11 domain elements."""
    if len(elements) not in ARITIES or any(not isinstance(e, (bytes, bytearray)) or len(e) != 32
                                           for e in elements):
        raise InvalidInputError(f"a preimage of {len(elements)} elements: 2, 4, 8 or 11 of 32 bytes each")
    return hash_batch(len(elements), np.frombuffer(b"".join(elements), np.uint8).reshape(1, -1, 32))[0].tobytes()


def round_constants(arity: int) -> list[int]:
    """The round constants of an arity as integers, (8 + RP) * (arity + 1) of them."""
    raw = _native.round_constants(arity)
    return [int.from_bytes(raw[i:i + 32], "little") for i in range(0, len(raw), 32)]
