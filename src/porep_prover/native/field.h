/* SPDX-License-Identifier: Apache-2.0 */
/* BLS12-381 fields Fr (4 limbs), Fq (6 limbs) and Fq2 = Fq[i]/(i^2+1).
 *
 * Layout contract, shared with every buffer the package moves: an element is
 * its little-endian 64-bit limbs in Montgomery form (a*2^256 mod r, a*2^384 mod
 * p), always fully reduced (< modulus). Fq2 is c0 then c1. All functions allow
 * the output to alias an input.
 *
 * Multiplication is CIOS Montgomery in the "no carry" form, valid because both
 * moduli leave the top bit of the top limb clear with room to spare
 * (r[3] = 0x73ed..., p[5] = 0x1a01...). */
#ifndef POREP_FIELD_H
#define POREP_FIELD_H

#include <stdint.h>
#include <string.h>

#include "bls12_381.h"

#define FF_INLINE static inline __attribute__((always_inline))

typedef unsigned __int128 u128;
typedef struct { uint64_t l[4]; } fr_t;
typedef struct { uint64_t l[6]; } fq_t;
typedef struct { fq_t c0, c1; } fq2_t;

static const uint64_t FR_P[4] = FR_MODULUS;
static const uint64_t FQ_P[6] = FQ_MODULUS;

/* MULX/ADX multiplication when the target has it (setup.py passes -mbmi2 -madx
 * only where the build machine supports both; POREP_PROVER_PORTABLE=1 forces the
 * C path). */
#if defined(__x86_64__) && defined(__BMI2__) && defined(__ADX__) && !defined(POREP_PORTABLE)
#define POREP_MONT_ASM 1
#define POREP_MONT_ASM_ENABLED 1
#include "mont_asm.h"
#define fr_mul_impl(r, a, b) fr_mul_asm((r), (a), (b))
#define fq_mul_impl(r, a, b) fq_mul_asm((r), (a), (b))
#define fr_add_impl(r, a, b) fr_add_asm((r), (a), (b))
#define fq_add_impl(r, a, b) fq_add_asm((r), (a), (b))
#define fr_sub_impl(r, a, b) fr_sub_asm((r), (a), (b))
#define fq_sub_impl(r, a, b) fq_sub_asm((r), (a), (b))
#else
#define POREP_MONT_ASM_ENABLED 0
#define fr_mul_impl(r, a, b) mont_mul((r), (a), (b), FR_P, FR_INV, 4)
#define fq_mul_impl(r, a, b) mont_mul((r), (a), (b), FQ_P, FQ_INV, 6)
#define fr_add_impl(r, a, b) mont_add((r), (a), (b), FR_P, 4)
#define fq_add_impl(r, a, b) mont_add((r), (a), (b), FQ_P, 6)
#define fr_sub_impl(r, a, b) mont_sub((r), (a), (b), FR_P, 4)
#define fq_sub_impl(r, a, b) mont_sub((r), (a), (b), FQ_P, 6)
#endif

/* ------------------------------------------------------------------ generic */

FF_INLINE int mont_is_zero(const uint64_t *a, int n)
{
    uint64_t acc = 0;
    for (int i = 0; i < n; i++) acc |= a[i];
    return acc == 0;
}

FF_INLINE int mont_eq(const uint64_t *a, const uint64_t *b, int n)
{
    uint64_t acc = 0;
    for (int i = 0; i < n; i++) acc |= a[i] ^ b[i];
    return acc == 0;
}

/* Add-with-carry and subtract-with-borrow steps; the x86 intrinsics become
 * ADC/SBB chains, the portable form relies on the compiler. */
#if defined(__x86_64__)
#include <x86intrin.h>
#define ADC(c, a, b, out) ((c) = _addcarry_u64((c), (a), (b), (unsigned long long *)(out)))
#define SBB(c, a, b, out) ((c) = _subborrow_u64((c), (a), (b), (unsigned long long *)(out)))
#else
#define ADC(c, a, b, out)                                                  \
    do {                                                                   \
        u128 s_ = (u128)(a) + (b) + (c);                                   \
        *(out) = (uint64_t)s_;                                             \
        (c) = (unsigned char)(s_ >> 64);                                   \
    } while (0)
#define SBB(c, a, b, out)                                                  \
    do {                                                                   \
        u128 d_ = (u128)(a) - (b) - (c);                                   \
        *(out) = (uint64_t)d_;                                             \
        (c) = (unsigned char)((d_ >> 64) & 1);                             \
    } while (0)
#endif

/* r = t - p if t >= p else t; t < 2p. */
FF_INLINE void mont_reduce_once(uint64_t *r, const uint64_t *t, const uint64_t *p, int n)
{
    uint64_t s[6];
    unsigned char borrow = 0;
#pragma GCC unroll 6
    for (int i = 0; i < n; i++) SBB(borrow, t[i], p[i], &s[i]);
#pragma GCC unroll 6
    for (int i = 0; i < n; i++) r[i] = borrow ? t[i] : s[i]; /* borrow: t < p */
}

