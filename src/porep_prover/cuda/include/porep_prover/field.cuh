/* SPDX-License-Identifier: Apache-2.0 */
/* BLS12-381 Fr and Fq on the GPU: 32-bit limbs, Montgomery form, the same
 * bytes as the package's host layout (64-bit little-endian limbs are two
 * 32-bit limbs each), so buffers move host <-> device unchanged.
 *
 * Multiplication is CIOS over 32-bit limbs with PTX carry chains, laid out
 * so that every limb product is one 64-bit multiply-add with carry
 * (mont_mul_wide; MONT_MUL_LOHI builds the earlier lo/hi-chain layout for
 * comparison). Values stay fully reduced (< modulus) after every operation.
 * NVRTC-safe: no host headers. */
#ifndef POREP_FIELD_CUH
#define POREP_FIELD_CUH

/* The constants the CPU code uses (native/bls12_381.h, generated): 64-bit
 * little-endian limbs, read here as twice as many 32-bit ones. */
#include "bls12_381.h"

typedef unsigned int u32;
typedef unsigned long long u64;

#define DEV __device__ __forceinline__
/* Out of line: the group law's functions, called from several places each. */
#define DEV_CALL __device__ __noinline__

/* Elements 16-byte aligned, so global loads and stores move 16 bytes an
 * instruction instead of 4 (the NTT 1.5x faster on an H200). Every buffer of
 * elements is expected at a 16-byte aligned address: device allocations and
 * whole-element offsets are (32 and 48 bytes). MONT_ALIGN4 builds the
 * natural 4-byte alignment for comparison. */
#ifdef MONT_ALIGN4
#define MONT_ALIGN
#else
#define MONT_ALIGN __align__(16)
#endif
template <int N>
struct MONT_ALIGN mont {
    u32 v[N];
};

__constant__ u64 FR_M64[4] = FR_MODULUS;
__constant__ u64 FQ_M64[6] = FQ_MODULUS;
__constant__ u64 FR_ONE64[4] = FR_ONE;
__constant__ u64 FQ_ONE64[6] = FQ_ONE;

template <int N>
DEV const u32 *modulus();
template <>
DEV const u32 *modulus<8>() { return (const u32 *)FR_M64; }
template <>
DEV const u32 *modulus<12>() { return (const u32 *)FQ_M64; }
/* -1/m mod 2^32: the low half of the 64-bit constant */
template <int N>
DEV u32 modulus_inv();
template <>
DEV u32 modulus_inv<8>() { return (u32)FR_INV; }
template <>
DEV u32 modulus_inv<12>() { return (u32)FQ_INV; }
template <int N>
DEV const u32 *mont_one();
template <>
DEV const u32 *mont_one<8>() { return (const u32 *)FR_ONE64; }
template <>
DEV const u32 *mont_one<12>() { return (const u32 *)FQ_ONE64; }

/* r = t - m if t >= m, else t (t < 2m < 2^(32N)). */
template <int N>
DEV void sub_modulus_once(mont<N> &r, const u32 (&t)[N])
{
    const u32 *m = modulus<N>();
    u32 d[N], borrow;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(t[0]), "r"(m[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d[i]) : "r"(t[i]), "r"(m[i]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = borrow ? t[i] : d[i];
}

/* r = a + b mod m (a, b < m < 2^(32N - 1)). */
template <int N>
DEV void mont_add(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
    u32 s[N];
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(s[i]) : "r"(a.v[i]), "r"(b.v[i]));
    sub_modulus_once<N>(r, s);
}

/* r = a - b mod m. */
template <int N>
DEV void mont_sub(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
    const u32 *m = modulus<N>();
    u32 d[N], borrow;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d[i]) : "r"(a.v[i]), "r"(b.v[i]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
    /* add m back when it borrowed: m & borrow-mask */
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(d[0]) : "r"(m[0] & borrow));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(d[i]) : "r"(m[i] & borrow));
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = d[i];
}

