# SPDX-License-Identifier: Apache-2.0
"""Types of the native R1CS kernels (_r1cs.pyx). Matrices are CSR: indptr
int64 (rows + 1), col uint32, coeff rows of 4 uint64 limbs (Fr, Montgomery),
coeff_id uint32 an entry where the coefficients are a table (None: one
coefficient an entry); every array C-contiguous."""
import numpy as np
from numpy.typing import NDArray

def matvec(indptr: NDArray[np.int64], col: NDArray[np.uint32], coeff: NDArray[np.uint64], w: NDArray[np.uint64],
           out: NDArray[np.uint64], nthreads: int, coeff_id: NDArray[np.uint32] | None = None) -> None:
    """out[:rows] = M w; MemoryError when the native side runs out, ValueError for a short out."""

def first_unsatisfied(a: NDArray[np.uint64], b: NDArray[np.uint64], c: NDArray[np.uint64], nthreads: int) -> int:
    """Index of the first i with a[i] b[i] != c[i], or -1."""

def eval_columns(indptr: NDArray[np.int64], col: NDArray[np.uint32], coeff: NDArray[np.uint64],
                 lagrange: NDArray[np.uint64], out: NDArray[np.uint64], nthreads: int,
                 coeff_id: NDArray[np.uint32] | None = None) -> int: ...

def query_scalars(at: NDArray[np.uint64], bt: NDArray[np.uint64], ct: NDArray[np.uint64], a_keep: NDArray[np.uint8],
                  b_keep: NDArray[np.uint8], waste: NDArray[np.uint64], ic: NDArray[np.uint64], l: NDArray[np.uint64],
                  a: NDArray[np.uint64], b: NDArray[np.uint64], nthreads: int) -> None:
    """ic, l (beta A + alpha B + C over gamma, delta), a and b (A and B where their masks keep) from the column
    evaluations; waste = alpha, beta, 1/gamma, 1/delta. ValueError for a length that disagrees, MemoryError."""

def lagrange_at(tau: NDArray[np.uint64], omega: NDArray[np.uint64], out: NDArray[np.uint64], log_n: int,
                nthreads: int) -> int:
    """out[i] = L_i(tau) over the domain <omega[0]> of size 2^log_n."""

def parse_circom_constraints(data: bytes | bytearray | memoryview | NDArray[np.uint8], ncons: int, nwires: int,
                             nthreads: int
                             ) -> tuple[int, int, list[tuple[NDArray[np.int64], NDArray[np.uint32],
                                                             NDArray[np.uint64]]] | None]:
    """(code, byte offset, the three matrices' (indptr, col, coeff limbs)): code 0, or
    the R1CS_* error found at the offset (matrices None)."""

def powers(start: NDArray[np.uint64], step: NDArray[np.uint64], out: NDArray[np.uint64], nthreads: int) -> None:
    """out[i] = start step^i."""

def gather_rows(src: NDArray[np.uint64], idx: NDArray[np.int64], out: NDArray[np.uint64], nthreads: int) -> None:
    """out[i] = src[idx[i]] (rows of 4 limbs)."""