/* a + b, both < p < 2^(64n-1), so the sum fits in n limbs before reduction. */
FF_INLINE void mont_add(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p, int n)
{
    uint64_t t[6];
    unsigned char carry = 0;
#pragma GCC unroll 6
    for (int i = 0; i < n; i++) ADC(carry, a[i], b[i], &t[i]);
    mont_reduce_once(r, t, p, n);
}

FF_INLINE void mont_sub(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p, int n)
{
    uint64_t t[6];
    unsigned char borrow = 0, carry = 0;
#pragma GCC unroll 6
    for (int i = 0; i < n; i++) SBB(borrow, a[i], b[i], &t[i]);
    uint64_t mask = (uint64_t)0 - borrow; /* add p back when a < b */
#pragma GCC unroll 6
    for (int i = 0; i < n; i++) ADC(carry, t[i], p[i] & mask, &r[i]);
}

FF_INLINE void mont_neg(uint64_t *r, const uint64_t *a, const uint64_t *p, int n)
{
    uint64_t nz = mont_is_zero(a, n) ? 0 : ~(uint64_t)0;
    unsigned char borrow = 0;
#pragma GCC unroll 6
    for (int i = 0; i < n; i++) SBB(borrow, p[i] & nz, a[i], &r[i]);
}

FF_INLINE void mont_mul(uint64_t *r, const uint64_t *a, const uint64_t *b, const uint64_t *p,
                        uint64_t inv, int n)
{
    uint64_t t[6] = {0, 0, 0, 0, 0, 0};
#pragma GCC unroll 6
    for (int i = 0; i < n; i++) {
        u128 uv = (u128)a[0] * b[i] + t[0];
        uint64_t A = (uint64_t)(uv >> 64);
        t[0] = (uint64_t)uv;
        uint64_t m = t[0] * inv;
        u128 cv = (u128)m * p[0] + t[0];
        uint64_t C = (uint64_t)(cv >> 64);
#pragma GCC unroll 6
        for (int j = 1; j < n; j++) {
            uv = (u128)a[j] * b[i] + t[j] + A;
            A = (uint64_t)(uv >> 64);
            t[j] = (uint64_t)uv;
            cv = (u128)m * p[j] + t[j] + C;
            C = (uint64_t)(cv >> 64);
            t[j - 1] = (uint64_t)cv;
        }
        t[n - 1] = C + A;
    }
    mont_reduce_once(r, t, p, n);
}

/* ------------------------------------------------------------------ Fr */

FF_INLINE int fr_is_zero(const fr_t *a) { return mont_is_zero(a->l, 4); }
FF_INLINE int fr_eq(const fr_t *a, const fr_t *b) { return mont_eq(a->l, b->l, 4); }
FF_INLINE void fr_add(fr_t *r, const fr_t *a, const fr_t *b) { fr_add_impl(r->l, a->l, b->l); }
FF_INLINE void fr_sub(fr_t *r, const fr_t *a, const fr_t *b) { fr_sub_impl(r->l, a->l, b->l); }
FF_INLINE void fr_neg(fr_t *r, const fr_t *a) { mont_neg(r->l, a->l, FR_P, 4); }
FF_INLINE void fr_mul(fr_t *r, const fr_t *a, const fr_t *b) { fr_mul_impl(r->l, a->l, b->l); }
FF_INLINE void fr_sqr(fr_t *r, const fr_t *a) { fr_mul(r, a, a); }

FF_INLINE void fr_set_one(fr_t *r)
{
    static const fr_t one = {FR_ONE};
    *r = one;
}

FF_INLINE void fr_to_mont(fr_t *r, const fr_t *a)
{
    static const fr_t r2 = {FR_R2};
    fr_mul(r, a, &r2);
}

FF_INLINE void fr_from_mont(fr_t *r, const fr_t *a)
{
    static const fr_t one = {{1, 0, 0, 0}};
    fr_mul(r, a, &one);
}

/* r = a^e for an exponent given as little-endian limbs (canonical, not Montgomery). */
static inline void fr_pow_limbs(fr_t *r, const fr_t *a, const uint64_t *e, int nlimbs)
{
    fr_t acc, base = *a;
    fr_set_one(&acc);
    for (int i = nlimbs * 64 - 1; i >= 0; i--) {
        fr_sqr(&acc, &acc);
        if ((e[i / 64] >> (i % 64)) & 1) fr_mul(&acc, &acc, &base);
    }
    *r = acc;
}

FF_INLINE void fr_pow_u64(fr_t *r, const fr_t *a, uint64_t e) { fr_pow_limbs(r, a, &e, 1); }

