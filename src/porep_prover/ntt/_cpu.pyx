# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CPU NTT entry points, without the GIL. Arrays are n x 4 uint64 (Fr,
Montgomery) with n a power of two; callers check. Returns the native code
(0, -1 memory, -2 size)."""
from libc.stdint cimport uint64_t

from porep_prover.native.cnative cimport fr_h_poly_bellman, fr_ntt, fr_t


def ntt(uint64_t[:, ::1] data, int log_n, bint inverse, bint coset, int nthreads):
    cdef int rc
    with nogil:
        rc = fr_ntt(<fr_t *> &data[0, 0], log_n, inverse, coset, nthreads)
    return rc


def h_poly_bellman(uint64_t[:, ::1] a, uint64_t[:, ::1] b, uint64_t[:, ::1] c, int log_n, int nthreads):
    """In place: a <- coefficients of (A B - C) / Z; b and c are clobbered."""
    cdef int rc
    with nogil:
        rc = fr_h_poly_bellman(<fr_t *> &a[0, 0], <fr_t *> &b[0, 0], <fr_t *> &c[0, 0], log_n, nthreads)
    return rc
