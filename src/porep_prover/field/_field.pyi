# SPDX-License-Identifier: Apache-2.0
"""Types of the native element-wise kernels (_field.pyx). Arrays are
C-contiguous uint64 rows: Fr 4 limbs, Fq 6, Fq2 12 (c0, c1), Montgomery form
unless said otherwise; out has the rows of the result. Byte buffers are
contiguous (bytes, bytearray, memoryview, a uint8 array); one written to
(out) is writable. Shapes are trusted: the callers check them."""
from typing_extensions import Buffer

import numpy as np
from numpy.typing import NDArray

ASSEMBLY: bool
"""Whether the Montgomery products run the assembly path."""

OPS: dict[str, int]
"""The op codes by name: add, sub, mul, neg, inv, sqr, sqrt."""

def fr_decode(data: Buffer, out: NDArray[np.uint64], nthreads: int) -> int:
    """Canonical 32-byte little-endian values -> Montgomery limbs. Returns the
    first non-canonical index, or -1."""

def fr_encode(a: NDArray[np.uint64], out: Buffer, nthreads: int) -> None:
    """Montgomery limbs -> canonical 32-byte little-endian values, into out."""

def fr_montgomery(a: NDArray[np.uint64], into: bool, nthreads: int) -> None:
    """In place: canonical -> Montgomery (into=True) or back."""

def fr_apply(op: int, a: NDArray[np.uint64], b: NDArray[np.uint64], out: NDArray[np.uint64]) -> None:
    """out = a op b element-wise (b unused for unary ops; inverse of 0 is 0)."""

def fq_apply(op: int, a: NDArray[np.uint64], b: NDArray[np.uint64], out: NDArray[np.uint64]) -> bytearray:
    """out = a op b over Fq; for sqrt, a byte per input: 1 where it was a square."""

def fq_montgomery(a: NDArray[np.uint64], into: bool) -> None:
    """In place over Fq: canonical -> Montgomery (into=True) or back."""

def fq2_apply(op: int, a: NDArray[np.uint64], b: NDArray[np.uint64], out: NDArray[np.uint64]) -> bytearray:
    """Fq2 products, squares, inverses and square roots; for sqrt, a byte per
    input: 1 where it was a square."""
