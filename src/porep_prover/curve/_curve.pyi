# SPDX-License-Identifier: Apache-2.0
"""Types of the native point kernels (_curve.pyx). group 1 is G1 (rows of 12
uint64 limbs: x, y), else G2 (rows of 24: x.c0, x.c1, y.c0, y.c1); rows are
C-contiguous, affine, Montgomery form, infinity all zero, except xyzz_windows'
(x, y, zz, zzz). Scalars k are canonical 256-bit little-endian rows of 4
limbs. Byte buffers are contiguous (bytes, bytearray, memoryview, a uint8
array); one written to (out) is writable. Shapes are trusted: the callers
check them."""
from typing_extensions import Buffer

import numpy as np
from numpy.typing import NDArray

def decode(group: int, data: Buffer, out: NDArray[np.uint64], compressed: bool, check_subgroup: bool,
           nthreads: int) -> tuple[int, int]:
    """Decode len(out) points. Returns (0, -1) or (error code, first bad index)."""

def encode(group: int, points: NDArray[np.uint64], out: Buffer, compressed: bool, nthreads: int) -> None:
    """The points' encodings back to back, into out."""

def first_invalid(group: int, points: NDArray[np.uint64], subgroup: bool, nthreads: int) -> int:
    """Lowest index not on the curve (or, with subgroup, not in the subgroup); -1 if none."""

def generator(group: int, out: NDArray[np.uint64]) -> None:
    """out[0] = the group's generator."""

def add(group: int, a: NDArray[np.uint64], b: NDArray[np.uint64], out: NDArray[np.uint64]) -> None:
    """out[i] = a[i] + b[i]."""

def neg(group: int, a: NDArray[np.uint64], out: NDArray[np.uint64]) -> None:
    """out[i] = -a[i]."""

def mul(group: int, a: NDArray[np.uint64], k: NDArray[np.uint64], out: NDArray[np.uint64]) -> None:
    """out[i] = k[i] * a[i] (xyzz double-and-add)."""

def mul_jacobian(group: int, a: NDArray[np.uint64], k: NDArray[np.uint64], out: NDArray[np.uint64]) -> None:
    """The same product through the Jacobian formulas: an independent check of the xyzz ones."""

def xyzz_windows(group: int, partials: NDArray[np.uint64], windows: int, per_window: int, c: int,
                 extra: NDArray[np.uint64], out: NDArray[np.uint64]) -> None:
    """out[0] = sum over windows w (from the top, c doublings between) of the
    per_window xyzz partials of window w, plus every xyzz point in extra;
    normalised to affine."""
