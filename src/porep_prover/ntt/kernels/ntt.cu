/* SPDX-License-Identifier: Apache-2.0 */
/* NTT over Fr on the GPU (launched by ntt/gpu.py), same results as
 * the CPU code (native/ntt.c): forward X_k = sum_j x_j w^(jk); inverse with
 * 1/n; cosets by scaling with powers of the shift.
 *
 * Radix-2 in passes of up to PASS_MAX_LOG stages through shared memory: a
 * pass owns the index bits [b_lo, b_lo + k) and a block holds the 2^k
 * elements that differ only in those bits, for 2^m neighbouring values of
 * the bits below (so its loads come in runs of 2^m elements). DIF (natural
 * in, bit-reversed out) runs the high bits first; DIT (bit-reversed in,
 * natural out) the low bits first. Both use twiddle w^((i mod 2^b) n/2^(b+1))
 * for the butterfly on bit b, read from one table of w^e (e < N/2) for the
 * largest domain built, at stride N/n: no product is spent on twiddles. Where
 * device memory is short (2^27: the table is 2 GiB a direction) the table
 * is two small ones instead, w^e = lo[e & mask] hi[e >> tw_bits] (tw_bits
 * above 0): one product a butterfly more, a few hundred KiB held.
 *
 * The first pass may gather (read x[brev(i)]) and the last may scatter
 * (write to brev(i)); either may scale an element by c g^brev(i) (its
 * natural index), with g^e from two small tables. With 32-byte elements
 * every access is a whole sector, so the permutations cost no extra DRAM
 * traffic. */
#include "porep_prover/field.cuh"

#define PASS_MAX_LOG 11 /* elements of one block: 2^(k + m) <= 2^11, 64 KiB */

DEV void butterfly_dit(fr_t &u, fr_t &v, const fr_t &w)
{
    fr_t t;
    mont_mul<8>(t, v, w);
    mont_sub<8>(v, u, t);
    mont_add<8>(u, u, t);
}

DEV void butterfly_dif(fr_t &u, fr_t &v, const fr_t &w)
{
    fr_t t;
    mont_sub<8>(t, u, v);
    mont_add<8>(u, u, v);
    mont_mul<8>(v, t, w);
}

DEV u32 brev(u32 i, u32 log_n) { return log_n ? __brev(i) >> (32 - log_n) : 0; }

/* c g^e from two small tables, lo[e & mask] * hi[e >> lo_bits] (c folded into lo by the host). */
DEV fr_t split_power(const fr_t *lo, const fr_t *hi, u32 lo_bits, u32 e)
{
    fr_t f = lo[e & ((1u << lo_bits) - 1)];
    u32 h = e >> lo_bits;
    if (h) mont_mul<8>(f, f, hi[h]);
    return f;
}

DEV void scale_by(fr_t &x, const fr_t *lo, const fr_t *hi, u32 lo_bits, u32 e)
{
    fr_t f = split_power(lo, hi, lo_bits, e);
    mont_mul<8>(x, x, f);
}

/* One pass's parameters (the kernel takes them one by one; see ntt_pass). */
struct pass_args {
    const fr_t *src;
    fr_t *dst;
    const fr_t *tw;      /* w_N^e, e < N/2; with tw_bits, w_N^e for e < 2^tw_bits */
    const fr_t *tw_hi;   /* with tw_bits: w_N^(e 2^tw_bits) */
    const fr_t *s_lo;    /* c g^i, i < 2^s_bits */
    const fr_t *s_hi;    /* g^(i 2^s_bits) */
    u32 log_n, b_lo, k, m;
    u32 tw_shift;        /* log2(N / n) */
    u32 tw_bits;         /* 0: tw is the whole table */
    u32 s_bits;
    u32 flags;
};

#define GATHER 1u       /* load src[brev(i)] */
#define SCATTER 2u      /* store at dst[brev(i)] */
#define SCALE_LOAD 4u   /* x *= c g^brev(i) after loading */
#define SCALE_STORE 8u  /* x *= c g^brev(i) before storing */
#define DIF 16u         /* decimation in frequency (else in time) */

/* Global index of block element e (e < 2^(k+m)): the pass bits are e's high
 * k bits, the m bits below b_lo its low bits, the rest the block number. */
DEV u32 element_index(const pass_args &p, u32 e)
{
    u32 low = e & ((1u << p.m) - 1), j = e >> p.m;
    u32 below = p.b_lo - p.m;                       /* bits of the block's low run */
    u32 blk = blockIdx.x;
    u32 run = blk & ((1u << below) - 1), top = blk >> below;
    return (top << (p.b_lo + p.k)) | (j << p.b_lo) | (run << p.m) | low;
}

