/* SPDX-License-Identifier: Apache-2.0 */
/* Fq2 and the group law for G1 (over Fq) and G2 (over Fq2) on the GPU, in the
 * package's layouts: affine (x, y) with infinity all zero, and xyzz
 * (X, Y, ZZ, ZZZ) with infinity ZZ = 0. Formulas as the CPU's ec_impl.h
 * (hyperelliptic.org EFD madd-2008-s, add-2008-s, dbl-2008-s-1), exceptional
 * cases handled, so results match the CPU exactly after normalisation. Each
 * formula's Y3 is a difference of two products, taken as one sum of products
 * with a single reduction (f_mul2). */
#ifndef POREP_EC_CUH
#define POREP_EC_CUH

#include "porep_prover/field.cuh"

struct fq2_t {
    fq_t c0, c1;
};

/* One field interface over fr_t, fq_t and fq2_t, for the templates below. */
DEV void f_add(fq_t &r, const fq_t &a, const fq_t &b) { mont_add<12>(r, a, b); }
DEV void f_sub(fq_t &r, const fq_t &a, const fq_t &b) { mont_sub<12>(r, a, b); }
DEV void f_mul(fq_t &r, const fq_t &a, const fq_t &b) { mont_mul<12>(r, a, b); }
DEV void f_sqr(fq_t &r, const fq_t &a) { mont_sqr<12>(r, a); }
/* r = a b + c d: one reduction for the two products (mont_mul2_wide). */
DEV void f_mul2(fq_t &r, const fq_t &a, const fq_t &b, const fq_t &c, const fq_t &d) { mont_mul2<12>(r, a, b, c, d); }
DEV bool f_is_zero(const fq_t &a) { return mont_is_zero<12>(a); }
DEV bool f_eq(const fq_t &a, const fq_t &b) { return mont_eq<12>(a, b); }
DEV void f_zero(fq_t &r)
{
#pragma unroll
    for (int i = 0; i < 12; i++) r.v[i] = 0;
}
DEV void f_neg(fq_t &r, const fq_t &a)
{
    fq_t z;
    f_zero(z);
    mont_sub<12>(r, z, a);
}

DEV void f_add(fq2_t &r, const fq2_t &a, const fq2_t &b)
{
    f_add(r.c0, a.c0, b.c0);
    f_add(r.c1, a.c1, b.c1);
}
DEV void f_sub(fq2_t &r, const fq2_t &a, const fq2_t &b)
{
    f_sub(r.c0, a.c0, b.c0);
    f_sub(r.c1, a.c1, b.c1);
}
/* Karatsuba: three Fq products. Out of line, by value like fq_mul_call
 * (field.cuh): by reference its callers kept their operands in stack memory. */
DEV_CALL fq2_t fq2_mul(const fq2_t a, const fq2_t b)
{
    fq2_t r;
    fq_t t0, t1, s0, s1;
    f_mul(t0, a.c0, b.c0);
    f_mul(t1, a.c1, b.c1);
    f_add(s0, a.c0, a.c1);
    f_add(s1, b.c0, b.c1);
    f_mul(s0, s0, s1);
    f_sub(r.c0, t0, t1);
    f_sub(s0, s0, t0);
    f_sub(r.c1, s0, t1);
    return r;
}
DEV void f_mul(fq2_t &r, const fq2_t &a, const fq2_t &b) { r = fq2_mul(a, b); }
/* Over Fq2 two Karatsuba products and a sum: pairing Fq's one-reduction
 * sums inside them gives no fewer multiply-adds (6 Fq products either way). */
DEV void f_mul2(fq2_t &r, const fq2_t &a, const fq2_t &b, const fq2_t &c, const fq2_t &d)
{
    fq2_t t = fq2_mul(a, b);
    r = fq2_mul(c, d);
    f_add(r, r, t);
}
/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u (u^2 = -1): two Fq products
 * instead of Karatsuba's three (G2 MSM 2^24 on an H200: 4.6 % faster).
 * FQ2_SQR_MUL squares with the product instead (a build variant). */
