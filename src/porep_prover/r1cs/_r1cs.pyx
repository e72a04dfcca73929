# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Native R1CS kernels, without the GIL. r1cs.py validates the matrices (index
ranges, monotone indptr) before any of these run."""
from cython.parallel cimport prange
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

import numpy as np

from porep_prover.native.cnative cimport (
    fr_lagrange_at, fr_powers, fr_t, qap_query_scalars, r1cs_eval_columns, r1cs_first_unsatisfied, r1cs_matvec,
    r1cs_parse_circom)


cdef const uint32_t *_coeff_ids(coeff_id, Py_ssize_t nnz, str what) except? NULL:
    """The uint32 coefficient indices of a tabled matrix, or NULL for one
    coefficient per entry (the caller keeps coeff_id alive)."""
    cdef const uint32_t[::1] ids
    if coeff_id is None:
        return NULL
    ids = coeff_id
    if ids.shape[0] != nnz:
        raise ValueError(f"{what}: coeff_id must have one entry per column index")
    return &ids[0] if ids.shape[0] else NULL


def matvec(const int64_t[::1] indptr, const uint32_t[::1] col, const uint64_t[:, ::1] coeff,
           const uint64_t[:, ::1] w, uint64_t[:, ::1] out, int nthreads, coeff_id=None):
    """out[:rows] = M w; coeff_id (uint32 per entry) picks each entry's coefficient
    from the table coeff (None: one coefficient per entry). r1cs.py has
    validated the indices."""
    cdef size_t rows = indptr.shape[0] - 1
    cdef uint64_t dummy[4]
    cdef const uint32_t *cp = &col[0] if col.shape[0] else <uint32_t *> dummy
    cdef const uint64_t *kp = &coeff[0, 0] if coeff.shape[0] else dummy
    cdef const uint32_t *ip = _coeff_ids(coeff_id, col.shape[0], "matvec")
    cdef int rc
    if <size_t> out.shape[0] < rows:
        raise ValueError(f"matvec: out has {out.shape[0]} rows, the matrix {rows}")
    if rows == 0:
        return
    with nogil:
        rc = r1cs_matvec(<fr_t *> &out[0, 0], &indptr[0], cp, <const fr_t *> kp, ip, coeff.shape[0], rows,
                         <const fr_t *> &w[0, 0], nthreads)
    if rc:
        raise MemoryError("matvec: out of memory")


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
                 const uint64_t[:, ::1] lagrange, uint64_t[:, ::1] out, int nthreads, coeff_id=None):
    cdef size_t rows = indptr.shape[0] - 1, ncols = out.shape[0]
    cdef int rc
    cdef uint64_t dummy[4]
    cdef const uint32_t *cp = &col[0] if col.shape[0] else <uint32_t *> dummy
    cdef const uint64_t *kp = &coeff[0, 0] if coeff.shape[0] else dummy
    cdef const uint32_t *ip = _coeff_ids(coeff_id, col.shape[0], "eval_columns")
    if ncols == 0:
        return 0
    with nogil:
        rc = r1cs_eval_columns(<fr_t *> &out[0, 0], ncols, &indptr[0], cp, <const fr_t *> kp, ip, rows,
                               <const fr_t *> &lagrange[0, 0], nthreads)
    return rc


def query_scalars(const uint64_t[:, ::1] at, const uint64_t[:, ::1] bt, const uint64_t[:, ::1] ct,
                  const uint8_t[::1] a_keep, const uint8_t[::1] b_keep, const uint64_t[:, ::1] waste,
                  uint64_t[:, ::1] ic, uint64_t[:, ::1] l, uint64_t[:, ::1] a, uint64_t[:, ::1] b, int nthreads):
    """The queries' scalars from the column evaluations (qap.h's qap_query_scalars):
    ic (k rows) and l (the rest) from beta A + alpha B + C over gamma and delta,
    a and b the A and B values their masks keep; waste is alpha, beta, 1/gamma,
    1/delta. ValueError when a length disagrees; MemoryError when memory runs out."""
    cdef size_t ncols = at.shape[0], k = ic.shape[0], na, nb
    cdef int rc
    cdef uint64_t dummy[4]
    if bt.shape[0] != ncols or ct.shape[0] != ncols or a_keep.shape[0] != ncols or b_keep.shape[0] != ncols:
        raise ValueError(f"query_scalars: {ncols} columns, but B, C or a mask has another length")
    if waste.shape[0] != 4 or k > ncols or <size_t> l.shape[0] != ncols - k:
        raise ValueError(f"query_scalars: 4 constants and ic + l = {ncols} rows are needed")
    na = int(np.count_nonzero(a_keep))
    nb = int(np.count_nonzero(b_keep))
    if <size_t> a.shape[0] != na or <size_t> b.shape[0] != nb:
        raise ValueError(f"query_scalars: the masks keep {na} and {nb} values, a and b hold {a.shape[0]} and "
                         f"{b.shape[0]}")
    if ncols == 0:
        return
    with nogil:
        rc = qap_query_scalars(<fr_t *> (&ic[0, 0] if k else dummy), <fr_t *> (&l[0, 0] if ncols > k else dummy),
                               <fr_t *> (&a[0, 0] if na else dummy), <fr_t *> (&b[0, 0] if nb else dummy),
                               <const fr_t *> &at[0, 0], <const fr_t *> &bt[0, 0], <const fr_t *> &ct[0, 0], ncols,
                               k, &a_keep[0], &b_keep[0], <const fr_t *> &waste[0, 0], nthreads)
    if rc:
        raise MemoryError("query_scalars: out of memory")


def lagrange_at(const uint64_t[:, ::1] tau, const uint64_t[:, ::1] omega, uint64_t[:, ::1] out, int log_n,
                int nthreads):
    """out[i] = L_i(tau) over the domain <omega[0]> of size 2^log_n."""
    cdef int rc
    with nogil:
        rc = fr_lagrange_at(<fr_t *> &out[0, 0], log_n, <const fr_t *> &omega[0, 0], <const fr_t *> &tau[0, 0],
                            nthreads)
    return rc


def parse_circom_constraints(const uint8_t[::1] data, size_t ncons, uint32_t nwires, int nthreads):
    """CSR matrices (indptr, col, coeff limbs) x 3 from circom's constraints
    section. Returns (code, offset, matrices): code 0, or the R1CS_* error with
    the byte offset where it was found."""
    cdef int64_t nnz[3]
    cdef size_t where = 0
    cdef int rc, m
    cdef int64_t *ip[3]
    cdef uint32_t *cp[3]
    cdef fr_t *kp[3]
    cdef const uint8_t *dp = &data[0] if data.shape[0] else <const uint8_t *> nnz
    cdef size_t length = data.shape[0]
    cdef int64_t[::1] ipv
    cdef uint32_t[::1] cv
    cdef uint64_t[:, ::1] kv
    with nogil:
        rc = r1cs_parse_circom(dp, length, ncons, nwires, nnz, NULL, NULL, NULL, &where)
    if rc:
        return rc, where, None
    mats = []
    for m in range(3):
        indptr = np.zeros(ncons + 1, dtype=np.int64)
        col = np.zeros(max(nnz[m], 1), dtype=np.uint32)
        coeff = np.zeros((max(nnz[m], 1), 4), dtype=np.uint64)
        ipv, cv, kv = indptr, col, coeff
        ip[m], cp[m], kp[m] = &ipv[0], &cv[0], <fr_t *> &kv[0, 0]
        mats.append((indptr, col[:nnz[m]], coeff[:nnz[m]]))
    with nogil:
        rc = r1cs_parse_circom(dp, length, ncons, nwires, nnz, ip, cp, kp, &where)
    return rc, where, mats


def powers(const uint64_t[:, ::1] start, const uint64_t[:, ::1] step, uint64_t[:, ::1] out, int nthreads):
    """out[i] = start * step^i."""
    cdef size_t n = out.shape[0]
    if n == 0:
        return
    with nogil:
        fr_powers(<fr_t *> &out[0, 0], n, <const fr_t *> &start[0, 0], <const fr_t *> &step[0, 0], nthreads)


def gather_rows(const uint64_t[:, ::1] src, const int64_t[::1] idx, uint64_t[:, ::1] out, int nthreads):
    """out[i] = src[idx[i]] for every i (rows of 4 limbs), on nthreads threads."""
    cdef Py_ssize_t n = idx.shape[0], i
    cdef int64_t r
    cdef int j
    if src.shape[1] != 4 or out.shape[1] != 4 or out.shape[0] < n:
        raise ValueError(f"gather_rows: rows of 4 limbs and room for {n} rows are needed")
    if n and (int(np.min(idx)) < 0 or int(np.max(idx)) >= src.shape[0]):
        raise IndexError(f"gather_rows: an index is outside [0, {src.shape[0]})")
    with nogil:
        for i in prange(n, num_threads=max(1, nthreads), schedule="static"):
            r = idx[i]
            for j in range(4):
                out[i, j] = src[r, j]
