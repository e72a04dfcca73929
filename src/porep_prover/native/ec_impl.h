/* SPDX-License-Identifier: Apache-2.0 */
/* Short Weierstrass group law for y^2 = x^3 + b (a = 0), written once and
 * instantiated for G1 (over Fq) and G2 (over Fq2) by ec.h. Before including:
 *   EC     prefix of the generated names (g1, g2)
 *   F      prefix of the field functions (fq, fq2)
 *   F_T    field element type
 *   EC_B   pointer to the curve coefficient b (Montgomery form)
 *
 * Representations:
 *   EC_affine_t  (x, y); the point at infinity is all zero ((0, 0) is not on
 *                either curve since b != 0), the same in every buffer.
 *   EC_xyzz_t    (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2;
 *                infinity has ZZ = 0. Cheapest mixed additions: buckets and sums.
 *   EC_jac_t     (X, Y, Z) with x = X/Z^2, y = Y/Z^3; infinity has Z = 0.
 *                Cheapest doublings: fixed-base tables and scalar ladders.
 * Formulas: hyperelliptic.org EFD, "xyzz" (madd-2008-s, add-2008-s,
 * dbl-2008-s-1) and "jacobian-0" (dbl-2009-l, madd-2007-bl,
 * add-2007-bl), with the exceptional cases (equal or opposite inputs,
 * infinity) handled explicitly. */

#define EC_CAT2(a, b) a##_##b
#define EC_CAT(a, b) EC_CAT2(a, b)
#define ECN(name) EC_CAT(EC, name)
#define FN(name) EC_CAT(F, name)

typedef struct { F_T x, y; } ECN(affine_t);
typedef struct { F_T x, y, zz, zzz; } ECN(xyzz_t);
typedef struct { F_T x, y, z; } ECN(jac_t);

#define AFF ECN(affine_t)
#define XYZZ ECN(xyzz_t)
#define JAC ECN(jac_t)

/* ------------------------------------------------------------------ affine */

FF_INLINE int ECN(affine_is_inf)(const AFF *p) { return FN(is_zero)(&p->x) && FN(is_zero)(&p->y); }
FF_INLINE void ECN(affine_set_inf)(AFF *p) { memset(p, 0, sizeof *p); }

FF_INLINE void ECN(affine_neg)(AFF *r, const AFF *p)
{
    r->x = p->x;
    FN(neg)(&r->y, &p->y);
}

static inline int ECN(affine_on_curve)(const AFF *p)
{
    F_T lhs, rhs;
    if (ECN(affine_is_inf)(p)) return 1;
    FN(sqr)(&lhs, &p->y);
    FN(sqr)(&rhs, &p->x);
    FN(mul)(&rhs, &rhs, &p->x);
    FN(add)(&rhs, &rhs, EC_B);
    return FN(eq)(&lhs, &rhs);
}

/* ------------------------------------------------------------------ xyzz */

FF_INLINE void ECN(xyzz_set_inf)(XYZZ *p) { memset(p, 0, sizeof *p); }
FF_INLINE int ECN(xyzz_is_inf)(const XYZZ *p) { return FN(is_zero)(&p->zz); }

FF_INLINE void ECN(xyzz_from_affine)(XYZZ *r, const AFF *p)
{
    if (ECN(affine_is_inf)(p)) {
        ECN(xyzz_set_inf)(r);
        return;
    }
    r->x = p->x;
    r->y = p->y;
    FN(set_one)(&r->zz);
    FN(set_one)(&r->zzz);
}

FF_INLINE void ECN(xyzz_neg)(XYZZ *r, const XYZZ *p)
{
    *r = *p;
    FN(neg)(&r->y, &p->y);
}

