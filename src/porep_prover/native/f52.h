/* SPDX-License-Identifier: Apache-2.0 */
/* Fq and Fq2 on AVX-512 IFMA: eight elements at a time, one per 64-bit lane.
 *
 * "f52" form: an Fq element as 8 limbs of 52 bits (little-endian) in
 * Montgomery form with R52 = 2^416. In memory (f52_t) an element is 64 bytes,
 * one cache line, canonical (< p); in registers (f52v) limb k of eight
 * elements sits in l[k], and values may be anything in [0, 2p] (every
 * operation accepts and returns that range, limbs always < 2^52).
 *
 * This form lives only inside the MSM: points are converted in when an MSM
 * starts and bucket sums converted out (f52_from_std / f52_to_std, one
 * scalar Montgomery product each). Everything here needs IFMA; callers guard
 * with F52_TARGET and a runtime CPU check. */
#ifndef POREP_F52_H
#define POREP_F52_H

#include <immintrin.h>
#include <stdint.h>

#include "field.h"

#define F52_TARGET __attribute__((target("avx512f,avx512ifma,avx512dq,avx512bw,avx512vl")))
#define F52_INLINE static inline __attribute__((always_inline)) F52_TARGET
#define F52_MASK ((1ULL << 52) - 1)

typedef struct { uint64_t l[8]; } __attribute__((aligned(64))) f52_t;
typedef struct { __m512i l[8]; } f52v;

static const uint64_t F52_P[8] = FQ52_MODULUS;
static const uint64_t F52_P2[8] = FQ52_MODULUS_2;
static const f52_t F52_ONE = {FQ52_ONE};
static const fq_t F52_TO52 = {FQ_TO52};       /* canonical 2^416 mod p (see f52_from_std) */
static const fq_t F52_FROM52 = {FQ_FROM52};   /* canonical 2^352 mod p (see f52_to_std) */

/* ------------------------------------------------------------------ scalar form changes */

/* 6 x 64-bit limbs -> 8 x 52-bit limbs (value < 2^384 unchanged). */
static inline void f52_pack(f52_t *r, const uint64_t *x)
{
    for (int k = 0; k < 8; k++) {
        int bit = 52 * k, j = bit / 64, s = bit % 64;
        uint64_t v = x[j] >> s;
        if (s > 12 && j + 1 < 6) v |= x[j + 1] << (64 - s);
        r->l[k] = v & F52_MASK;
    }
}

static inline void f52_unpack(uint64_t *x, const f52_t *a)
{
    for (int j = 0; j < 6; j++) x[j] = 0;
    for (int k = 0; k < 8; k++) {
        int bit = 52 * k, j = bit / 64, s = bit % 64;
        if (j < 6) x[j] |= a->l[k] << s;
        if (s > 12 && j + 1 < 6) x[j + 1] |= a->l[k] >> (64 - s);
    }
}

/* std Montgomery (a 2^384, canonical) -> f52 (a 2^416, canonical):
 * fq_mul(x, 2^416) = x 2^416 / 2^384 = a 2^416. */
static inline void f52_from_std(f52_t *r, const fq_t *x)
{
    fq_t t;
    fq_mul(&t, x, &F52_TO52);
    f52_pack(r, t.l);
}

/* f52 (a 2^416, any value below 2p) -> std: fq_mul(y, 2^352) = a 2^416 2^352 /
 * 2^384, canonical since y < 2p and 2^352 mod p < p keep the product below 2p. */
static inline void f52_to_std(fq_t *r, const f52_t *a)
{
    fq_t t;
    f52_unpack(t.l, a);
    fq_mul(r, &t, &F52_FROM52);
}

/* ------------------------------------------------------------------ vector arithmetic */

F52_INLINE __m512i f52_bcast(uint64_t v) { return _mm512_set1_epi64((long long)v); }

/* Propagate carries so every limb is < 2^52 (signed limbs allowed in, value >= 0). */
F52_INLINE void f52v_normalize(f52v *a)
{
    const __m512i mask = f52_bcast(F52_MASK);
    for (int k = 0; k < 7; k++) {
        a->l[k + 1] = _mm512_add_epi64(a->l[k + 1], _mm512_srai_epi64(a->l[k], 52));
        a->l[k] = _mm512_and_si512(a->l[k], mask);
    }
}

