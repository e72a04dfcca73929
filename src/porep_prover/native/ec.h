/* SPDX-License-Identifier: Apache-2.0 */
/* G1 and G2 of BLS12-381: the group law (ec_impl.h instantiated twice) and the
 * checks that need curve-specific structure (subgroup membership). */
#ifndef POREP_EC_H
#define POREP_EC_H

#include "field.h"

static const fq_t G1_B_MONT = {G1_B};
static const fq2_t G2_B_MONT = G2_B;

#define EC g1
#define F fq
#define F_T fq_t
#define EC_B (&G1_B_MONT)
#include "ec_impl.h"
#undef EC
#undef F
#undef F_T
#undef EC_B

#define EC g2
#define F fq2
#define F_T fq2_t
#define EC_B (&G2_B_MONT)
#include "ec_impl.h"
#undef EC
#undef F
#undef F_T
#undef EC_B

static inline void g1_generator(g1_affine_t *p)
{
    static const g1_affine_t g = {{G1_GEN_X}, {G1_GEN_Y}};
    *p = g;
}

static inline void g2_generator(g2_affine_t *p)
{
    static const g2_affine_t g = {G2_GEN_X, G2_GEN_Y};
    *p = g;
}

/* k * p for k = |u| = 0xd201000000010000 (64 bits, Hamming weight 6). */
static inline void g1_mul_by_x_abs(g1_xyzz_t *r, const g1_affine_t *p)
{
    const uint64_t x = BLS_X_ABS;
    g1_xyzz_mul_limbs(r, p, &x, 64);
}

/* Scott 2021: for p on E1, p is in G1 iff phi(p) = -u^2 p, phi(x, y) = (beta x, y). */
static inline int g1_affine_in_subgroup(const g1_affine_t *p)
{
    static const fq_t beta = {G1_BETA};
    g1_xyzz_t t, t2;
    g1_affine_t ta, phi;
    if (!g1_affine_on_curve(p)) return 0;
    if (g1_affine_is_inf(p)) return 1;
    g1_mul_by_x_abs(&t, p);         /* |u| p */
    g1_xyzz_to_affine(&ta, &t);
    g1_mul_by_x_abs(&t2, &ta);      /* u^2 p */
    g1_xyzz_neg(&t2, &t2);
    fq_mul(&phi.x, &p->x, &beta);
    phi.y = p->y;
    g1_xyzz_from_affine(&t, &phi);
    return g1_xyzz_eq(&t, &t2);
}

/* Scott 2021: for p on E2, p is in G2 iff psi(p) = u p. */
static inline int g2_affine_in_subgroup(const g2_affine_t *p)
{
    static const fq2_t psi_x = G2_PSI_X, psi_y = G2_PSI_Y;
    g2_xyzz_t t, s;
    g2_affine_t psi;
    if (!g2_affine_on_curve(p)) return 0;
    if (g2_affine_is_inf(p)) return 1;
    {
        const uint64_t x = BLS_X_ABS;
        g2_xyzz_mul_limbs(&t, p, &x, 64);
    }
    g2_xyzz_neg(&t, &t);            /* u p, u < 0 */
    fq2_conj(&psi.x, &p->x);
    fq2_mul(&psi.x, &psi.x, &psi_x);
    fq2_conj(&psi.y, &p->y);
    fq2_mul(&psi.y, &psi.y, &psi_y);
    g2_xyzz_from_affine(&s, &psi);
    return g2_xyzz_eq(&s, &t);
}

#endif