static inline void ECN(xyzz_dbl)(XYZZ *r, const XYZZ *p)
{
    F_T u, v, w, s, m, t;
    if (ECN(xyzz_is_inf)(p) || FN(is_zero)(&p->y)) {
        ECN(xyzz_set_inf)(r);
        return;
    }
    FN(dbl)(&u, &p->y);
    FN(sqr)(&v, &u);
    FN(mul)(&w, &u, &v);
    FN(mul)(&s, &p->x, &v);
    FN(sqr)(&m, &p->x);
    FN(dbl)(&t, &m);
    FN(add)(&m, &m, &t);           /* M = 3 X^2 */
    FN(mul)(&r->zz, &v, &p->zz);
    FN(mul)(&r->zzz, &w, &p->zzz);
    FN(mul)(&w, &w, &p->y);        /* W*Y */
    FN(sqr)(&t, &m);
    FN(sub)(&t, &t, &s);
    FN(sub)(&r->x, &t, &s);        /* X3 = M^2 - 2S */
    FN(sub)(&s, &s, &r->x);
    FN(mul)(&s, &s, &m);
    FN(sub)(&r->y, &s, &w);        /* Y3 = M(S - X3) - W Y */
}

/* Doubling of an affine point into xyzz: rare (equal operands of a mixed
 * addition), so through the general formula. */
static inline void ECN(xyzz_dbl_affine)(XYZZ *r, const AFF *p)
{
    XYZZ t;
    ECN(xyzz_from_affine)(&t, p);
    ECN(xyzz_dbl)(r, &t);
}

/* r = p + q with q affine (madd-2008-s). */
static inline void ECN(xyzz_add_affine)(XYZZ *r, const XYZZ *p, const AFF *q)
{
    F_T u2, s2, pp, ppp, rr, qq, t;
    if (ECN(affine_is_inf)(q)) {
        if (r != p) *r = *p;
        return;
    }
    if (ECN(xyzz_is_inf)(p)) {
        ECN(xyzz_from_affine)(r, q);
        return;
    }
    FN(mul)(&u2, &q->x, &p->zz);
    FN(mul)(&s2, &q->y, &p->zzz);
    FN(sub)(&u2, &u2, &p->x);      /* P */
    FN(sub)(&s2, &s2, &p->y);      /* R */
    if (FN(is_zero)(&u2)) {
        if (FN(is_zero)(&s2)) ECN(xyzz_dbl_affine)(r, q);
        else ECN(xyzz_set_inf)(r);
        return;
    }
    FN(sqr)(&pp, &u2);
    FN(mul)(&ppp, &pp, &u2);
    FN(mul)(&qq, &p->x, &pp);
    FN(mul)(&r->zz, &p->zz, &pp);
    FN(mul)(&r->zzz, &p->zzz, &ppp);
    FN(mul)(&t, &p->y, &ppp);      /* Y1 PPP, before r->y is written */
    FN(sqr)(&rr, &s2);
    FN(sub)(&rr, &rr, &ppp);
    FN(sub)(&rr, &rr, &qq);
    FN(sub)(&r->x, &rr, &qq);      /* X3 = R^2 - PPP - 2Q */
    FN(sub)(&qq, &qq, &r->x);
    FN(mul)(&qq, &qq, &s2);
    FN(sub)(&r->y, &qq, &t);       /* Y3 = R(Q - X3) - Y1 PPP */
}

