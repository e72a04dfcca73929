# SPDX-License-Identifier: Apache-2.0
# Cython declarations of the native C API (see the headers for contracts).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t


cdef extern from "field.h" nogil:
    ctypedef struct fr_t:
        uint64_t l[4]
    ctypedef struct fq_t:
        uint64_t l[6]
    ctypedef struct fq2_t:
        fq_t c0
        fq_t c1
    void fr_add(fr_t *r, const fr_t *a, const fr_t *b)
    void fr_sub(fr_t *r, const fr_t *a, const fr_t *b)
    void fr_mul(fr_t *r, const fr_t *a, const fr_t *b)
    void fr_neg(fr_t *r, const fr_t *a)
    void fr_inv(fr_t *r, const fr_t *a)
    void fq_add(fq_t *r, const fq_t *a, const fq_t *b)
    void fq_sub(fq_t *r, const fq_t *a, const fq_t *b)
    void fq_mul(fq_t *r, const fq_t *a, const fq_t *b)
    void fq_neg(fq_t *r, const fq_t *a)
    void fq_inv(fq_t *r, const fq_t *a)
    int fq_sqrt(fq_t *r, const fq_t *a)
    void fq_to_mont(fq_t *r, const fq_t *a)
    void fq_from_mont(fq_t *r, const fq_t *a)
    void fq2_mul(fq2_t *r, const fq2_t *a, const fq2_t *b)
    void fq2_sqr(fq2_t *r, const fq2_t *a)
    void fq2_inv(fq2_t *r, const fq2_t *a)
    int fq2_sqrt(fq2_t *r, const fq2_t *a)
    int POREP_MONT_ASM_ENABLED


cdef extern from "ec.h" nogil:
    ctypedef struct g1_affine_t:
        fq_t x
        fq_t y
    ctypedef struct g2_affine_t:
        fq2_t x
        fq2_t y
    ctypedef struct g1_xyzz_t:
        pass
    ctypedef struct g2_xyzz_t:
        pass
    ctypedef struct g1_jac_t:
        pass
    ctypedef struct g2_jac_t:
        pass
    void g1_generator(g1_affine_t *p)
    void g2_generator(g2_affine_t *p)
    int g1_affine_on_curve(const g1_affine_t *p)
    int g2_affine_on_curve(const g2_affine_t *p)
    int g1_affine_in_subgroup(const g1_affine_t *p)
    int g2_affine_in_subgroup(const g2_affine_t *p)
    void g1_affine_neg(g1_affine_t *r, const g1_affine_t *p)
    void g2_affine_neg(g2_affine_t *r, const g2_affine_t *p)
    void g1_xyzz_from_affine(g1_xyzz_t *r, const g1_affine_t *p)
    void g2_xyzz_from_affine(g2_xyzz_t *r, const g2_affine_t *p)
    void g1_xyzz_set_inf(g1_xyzz_t *p)
    void g2_xyzz_set_inf(g2_xyzz_t *p)
    void g1_xyzz_add(g1_xyzz_t *r, const g1_xyzz_t *p, const g1_xyzz_t *q)
    void g2_xyzz_add(g2_xyzz_t *r, const g2_xyzz_t *p, const g2_xyzz_t *q)
    void g1_xyzz_add_affine(g1_xyzz_t *r, const g1_xyzz_t *p, const g1_affine_t *q)
    void g2_xyzz_add_affine(g2_xyzz_t *r, const g2_xyzz_t *p, const g2_affine_t *q)
    void g1_xyzz_dbl(g1_xyzz_t *r, const g1_xyzz_t *p)
    void g2_xyzz_dbl(g2_xyzz_t *r, const g2_xyzz_t *p)
    void g1_xyzz_to_affine(g1_affine_t *r, const g1_xyzz_t *p)
    void g2_xyzz_to_affine(g2_affine_t *r, const g2_xyzz_t *p)
    void g1_xyzz_mul_limbs(g1_xyzz_t *r, const g1_affine_t *p, const uint64_t *k, int nbits)
    void g2_xyzz_mul_limbs(g2_xyzz_t *r, const g2_affine_t *p, const uint64_t *k, int nbits)
    void g1_jac_set_inf(g1_jac_t *p)
    void g2_jac_set_inf(g2_jac_t *p)
    void g1_jac_from_affine(g1_jac_t *r, const g1_affine_t *p)
    void g2_jac_from_affine(g2_jac_t *r, const g2_affine_t *p)
    void g1_jac_add_affine(g1_jac_t *r, const g1_jac_t *p, const g1_affine_t *q)
    void g2_jac_add_affine(g2_jac_t *r, const g2_jac_t *p, const g2_affine_t *q)
    void g1_jac_add(g1_jac_t *r, const g1_jac_t *p, const g1_jac_t *q)
    void g2_jac_add(g2_jac_t *r, const g2_jac_t *p, const g2_jac_t *q)
    void g1_jac_dbl(g1_jac_t *r, const g1_jac_t *p)
    void g2_jac_dbl(g2_jac_t *r, const g2_jac_t *p)
    void g1_jac_to_affine(g1_affine_t *r, const g1_jac_t *p)
    void g2_jac_to_affine(g2_affine_t *r, const g2_jac_t *p)