/* r = a - m where that is >= 0, else a (per lane); a, m normalised, r normalised. */
F52_INLINE void f52v_sub_if_ge(f52v *r, const f52v *a, const uint64_t *m)
{
    const __m512i mask = f52_bcast(F52_MASK);
    __m512i t[8], borrow = _mm512_setzero_si512();
    for (int k = 0; k < 8; k++) {
        __m512i d = _mm512_sub_epi64(_mm512_add_epi64(a->l[k], borrow), f52_bcast(m[k]));
        borrow = _mm512_srai_epi64(d, 52);
        t[k] = _mm512_and_si512(d, mask);
    }
    __mmask8 ge = _mm512_cmpge_epi64_mask(borrow, _mm512_setzero_si512());
    for (int k = 0; k < 8; k++) r->l[k] = _mm512_mask_mov_epi64(a->l[k], ge, t[k]);
}

F52_INLINE void f52v_add(f52v *r, const f52v *a, const f52v *b)
{
    f52v s;
    for (int k = 0; k < 8; k++) s.l[k] = _mm512_add_epi64(a->l[k], b->l[k]);
    f52v_normalize(&s);
    f52v_sub_if_ge(r, &s, F52_P2);
}

/* a + b without the final reduction, for operands that only feed a product. */
F52_INLINE void f52v_add_lazy(f52v *r, const f52v *a, const f52v *b)
{
    for (int k = 0; k < 8; k++) r->l[k] = _mm512_add_epi64(a->l[k], b->l[k]);
    f52v_normalize(r);
}

/* a - b + 2p, in [0, 4p]: for operands that only feed a product (f52v_mul
 * accepts inputs up to 8p: 64 p^2 < p 2^416). */
F52_INLINE void f52v_sub_lazy(f52v *r, const f52v *a, const f52v *b)
{
    for (int k = 0; k < 8; k++) r->l[k] = _mm512_sub_epi64(_mm512_add_epi64(a->l[k], f52_bcast(F52_P2[k])), b->l[k]);
    f52v_normalize(r);
}

/* a - b + 2p, in [0, 2p] for a, b in [0, 2p]. */
F52_INLINE void f52v_sub(f52v *r, const f52v *a, const f52v *b)
{
    f52v s;
    f52v_sub_lazy(&s, a, b);
    f52v_sub_if_ge(r, &s, F52_P2);
}

/* 2p - a in lanes of neg, a elsewhere. */
F52_INLINE void f52v_cond_neg(f52v *r, const f52v *a, __mmask8 neg)
{
    f52v s;
    for (int k = 0; k < 8; k++) s.l[k] = _mm512_sub_epi64(f52_bcast(F52_P2[k]), a->l[k]);
    f52v_normalize(&s);
    for (int k = 0; k < 8; k++) r->l[k] = _mm512_mask_mov_epi64(a->l[k], neg, s.l[k]);
}

/* Montgomery product a b / 2^416, operand scanning with the reduction
 * interleaved (CIOS): per limb a_i, add a_i b and m p (m = t_0 (-1/p) mod 2^52)
 * on the IFMA low and high halves, then drop the zeroed low limb. Nine lazy
 * accumulators (each stays below 2^58) keep everything in registers. Inputs
 * in [0, 8p]: 64 p^2 < p 2^416, so the result is < 2p. */
F52_INLINE void f52v_mul(f52v *r, const f52v *a, const f52v *b)
{
    const __m512i mask = f52_bcast(F52_MASK), zero = _mm512_setzero_si512(), inv = f52_bcast(FQ52_INV);
    __m512i t[9];
    for (int k = 0; k < 9; k++) t[k] = zero;
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j++) {
            t[j] = _mm512_madd52lo_epu64(t[j], a->l[i], b->l[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->l[i], b->l[j]);
        }
        __m512i m = _mm512_and_si512(_mm512_madd52lo_epu64(zero, t[0], inv), mask);
        for (int j = 0; j < 8; j++) {
            __m512i pj = f52_bcast(F52_P[j]);
            t[j] = _mm512_madd52lo_epu64(t[j], m, pj);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, pj);
        }
        t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
        for (int k = 0; k < 8; k++) t[k] = t[k + 1];
        t[8] = zero;
    }
    for (int k = 0; k < 7; k++) {
        t[k + 1] = _mm512_add_epi64(t[k + 1], _mm512_srli_epi64(t[k], 52));
        r->l[k] = _mm512_and_si512(t[k], mask);
    }
    r->l[7] = t[7];
}