/* r = p + q (add-2008-s). */
static inline void ECN(xyzz_add)(XYZZ *r, const XYZZ *p, const XYZZ *q)
{
    F_T u1, u2, s1, s2, pp, ppp, qq, t;
    if (ECN(xyzz_is_inf)(q)) {
        if (r != p) *r = *p;
        return;
    }
    if (ECN(xyzz_is_inf)(p)) {
        *r = *q;
        return;
    }
    FN(mul)(&u1, &p->x, &q->zz);
    FN(mul)(&u2, &q->x, &p->zz);
    FN(mul)(&s1, &p->y, &q->zzz);
    FN(mul)(&s2, &q->y, &p->zzz);
    FN(sub)(&u2, &u2, &u1);        /* P */
    FN(sub)(&s2, &s2, &s1);        /* R */
    if (FN(is_zero)(&u2)) {
        if (FN(is_zero)(&s2)) ECN(xyzz_dbl)(r, p);
        else ECN(xyzz_set_inf)(r);
        return;
    }
    FN(sqr)(&pp, &u2);
    FN(mul)(&ppp, &pp, &u2);
    FN(mul)(&qq, &u1, &pp);
    FN(mul)(&t, &p->zz, &q->zz);
    FN(mul)(&r->zz, &t, &pp);
    FN(mul)(&t, &p->zzz, &q->zzz);
    FN(mul)(&r->zzz, &t, &ppp);
    FN(mul)(&s1, &s1, &ppp);       /* S1 PPP */
    FN(sqr)(&t, &s2);
    FN(sub)(&t, &t, &ppp);
    FN(sub)(&t, &t, &qq);
    FN(sub)(&r->x, &t, &qq);
    FN(sub)(&qq, &qq, &r->x);
    FN(mul)(&qq, &qq, &s2);
    FN(sub)(&r->y, &qq, &s1);
}

static inline void ECN(xyzz_to_affine)(AFF *r, const XYZZ *p)
{
    F_T inv, zinv;
    if (ECN(xyzz_is_inf)(p)) {
        ECN(affine_set_inf)(r);
        return;
    }
    FN(inv)(&inv, &p->zzz);        /* 1/Z^3 */
    FN(mul)(&zinv, &inv, &p->zz);  /* 1/Z */
    FN(sqr)(&zinv, &zinv);         /* 1/Z^2 */
    FN(mul)(&r->x, &p->x, &zinv);
    FN(mul)(&r->y, &p->y, &inv);
}

static inline int ECN(xyzz_eq)(const XYZZ *p, const XYZZ *q)
{
    F_T a, b;
    int pi = ECN(xyzz_is_inf)(p), qi = ECN(xyzz_is_inf)(q);
    if (pi || qi) return pi && qi;
    FN(mul)(&a, &p->x, &q->zz);
    FN(mul)(&b, &q->x, &p->zz);
    if (!FN(eq)(&a, &b)) return 0;
    FN(mul)(&a, &p->y, &q->zzz);
    FN(mul)(&b, &q->y, &p->zzz);
    return FN(eq)(&a, &b);
}

/* Affine forms of n xyzz points with one field inversion (Montgomery's trick).
 * scratch holds n field elements. */
static inline void ECN(xyzz_batch_to_affine)(AFF *out, const XYZZ *in, size_t n, F_T *scratch)
{
    F_T acc, inv, zinv;
    FN(set_one)(&acc);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!ECN(xyzz_is_inf)(&in[i])) FN(mul)(&acc, &acc, &in[i].zzz);
    }
    FN(inv)(&acc, &acc);
    for (size_t i = n; i-- > 0;) {
        if (ECN(xyzz_is_inf)(&in[i])) {
            ECN(affine_set_inf)(&out[i]);
            continue;
        }
        FN(mul)(&inv, &acc, &scratch[i]);    /* 1/ZZZ_i */
        FN(mul)(&acc, &acc, &in[i].zzz);
        FN(mul)(&zinv, &inv, &in[i].zz);
        FN(sqr)(&zinv, &zinv);
        FN(mul)(&out[i].x, &in[i].x, &zinv);
        FN(mul)(&out[i].y, &in[i].y, &inv);
    }
}

/* ------------------------------------------------------------------ jacobian */

FF_INLINE void ECN(jac_set_inf)(JAC *p) { memset(p, 0, sizeof *p); }
FF_INLINE int ECN(jac_is_inf)(const JAC *p) { return FN(is_zero)(&p->z); }

FF_INLINE void ECN(jac_from_affine)(JAC *r, const AFF *p)
{
    if (ECN(affine_is_inf)(p)) {
        ECN(jac_set_inf)(r);
        return;
    }
    r->x = p->x;
    r->y = p->y;
    FN(set_one)(&r->z);
}