/* r = a b / 2^(32N) mod m, CIOS with separate chains for the products' low
 * and high halves (the first layout; kept for the benchmarks' comparison). */
template <int N>
DEV void mont_mul_lohi(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
    const u32 *m = modulus<N>();
    const u32 inv = modulus_inv<N>();
    u32 t[N + 2];
#pragma unroll
    for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        u32 bi = b.v[i], q;
        /* t += a * b_i: low halves into t[j], high halves into t[j + 1] */
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++) asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a.v[j]), "r"(bi));
        asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++) asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a.v[j]), "r"(bi));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        /* t += q m with q = t_0 (-1/m): t_0 becomes zero */
        q = t[0] * inv;
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(q), "r"(m[0]));
#pragma unroll
        for (int j = 1; j < N; j++) asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(q), "r"(m[j]));
        asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(q), "r"(m[0]));
#pragma unroll
        for (int j = 1; j < N; j++) asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(q), "r"(m[j]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
#pragma unroll
        for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
        t[N + 1] = 0;
    }
    /* t < 2m: subtract m once if t >= m */
    u32 d[N], borrow;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(t[0]), "r"(m[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(d[i]) : "r"(t[i]), "r"(m[i]));
    asm volatile("subc.cc.u32 %0, %1, 0;" : "=r"(borrow) : "r"(t[N]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = borrow ? t[i] : d[i];
}

/* Whether the modulus's two low limbs are 1 and 2^32 - 1 (so -1/m mod 2^32
 * is 2^32 - 1): Fr's, whose reduction rows then take q = -t_0 and the
 * products by those limbs without multiplying (FR_REDC_GENERIC builds the
 * generic rows for comparison). */
template <int N>
struct low_limbs_one_minus_one {
    static const bool value = false;
};
#ifndef FR_REDC_GENERIC
template <>
struct low_limbs_one_minus_one<8> {
    static const bool value = true;
};
#endif

/* One Montgomery row's q m in the wide layout (see mont_mul_wide): q from
 * e[0]; the even limbs' products added into e (its carry into e[N]), the odd
 * ones' into o (o[j] at weight j + 1), or written to o when fresh. e[0]
 * ends as zero (mod 2^32) and is dropped by the caller's shift. */
template <int N, bool fresh>
DEV void redc_row_wide(u32 (&e)[N + 1], u32 (&o)[N + 1], const u32 *m, u32 inv)
{
    const bool low = low_limbs_one_minus_one<N>::value;
    const u32 e0 = e[0], q = low ? 0u - e0 : e0 * inv;
    if (low) { /* q m_0 = q clears e_0 with a carry exactly when e_0 != 0 */
        u32 zero;
        asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(zero) : "r"(e0), "r"(q));
        asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(e[1]));
    } else {
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(e[0]) : "r"(q), "r"(m[0]));
        asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(e[1]) : "r"(q), "r"(m[0]));
    }
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(e[j]) : "r"(q), "r"(m[j]));
        asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(e[j + 1]) : "r"(q), "r"(m[j]));
    }
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(e[N]));
    if (low) { /* q m_1 = q 2^32 - q: low half e_0, high half q - (e_0 != 0) */
        const u32 hi = q - (e0 != 0u);
        if (fresh) {
            o[0] = e0;
            o[1] = hi;
        } else {
            asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(o[0]) : "r"(e0));
            asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(o[1]) : "r"(hi));
        }
    } else if (fresh) {
        asm("mul.lo.u32 %0, %1, %2;" : "=r"(o[0]) : "r"(q), "r"(m[1]));
        asm("mul.hi.u32 %0, %1, %2;" : "=r"(o[1]) : "r"(q), "r"(m[1]));
    } else {
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(o[0]) : "r"(q), "r"(m[1]));
        asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(o[1]) : "r"(q), "r"(m[1]));
    }
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        if (fresh) { /* the pairs tile o without overlap: no carries */
            asm("mul.lo.u32 %0, %1, %2;" : "=r"(o[j]) : "r"(q), "r"(m[j + 1]));
            asm("mul.hi.u32 %0, %1, %2;" : "=r"(o[j + 1]) : "r"(q), "r"(m[j + 1]));
        } else {
            asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(o[j]) : "r"(q), "r"(m[j + 1]));
            asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(o[j + 1]) : "r"(q), "r"(m[j + 1]));
        }
    }
}