/* Lanes whose value is 0 mod p (0, p or 2p). */
F52_INLINE __mmask8 f52v_is_zero(const f52v *a)
{
    __mmask8 z = 0xff, eq_p = 0xff, eq_2p = 0xff;
    for (int k = 0; k < 8; k++) {
        z &= _mm512_cmpeq_epi64_mask(a->l[k], _mm512_setzero_si512());
        eq_p &= _mm512_cmpeq_epi64_mask(a->l[k], f52_bcast(F52_P[k]));
        eq_2p &= _mm512_cmpeq_epi64_mask(a->l[k], f52_bcast(F52_P2[k]));
    }
    return z | eq_p | eq_2p;
}

/* Reduce to [0, p): the storage form. */
F52_INLINE void f52v_canonical(f52v *a)
{
    f52v_sub_if_ge(a, a, F52_P);
    f52v_sub_if_ge(a, a, F52_P);
}

F52_INLINE void f52v_sqr(f52v *r, const f52v *a) { f52v_mul(r, a, a); }

F52_INLINE void f52v_set_one(f52v *r)
{
    for (int k = 0; k < 8; k++) r->l[k] = f52_bcast(F52_ONE.l[k]);
}

/* r = a in the lanes of m. */
F52_INLINE void f52v_blend(f52v *r, __mmask8 m, const f52v *a)
{
    for (int k = 0; k < 8; k++) r->l[k] = _mm512_mask_mov_epi64(r->l[k], m, a->l[k]);
}

/* Scalar p - a (canonical in, canonical out; zero stays zero). Only applied
 * to points fresh from f52_from_std, which are canonical. */
static inline void f52_neg(f52_t *r, const f52_t *a)
{
    uint64_t nz = 0;
    int64_t borrow = 0;
    for (int k = 0; k < 8; k++) nz |= a->l[k];
    if (!nz) {
        *r = *a;
        return;
    }
    for (int k = 0; k < 8; k++) {
        int64_t d = (int64_t)F52_P[k] - (int64_t)a->l[k] + borrow;
        borrow = d >> 52;
        r->l[k] = (uint64_t)d & F52_MASK;
    }
}

static inline int f52_is_zero(const f52_t *a)
{
    uint64_t acc = 0;
    for (int k = 0; k < 8; k++) acc |= a->l[k];
    return acc == 0;
}

/* ------------------------------------------------------------------ transposes */

/* Rows r[0..7] (8 qwords each) <-> columns: out[k] lane i = in[i] qword k. */
F52_INLINE void f52_transpose(__m512i *m)
{
    __m512i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_epi64(m[i], m[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi64(m[i], m[i + 1]);
    }
    /* 128-bit blocks: combine rows {0,2}, {1,3}, {4,6}, {5,7} */
    const __m512i lo2 = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), hi2 = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    for (int i = 0; i < 8; i += 4) {
        for (int j = 0; j < 2; j++) {
            u[i + j] = _mm512_permutex2var_epi64(t[i + j], lo2, t[i + j + 2]);
            u[i + j + 2] = _mm512_permutex2var_epi64(t[i + j], hi2, t[i + j + 2]);
        }
    }
    const __m512i lo4 = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0), hi4 = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
    for (int j = 0; j < 4; j++) {
        m[j] = _mm512_permutex2var_epi64(u[j], lo4, u[j + 4]);
        m[j + 4] = _mm512_permutex2var_epi64(u[j], hi4, u[j + 4]);
    }
}

/* Eight elements at arbitrary addresses -> one vector. */
F52_INLINE void f52v_gather(f52v *r, const f52_t *const *src)
{
    for (int i = 0; i < 8; i++) r->l[i] = _mm512_load_si512((const void *)src[i]->l);
    f52_transpose(r->l);
}

/* One vector -> eight addresses, skipping lanes outside keep. Values stay in
 * [0, 2p] (not reduced to [0, p)): every reader accepts that range, zero is
 * only ever written as zero, and leaving the f52 form (f52_to_std) reduces. */
F52_INLINE void f52v_scatter(f52_t *const *dst, f52v a, __mmask8 keep)
{
    f52_transpose(a.l);
    for (int i = 0; i < 8; i++)
        if (keep & (1u << i)) _mm512_store_si512((void *)dst[i]->l, a.l[i]);
}

/* ------------------------------------------------------------------ Fq2 */

typedef struct { f52_t c0, c1; } f52x2_t;
typedef struct { f52v c0, c1; } f52v2;

static inline void f52x2_from_std(f52x2_t *r, const fq2_t *x)
{
    f52_from_std(&r->c0, &x->c0);
    f52_from_std(&r->c1, &x->c1);
}

