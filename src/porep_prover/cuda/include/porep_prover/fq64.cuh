/* SPDX-License-Identifier: Apache-2.0 */
/* Fq products on the FP64 pipe: an element as 8 signed 48-bit limbs held in
 * doubles, multiplied by Montgomery's method with R = 2^384 (the same R as
 * field.cuh's 12 x 32-bit form, so the two forms hold the same Montgomery
 * values and convert by regrouping limbs).
 *
 * Why: the 32-bit product keeps the integer multiply-add pipe busy and the
 * FP64 pipe idle; the two pipes issue side by side, so warps that multiply
 * here run beside warps that multiply there.
 *
 * How a limb product a b (|a|, |b| < 2^48) is taken exactly: a column's high
 * accumulator H starts at C_H = 1.5 2^101, where a double's unit in the last
 * place is 2^49, and every fma(a, b, H) adds a b rounded to a multiple of
 * 2^49; the difference d of H after and before is exact, and fma(a, b, -d)
 * = a b - d is the exact remainder (|a b - d| <= 2^48), added to the
 * column's low accumulator L. A column's value is L + (H - C_H) / 2^48.
 * Bounds (CIOS order, columns i..i+8 live): at most 15 products meet in a
 * column (8 of a b, 7 of q p), so |sum of a b| < 1.5 2^99 keeps H inside
 * [2^101, 2^102) and |L| < 15 2^48 + 2^47 < 2^52; a column's value is then
 * below 2^53 in magnitude, exact in a double.
 *
 * Montgomery's digit q for column t is t m' mod 2^48, taken signed in
 * [-2^47, 2^47] (the rounding trick again, at unit 2^48), so the product of
 * values below p in magnitude is below 0.63 p in magnitude: no final
 * subtraction, and outputs feed inputs. Limbs stay signed, |limb| <= 2^47,
 * except the top one. NVRTC-safe; builds on the host too (for checks). */
#ifndef POREP_FQ64_CUH
#define POREP_FQ64_CUH

#ifdef __CUDACC__
#define F64_FN __device__ __forceinline__
/* explicit round-to-nearest operations: no contraction, no reassociation */
#define F64_ADD(a, b) __dadd_rn(a, b)
#define F64_SUB(a, b) __dsub_rn(a, b)
#define F64_FMA(a, b, c) __fma_rn(a, b, c)
#define F64_MUL(a, b) __dmul_rn(a, b)
#define F64_UNROLL _Pragma("unroll")
#else
#include <math.h>
#define F64_FN static inline
#define F64_ADD(a, b) ((a) + (b))
#define F64_SUB(a, b) ((a) - (b))
#define F64_FMA(a, b, c) fma(a, b, c)
#define F64_MUL(a, b) ((a) * (b))
#define F64_UNROLL
#endif

#define FQ64_LIMBS 8

struct fq64 {
    double v[FQ64_LIMBS];
};

/* p in 48-bit limbs; -p^-1 mod 2^48 */
#define FQ64_P0 0xffffffffaaabp0
#define FQ64_P1 0xb153ffffb9fep0
#define FQ64_P2 0xf6241eabfffep0
#define FQ64_P3 0x6730d2a0f6b0p0
#define FQ64_P4 0x4b84f38512bfp0
#define FQ64_P5 0x434bacd76477p0
#define FQ64_P6 0xe69a4b1ba7b6p0
#define FQ64_P7 0x1a0111ea397fp0
#define FQ64_MINV 0xfffcfffcfffdp0

#define FQ64_CH 0x1.8p+101 /* 1.5 2^101: unit in the last place 2^49 */
#define FQ64_CR 0x1.8p+100 /* 1.5 2^100: unit 2^48 */
#define FQ64_INV_W 0x1p-48  /* 2^-48 */

F64_FN double fq64_p(int j)
{
    return j == 0 ? FQ64_P0 : j == 1 ? FQ64_P1 : j == 2 ? FQ64_P2 : j == 3 ? FQ64_P3
         : j == 4 ? FQ64_P4 : j == 5 ? FQ64_P5 : j == 6 ? FQ64_P6 : FQ64_P7;
}

/* (L, H) += a b, exactly (the module comment's split). */
F64_FN void fq64_mad(double &L, double &H, double a, double b)
{
    double h = F64_FMA(a, b, H);
    double d = F64_SUB(h, H);
    H = h;
    L = F64_ADD(L, F64_FMA(a, b, -d));
}

/* A column's value, L + (H - C_H) / 2^48 (exact: below 2^53). */
F64_FN double fq64_column(double L, double H) { return F64_FMA(F64_SUB(H, FQ64_CH), FQ64_INV_W, L); }

/* t rounded to a multiple of 2^48 (|t| < 2^53 or a multiple of 2^48 below 2^100). */
F64_FN double fq64_round48(double t) { return F64_SUB(F64_ADD(t, FQ64_CR), FQ64_CR); }

/* r = a b / 2^384 mod p, |r| < 0.63 p for |a|, |b| < p (limbs as above). */
F64_FN void fq64_mul(fq64 &r, const fq64 &a, const fq64 &b)
{
    double L[FQ64_LIMBS + 1], H[FQ64_LIMBS + 1]; /* columns i .. i + 8, rotating */
F64_UNROLL
    for (int k = 0; k <= FQ64_LIMBS; k++) {
        L[k] = 0.0;
        H[k] = FQ64_CH;
    }
F64_UNROLL
    for (int i = 0; i < FQ64_LIMBS; i++) {
        /* row i: a_i b_j into column i + j (low) and i + j + 1 (high);
         * slot k holds column i + k */
F64_UNROLL
        for (int j = 0; j < FQ64_LIMBS; j++) fq64_mad(L[j], H[j + 1], a.v[i], b.v[j]);
        /* column i is complete: its digit q makes it 0 mod 2^48 */
        double t = fq64_column(L[0], H[0]);
        double th = fq64_round48(t), tl = F64_SUB(t, th);
        double qh = F64_SUB(F64_FMA(tl, FQ64_MINV, FQ64_CR), FQ64_CR);
        double q = F64_FMA(tl, FQ64_MINV, -qh);
        double s = F64_FMA(q, FQ64_P0, tl); /* tl + q p_0: a multiple of 2^48, exact */
        L[1] = F64_FMA(F64_ADD(th, s), FQ64_INV_W, L[1]);
F64_UNROLL
        for (int j = 1; j < FQ64_LIMBS; j++) fq64_mad(L[j], H[j + 1], q, fq64_p(j));
        /* shift: column i + 1 to slot 0 */
F64_UNROLL
        for (int k = 0; k < FQ64_LIMBS; k++) {
            L[k] = L[k + 1];
            H[k] = H[k + 1];
        }
        L[FQ64_LIMBS] = 0.0;
        H[FQ64_LIMBS] = FQ64_CH;
    }
    /* columns 8 .. 15 in slots 0 .. 7: signed 48-bit limbs, the rest on top */
    double carry = 0.0;
F64_UNROLL
    for (int k = 0; k < FQ64_LIMBS - 1; k++) {
        double t = F64_ADD(fq64_column(L[k], H[k]), carry);
        double th = fq64_round48(t);
        r.v[k] = F64_SUB(t, th);
        carry = F64_MUL(th, FQ64_INV_W);
    }
    r.v[FQ64_LIMBS - 1] = F64_ADD(fq64_column(L[FQ64_LIMBS - 1], H[FQ64_LIMBS - 1]), carry);
}

#endif
