# SPDX-License-Identifier: Apache-2.0
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Native point kernels for G1 (group=1, rows of 12 limbs) and G2 (group=2,
rows of 24 limbs): encodings, checks, and single-point group operations.
Callers (points.py) check shapes and types; these trust them."""
from libc.stdint cimport uint8_t, uint64_t

from porep_prover.native.cnative cimport (
    g1_affine_in_subgroup, g1_affine_neg, g1_affine_t, g1_decode_batch, g1_encode_batch, g1_first_not_in_subgroup,
    g1_first_not_on_curve, g1_generator, g1_jac_add, g1_jac_add_affine, g1_jac_dbl, g1_jac_from_affine, g1_jac_set_inf, g1_jac_t,
    g1_jac_to_affine, g1_xyzz_add, g1_xyzz_add_affine, g1_xyzz_dbl, g1_xyzz_set_inf, g1_xyzz_from_affine, g1_xyzz_mul_limbs, g1_xyzz_t,
    g1_xyzz_to_affine, g2_affine_neg, g2_affine_t, g2_decode_batch, g2_encode_batch, g2_first_not_in_subgroup,
    g2_first_not_on_curve, g2_generator, g2_jac_add, g2_jac_add_affine, g2_jac_dbl, g2_jac_from_affine, g2_jac_set_inf, g2_jac_t,
    g2_jac_to_affine, g2_xyzz_add, g2_xyzz_add_affine, g2_xyzz_dbl, g2_xyzz_set_inf, g2_xyzz_from_affine, g2_xyzz_mul_limbs, g2_xyzz_t,
    g2_xyzz_to_affine)


def decode(int group, const uint8_t[::1] data, uint64_t[:, ::1] out, bint compressed, bint check_subgroup,
           int nthreads):
    """Decode len(out) points. Returns (0, -1) or (error code, first bad index)."""
    cdef size_t n = out.shape[0], bad = 0
    cdef int rc
    if n == 0:
        return 0, -1
    with nogil:
        if group == 1:
            rc = g1_decode_batch(<g1_affine_t *> &out[0, 0], &data[0], n, compressed, check_subgroup, nthreads, &bad)
        else:
            rc = g2_decode_batch(<g2_affine_t *> &out[0, 0], &data[0], n, compressed, check_subgroup, nthreads, &bad)
    if rc:
        return rc, <Py_ssize_t> bad
    return 0, -1


def encode(int group, const uint64_t[:, ::1] points, uint8_t[::1] out, bint compressed, int nthreads):
    cdef size_t n = points.shape[0]
    if n == 0:
        return
    with nogil:
        if group == 1:
            g1_encode_batch(&out[0], <g1_affine_t *> &points[0, 0], n, compressed, nthreads)
        else:
            g2_encode_batch(&out[0], <g2_affine_t *> &points[0, 0], n, compressed, nthreads)


def first_invalid(int group, const uint64_t[:, ::1] points, bint subgroup, int nthreads):
    """Lowest index not on the curve (or, with subgroup, not in the subgroup); -1 if none."""
    cdef size_t n = points.shape[0], bad
    if n == 0:
        return -1
    with nogil:
        if group == 1:
            bad = (g1_first_not_in_subgroup if subgroup else g1_first_not_on_curve)(
                <g1_affine_t *> &points[0, 0], n, nthreads)
        else:
            bad = (g2_first_not_in_subgroup if subgroup else g2_first_not_on_curve)(
                <g2_affine_t *> &points[0, 0], n, nthreads)
    return -1 if bad == n else <Py_ssize_t> bad


def generator(int group, uint64_t[:, ::1] out):
    if group == 1:
        g1_generator(<g1_affine_t *> &out[0, 0])
    else:
        g2_generator(<g2_affine_t *> &out[0, 0])


def add(int group, const uint64_t[:, ::1] a, const uint64_t[:, ::1] b, uint64_t[:, ::1] out):
    """out[i] = a[i] + b[i] (xyzz mixed addition, then normalised)."""
    cdef size_t i
    cdef g1_xyzz_t t1
    cdef g2_xyzz_t t2
    for i in range(out.shape[0]):
        if group == 1:
            g1_xyzz_from_affine(&t1, <g1_affine_t *> &a[i, 0])
            g1_xyzz_add_affine(&t1, &t1, <g1_affine_t *> &b[i, 0])
            g1_xyzz_to_affine(<g1_affine_t *> &out[i, 0], &t1)
        else:
            g2_xyzz_from_affine(&t2, <g2_affine_t *> &a[i, 0])
            g2_xyzz_add_affine(&t2, &t2, <g2_affine_t *> &b[i, 0])
            g2_xyzz_to_affine(<g2_affine_t *> &out[i, 0], &t2)


def neg(int group, const uint64_t[:, ::1] a, uint64_t[:, ::1] out):
    cdef size_t i
    for i in range(out.shape[0]):
        if group == 1:
            g1_affine_neg(<g1_affine_t *> &out[i, 0], <g1_affine_t *> &a[i, 0])
        else:
            g2_affine_neg(<g2_affine_t *> &out[i, 0], <g2_affine_t *> &a[i, 0])


def mul(int group, const uint64_t[:, ::1] a, const uint64_t[:, ::1] k, uint64_t[:, ::1] out):
    """out[i] = k[i] * a[i]; k canonical 256-bit little-endian limbs (xyzz double-and-add)."""
    cdef size_t i
    cdef g1_xyzz_t t1
    cdef g2_xyzz_t t2
    with nogil:
        for i in range(out.shape[0]):
            if group == 1:
                g1_xyzz_mul_limbs(&t1, <g1_affine_t *> &a[i, 0], &k[i, 0], 256)
                g1_xyzz_to_affine(<g1_affine_t *> &out[i, 0], &t1)
            else:
                g2_xyzz_mul_limbs(&t2, <g2_affine_t *> &a[i, 0], &k[i, 0], 256)
                g2_xyzz_to_affine(<g2_affine_t *> &out[i, 0], &t2)


def mul_jacobian(int group, const uint64_t[:, ::1] a, const uint64_t[:, ::1] k, uint64_t[:, ::1] out):
    """The same product through the Jacobian formulas, an independent check of
    the xyzz ones: left-to-right double-and-add using full additions for odd bit
    positions and mixed additions for even ones, so every formula is exercised."""
    cdef size_t i
    for i in range(out.shape[0]):
        if group == 1:
            _jac1(&k[i, 0], <g1_affine_t *> &a[i, 0], <g1_affine_t *> &out[i, 0])
        else:
            _jac2(&k[i, 0], <g2_affine_t *> &a[i, 0], <g2_affine_t *> &out[i, 0])


cdef void _jac1(const uint64_t *k, const g1_affine_t *a, g1_affine_t *out) noexcept nogil:
    cdef g1_jac_t acc, base
    cdef int bit
    g1_jac_set_inf(&acc)
    g1_jac_from_affine(&base, a)
    for bit in range(255, -1, -1):
        g1_jac_dbl(&acc, &acc)
        if (k[bit // 64] >> (bit % 64)) & 1:
            if bit & 1:
                g1_jac_add(&acc, &acc, &base)
            else:
                g1_jac_add_affine(&acc, &acc, a)
    g1_jac_to_affine(out, &acc)


cdef void _jac2(const uint64_t *k, const g2_affine_t *a, g2_affine_t *out) noexcept nogil:
    cdef g2_jac_t acc, base
    cdef int bit
    g2_jac_set_inf(&acc)
    g2_jac_from_affine(&base, a)
    for bit in range(255, -1, -1):
        g2_jac_dbl(&acc, &acc)
        if (k[bit // 64] >> (bit % 64)) & 1:
            if bit & 1:
                g2_jac_add(&acc, &acc, &base)
            else:
                g2_jac_add_affine(&acc, &acc, a)
    g2_jac_to_affine(out, &acc)


def xyzz_windows(int group, const uint64_t[:, ::1] partials, int windows, int per_window, int c,
                 const uint64_t[:, ::1] extra, uint64_t[:, ::1] out):
    """out[0] = sum over windows w (from the top, c doublings between) of the
    per_window xyzz partials of window w, plus every xyzz point in extra;
    normalised to affine. Rows are xyzz points in the package layout (x, y,
    zz, zzz): the GPU MSM's last step."""
    cdef g1_xyzz_t a1, t1
    cdef g2_xyzz_t a2, t2
    cdef int w, i, k
    if group == 1:
        g1_xyzz_set_inf(&a1)
        for w in range(windows - 1, -1, -1):
            for k in range(c):
                g1_xyzz_dbl(&a1, &a1)
            for i in range(per_window):
                g1_xyzz_add(&a1, &a1, <g1_xyzz_t *> &partials[w * per_window + i, 0])
        for i in range(extra.shape[0]):
            g1_xyzz_add(&a1, &a1, <g1_xyzz_t *> &extra[i, 0])
        g1_xyzz_to_affine(<g1_affine_t *> &out[0, 0], &a1)
    else:
        g2_xyzz_set_inf(&a2)
        for w in range(windows - 1, -1, -1):
            for k in range(c):
                g2_xyzz_dbl(&a2, &a2)
            for i in range(per_window):
                g2_xyzz_add(&a2, &a2, <g2_xyzz_t *> &partials[w * per_window + i, 0])
        for i in range(extra.shape[0]):
            g2_xyzz_add(&a2, &a2, <g2_xyzz_t *> &extra[i, 0])
        g2_xyzz_to_affine(<g2_affine_t *> &out[0, 0], &a2)
