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
 * below 2m < 2^(32N) (both moduli leave the top bit free). */
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
#pragma unroll
            for (int j = 0; j < N; j += 2) {
                asm("mul.lo.u32 %0, %1, %2;" : "=r"(e[j]) : "r"(a.v[j]), "r"(bi));
                asm("mul.hi.u32 %0, %1, %2;" : "=r"(e[j + 1]) : "r"(a.v[j]), "r"(bi));
            }
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
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            asm("mul.lo.u32 %0, %1, %2;" : "=r"(o[j]) : "r"(a.v[j + 1]), "r"(bi));
            asm("mul.hi.u32 %0, %1, %2;" : "=r"(o[j + 1]) : "r"(a.v[j + 1]), "r"(bi));
        }
        const u32 q = e[0] * inv;
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(e[0]) : "r"(q), "r"(m[0]));
        asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(e[1]) : "r"(q), "r"(m[0]));
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(e[j]) : "r"(q), "r"(m[j]));
            asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(e[j + 1]) : "r"(q), "r"(m[j]));
        }
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(e[N]));
        asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(o[0]) : "r"(q), "r"(m[1]));
        asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(o[1]) : "r"(q), "r"(m[1]));
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(o[j]) : "r"(q), "r"(m[j + 1]));
            asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(o[j + 1]) : "r"(q), "r"(m[j + 1]));
        }
        asm volatile("addc.u32 %0, 0, 0;" : "=r"(o[N]));
        /* shift out the zero limb e[0] and fold o in: e_j <- o_j + e_(j+1) */
        asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(e[0]) : "r"(o[0]), "r"(e[1]));
#pragma unroll
        for (int j = 1; j < N - 1; j++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(e[j]) : "r"(o[j]), "r"(e[j + 1]));
        /* the row's value is below 2m < 2^(32N): no carry out of the top limb */
        asm volatile("addc.u32 %0, %1, %2;" : "=r"(e[N - 1]) : "r"(o[N - 1]), "r"(e[N]));
    }
    u32 t[N];
#pragma unroll
    for (int i = 0; i < N; i++) t[i] = e[i];
    sub_modulus_once<N>(r, t);   /* e < 2m */
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