/* 1/a; the inverse of zero is zero. */
static inline void fr_inv(fr_t *r, const fr_t *a)
{
    static const uint64_t e[4] = FR_MODULUS_MINUS_2;
    fr_pow_limbs(r, a, e, 4);
}

/* Canonical 256-bit compare: 1 if a (canonical limbs) >= b (canonical limbs). */
FF_INLINE int limbs_geq(const uint64_t *a, const uint64_t *b, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] > b[i];
    }
    return 1;
}

/* ------------------------------------------------------------------ Fq */


FF_INLINE int fq_is_zero(const fq_t *a) { return mont_is_zero(a->l, 6); }
FF_INLINE int fq_eq(const fq_t *a, const fq_t *b) { return mont_eq(a->l, b->l, 6); }
FF_INLINE void fq_add(fq_t *r, const fq_t *a, const fq_t *b) { fq_add_impl(r->l, a->l, b->l); }
FF_INLINE void fq_sub(fq_t *r, const fq_t *a, const fq_t *b) { fq_sub_impl(r->l, a->l, b->l); }
FF_INLINE void fq_dbl(fq_t *r, const fq_t *a) { fq_add_impl(r->l, a->l, a->l); }
FF_INLINE void fq_neg(fq_t *r, const fq_t *a) { mont_neg(r->l, a->l, FQ_P, 6); }
FF_INLINE void fq_mul(fq_t *r, const fq_t *a, const fq_t *b) { fq_mul_impl(r->l, a->l, b->l); }
FF_INLINE void fq_sqr(fq_t *r, const fq_t *a) { fq_mul_impl(r->l, a->l, a->l); }
FF_INLINE void fq_set_zero(fq_t *r) { memset(r, 0, sizeof *r); }

FF_INLINE void fq_set_one(fq_t *r)
{
    static const fq_t one = {FQ_ONE};
    *r = one;
}

FF_INLINE void fq_to_mont(fq_t *r, const fq_t *a)
{
    static const fq_t r2 = {FQ_R2};
    fq_mul(r, a, &r2);
}

FF_INLINE void fq_from_mont(fq_t *r, const fq_t *a)
{
    static const fq_t one = {{1, 0, 0, 0, 0, 0}};
    fq_mul(r, a, &one);
}

static inline void fq_pow_limbs(fq_t *r, const fq_t *a, const uint64_t *e, int nlimbs)
{
    fq_t acc, base = *a;
    fq_set_one(&acc);
    int top = nlimbs * 64 - 1;
    while (top > 0 && !((e[top / 64] >> (top % 64)) & 1)) top--;
    for (int i = top; i >= 0; i--) {
        fq_sqr(&acc, &acc);
        if ((e[i / 64] >> (i % 64)) & 1) fq_mul(&acc, &acc, &base);
    }
    *r = acc;
}

static inline void fq_inv(fq_t *r, const fq_t *a)
{
    static const uint64_t e[6] = FQ_MODULUS_MINUS_2;
    fq_pow_limbs(r, a, e, 6);
}

/* Square root; returns 0 (and leaves r undefined) if a is not a square. */
static inline int fq_sqrt(fq_t *r, const fq_t *a)
{
    static const uint64_t e[6] = FQ_SQRT_EXP;
    fq_t s, check;
    fq_pow_limbs(&s, a, e, 6);
    fq_sqr(&check, &s);
    if (!fq_eq(&check, a)) return 0;
    *r = s;
    return 1;
}

/* 1 if the canonical value of a exceeds (p-1)/2: the zcash "sign" of a coordinate. */
static inline int fq_is_lexicographically_largest(const fq_t *a)
{
    static const uint64_t half[6] = FQ_P_MINUS_1_DIV_2;
    fq_t c;
    fq_from_mont(&c, a);
    return !limbs_geq(half, c.l, 6);
}

/* ------------------------------------------------------------------ Fq2 */

FF_INLINE int fq2_is_zero(const fq2_t *a) { return fq_is_zero(&a->c0) && fq_is_zero(&a->c1); }
FF_INLINE int fq2_eq(const fq2_t *a, const fq2_t *b) { return fq_eq(&a->c0, &b->c0) && fq_eq(&a->c1, &b->c1); }
FF_INLINE void fq2_set_zero(fq2_t *r) { memset(r, 0, sizeof *r); }

FF_INLINE void fq2_set_one(fq2_t *r)
{
    fq_set_one(&r->c0);
    fq_set_zero(&r->c1);
}

FF_INLINE void fq2_add(fq2_t *r, const fq2_t *a, const fq2_t *b)
{
    fq_add(&r->c0, &a->c0, &b->c0);
    fq_add(&r->c1, &a->c1, &b->c1);
}