#ifndef FQ2_SQR_MUL
DEV_CALL fq2_t fq2_sqr(const fq2_t a)
{
    fq2_t r;
    fq_t s, d;
    f_add(s, a.c0, a.c1);
    f_sub(d, a.c0, a.c1);
    f_mul(r.c1, a.c0, a.c1);
    f_add(r.c1, r.c1, r.c1);
    f_mul(r.c0, s, d);
    return r;
}
DEV void f_sqr(fq2_t &r, const fq2_t &a) { r = fq2_sqr(a); }
#else
DEV void f_sqr(fq2_t &r, const fq2_t &a) { r = fq2_mul(a, a); }
#endif
DEV bool f_is_zero(const fq2_t &a) { return f_is_zero(a.c0) && f_is_zero(a.c1); }
DEV bool f_eq(const fq2_t &a, const fq2_t &b) { return f_eq(a.c0, b.c0) && f_eq(a.c1, b.c1); }
DEV void f_zero(fq2_t &r)
{
    f_zero(r.c0);
    f_zero(r.c1);
}
DEV void f_neg(fq2_t &r, const fq2_t &a)
{
    f_neg(r.c0, a.c0);
    f_neg(r.c1, a.c1);
}

DEV void f_one(fq_t &r)
{
    const u32 *one = mont_one<12>();
#pragma unroll
    for (int i = 0; i < 12; i++) r.v[i] = one[i];
}
DEV void f_one(fq2_t &r)
{
    f_one(r.c0);
    f_zero(r.c1);
}

/* a^(p - 2) = 1 / a in Fq (a != 0), square and multiply over p - 2's 381 bits. */
DEV_CALL void fq_inv(fq_t &r, const fq_t &a)
{
    const u32 *p = modulus<12>();
    fq_t acc;
    f_one(acc);
    for (int i = 380; i >= 0; i--) {
        f_sqr(acc, acc);
        u32 word = p[i >> 5] - ((i >> 5) == 0 ? 2u : 0u); /* p is odd with low word > 2: no borrow */
        if ((word >> (i & 31)) & 1u) f_mul(acc, acc, a);
    }
    r = acc;
}

DEV void f_inv(fq_t &r, const fq_t &a) { fq_inv(r, a); }

/* 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2), as u^2 = -1. */
DEV void f_inv(fq2_t &r, const fq2_t &a)
{
    fq_t t0, t1;
    f_sqr(t0, a.c0);
    f_sqr(t1, a.c1);
    f_add(t0, t0, t1);
    fq_inv(t0, t0);
    f_mul(r.c0, a.c0, t0);
    f_mul(t1, a.c1, t0);
    f_neg(r.c1, t1);
}

template <class F>
struct affine {
    F x, y;
};

template <class F>
struct xyzz {
    F x, y, zz, zzz;
};

template <class F>
DEV bool is_inf(const affine<F> &p)
{
    return f_is_zero(p.x) && f_is_zero(p.y);
}

template <class F>
DEV bool is_inf(const xyzz<F> &p)
{
    return f_is_zero(p.zz);
}

template <class F>
DEV void set_inf(xyzz<F> &p)
{
    f_zero(p.x);
    f_zero(p.y);
    f_zero(p.zz);
    f_zero(p.zzz);
}

template <class F>
DEV void from_affine(xyzz<F> &r, const affine<F> &p)
{
    if (is_inf(p)) {
        set_inf(r);
        return;
    }
    r.x = p.x;
    r.y = p.y;
    f_one(r.zz);
    f_one(r.zzz);
}

/* The group law's functions out of line (called from several places each:
 * code size and compile time in bounds; inlined into the MSM's kernels they
 * measured no faster on an H200: G1 within 1 %, G2 up to 11 % slower). */
