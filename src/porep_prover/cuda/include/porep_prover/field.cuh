/* SPDX-License-Identifier: Apache-2.0 */
/* BLS12-381 Fr and Fq on the GPU: 32-bit limbs, Montgomery form, the same
 * bytes as the package's host layout (64-bit little-endian limbs are two
 * 32-bit limbs each), so buffers move host <-> device unchanged.
 *
 * Multiplication is CIOS over 32-bit limbs with PTX carry chains
 * (mad.lo.cc / madc.hi.cc): per limb of b, add a * b_i in two chains (low
 * halves into t_j, high halves into t_j+1), then m * p likewise with
 * m = t_0 * (-1/p) mod 2^32, and drop the zero limb. Values stay fully
 * reduced (< modulus) after every operation. NVRTC-safe: no host headers. */
#ifndef POREP_FIELD_CUH
#define POREP_FIELD_CUH

typedef unsigned int u32;
typedef unsigned long long u64;

#define DEV __device__ __forceinline__

template <int N>
struct mont {
    u32 v[N];
};

/* Modulus limbs and -1/m mod 2^32, per field (generated constants). */
struct fr_params {
    static constexpr int N = 8;
};
struct fq_params {
    static constexpr int N = 12;
};

__constant__ u32 FR_M[8] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                            0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
__constant__ u32 FQ_M[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u,
                             0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
#define FR_M_INV 0xffffffffu
#define FQ_M_INV 0xfffcfffdu

template <int N>
DEV const u32 *modulus();
template <>
DEV const u32 *modulus<8>() { return FR_M; }
template <>
DEV const u32 *modulus<12>() { return FQ_M; }
template <int N>
DEV u32 modulus_inv();
template <>
DEV u32 modulus_inv<8>() { return FR_M_INV; }
template <>
DEV u32 modulus_inv<12>() { return FQ_M_INV; }

/* r = a + b mod m (a, b < m < 2^(32N - 1)). */
template <int N>
DEV void mont_add(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
    const u32 *m = modulus<N>();
    u32 s[N], d[N], borrow;
    asm("add.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm("addc.cc.u32 %0, %1, %2;" : "=r"(s[i]) : "r"(a.v[i]), "r"(b.v[i]));
    asm("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(s[0]), "r"(m[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm("subc.cc.u32 %0, %1, %2;" : "=r"(d[i]) : "r"(s[i]), "r"(m[i]));
    asm("subc.u32 %0, 0, 0;" : "=r"(borrow));
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = borrow ? s[i] : d[i];
}

/* r = a - b mod m. */
template <int N>
DEV void mont_sub(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
    const u32 *m = modulus<N>();
    u32 d[N], borrow;
    asm("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm("subc.cc.u32 %0, %1, %2;" : "=r"(d[i]) : "r"(a.v[i]), "r"(b.v[i]));
    asm("subc.u32 %0, 0, 0;" : "=r"(borrow));
    /* add m back when it borrowed: m & borrow-mask */
    asm("add.cc.u32 %0, %0, %1;" : "+r"(d[0]) : "r"(m[0] & borrow));
#pragma unroll
    for (int i = 1; i < N; i++) asm("addc.cc.u32 %0, %0, %1;" : "+r"(d[i]) : "r"(m[i] & borrow));
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = d[i];
}

/* r = a b / 2^(32N) mod m, CIOS. */
template <int N>
DEV void mont_mul(mont<N> &r, const mont<N> &a, const mont<N> &b)
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
        asm("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++) asm("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a.v[j]), "r"(bi));
        asm("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        asm("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        asm("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
        for (int j = 1; j < N; j++) asm("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a.v[j]), "r"(bi));
        asm("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        /* t += q m with q = t_0 (-1/m): t_0 becomes zero */
        q = t[0] * inv;
        asm("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(q), "r"(m[0]));
#pragma unroll
        for (int j = 1; j < N; j++) asm("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(q), "r"(m[j]));
        asm("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
        asm("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
        asm("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(q), "r"(m[0]));
#pragma unroll
        for (int j = 1; j < N; j++) asm("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(q), "r"(m[j]));
        asm("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
#pragma unroll
        for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
        t[N + 1] = 0;
    }
    /* t < 2m: subtract m once if t >= m */
    u32 d[N], borrow;
    asm("sub.cc.u32 %0, %1, %2;" : "=r"(d[0]) : "r"(t[0]), "r"(m[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm("subc.cc.u32 %0, %1, %2;" : "=r"(d[i]) : "r"(t[i]), "r"(m[i]));
    asm("subc.cc.u32 %0, %1, 0;" : "=r"(borrow) : "r"(t[N]));
    asm("subc.u32 %0, 0, 0;" : "=r"(borrow));
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = borrow ? t[i] : d[i];
}

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
