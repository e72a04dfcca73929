# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Native element-wise kernels over Fr, Fq and Fq2 arrays (uint64 limbs,
Montgomery form). Callers (fr_array.py, the tests) check shapes; these trust them."""
from libc.stdint cimport uint8_t, uint64_t

from porep_prover.native.cnative cimport (
    POREP_MONT_ASM_ENABLED, fq2_inv, fq2_mul, fq2_sqr, fq2_sqrt, fq2_t, fq_add, fq_from_mont, fq_inv, fq_mul,
    fq_neg, fq_sqrt, fq_sub, fq_t, fq_to_mont, fr_add, fr_decode_batch, fr_encode_batch, fr_from_mont_batch,
    fr_inv, fr_mul, fr_neg, fr_sub, fr_t, fr_to_mont_batch)

ASSEMBLY = bool(POREP_MONT_ASM_ENABLED)

cdef enum:
    OP_ADD = 0
    OP_SUB = 1
    OP_MUL = 2
    OP_NEG = 3
    OP_INV = 4
    OP_SQR = 5
    OP_SQRT = 6

OPS = {"add": OP_ADD, "sub": OP_SUB, "mul": OP_MUL, "neg": OP_NEG, "inv": OP_INV, "sqr": OP_SQR, "sqrt": OP_SQRT}


def fr_decode(const uint8_t[::1] data, uint64_t[:, ::1] out, int nthreads):
    """Canonical 32-byte little-endian values -> Montgomery limbs. Returns the
    first non-canonical index, or -1."""
    cdef size_t n = out.shape[0], bad
    if n == 0:
        return -1
    with nogil:
        bad = fr_decode_batch(<fr_t *> &out[0, 0], &data[0], n, nthreads)
    return -1 if bad == n else <Py_ssize_t> bad


def fr_encode(const uint64_t[:, ::1] a, uint8_t[::1] out, int nthreads):
    cdef size_t n = a.shape[0]
    if n:
        with nogil:
            fr_encode_batch(&out[0], <fr_t *> &a[0, 0], n, nthreads)


def fr_montgomery(uint64_t[:, ::1] a, bint into, int nthreads):
    """In place: canonical -> Montgomery (into=True) or back."""
    cdef size_t n = a.shape[0]
    if n == 0:
        return
    with nogil:
        if into:
            fr_to_mont_batch(<fr_t *> &a[0, 0], n, nthreads)
        else:
            fr_from_mont_batch(<fr_t *> &a[0, 0], n, nthreads)


def fr_apply(int op, const uint64_t[:, ::1] a, const uint64_t[:, ::1] b, uint64_t[:, ::1] out):
    """out = a op b element-wise (b unused for unary ops; inverse of 0 is 0)."""
    cdef size_t i, n = out.shape[0]
    cdef const fr_t *pa
    cdef const fr_t *pb
    cdef fr_t *po
    if n == 0:
        return
    pa = <const fr_t *> &a[0, 0]
    pb = <const fr_t *> &b[0, 0]
    po = <fr_t *> &out[0, 0]
    with nogil:
        for i in range(n):
            if op == OP_ADD:
                fr_add(&po[i], &pa[i], &pb[i])
            elif op == OP_SUB:
                fr_sub(&po[i], &pa[i], &pb[i])
            elif op == OP_MUL:
                fr_mul(&po[i], &pa[i], &pb[i])
            elif op == OP_NEG:
                fr_neg(&po[i], &pa[i])
            elif op == OP_INV:
                fr_inv(&po[i], &pa[i])


def fq_apply(int op, const uint64_t[:, ::1] a, const uint64_t[:, ::1] b, uint64_t[:, ::1] out):
    """out = a op b over Fq (Montgomery). For OP_SQRT, returns a uint8 list of
    which inputs were squares."""
    cdef size_t i, n = out.shape[0]
    cdef const fq_t *pa
    cdef const fq_t *pb
    cdef fq_t *po
    ok = bytearray(n)
    cdef uint8_t[::1] okv = ok
    if n == 0:
        return ok
    pa = <const fq_t *> &a[0, 0]
    pb = <const fq_t *> &b[0, 0]
    po = <fq_t *> &out[0, 0]
    with nogil:
        for i in range(n):
            if op == OP_ADD:
                fq_add(&po[i], &pa[i], &pb[i])
            elif op == OP_SUB:
                fq_sub(&po[i], &pa[i], &pb[i])
            elif op == OP_MUL:
                fq_mul(&po[i], &pa[i], &pb[i])
            elif op == OP_NEG:
                fq_neg(&po[i], &pa[i])
            elif op == OP_INV:
                fq_inv(&po[i], &pa[i])
            elif op == OP_SQRT:
                okv[i] = fq_sqrt(&po[i], &pa[i])
    return ok


def fq_montgomery(uint64_t[:, ::1] a, bint into):
    cdef size_t i, n = a.shape[0]
    cdef fq_t *p
    if n == 0:
        return
    p = <fq_t *> &a[0, 0]
    with nogil:
        for i in range(n):
            if into:
                fq_to_mont(&p[i], &p[i])
            else:
                fq_from_mont(&p[i], &p[i])


def fq2_apply(int op, const uint64_t[:, ::1] a, const uint64_t[:, ::1] b, uint64_t[:, ::1] out):
    """Fq2 products, squares, inverses and square roots (rows of 12 limbs: c0, c1)."""
    cdef size_t i, n = out.shape[0]
    cdef const fq2_t *pa
    cdef const fq2_t *pb
    cdef fq2_t *po
    ok = bytearray(n)
    cdef uint8_t[::1] okv = ok
    if n == 0:
        return ok
    pa = <const fq2_t *> &a[0, 0]
    pb = <const fq2_t *> &b[0, 0]
    po = <fq2_t *> &out[0, 0]
    with nogil:
        for i in range(n):
            if op == OP_MUL:
                fq2_mul(&po[i], &pa[i], &pb[i])
            elif op == OP_SQR:
                fq2_sqr(&po[i], &pa[i])
            elif op == OP_INV:
                fq2_inv(&po[i], &pa[i])
            elif op == OP_SQRT:
                okv[i] = fq2_sqrt(&po[i], &pa[i])
    return ok