/* dbl-2008-s-1 */
template <class F>
DEV_CALL void dbl(xyzz<F> &r, const xyzz<F> &p)
{
    F u, v, w, s, m, t;
    if (is_inf(p) || f_is_zero(p.y)) {
        set_inf(r);
        return;
    }
    f_add(u, p.y, p.y);
    f_sqr(v, u);
    f_mul(w, u, v);
    f_mul(s, p.x, v);
    f_sqr(m, p.x);
    f_add(t, m, m);
    f_add(m, m, t);
    F zz, zzz, ny;
    f_mul(zz, v, p.zz);
    f_mul(zzz, w, p.zzz);
    f_sqr(t, m);
    f_sub(t, t, s);
    F x3;
    f_sub(x3, t, s);
    f_sub(s, s, x3);
    f_neg(ny, p.y);
    f_mul2(r.y, s, m, w, ny);   /* M (S - X3) - W Y */
    r.x = x3;
    r.zz = zz;
    r.zzz = zzz;
}

/* r = p + q, q affine (madd-2008-s); neg negates q. */
template <class F>
DEV_CALL void add_affine(xyzz<F> &r, const xyzz<F> &p, const affine<F> &q_in, bool neg = false)
{
    affine<F> q = q_in;
    if (is_inf(q)) {
        r = p;
        return;
    }
    if (neg) f_neg(q.y, q.y);
    if (is_inf(p)) {
        from_affine(r, q);
        return;
    }
    F u2, s2, pp, ppp, qq, t;
    f_mul(u2, q.x, p.zz);
    f_mul(s2, q.y, p.zzz);
    f_sub(u2, u2, p.x);
    f_sub(s2, s2, p.y);
    if (f_is_zero(u2)) {
        if (f_is_zero(s2)) {
            xyzz<F> qq2;
            from_affine(qq2, q);
            dbl(r, qq2);
        } else {
            set_inf(r);
        }
        return;
    }
    f_sqr(pp, u2);
    f_mul(ppp, pp, u2);
    f_mul(qq, p.x, pp);
    F zz, zzz;
    f_mul(zz, p.zz, pp);
    f_mul(zzz, p.zzz, ppp);
    F rr, x3;
    f_sqr(rr, s2);
    f_sub(rr, rr, ppp);
    f_sub(rr, rr, qq);
    f_sub(x3, rr, qq);
    f_sub(qq, qq, x3);
    f_neg(t, p.y);
    f_mul2(r.y, qq, s2, t, ppp);   /* R (Q - X3) - Y1 PPP */
    r.x = x3;
    r.zz = zz;
    r.zzz = zzz;
}

/* r = p + q (add-2008-s). */
template <class F>
DEV_CALL void add(xyzz<F> &r, const xyzz<F> &p, const xyzz<F> &q)
{
    if (is_inf(q)) {
        r = p;
        return;
    }
    if (is_inf(p)) {
        r = q;
        return;
    }
    F u1, u2, s1, s2, pp, ppp, qq, t;
    f_mul(u1, p.x, q.zz);
    f_mul(u2, q.x, p.zz);
    f_mul(s1, p.y, q.zzz);
    f_mul(s2, q.y, p.zzz);
    f_sub(u2, u2, u1);
    f_sub(s2, s2, s1);
    if (f_is_zero(u2)) {
        if (f_is_zero(s2)) dbl(r, p);
        else set_inf(r);
        return;
    }
    f_sqr(pp, u2);
    f_mul(ppp, pp, u2);
    f_mul(qq, u1, pp);
    F zz, zzz;
    f_mul(t, p.zz, q.zz);
    f_mul(zz, t, pp);
    f_mul(t, p.zzz, q.zzz);
    f_mul(zzz, t, ppp);
    F x3;
    f_sqr(t, s2);
    f_sub(t, t, ppp);
    f_sub(t, t, qq);
    f_sub(x3, t, qq);
    f_sub(qq, qq, x3);
    f_neg(s1, s1);
    f_mul2(r.y, qq, s2, s1, ppp);   /* R (Q - X3) - S1 PPP */
    r.x = x3;
    r.zz = zz;
    r.zzz = zzz;
}

typedef affine<fq_t> g1_affine;
typedef xyzz<fq_t> g1_xyzz;
typedef affine<fq2_t> g2_affine;
typedef xyzz<fq2_t> g2_xyzz;

#endif