static inline void f52x2_to_std(fq2_t *r, const f52x2_t *a)
{
    f52_to_std(&r->c0, &a->c0);
    f52_to_std(&r->c1, &a->c1);
}

static inline void f52x2_neg(f52x2_t *r, const f52x2_t *a)
{
    f52_neg(&r->c0, &a->c0);
    f52_neg(&r->c1, &a->c1);
}

static inline int f52x2_is_zero(const f52x2_t *a) { return f52_is_zero(&a->c0) && f52_is_zero(&a->c1); }

F52_INLINE void f52v2_add(f52v2 *r, const f52v2 *a, const f52v2 *b)
{
    f52v_add(&r->c0, &a->c0, &b->c0);
    f52v_add(&r->c1, &a->c1, &b->c1);
}

F52_INLINE void f52v2_sub(f52v2 *r, const f52v2 *a, const f52v2 *b)
{
    f52v_sub(&r->c0, &a->c0, &b->c0);
    f52v_sub(&r->c1, &a->c1, &b->c1);
}

F52_INLINE void f52v2_sub_lazy(f52v2 *r, const f52v2 *a, const f52v2 *b)
{
    f52v_sub_lazy(&r->c0, &a->c0, &b->c0);
    f52v_sub_lazy(&r->c1, &a->c1, &b->c1);
}

F52_INLINE void f52v2_cond_neg(f52v2 *r, const f52v2 *a, __mmask8 neg)
{
    f52v_cond_neg(&r->c0, &a->c0, neg);
    f52v_cond_neg(&r->c1, &a->c1, neg);
}

/* Karatsuba, as fq2_mul. Inputs up to 4p per component (lazy differences):
 * the unreduced sums stay within the 8p that f52v_mul accepts. */
F52_INLINE void f52v2_mul(f52v2 *r, const f52v2 *a, const f52v2 *b)
{
    f52v t0, t1, sa, sb;
    f52v_mul(&t0, &a->c0, &b->c0);
    f52v_mul(&t1, &a->c1, &b->c1);
    f52v_add_lazy(&sa, &a->c0, &a->c1);
    f52v_add_lazy(&sb, &b->c0, &b->c1);
    f52v_mul(&sa, &sa, &sb);
    f52v_sub(&r->c0, &t0, &t1);
    f52v_sub(&sa, &sa, &t0);
    f52v_sub(&r->c1, &sa, &t1);
}

/* (c0 + c1 i)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 i: two products. Input components
 * up to 2p (full reductions), so the lazy sum and difference stay below 8p. */
F52_INLINE void f52v2_sqr(f52v2 *r, const f52v2 *a)
{
    f52v s, d, m;
    f52v_add_lazy(&s, &a->c0, &a->c1);
    f52v_sub_lazy(&d, &a->c0, &a->c1);
    f52v_mul(&m, &a->c0, &a->c1);
    f52v_mul(&r->c0, &s, &d);
    f52v_add(&r->c1, &m, &m);
}

F52_INLINE __mmask8 f52v2_is_zero(const f52v2 *a) { return f52v_is_zero(&a->c0) & f52v_is_zero(&a->c1); }

F52_INLINE void f52v2_set_one(f52v2 *r)
{
    f52v_set_one(&r->c0);
    for (int k = 0; k < 8; k++) r->c1.l[k] = _mm512_setzero_si512();
}

F52_INLINE void f52v2_blend(f52v2 *r, __mmask8 m, const f52v2 *a)
{
    f52v_blend(&r->c0, m, &a->c0);
    f52v_blend(&r->c1, m, &a->c1);
}

F52_INLINE void f52v2_gather(f52v2 *r, const f52x2_t *const *src)
{
    const f52_t *c0[8], *c1[8];
    for (int i = 0; i < 8; i++) {
        c0[i] = &src[i]->c0;
        c1[i] = &src[i]->c1;
    }
    f52v_gather(&r->c0, c0);
    f52v_gather(&r->c1, c1);
}

F52_INLINE void f52v2_scatter(f52x2_t *const *dst, f52v2 a, __mmask8 keep)
{
    f52_t *c0[8], *c1[8];
    for (int i = 0; i < 8; i++) {
        c0[i] = &dst[i]->c0;
        c1[i] = &dst[i]->c1;
    }
    f52v_scatter(c0, a.c0, keep);
    f52v_scatter(c1, a.c1, keep);
}

#endif
