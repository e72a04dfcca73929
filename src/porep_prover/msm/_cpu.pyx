# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""CPU MSM entry points (G1: group=1, G2: group=2). The work runs without the
GIL. Callers check shapes; a -1 from the native code (allocation failure) is
returned as is for the caller to raise, and so is MSM_STOPPED (-3): msm's
stop flag was set while it ran."""
from libc.stdint cimport int32_t, uint64_t

from porep_prover.native.cnative cimport (
    fr_t, msm_simd, msm_simd_available, msm_stop_on, msm_window_bits, g1_affine_t, g1_batch_sum, g1_fixed_base_batch, g1_msm, g1_msm_naive, g2_affine_t, g2_batch_sum,
    g2_fixed_base_batch, g2_msm, g2_msm_naive, msm_stats_t)


def msm(int group, const uint64_t[:, ::1] points, const uint64_t[:, ::1] scalars, uint64_t[:, ::1] out, int nthreads,
        const int32_t[::1] stop=None):
    """out[0] = sum scalars[i] * points[i]. Returns (rc, stats dict). stop: a
    one-int32 flag read between the window tasks (set: rc -3, out unwritten)."""
    cdef size_t n = points.shape[0]
    cdef msm_stats_t st
    cdef int rc
    cdef uint64_t dummy[24]
    cdef void *pp = <void *> (&points[0, 0] if n else dummy)
    cdef void *sp = <void *> (&scalars[0, 0] if n else dummy)
    cdef const int32_t *flag = &stop[0] if stop is not None else NULL
    with nogil:
        msm_stop_on(flag)
        if group == 1:
            rc = g1_msm(<g1_affine_t *> &out[0, 0], <g1_affine_t *> pp, <fr_t *> sp, n, nthreads, &st)
        else:
            rc = g2_msm(<g2_affine_t *> &out[0, 0], <g2_affine_t *> pp, <fr_t *> sp, n, nthreads, &st)
        msm_stop_on(NULL)
    return rc, {"zeros": st.zeros, "ones": st.ones, "full": st.full, "window_bits": st.window_bits}


def msm_naive(int group, const uint64_t[:, ::1] points, const uint64_t[:, ::1] scalars, uint64_t[:, ::1] out):
    """Double-and-add per point: the slow reference."""
    cdef size_t n = points.shape[0]
    cdef uint64_t dummy[24]
    cdef void *pp = <void *> (&points[0, 0] if n else dummy)
    cdef void *sp = <void *> (&scalars[0, 0] if n else dummy)
    with nogil:
        if group == 1:
            g1_msm_naive(<g1_affine_t *> &out[0, 0], <g1_affine_t *> pp, <fr_t *> sp, n)
        else:
            g2_msm_naive(<g2_affine_t *> &out[0, 0], <g2_affine_t *> pp, <fr_t *> sp, n)


def batch_sum(int group, const uint64_t[:, ::1] points, uint64_t[:, ::1] out, int nthreads):
    cdef size_t n = points.shape[0]
    cdef int rc
    cdef uint64_t dummy[24]
    cdef void *pp = <void *> (&points[0, 0] if n else dummy)
    with nogil:
        if group == 1:
            rc = g1_batch_sum(<g1_affine_t *> &out[0, 0], <g1_affine_t *> pp, n, nthreads)
        else:
            rc = g2_batch_sum(<g2_affine_t *> &out[0, 0], <g2_affine_t *> pp, n, nthreads)
    return rc


def fixed_base(int group, const uint64_t[:, ::1] base, const uint64_t[:, ::1] scalars, uint64_t[:, ::1] out, int nthreads):
    """out[i] = scalars[i] * base[0]."""
    cdef size_t n = scalars.shape[0]
    cdef int rc
    if n == 0:
        return 0
    with nogil:
        if group == 1:
            rc = g1_fixed_base_batch(<g1_affine_t *> &out[0, 0], <g1_affine_t *> &base[0, 0],
                                     <fr_t *> &scalars[0, 0], n, nthreads)
        else:
            rc = g2_fixed_base_batch(<g2_affine_t *> &out[0, 0], <g2_affine_t *> &base[0, 0],
                                     <fr_t *> &scalars[0, 0], n, nthreads)
    return rc


def simd_available():
    """True when this CPU runs the AVX-512 IFMA MSM path."""
    return bool(msm_simd_available())


def set_simd(enable):
    """Turn the AVX-512 IFMA path on or off process-wide (results are identical
    either way); returns whether it is now on."""
    return bool(msm_simd(1 if enable else 0))


def simd_enabled():
    return bool(msm_simd(-1))


def window_bits(size_t n):
    """The Pippenger window the CPU MSM picks for n full scalars."""
    return msm_window_bits(n)
