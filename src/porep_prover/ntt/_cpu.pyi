# SPDX-License-Identifier: Apache-2.0
"""Types of the CPU NTT entry points (_cpu.pyx). Arrays are C-contiguous
n x 4 uint64 (Fr, Montgomery) with n a power of two. The int returned is
the native code (0, -1 memory, -2 size)."""
import numpy as np
from numpy.typing import NDArray

def ntt(data: NDArray[np.uint64], log_n: int, inverse: bool, coset: bool, nthreads: int) -> int: ...

def ntt_ex(data: NDArray[np.uint64], log_n: int, omega: NDArray[np.uint64], inverse: bool,
           shift: NDArray[np.uint64] | None, nthreads: int) -> int:
    """Over the primitive root omega[0], on the coset shift[0] (a 1 x 4 array) when given."""

def root_of_unity(log_n: int, snarkjs: bool, out: NDArray[np.uint64]) -> None:
    """out[0] = the primitive 2^log_n-th root (7-based, or snarkjs's 5-based)."""

def h_poly(a: NDArray[np.uint64], b: NDArray[np.uint64], c: NDArray[np.uint64], log_n: int, snarkjs: bool,
           nthreads: int, stop: NDArray[np.int32] | None = None) -> int:
    """In place: a = the H scalars; b and c clobbered. stop: a one-int32 flag
    read between the transforms (set: code -3, a not to be used)."""

def simd_available() -> bool: ...

def set_simd(enable: bool) -> bool:
    """The AVX-512 IFMA NTT path on or off process-wide; whether it is now on."""
