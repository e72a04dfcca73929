# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CPU NTT entry points, without the GIL. Arrays are n x 4 uint64 (Fr,
Montgomery) with n a power of two; callers check. Returns the native code
(0, -1 memory, -2 size; h_poly -3: its stop flag was set)."""
from libc.stdint cimport int32_t, uint64_t

from porep_prover.native.cnative cimport (
    fr_simd_available, ntt_simd, ntt_stop_on, fr_h_poly_bellman, fr_h_poly_snarkjs, fr_ntt, fr_ntt_ex, fr_root_of_unity, fr_root_of_unity_snarkjs, fr_t)


def ntt(uint64_t[:, ::1] data, int log_n, bint inverse, bint coset, int nthreads):
    cdef int rc
    with nogil:
        rc = fr_ntt(<fr_t *> &data[0, 0], log_n, inverse, coset, nthreads)
    return rc


def ntt_ex(uint64_t[:, ::1] data, int log_n, const uint64_t[:, ::1] omega, bint inverse, shift, int nthreads):
    """Transform over a given primitive root (row 0 of omega), optional coset shift
    (a 1 x 4 array or None)."""
    cdef int rc
    cdef const uint64_t[:, ::1] sv
    cdef const fr_t *sp = NULL
    if shift is not None:
        sv = shift
        sp = <const fr_t *> &sv[0, 0]
    with nogil:
        rc = fr_ntt_ex(<fr_t *> &data[0, 0], log_n, <const fr_t *> &omega[0, 0], inverse, sp, nthreads)
    return rc


def root_of_unity(int log_n, bint snarkjs, uint64_t[:, ::1] out):
    """out[0] = the primitive 2^log_n-th root (7-based, or snarkjs's 5-based)."""
    if snarkjs:
        fr_root_of_unity_snarkjs(<fr_t *> &out[0, 0], log_n)
    else:
        fr_root_of_unity(<fr_t *> &out[0, 0], log_n)


def h_poly(uint64_t[:, ::1] a, uint64_t[:, ::1] b, uint64_t[:, ::1] c, int log_n, bint snarkjs, int nthreads,
           const int32_t[::1] stop=None):
    """In place: a <- H scalars (bellman: coefficients of (A B - C) / Z; snarkjs:
    (A B - C) on the odd coset); b and c are clobbered. stop: a one-int32 flag
    read between the transforms (set: rc -3, a's values not to be used)."""
    cdef int rc
    cdef const int32_t *flag = &stop[0] if stop is not None else NULL
    with nogil:
        ntt_stop_on(flag)
        if snarkjs:
            rc = fr_h_poly_snarkjs(<fr_t *> &a[0, 0], <fr_t *> &b[0, 0], <fr_t *> &c[0, 0], log_n, nthreads)
        else:
            rc = fr_h_poly_bellman(<fr_t *> &a[0, 0], <fr_t *> &b[0, 0], <fr_t *> &c[0, 0], log_n, nthreads)
        ntt_stop_on(NULL)
    return rc


def simd_available():
    """True when this CPU runs the AVX-512 IFMA NTT path."""
    return bool(fr_simd_available())


def set_simd(enable):
    """Turn the AVX-512 IFMA NTT path on or off process-wide; returns whether it is on."""
    return bool(ntt_simd(1 if enable else 0))