/* dbl-2009-l */
static inline void ECN(jac_dbl)(JAC *r, const JAC *p)
{
    F_T a, b, c, d, e, f;
    if (ECN(jac_is_inf)(p)) {
        ECN(jac_set_inf)(r);
        return;
    }
    FN(sqr)(&a, &p->x);
    FN(sqr)(&b, &p->y);
    FN(sqr)(&c, &b);
    FN(add)(&d, &p->x, &b);
    FN(sqr)(&d, &d);
    FN(sub)(&d, &d, &a);
    FN(sub)(&d, &d, &c);
    FN(dbl)(&d, &d);                /* D = 2((X+B)^2 - A - C) */
    FN(dbl)(&e, &a);
    FN(add)(&e, &e, &a);            /* E = 3A */
    FN(sqr)(&f, &e);
    FN(mul)(&r->z, &p->y, &p->z);
    FN(dbl)(&r->z, &r->z);          /* Z3 = 2YZ (before Y is overwritten) */
    FN(sub)(&f, &f, &d);
    FN(sub)(&r->x, &f, &d);         /* X3 = F - 2D */
    FN(sub)(&d, &d, &r->x);
    FN(mul)(&d, &d, &e);
    FN(dbl)(&c, &c);
    FN(dbl)(&c, &c);
    FN(dbl)(&c, &c);
    FN(sub)(&r->y, &d, &c);         /* Y3 = E(D - X3) - 8C */
}

/* r = p + q with q affine (madd-2007-bl). */
static inline void ECN(jac_add_affine)(JAC *r, const JAC *p, const AFF *q)
{
    F_T z1z1, u2, s2, h, hh, i, j, rr, v, t;
    if (ECN(affine_is_inf)(q)) {
        if (r != p) *r = *p;
        return;
    }
    if (ECN(jac_is_inf)(p)) {
        ECN(jac_from_affine)(r, q);
        return;
    }
    FN(sqr)(&z1z1, &p->z);
    FN(mul)(&u2, &q->x, &z1z1);
    FN(mul)(&s2, &q->y, &p->z);
    FN(mul)(&s2, &s2, &z1z1);
    FN(sub)(&h, &u2, &p->x);
    FN(sub)(&rr, &s2, &p->y);
    if (FN(is_zero)(&h)) {
        if (FN(is_zero)(&rr)) {
            JAC qj;
            ECN(jac_from_affine)(&qj, q);
            ECN(jac_dbl)(r, &qj);
        } else {
            ECN(jac_set_inf)(r);
        }
        return;
    }
    FN(sqr)(&hh, &h);
    FN(dbl)(&i, &hh);
    FN(dbl)(&i, &i);                /* I = 4 HH */
    FN(mul)(&j, &h, &i);
    FN(dbl)(&rr, &rr);              /* r = 2 (S2 - Y1) */
    FN(mul)(&v, &p->x, &i);
    FN(mul)(&t, &p->y, &j);         /* Y1 J */
    FN(add)(&r->z, &p->z, &h);
    FN(sqr)(&r->z, &r->z);
    FN(sub)(&r->z, &r->z, &z1z1);
    FN(sub)(&r->z, &r->z, &hh);     /* Z3 = (Z1 + H)^2 - Z1Z1 - HH */
    FN(sqr)(&s2, &rr);
    FN(sub)(&s2, &s2, &j);
    FN(sub)(&s2, &s2, &v);
    FN(sub)(&r->x, &s2, &v);        /* X3 = r^2 - J - 2V */
    FN(sub)(&v, &v, &r->x);
    FN(mul)(&v, &v, &rr);
    FN(dbl)(&t, &t);
    FN(sub)(&r->y, &v, &t);         /* Y3 = r(V - X3) - 2 Y1 J */
}

