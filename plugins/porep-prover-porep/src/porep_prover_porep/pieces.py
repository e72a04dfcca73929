# SPDX-License-Identifier: Apache-2.0
"""Test data: pieces of zeros and of seeded random bytes, fr32-padded, laid into a sector.

A piece's padded size is a power of two of at least 128 bytes (its raw size is
127/128 of that); in a sector each piece starts at a multiple of its padded size,
the gaps and the tail filled with zeros (zero pieces), as Filecoin lays them.
"""
from __future__ import annotations

import numpy as np

from porep_prover.errors import InvalidInputError

from .fr32 import pad


def _padded_size(size: int) -> int:
    if size < 128 or size & (size - 1):
        raise InvalidInputError(f"a piece of {size} padded bytes: a power of two of at least 128")
    return size


def zero_piece(padded_size: int) -> bytes:
    """A piece of zeros (its padding is zeros too)."""
    return bytes(_padded_size(padded_size))


def random_piece(padded_size: int, seed: int) -> bytes:
    """A piece of raw bytes drawn from numpy's PCG64 under `seed`, fr32-padded."""
    raw = np.random.default_rng(seed).bytes(_padded_size(padded_size) // 128 * 127)
    return pad(raw)


def sector_data(pieces: list[bytes], sector_size: int) -> bytes:
    """Padded pieces laid into a sector of `sector_size` bytes, each aligned to its size."""
    out = bytearray()
    for i, piece in enumerate(pieces):
        size = _padded_size(len(piece))
        out += bytes(-len(out) % size)
        out += piece
        if len(out) > sector_size:
            raise InvalidInputError(f"piece {i} ends at byte {len(out)}, past the sector's {sector_size}")
    return bytes(out) + bytes(sector_size - len(out))
