# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Native R1CS kernels, without the GIL. r1cs.py validates the matrices (index
ranges, monotone indptr) before any of these run."""
from libc.stdint cimport int64_t, uint32_t, uint64_t

from porep_prover.native.cnative cimport (
    fr_lagrange_at, fr_powers, fr_t, r1cs_eval_columns, r1cs_first_unsatisfied, r1cs_matvec)


def matvec(const int64_t[::1] indptr, const uint32_t[::1] col, const uint64_t[:, ::1] coeff,
           const uint64_t[:, ::1] w, uint64_t[:, ::1] out, int nthreads):
    cdef size_t rows = indptr.shape[0] - 1
    cdef uint64_t dummy[4]
    cdef const uint32_t *cp = &col[0] if col.shape[0] else <uint32_t *> dummy
    cdef const uint64_t *kp = &coeff[0, 0] if coeff.shape[0] else dummy
    if rows == 0:
        return
    with nogil:
        r1cs_matvec(<fr_t *> &out[0, 0], &indptr[0], cp, <const fr_t *> kp, rows, <const fr_t *> &w[0, 0],
                    nthreads)


def first_unsatisfied(const uint64_t[:, ::1] a, const uint64_t[:, ::1] b, const uint64_t[:, ::1] c,
                      int nthreads):
    """Index of the first i with a[i] b[i] != c[i], or -1."""
    cdef size_t n = a.shape[0], bad
    if n == 0:
        return -1
    with nogil:
        bad = r1cs_first_unsatisfied(<const fr_t *> &a[0, 0], <const fr_t *> &b[0, 0],
                                     <const fr_t *> &c[0, 0], n, nthreads)
    return -1 if bad == n else <Py_ssize_t> bad


def eval_columns(const int64_t[::1] indptr, const uint32_t[::1] col, const uint64_t[:, ::1] coeff,
                 const uint64_t[:, ::1] lagrange, uint64_t[:, ::1] out, int nthreads):
    cdef size_t rows = indptr.shape[0] - 1, ncols = out.shape[0]
    cdef int rc
    cdef uint64_t dummy[4]
    cdef const uint32_t *cp = &col[0] if col.shape[0] else <uint32_t *> dummy
    cdef const uint64_t *kp = &coeff[0, 0] if coeff.shape[0] else dummy
    if ncols == 0:
        return 0
    with nogil:
        rc = r1cs_eval_columns(<fr_t *> &out[0, 0], ncols, &indptr[0], cp, <const fr_t *> kp, rows,
                               <const fr_t *> &lagrange[0, 0], nthreads)
    return rc


def lagrange_at(const uint64_t[:, ::1] tau, uint64_t[:, ::1] out, int log_n, int nthreads):
    cdef int rc
    with nogil:
        rc = fr_lagrange_at(<fr_t *> &out[0, 0], log_n, <const fr_t *> &tau[0, 0], nthreads)
    return rc


def powers(const uint64_t[:, ::1] start, const uint64_t[:, ::1] step, uint64_t[:, ::1] out, int nthreads):
    """out[i] = start * step^i."""
    cdef size_t n = out.shape[0]
    if n == 0:
        return
    with nogil:
        fr_powers(<fr_t *> &out[0, 0], n, <const fr_t *> &start[0, 0], <const fr_t *> &step[0, 0], nthreads)