FF_INLINE void fq2_sub(fq2_t *r, const fq2_t *a, const fq2_t *b)
{
    fq_sub(&r->c0, &a->c0, &b->c0);
    fq_sub(&r->c1, &a->c1, &b->c1);
}

FF_INLINE void fq2_dbl(fq2_t *r, const fq2_t *a)
{
    fq_dbl(&r->c0, &a->c0);
    fq_dbl(&r->c1, &a->c1);
}

FF_INLINE void fq2_neg(fq2_t *r, const fq2_t *a)
{
    fq_neg(&r->c0, &a->c0);
    fq_neg(&r->c1, &a->c1);
}

FF_INLINE void fq2_conj(fq2_t *r, const fq2_t *a)
{
    r->c0 = a->c0;
    fq_neg(&r->c1, &a->c1);
}

/* Karatsuba: three Fq products. */
FF_INLINE void fq2_mul(fq2_t *r, const fq2_t *a, const fq2_t *b)
{
    fq_t t0, t1, s0, s1;
    fq_mul(&t0, &a->c0, &b->c0);
    fq_mul(&t1, &a->c1, &b->c1);
    fq_add(&s0, &a->c0, &a->c1);
    fq_add(&s1, &b->c0, &b->c1);
    fq_mul(&s0, &s0, &s1);
    fq_sub(&r->c0, &t0, &t1);
    fq_sub(&s0, &s0, &t0);
    fq_sub(&r->c1, &s0, &t1);
}

/* (c0 + c1 i)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 i: two Fq products. */
FF_INLINE void fq2_sqr(fq2_t *r, const fq2_t *a)
{
    fq_t s, d, m;
    fq_add(&s, &a->c0, &a->c1);
    fq_sub(&d, &a->c0, &a->c1);
    fq_mul(&m, &a->c0, &a->c1);
    fq_mul(&r->c0, &s, &d);
    fq_dbl(&r->c1, &m);
}

FF_INLINE void fq2_mul_fq(fq2_t *r, const fq2_t *a, const fq_t *b)
{
    fq_mul(&r->c0, &a->c0, b);
    fq_mul(&r->c1, &a->c1, b);
}

static inline void fq2_inv(fq2_t *r, const fq2_t *a)
{
    fq_t t0, t1;
    fq_sqr(&t0, &a->c0);
    fq_sqr(&t1, &a->c1);
    fq_add(&t0, &t0, &t1);
    fq_inv(&t0, &t0);
    fq_mul(&r->c0, &a->c0, &t0);
    fq_mul(&t1, &a->c1, &t0);
    fq_neg(&r->c1, &t1);
}

static inline void fq2_pow_limbs(fq2_t *r, const fq2_t *a, const uint64_t *e, int nlimbs)
{
    fq2_t acc, base = *a;
    fq2_set_one(&acc);
    for (int i = nlimbs * 64 - 1; i >= 0; i--) {
        fq2_sqr(&acc, &acc);
        if ((e[i / 64] >> (i % 64)) & 1) fq2_mul(&acc, &acc, &base);
    }
    *r = acc;
}

/* Square root in Fq2 for p = 3 mod 4 (Adj and Rodriguez-Henriquez 2012, Algorithm 9).
 * Returns 0 if a is not a square. */
static inline int fq2_sqrt(fq2_t *r, const fq2_t *a)
{
    static const uint64_t e34[6] = FQ_P_MINUS_3_DIV_4;
    static const uint64_t e12[6] = FQ_P_MINUS_1_DIV_2;
    fq2_t a1, alpha, x0, x, check, minus_one;
    if (fq2_is_zero(a)) {
        fq2_set_zero(r);
        return 1;
    }
    fq2_pow_limbs(&a1, a, e34, 6);
    fq2_sqr(&alpha, &a1);
    fq2_mul(&alpha, &alpha, a);
    fq2_mul(&x0, &a1, a);
    fq2_set_one(&minus_one);
    fq2_neg(&minus_one, &minus_one);
    if (fq2_eq(&alpha, &minus_one)) {
        /* x = i * x0 */
        fq_neg(&x.c0, &x0.c1);
        x.c1 = x0.c0;
    } else {
        fq2_t b;
        fq2_set_one(&b);
        fq2_add(&b, &b, &alpha);
        fq2_pow_limbs(&b, &b, e12, 6);
        fq2_mul(&x, &b, &x0);
    }
    fq2_sqr(&check, &x);
    if (!fq2_eq(&check, a)) return 0;
    *r = x;
    return 1;
}

/* zcash sign of an Fq2 coordinate: c1 decides unless it is zero. */
static inline int fq2_is_lexicographically_largest(const fq2_t *a)
{
    if (!fq_is_zero(&a->c1)) return fq_is_lexicographically_largest(&a->c1);
    return fq_is_lexicographically_largest(&a->c0);
}

#endif