/* w_N^e from the whole table, or from its two small ones. */
DEV fr_t twiddle_at(const pass_args &p, u32 e)
{
    return p.tw_bits ? split_power(p.tw, p.tw_hi, p.tw_bits, e) : p.tw[e];
}

extern "C" __global__ void ntt_pass(const fr_t *src, fr_t *dst, const fr_t *tw, const fr_t *tw_hi, const fr_t *s_lo,
                                    const fr_t *s_hi, u32 log_n, u32 b_lo, u32 k, u32 m, u32 tw_shift, u32 tw_bits,
                                    u32 s_bits, u32 flags)
{
    const pass_args p = {src, dst, tw, tw_hi, s_lo, s_hi, log_n, b_lo, k, m, tw_shift, tw_bits, s_bits, flags};
    extern __shared__ fr_t s[];
    const u32 count = 1u << (p.k + p.m), half = count >> 1;
    for (u32 e = threadIdx.x; e < count; e += blockDim.x) {
        u32 i = element_index(p, e);
        fr_t x = p.src[(p.flags & GATHER) ? brev(i, p.log_n) : i];
        if (p.flags & SCALE_LOAD) scale_by(x, p.s_lo, p.s_hi, p.s_bits, brev(i, p.log_n));
        s[e] = x;
    }
    __syncthreads();
    for (u32 step = 0; step < p.k; step++) {
        u32 rb = (p.flags & DIF) ? p.k - 1 - step : step;   /* bit within the pass */
        u32 b = p.b_lo + rb, gap = 1u << (rb + p.m);
        for (u32 q = threadIdx.x; q < half; q += blockDim.x) {
            u32 e = ((q >> (rb + p.m)) << (rb + p.m + 1)) | (q & (gap - 1));
            u32 i = element_index(p, e);
            u32 tw_e = (i & ((1u << b) - 1)) << (p.log_n - 1 - b + p.tw_shift);
            fr_t w = twiddle_at(p, tw_e), u = s[e], v = s[e + gap];
            if (p.flags & DIF) butterfly_dif(u, v, w);
            else butterfly_dit(u, v, w);
            s[e] = u;
            s[e + gap] = v;
        }
        __syncthreads();
    }
    for (u32 e = threadIdx.x; e < count; e += blockDim.x) {
        u32 i = element_index(p, e);
        fr_t x = s[e];
        if (p.flags & SCALE_STORE) scale_by(x, p.s_lo, p.s_hi, p.s_bits, brev(i, p.log_n));
        p.dst[(p.flags & SCATTER) ? brev(i, p.log_n) : i] = x;
    }
}

/* out[i] = lo[i & mask] * hi[i >> lo_bits]: a power table from two small ones. */
extern "C" __global__ void fr_powers(fr_t *out, u32 count, const fr_t *lo, const fr_t *hi, u32 lo_bits)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        out[i] = split_power(lo, hi, lo_bits, i);
    }
}

/* x[i] *= c g^i over a natural-order array (a transform of length 1). */
extern "C" __global__ void fr_scale(fr_t *x, u32 n, const fr_t *lo, const fr_t *hi, u32 lo_bits)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t v = x[i];
        scale_by(v, lo, hi, lo_bits, i);
        x[i] = v;
    }
}

/* snarkjs's H on its coset: a = a b - c. */
extern "C" __global__ void h_combine(fr_t *a, const fr_t *b, const fr_t *c, u32 n)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t t;
        mont_mul<8>(t, a[i], b[i]);
        mont_sub<8>(t, t, c[i]);
        a[i] = t;
    }
}

/* bellman's H: out[i] = p[i] - c[brev(i)], c's coefficients in the bit-reversed
 * order an inverse transform in place leaves them (out may be p). */
extern "C" __global__ void h_finish(fr_t *out, const fr_t *p, const fr_t *c, u32 log_n)
{
    u32 n = 1u << log_n;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t t;
        mont_sub<8>(t, p[i], c[__brev(i) >> (32 - log_n)]);
        out[i] = t;
    }
}

/* out[i] = a[i] * b[i] (checks the field code against the CPU). */
extern "C" __global__ void fr_mul_vec(fr_t *out, const fr_t *a, const fr_t *b, u32 n)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t t;
        mont_mul<8>(t, a[i], b[i]);
        out[i] = t;
    }
}

/* x[i] <- x[i] y[i]^iters: a chain of products per thread (the field's throughput, for the benchmarks). */
extern "C" __global__ void fr_mul_chain(fr_t *x, const fr_t *y, u32 n, u32 iters)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t v = x[i], w = y[i];
        for (u32 k = 0; k < iters; k++) mont_mul<8>(v, v, w);
        x[i] = v;
    }
}
