# SPDX-License-Identifier: Apache-2.0
"""Types of the CPU MSM entry points (_cpu.pyx). Arrays are C-contiguous
uint64 rows: points affine (G1 12 limbs, G2 24), scalars 4 limbs (Fr,
Montgomery); group 1 is G1, else G2. The int returned is the native code
(0, -1 for an allocation failure, -3 when the stop flag was set)."""
import numpy as np
from numpy.typing import NDArray

def msm(group: int, points: NDArray[np.uint64], scalars: NDArray[np.uint64], out: NDArray[np.uint64],
        nthreads: int, stop: NDArray[np.int32] | None = None) -> tuple[int, dict[str, int]]:
    """out[0] = sum scalars[i] points[i]; (the code, the split: zeros, ones, full, window_bits).
    stop: a one-int32 flag read between window tasks (set: code -3, out unwritten)."""

def msm_naive(group: int, points: NDArray[np.uint64], scalars: NDArray[np.uint64], out: NDArray[np.uint64]) -> None:
    """Double-and-add per point: the slow reference."""

def batch_sum(group: int, points: NDArray[np.uint64], out: NDArray[np.uint64], nthreads: int) -> int: ...

def fixed_base(group: int, base: NDArray[np.uint64], scalars: NDArray[np.uint64], out: NDArray[np.uint64],
               nthreads: int) -> int:
    """out[i] = scalars[i] base[0]."""

def simd_available() -> bool: ...

def set_simd(enable: bool) -> bool:
    """The AVX-512 IFMA path on or off process-wide; whether it is now on."""

def simd_enabled() -> bool: ...

def window_bits(n: int) -> int:
    """The Pippenger window the CPU MSM picks for n full scalars."""
