/* SPDX-License-Identifier: Apache-2.0 */
/* Fr on AVX-512 IFMA: eight elements at a time, one per 64-bit lane, as five
 * limbs of 52 bits in Montgomery form with R = 2^260 (the "f52r" form, the
 * scalar-field sibling of f52.h). Values in registers may be anything in
 * [0, 2r] (every operation accepts and returns that range; products accept
 * up to 4r), limbs always < 2^52. The NTT packs std Fr (64-bit limbs,
 * R = 2^256) into this form and back (f52r_pack / f52r_unpack), so nothing
 * outside the kernels sees it. Needs IFMA: callers guard with F52_TARGET and
 * a runtime CPU check. */
#ifndef POREP_F52R_H
#define POREP_F52R_H

#include <immintrin.h>
#include <stdint.h>

#include "field.h"

#define F52R_TARGET __attribute__((target("avx512f,avx512ifma,avx512dq,avx512bw,avx512vl")))
#define F52R_INLINE static inline __attribute__((always_inline)) F52R_TARGET
#define F52R_MASK ((1ULL << 52) - 1)

typedef struct { __m512i l[5]; } frv;

static const uint64_t FR52_P[5] = FR52_MODULUS;
static const uint64_t FR52_P2[5] = FR52_MODULUS_2;
static const uint64_t FR52_TO[5] = FR_TO52;     /* 2^264 mod r: x 2^256 -> x 2^260 by one product */
static const uint64_t FR52_FROM[5] = FR_FROM52; /* 2^256 mod r: x 2^260 -> x 2^256 by one product */

F52R_INLINE __m512i frv_bcast64(uint64_t v) { return _mm512_set1_epi64((long long)v); }

F52R_INLINE void frv_const(frv *r, const uint64_t *limbs)
{
    for (int k = 0; k < 5; k++) r->l[k] = frv_bcast64(limbs[k]);
}

F52R_INLINE void frv_normalize(frv *a)
{
    const __m512i mask = frv_bcast64(F52R_MASK);
    for (int k = 0; k < 4; k++) {
        a->l[k + 1] = _mm512_add_epi64(a->l[k + 1], _mm512_srai_epi64(a->l[k], 52));
        a->l[k] = _mm512_and_si512(a->l[k], mask);
    }
}

/* r = a - m where that is >= 0, else a (per lane). */
F52R_INLINE void frv_sub_if_ge(frv *r, const frv *a, const uint64_t *m)
{
    const __m512i mask = frv_bcast64(F52R_MASK);
    __m512i t[5], borrow = _mm512_setzero_si512();
    for (int k = 0; k < 5; k++) {
        __m512i d = _mm512_sub_epi64(_mm512_add_epi64(a->l[k], borrow), frv_bcast64(m[k]));
        borrow = _mm512_srai_epi64(d, 52);
        t[k] = _mm512_and_si512(d, mask);
    }
    __mmask8 ge = _mm512_cmpge_epi64_mask(borrow, _mm512_setzero_si512());
    for (int k = 0; k < 5; k++) r->l[k] = _mm512_mask_mov_epi64(a->l[k], ge, t[k]);
}

F52R_INLINE void frv_add(frv *r, const frv *a, const frv *b)
{
    frv s;
    for (int k = 0; k < 5; k++) s.l[k] = _mm512_add_epi64(a->l[k], b->l[k]);
    frv_normalize(&s);
    frv_sub_if_ge(r, &s, FR52_P2);
}

/* a - b + 2r without the final reduction: [0, 4r], for operands of a product. */
F52R_INLINE void frv_sub_lazy(frv *r, const frv *a, const frv *b)
{
    for (int k = 0; k < 5; k++) r->l[k] = _mm512_sub_epi64(_mm512_add_epi64(a->l[k], frv_bcast64(FR52_P2[k])), b->l[k]);
    frv_normalize(r);
}

F52R_INLINE void frv_sub(frv *r, const frv *a, const frv *b)
{
    frv s;
    frv_sub_lazy(&s, a, b);
    frv_sub_if_ge(r, &s, FR52_P2);
}

