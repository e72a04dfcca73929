/* SPDX-License-Identifier: Apache-2.0 */
/* Fq products on the integer pipe, on the FP64 pipe (fq64.cuh), and on both
 * at once in different warps: chains in registers for the benchmarks and the
 * tests. Every kernel computes x[i] <- x[i] y[i]^iters / R^iters mod p on
 * canonical 12 x 32-bit Montgomery elements, so their outputs compare equal. */
#include "porep_prover/field.cuh"
#include "porep_prover/fq64.cuh"

#define W48 0xffffffffffffull

/* The 8 x 48-bit limbs of a canonical element (same Montgomery value). */
DEV fq64 fq64_from(const fq_t &a)
{
    fq64 r;
#pragma unroll
    for (int m = 0; m < 4; m++) {
        u64 lo = a.v[3 * m] | (u64)(a.v[3 * m + 1] & 0xffffu) << 32;
        u64 hi = a.v[3 * m + 1] >> 16 | (u64)a.v[3 * m + 2] << 16;
        r.v[2 * m] = __ull2double_rn(lo);
        r.v[2 * m + 1] = __ull2double_rn(hi);
    }
    return r;
}

/* The canonical element of a signed-limb value in (-p, p): carried into
 * 48-bit limbs, p added once when negative, regrouped into 32-bit words. */
DEV fq_t fq64_to(const fq64 &a)
{
    u64 l[FQ64_LIMBS];
    long long carry = 0;
#pragma unroll
    for (int k = 0; k < FQ64_LIMBS; k++) {
        long long x = __double2ll_rn(a.v[k]) + carry;
        l[k] = (u64)x & W48;
        carry = x >> 48; /* arithmetic: floor */
    }
    if (carry < 0) { /* the value is l + carry 2^384 < 0: add p */
        u64 c = 0;
#pragma unroll
        for (int k = 0; k < FQ64_LIMBS; k++) {
            u64 s = l[k] + (u64)fq64_p(k) + c;
            l[k] = s & W48;
            c = s >> 48;
        }
    }
    fq_t r;
#pragma unroll
    for (int m = 0; m < 2; m++) {
        u64 w0 = l[4 * m] | l[4 * m + 1] << 48, w1 = l[4 * m + 1] >> 16 | l[4 * m + 2] << 32;
        u64 w2 = l[4 * m + 2] >> 32 | l[4 * m + 3] << 16;
        r.v[6 * m] = (u32)w0, r.v[6 * m + 1] = (u32)(w0 >> 32);
        r.v[6 * m + 2] = (u32)w1, r.v[6 * m + 3] = (u32)(w1 >> 32);
        r.v[6 * m + 4] = (u32)w2, r.v[6 * m + 5] = (u32)(w2 >> 32);
    }
    return r;
}

DEV fq_t chain_fp64(const fq_t &x, const fq_t &y, u32 iters)
{
    fq64 v = fq64_from(x), w = fq64_from(y);
    for (u32 k = 0; k < iters; k++) fq64_mul(v, v, w);
    return fq64_to(v);
}

DEV fq_t chain_int(fq_t v, const fq_t &w, u32 iters)
{
    for (u32 k = 0; k < iters; k++) mont_mul<12>(v, v, w);
    return v;
}

/* On the FP64 pipe only. */
extern "C" __global__ void fq64_mul_chain(fq_t *x, const fq_t *y, u32 n, u32 iters)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = chain_fp64(x[i], y[i], iters);
}

/* fp64_warps of every 8 warps on the FP64 pipe, the others on the integer
 * pipe (0: all integer, 8: all FP64); the choice is a warp's, so no warp
 * diverges. */
extern "C" __global__ void fq_mul_chain_mixed(fq_t *x, const fq_t *y, u32 n, u32 iters, u32 fp64_warps)
{
    bool fp64 = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) % 8 < fp64_warps;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = fp64 ? chain_fp64(x[i], y[i], iters) : chain_int(x[i], y[i], iters);
}