/* After a reduction row: shift out the zero limb e[0] and fold o in, e_j <-
 * o_j + e_(j+1). With carry_out the top limb takes the chain's carry (e[N]
 * 0 or 1); without, the caller's bound leaves none (e[N] is left as is). */
template <int N, bool carry_out>
DEV void shift_fold(u32 (&e)[N + 1], const u32 (&o)[N + 1])
{
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(e[0]) : "r"(o[0]), "r"(e[1]));
#pragma unroll
    for (int j = 1; j < N - 1; j++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(e[j]) : "r"(o[j]), "r"(e[j + 1]));
    if (carry_out) {
        asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(e[N - 1]) : "r"(o[N - 1]), "r"(e[N]));
        asm volatile("addc.u32 %0, 0, 0;" : "=r"(e[N]));
    } else {
        asm volatile("addc.u32 %0, %1, %2;" : "=r"(e[N - 1]) : "r"(o[N - 1]), "r"(e[N]));
    }
}

/* acc[0 .. N) = the even or odd limbs' products x_j y (j = first, first + 2,
 * ...) in the wide layout of mont_mul_wide: pairs that tile acc without
 * overlap, so no carries. */
template <int N>
DEV void mul_row_fresh(u32 (&acc)[N + 1], const mont<N> &x, int first, u32 y)
{
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        asm("mul.lo.u32 %0, %1, %2;" : "=r"(acc[j]) : "r"(x.v[j + first]), "r"(y));
        asm("mul.hi.u32 %0, %1, %2;" : "=r"(acc[j + 1]) : "r"(x.v[j + first]), "r"(y));
    }
}

/* r = a b / 2^(32N) mod m, CIOS with the limbs' products in 64-bit pairs.
 *
 * Each row adds a * b_i and q * m as products whose low and high halves land
 * in neighbouring limbs. Split by the parity of the operand's limb, the
 * products of one parity tile an accumulator without overlap, so one carry
 * chain of alternating mad.lo / madc.hi covers them, and ptxas fuses each
 * pair into one 64-bit multiply-add with carry in and out (IMAD.WIDE.U32.X on
 * sm_80 and later); the lo-chain / hi-chain layout above becomes three
 * instructions per product instead. Even limbs accumulate into e (limb j at
 * weight j), odd ones into o (limb j at weight j + 1); after the row's shift
 * both sit at weight j and one add chain folds o into e. With a, b < m the
 * row value stays below 2^33 m, so e needs N + 1 limbs, and the result is
 * below 2m < 2^(32N) (both moduli leave the top bit free); so is o's part,
 * which therefore never carries out of its N limbs. */
template <int N>
DEV void mont_mul_wide(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
    const u32 *m = modulus<N>();
    const u32 inv = modulus_inv<N>();
    u32 e[N + 1], o[N + 1];
#pragma unroll
    for (int i = 0; i < N; i++) {
        const u32 bi = b.v[i];
        if (i == 0) {
            mul_row_fresh<N>(e, a, 0, bi);
            e[N] = 0;
        } else {
            asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(e[0]) : "r"(a.v[0]), "r"(bi));
            asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(e[1]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
            for (int j = 2; j < N; j += 2) {
                asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(e[j]) : "r"(a.v[j]), "r"(bi));
                asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(e[j + 1]) : "r"(a.v[j]), "r"(bi));
            }
            asm volatile("addc.u32 %0, 0, 0;" : "=r"(e[N]));
        }
        mul_row_fresh<N>(o, a, 1, bi);
        redc_row_wide<N, false>(e, o, m, inv);
        shift_fold<N, false>(e, o);   /* the row's value is below 2m < 2^(32N): no carry out */
    }
    u32 t[N];