cdef extern from "encoding.h" nogil:
    int ENC_OK, ENC_BAD_FLAGS, ENC_NOT_CANONICAL, ENC_NOT_ON_CURVE, ENC_NOT_IN_SUBGROUP
    void g1_encode_batch(uint8_t *out, const g1_affine_t *p, size_t n, int compressed, int nthreads)
    void g2_encode_batch(uint8_t *out, const g2_affine_t *p, size_t n, int compressed, int nthreads)
    int g1_decode_batch(g1_affine_t *p, const uint8_t *inp, size_t n, int compressed, int check_subgroup,
                        int nthreads, size_t *bad_index)
    int g2_decode_batch(g2_affine_t *p, const uint8_t *inp, size_t n, int compressed, int check_subgroup,
                        int nthreads, size_t *bad_index)
    size_t g1_first_not_in_subgroup(const g1_affine_t *p, size_t n, int nthreads)
    size_t g2_first_not_in_subgroup(const g2_affine_t *p, size_t n, int nthreads)
    size_t g1_first_not_on_curve(const g1_affine_t *p, size_t n, int nthreads)
    size_t g2_first_not_on_curve(const g2_affine_t *p, size_t n, int nthreads)
    void fr_encode_batch(uint8_t *out, const fr_t *a, size_t n, int nthreads)
    size_t fr_decode_batch(fr_t *a, const uint8_t *inp, size_t n, int nthreads)
    void fr_to_mont_batch(fr_t *a, size_t n, int nthreads)
    void fr_from_mont_batch(fr_t *a, size_t n, int nthreads)


cdef extern from "msm.h" nogil:
    int msm_window_bits(size_t n)
    int msm_simd_available()
    int msm_simd(int enable)
    void msm_stop_on(const int32_t *flag)
    ctypedef struct msm_stats_t:
        size_t zeros, ones, full
        int window_bits
    int g1_msm(g1_affine_t *out, const g1_affine_t *points, const fr_t *scalars, size_t n, int nthreads,
               msm_stats_t *stats)
    int g2_msm(g2_affine_t *out, const g2_affine_t *points, const fr_t *scalars, size_t n, int nthreads,
               msm_stats_t *stats)
    int g1_batch_sum(g1_affine_t *out, const g1_affine_t *points, size_t n, int nthreads)
    int g2_batch_sum(g2_affine_t *out, const g2_affine_t *points, size_t n, int nthreads)
    int g1_fixed_base_batch(g1_affine_t *out, const g1_affine_t *base, const fr_t *scalars, size_t n, int nthreads)
    int g2_fixed_base_batch(g2_affine_t *out, const g2_affine_t *base, const fr_t *scalars, size_t n, int nthreads)
    void g1_msm_naive(g1_affine_t *out, const g1_affine_t *points, const fr_t *scalars, size_t n)
    void g2_msm_naive(g2_affine_t *out, const g2_affine_t *points, const fr_t *scalars, size_t n)


cdef extern from "ntt.h" nogil:
    int fr_simd_available()
    int ntt_simd(int enable)
    void ntt_stop_on(const int32_t *flag)
    void fr_powers(fr_t *out, size_t n, const fr_t *start, const fr_t *step, int nthreads)
    void fr_root_of_unity(fr_t *r, int log_n)
    void fr_root_of_unity_snarkjs(fr_t *r, int log_n)
    int fr_ntt(fr_t *data, int log_n, int inverse, int coset, int nthreads)
    int fr_ntt_ex(fr_t *data, int log_n, const fr_t *omega, int inverse, const fr_t *shift, int nthreads)
    int fr_h_poly_bellman(fr_t *a, fr_t *b, fr_t *c, int log_n, int nthreads)
    int fr_h_poly_snarkjs(fr_t *a, fr_t *b, fr_t *c, int log_n, int nthreads)


cdef extern from "qap.h" nogil:
    int r1cs_eval_columns(fr_t *out, size_t ncols, const int64_t *indptr, const uint32_t *col, const fr_t *coeff,
                          const uint32_t *coeff_id, size_t rows, const fr_t *lagrange, int nthreads)
    int qap_query_scalars(fr_t *ic, fr_t *l, fr_t *a, fr_t *b, const fr_t *at, const fr_t *bt, const fr_t *ct,
                          size_t ncols, size_t k, const uint8_t *a_keep, const uint8_t *b_keep, const fr_t *waste,
                          int nthreads)


cdef extern from "r1cs.h" nogil:
    int r1cs_matvec(fr_t *out, const int64_t *indptr, const uint32_t *col, const fr_t *coeff,
                    const uint32_t *coeff_id, size_t table_len, size_t rows, const fr_t *w, int nthreads)
    size_t r1cs_first_unsatisfied(const fr_t *a, const fr_t *b, const fr_t *c, size_t n, int nthreads)
    int fr_lagrange_at(fr_t *lagrange, int log_n, const fr_t *omega, const fr_t *tau, int nthreads)
    int R1CS_TRUNCATED, R1CS_BAD_WIRE, R1CS_BAD_COEFF
    int r1cs_parse_circom(const uint8_t *data, size_t len, size_t ncons, uint32_t nwires, int64_t *nnz,
                          int64_t *const *indptr, uint32_t *const *col, fr_t *const *coeff, size_t *where)