/* Montgomery product a b / 2^260, CIOS on the IFMA halves (see f52v_mul).
 * Inputs in [0, 4r]: 16 r^2 < r 2^260, so the result is < 2r. */
F52R_INLINE void frv_mul(frv *r, const frv *a, const frv *b)
{
    const __m512i mask = frv_bcast64(F52R_MASK), zero = _mm512_setzero_si512(), inv = frv_bcast64(FR52_INV);
    __m512i t[6];
    for (int k = 0; k < 6; k++) t[k] = zero;
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 5; j++) {
            t[j] = _mm512_madd52lo_epu64(t[j], a->l[i], b->l[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a->l[i], b->l[j]);
        }
        __m512i m = _mm512_and_si512(_mm512_madd52lo_epu64(zero, t[0], inv), mask);
        for (int j = 0; j < 5; j++) {
            __m512i pj = frv_bcast64(FR52_P[j]);
            t[j] = _mm512_madd52lo_epu64(t[j], m, pj);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, pj);
        }
        t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
        for (int k = 0; k < 5; k++) t[k] = t[k + 1];
        t[5] = zero;
    }
    for (int k = 0; k < 4; k++) {
        t[k + 1] = _mm512_add_epi64(t[k + 1], _mm512_srli_epi64(t[k], 52));
        r->l[k] = _mm512_and_si512(t[k], mask);
    }
    r->l[4] = t[4];
}

F52R_INLINE void frv_permute(frv *r, const frv *a, __m512i idx)
{
    for (int k = 0; k < 5; k++) r->l[k] = _mm512_permutexvar_epi64(idx, a->l[k]);
}

F52R_INLINE void frv_blend(frv *r, __mmask8 m, const frv *a)
{
    for (int k = 0; k < 5; k++) r->l[k] = _mm512_mask_mov_epi64(r->l[k], m, a->l[k]);
}

/* Eight std Fr elements (addresses base + idx[i] * 32 bytes) -> f52r. */
F52R_INLINE void frv_pack(frv *r, const fr_t *base, __m512i idx)
{
    const __m512i mask = frv_bcast64(F52R_MASK);
    __m512i off = _mm512_slli_epi64(idx, 5), w[4];
    frv to;
    for (int k = 0; k < 4; k++) w[k] = _mm512_i64gather_epi64(off, (const void *)((const uint64_t *)base + k), 1);
    r->l[0] = _mm512_and_si512(w[0], mask);
    r->l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[0], 52), _mm512_slli_epi64(w[1], 12)), mask);
    r->l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[1], 40), _mm512_slli_epi64(w[2], 24)), mask);
    r->l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(w[2], 28), _mm512_slli_epi64(w[3], 36)), mask);
    r->l[4] = _mm512_srli_epi64(w[3], 16);
    frv_const(&to, FR52_TO);
    frv_mul(r, r, &to);
}

/* f52r -> eight std Fr elements at base + idx[i] * 32 bytes (canonical). */
F52R_INLINE void frv_unpack(fr_t *base, frv a, __m512i idx)
{
    frv from;
    __m512i off = _mm512_slli_epi64(idx, 5), w[4];
    frv_const(&from, FR52_FROM);
    frv_mul(&a, &a, &from);
    frv_sub_if_ge(&a, &a, FR52_P);      /* < 2r -> < r */
    w[0] = _mm512_or_si512(a.l[0], _mm512_slli_epi64(a.l[1], 52));
    w[1] = _mm512_or_si512(_mm512_srli_epi64(a.l[1], 12), _mm512_slli_epi64(a.l[2], 40));
    w[2] = _mm512_or_si512(_mm512_srli_epi64(a.l[2], 24), _mm512_slli_epi64(a.l[3], 28));
    w[3] = _mm512_or_si512(_mm512_srli_epi64(a.l[3], 36), _mm512_slli_epi64(a.l[4], 16));
    for (int k = 0; k < 4; k++) _mm512_i64scatter_epi64((void *)((uint64_t *)base + k), off, w[k], 1);
}

#endif