#pragma unroll
    for (int i = 0; i < N; i++) t[i] = e[i];
    sub_modulus_once<N>(r, t);   /* e < 2m */
}

/* acc (N limbs, its carry into acc[N]) += the even or odd limbs' products
 * x_j y (j = first, first + 2, ...), in the wide layout of mont_mul_wide:
 * one chain of 64-bit multiply-adds. With top, the chain's carry is added
 * to acc[N]; without, the caller's bound leaves none. */
template <int N, bool top>
DEV void mad_row_wide(u32 (&acc)[N + 1], const mont<N> &x, int first, u32 y)
{
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(acc[0]) : "r"(x.v[first]), "r"(y));
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(acc[1]) : "r"(x.v[first]), "r"(y));
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(acc[j]) : "r"(x.v[j + first]), "r"(y));
        asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(acc[j + 1]) : "r"(x.v[j + first]), "r"(y));
    }
    if (top) asm volatile("addc.u32 %0, %0, 0;" : "+r"(acc[N]));
}

/* r = (a b + c d) / 2^(32N) mod m: two products, one reduction (the rows of
 * mont_mul_wide with c d_i added beside a b_i): 3 N^2 multiply-adds against
 * two products' 4 N^2 (Fq: 432 against 576). With a, b, c, d < m the row
 * value stays below 3m + 3m / 2^32 < 2^(32N) (both moduli below 2^(32N - 2)),
 * so the shift has no carry out and o, below a + c + m, none either; the
 * result, below (a b + c d) / 2^(32N) + m < 1.25 m, takes one subtraction.
 * A difference a b - c d is a b + c (m - d). */
template <int N>
DEV void mont_mul2_wide(mont<N> &r, const mont<N> &a, const mont<N> &b, const mont<N> &c, const mont<N> &d)
{
    const u32 *m = modulus<N>();
    const u32 inv = modulus_inv<N>();
    u32 e[N + 1], o[N + 1];
#pragma unroll
    for (int i = 0; i < N; i++) {
        const u32 bi = b.v[i], di = d.v[i];
        if (i == 0) {
            mul_row_fresh<N>(e, a, 0, bi);
            e[N] = 0;
        } else {
            e[N] = 0;
            mad_row_wide<N, true>(e, a, 0, bi);
        }
        mad_row_wide<N, true>(e, c, 0, di);
        mul_row_fresh<N>(o, a, 1, bi);
        mad_row_wide<N, false>(o, c, 1, di);
        redc_row_wide<N, false>(e, o, m, inv);
        shift_fold<N, false>(e, o);
    }
    u32 t[N];
#pragma unroll
    for (int i = 0; i < N; i++) t[i] = e[i];
    sub_modulus_once<N>(r, t);
}

/* acc += a_i a_j 2^(32 (i + j)) for j = j0, j0 + 2, ... < N: products whose
 * halves tile acc from limb i + j0 up, so one carry chain; its carry goes
 * to the limb above, which no earlier row of the same parity has reached
 * (the rows before i sum to below 2^(32 (i + N))). Limbs above top (the
 * highest an earlier row wrote) are still unset and are written, not added
 * to. Returns the new top. Unrolled, every branch here is decided at
 * compile time. */