/* r = p + q (add-2007-bl). */
static inline void ECN(jac_add)(JAC *r, const JAC *p, const JAC *q)
{
    F_T z1z1, z2z2, u1, u2, s1, s2, h, i, j, rr, v, t;
    if (ECN(jac_is_inf)(q)) {
        if (r != p) *r = *p;
        return;
    }
    if (ECN(jac_is_inf)(p)) {
        *r = *q;
        return;
    }
    FN(sqr)(&z1z1, &p->z);
    FN(sqr)(&z2z2, &q->z);
    FN(mul)(&u1, &p->x, &z2z2);
    FN(mul)(&u2, &q->x, &z1z1);
    FN(mul)(&s1, &p->y, &q->z);
    FN(mul)(&s1, &s1, &z2z2);
    FN(mul)(&s2, &q->y, &p->z);
    FN(mul)(&s2, &s2, &z1z1);
    FN(sub)(&h, &u2, &u1);
    FN(sub)(&rr, &s2, &s1);
    if (FN(is_zero)(&h)) {
        if (FN(is_zero)(&rr)) ECN(jac_dbl)(r, p);
        else ECN(jac_set_inf)(r);
        return;
    }
    FN(dbl)(&i, &h);
    FN(sqr)(&i, &i);                /* I = (2H)^2 */
    FN(mul)(&j, &h, &i);
    FN(dbl)(&rr, &rr);
    FN(mul)(&v, &u1, &i);
    FN(add)(&t, &p->z, &q->z);
    FN(sqr)(&t, &t);
    FN(sub)(&t, &t, &z1z1);
    FN(sub)(&t, &t, &z2z2);
    FN(mul)(&r->z, &t, &h);         /* Z3 = ((Z1+Z2)^2 - Z1Z1 - Z2Z2) H */
    FN(mul)(&s1, &s1, &j);
    FN(sqr)(&t, &rr);
    FN(sub)(&t, &t, &j);
    FN(sub)(&t, &t, &v);
    FN(sub)(&r->x, &t, &v);
    FN(sub)(&v, &v, &r->x);
    FN(mul)(&v, &v, &rr);
    FN(dbl)(&s1, &s1);
    FN(sub)(&r->y, &v, &s1);        /* Y3 = r(V - X3) - 2 S1 J */
}

static inline void ECN(jac_to_affine)(AFF *r, const JAC *p)
{
    F_T zinv, zinv2;
    if (ECN(jac_is_inf)(p)) {
        ECN(affine_set_inf)(r);
        return;
    }
    FN(inv)(&zinv, &p->z);
    FN(sqr)(&zinv2, &zinv);
    FN(mul)(&r->x, &p->x, &zinv2);
    FN(mul)(&zinv2, &zinv2, &zinv);
    FN(mul)(&r->y, &p->y, &zinv2);
}

static inline void ECN(jac_to_xyzz)(XYZZ *r, const JAC *p)
{
    if (ECN(jac_is_inf)(p)) {
        ECN(xyzz_set_inf)(r);
        return;
    }
    r->x = p->x;
    r->y = p->y;
    FN(sqr)(&r->zz, &p->z);
    FN(mul)(&r->zzz, &r->zz, &p->z);
}

/* ------------------------------------------------------------------ scalars */

/* k * p for a canonical little-endian scalar of nbits bits (double-and-add; not
 * constant time: used for public data only). */
static inline void ECN(xyzz_mul_limbs)(XYZZ *r, const AFF *p, const uint64_t *k, int nbits)
{
    XYZZ acc;
    ECN(xyzz_set_inf)(&acc);
    for (int i = nbits - 1; i >= 0; i--) {
        ECN(xyzz_dbl)(&acc, &acc);
        if ((k[i / 64] >> (i % 64)) & 1) ECN(xyzz_add_affine)(&acc, &acc, p);
    }
    *r = acc;
}

#undef AFF
#undef XYZZ
#undef JAC
#undef ECN
#undef FN
#undef EC_CAT
#undef EC_CAT2