template <int N>
DEV int sqr_cross_row(u32 (&acc)[2 * N], const mont<N> &a, int i, int j0, int top)
{
    if (j0 >= N) return top;
    const u32 ai = a.v[i];
#pragma unroll
    for (int j = j0; j < N; j += 2) {
        const int p = i + j;
        if (j == j0) {
            if (p > top) asm volatile("mad.lo.cc.u32 %0, %1, %2, 0;" : "=r"(acc[p]) : "r"(ai), "r"(a.v[j]));
            else asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(acc[p]) : "r"(ai), "r"(a.v[j]));
        } else {
            if (p > top) asm volatile("madc.lo.cc.u32 %0, %1, %2, 0;" : "=r"(acc[p]) : "r"(ai), "r"(a.v[j]));
            else asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(acc[p]) : "r"(ai), "r"(a.v[j]));
        }
        if (p + 1 > top) asm volatile("madc.hi.cc.u32 %0, %1, %2, 0;" : "=r"(acc[p + 1]) : "r"(ai), "r"(a.v[j]));
        else asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(acc[p + 1]) : "r"(ai), "r"(a.v[j]));
    }
    const int c = i + j0 + 2 * ((N - 1 - j0) / 2) + 2;   /* the limb above the last pair */
    if (c > top) asm volatile("addc.u32 %0, 0, 0;" : "=r"(acc[c]));
    else asm volatile("addc.u32 %0, %0, 0;" : "+r"(acc[c]));
    return c;
}

/* r = a^2 / 2^(32N) mod m: the square first (each cross product once, in the
 * wide layout: N (N - 1) / 2 64-bit multiply-adds, then doubled, plus the N
 * diagonal ones), then N Montgomery rows over it (redc_row_wide), each
 * taking the square's next high limb in at the top. N (N + 1) / 2 + N^2
 * multiply-adds against the product's 2 N^2 (Fq: 222 against 288). */
template <int N>
DEV void mont_sqr_wide(mont<N> &r, const mont<N> &a)
{
    u32 ev[2 * N], od[2 * N];   /* cross products at even / odd limb sums i + j */
    int top_ev = 1, top_od = 0;  /* limbs 0, 1 of ev and 0 of od take no product */
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
        top_od = sqr_cross_row<N>(od, a, i, i + 1, top_od);
        top_ev = sqr_cross_row<N>(ev, a, i, i + 2, top_ev);
    }
#pragma unroll
    for (int k = 0; k < 2 * N; k++) {
        if (k > top_ev || k < 2) ev[k] = 0;
        if (k > top_od || k < 1) od[k] = 0;
    }
    /* t = 2 (ev + od) + sum a_i^2 2^(64 i) < m^2; limb 0 of ev + od is zero */
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[1]) : "r"(od[1]));
#pragma unroll
    for (int k = 2; k < 2 * N; k++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(ev[k]) : "r"(od[k]));
    asm volatile("add.cc.u32 %0, %0, %0;" : "+r"(ev[1]));
#pragma unroll
    for (int k = 2; k < 2 * N; k++) asm volatile("addc.cc.u32 %0, %0, %0;" : "+r"(ev[k]));
    asm volatile("mad.lo.cc.u32 %0, %1, %1, 0;" : "=r"(ev[0]) : "r"(a.v[0]));
    asm volatile("madc.hi.cc.u32 %0, %1, %1, %0;" : "+r"(ev[1]) : "r"(a.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) {
        asm volatile("madc.lo.cc.u32 %0, %1, %1, %0;" : "+r"(ev[2 * i]) : "r"(a.v[i]));
        asm volatile("madc.hi.cc.u32 %0, %1, %1, %0;" : "+r"(ev[2 * i + 1]) : "r"(a.v[i]));
    }
    /* reduce: the window e holds t's low limbs, t's limb N + i joins at the top after row i */
    const u32 *m = modulus<N>();
    const u32 inv = modulus_inv<N>();
    u32 e[N + 1], o[N + 1];
#pragma unroll
    for (int k = 0; k < N; k++) e[k] = ev[k];
    e[N] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        redc_row_wide<N, true>(e, o, m, inv);
        shift_fold<N, true>(e, o);
        /* the window stays below 2^(32N) + 2m: its top limb is 0 or 1 */
        asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(e[N - 1]) : "r"(ev[N + i]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(e[N]));
    }
    u32 t[N];
#pragma unroll
    for (int i = 0; i < N; i++) t[i] = e[i];
    sub_modulus_once<N>(r, t);   /* the square below m 2^(32N): e < 2m, e[N] ended 0 */
}

/* Products are inlined into their callers; the group law's functions are
 * the out-of-line units (ec.cuh), which keeps code size and compile time
 * in bounds without passing field elements through the stack. */
template <int N>
DEV void mont_mul_inline(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
#ifdef MONT_MUL_LOHI
    mont_mul_lohi<N>(r, a, b);
#else
    mont_mul_wide<N>(r, a, b);
#endif
}
template <int N>
DEV void mont_mul(mont<N> &r, const mont<N> &a, const mont<N> &b) { mont_mul_inline<N>(r, a, b); }
/* Squares by mont_sqr_wide; MONT_SQR_MUL builds them as products (for comparison). */
template <int N>
DEV void mont_sqr_inline(mont<N> &r, const mont<N> &a)
{
#if defined(MONT_SQR_MUL) || defined(MONT_MUL_LOHI)
    mont_mul_inline<N>(r, a, a);
#else
    mont_sqr_wide<N>(r, a);
#endif
}
template <int N>
DEV void mont_sqr(mont<N> &r, const mont<N> &a) { mont_sqr_inline<N>(r, a); }
/* a b + c d in one reduction (mont_mul2_wide); MONT_MUL2_OFF builds it as
 * two products and an addition (for comparison). */
template <int N>
DEV void mont_mul2_inline(mont<N> &r, const mont<N> &a, const mont<N> &b, const mont<N> &c, const mont<N> &d)
{
#if defined(MONT_MUL2_OFF) || defined(MONT_MUL_LOHI)
    mont<N> t;
    mont_mul_inline<N>(t, a, b);
    mont_mul_inline<N>(r, c, d);
    mont_add<N>(r, r, t);
#else
    mont_mul2_wide<N>(r, a, b, c, d);
#endif
}
template <int N>
DEV void mont_mul2(mont<N> &r, const mont<N> &a, const mont<N> &b, const mont<N> &c, const mont<N> &d)
{
    mont_mul2_inline<N>(r, a, b, c, d);
}
#ifdef FQ_MUL_CALL
/* The Fq product as a call instead (smaller code, fewer registers), its
 * operands and result by value: passed in registers, where references made
 * every caller keep its field elements in stack memory (G1 MSM 1.26x and
 * G2 1.58x faster at 2^24 on an H200). */
DEV_CALL mont<12> fq_mul_call(const mont<12> a, const mont<12> b)
{
    mont<12> r;
    mont_mul_inline<12>(r, a, b);
    return r;
}
template <>
DEV void mont_mul<12>(mont<12> &r, const mont<12> &a, const mont<12> &b) { r = fq_mul_call(a, b); }
DEV_CALL mont<12> fq_sqr_call(const mont<12> a)
{
    mont<12> r;
    mont_sqr_inline<12>(r, a);
    return r;
}
template <>
DEV void mont_sqr<12>(mont<12> &r, const mont<12> &a) { r = fq_sqr_call(a); }
DEV_CALL mont<12> fq_mul2_call(const mont<12> a, const mont<12> b, const mont<12> c, const mont<12> d)
{
    mont<12> r;
    mont_mul2_inline<12>(r, a, b, c, d);
    return r;
}
template <>
DEV void mont_mul2<12>(mont<12> &r, const mont<12> &a, const mont<12> &b, const mont<12> &c, const mont<12> &d)
{
    r = fq_mul2_call(a, b, c, d);
}
#endif

template <int N>
DEV bool mont_is_zero(const mont<N> &a)
{
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= a.v[i];
    return acc == 0;
}

template <int N>
DEV bool mont_eq(const mont<N> &a, const mont<N> &b)
{
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= a.v[i] ^ b.v[i];
    return acc == 0;
}

typedef mont<8> fr_t;
typedef mont<12> fq_t;

#endif
