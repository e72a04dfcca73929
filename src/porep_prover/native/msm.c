/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-scalar multiplication on the CPU for G1 and G2: scalar split, signed
 * digits, window choice; the per-group algorithm is msm_impl.h. */
#include <stdlib.h>
#include <string.h>

#include "msm.h"

/* The IFMA storage form needs x86-64 and a compiler that knows the target. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(POREP_PORTABLE)
#define MSM_HAVE_F52 1
#include "f52.h"
#else
#define MSM_HAVE_F52 0
#endif

/* Pairs per shared inversion: large enough that the inversion (~450 products)
 * is noise, small enough that the prefix products stay in L1/L2. */
#define MSM_BATCH 4096
/* Pairs ahead whose operands pass one prefetches. */
#define MSM_PREFETCH 12

enum { PAIR_COPY_P = 0, PAIR_COPY_Q = 1, PAIR_INF = 2, PAIR_ADD = 3, PAIR_DBL = 4 };

/* Below this many full scalars the xyzz-bucket Pippenger wins. */
#define MSM_SMALL 256

/* Scalars per chunk of the fixed-base products. */
#define MSM_FIXED_CHUNK 1024
/* Points per part of a sum of the ones (the stop flag is read between parts). */
#define MSM_SUM_PART ((size_t)1 << 17)
/* Deferred points per streaming window before a forced flush. */
#define MSM_QUEUE 1024

enum { BUCKET_FILLED = 1, BUCKET_BUSY = 2 };
/* From this many buckets on, buckets accumulate by streaming (window_stream). */
#define MSM_STREAM 4096
/* From this many buckets on, the bucket reduction splits into tree sums. */
#define MSM_SPLIT_REDUCE 256

/* Relative costs in field multiplications, for the window choice below 2^12
 * points: a bucket addition (batch-affine tree with its overheads, or xyzz for
 * the small path) and one bucket of the reduction. */
#define COST_BUCKET_ADD 9.0
#define COST_BUCKET_ADD_SMALL 10.0
#define COST_REDUCE 14.0
/* Largest chunk of points one task takes, bounding per-thread scratch. */
#define MAX_CHUNK ((size_t)1 << 21)

int msm_window_bits(size_t n)
{
    int best = 2, lg = 0;
    double best_cost = 0;
    if (n < 4) return 2;
    while (((size_t)2 << lg) <= n) lg++;
    /* From 2^12 points on: the best window measured for 2^12..2^18 G1 and G2
     * random-scalar MSMs (streaming buckets from 2^13 buckets up), extended
     * flat beyond. */
    if (lg >= 12) return lg <= 13 ? 11 : lg == 14 ? 12 : lg == 15 ? 13 : lg <= 18 ? 15 : 16;
    for (int c = 2; c <= 12; c++) {
        size_t windows = 255 / (size_t)c + 1;
        double add = n < MSM_SMALL ? COST_BUCKET_ADD_SMALL : COST_BUCKET_ADD;
        double cost = (double)windows * ((double)n * add + (double)((size_t)1 << (c - 1)) * COST_REDUCE);
        if (c == 2 || cost < best_cost) {
            best = c;
            best_cost = cost;
        }
    }
    return best;
}

void msm_plan_free(msm_plan_t *plan)
{
    free(plan->ones);
    free(plan->full);
    free(plan->digits);
    memset(plan, 0, sizeof *plan);
}

static int is_all_zero(const uint8_t *p, size_t size)
{
    const uint64_t *w = (const uint64_t *)p;
    uint64_t acc = 0;
    for (size_t i = 0; i < size / 8; i++) acc |= w[i];
    return acc == 0;
}

void msm_signed_digits(int32_t *out, size_t stride, const fr_t *k, int c, size_t windows)
{
    uint32_t carry = 0, mask = (1u << c) - 1;
    for (size_t w = 0; w < windows; w++) {
        size_t bit = w * (size_t)c, limb = bit / 64, shift = bit % 64;
        uint64_t v = limb < 4 ? k->l[limb] >> shift : 0;
        if (shift + (size_t)c > 64 && limb + 1 < 4) v |= k->l[limb + 1] << (64 - shift);
        uint32_t d = ((uint32_t)v & mask) + carry;
        carry = d > (mask >> 1) + 1;
        out[w * stride] = carry ? (int32_t)d - (int32_t)(1u << c) : (int32_t)d;
    }
}

/* The calling thread's stop flag (msm_stop_on; NULL: none): an MSM reads it
 * between the passes of its plan and its window tasks and returns MSM_STOPPED once it is set. */
static _Thread_local const volatile int32_t *stop_flag;

void msm_stop_on(const volatile int32_t *flag)
{
    stop_flag = flag;
}

int msm_plan_build(msm_plan_t *plan, const fr_t *scalars, size_t n, const uint8_t *points, size_t point_size,
                   int nthreads)
{
    static const fr_t one_mont = {FR_ONE};
    uint8_t *kind = malloc(n + 1);
    memset(plan, 0, sizeof *plan);
    plan->ones = malloc((n + 1) * sizeof(uint32_t));
    plan->full = malloc((n + 1) * sizeof(uint32_t));
    if (!kind || !plan->ones || !plan->full) goto oom;
    /* 0: skip (zero scalar or point at infinity), 1: one, 2: full. */
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        if (fr_is_zero(&scalars[i]) || is_all_zero(points + i * point_size, point_size)) kind[i] = 0;
        else kind[i] = fr_eq(&scalars[i], &one_mont) ? 1 : 2;
    }
    for (size_t i = 0; i < n; i++) {
        if (kind[i] == 1) plan->ones[plan->nones++] = (uint32_t)i;
        else if (kind[i] == 2) plan->full[plan->nfull++] = (uint32_t)i;
    }
    free(kind);
    kind = NULL;
    if (stop_flag && *stop_flag) return 0;      /* the caller reads the flag next: the digits are not needed */
    plan->c = msm_window_bits(plan->nfull);
    plan->windows = 255 / (size_t)plan->c + 1;
    plan->chunks = (2 * (size_t)nthreads + plan->windows - 1) / plan->windows;
    if (plan->chunks < (plan->nfull + MAX_CHUNK - 1) / MAX_CHUNK) plan->chunks = (plan->nfull + MAX_CHUNK - 1) / MAX_CHUNK;
    if (plan->chunks < 1 || plan->nfull < 4096) plan->chunks = 1;
    if (plan->nfull) {
        plan->digits = malloc(plan->nfull * plan->windows * sizeof(int32_t));
        if (!plan->digits) goto oom;
        const volatile int32_t *stop = stop_flag;   /* set: the rest is skipped (the caller reads it next) */
#pragma omp parallel for num_threads(nthreads) schedule(static)
        for (size_t i = 0; i < plan->nfull; i++) {
            fr_t k;
            if (stop && *stop) continue;
            fr_from_mont(&k, &scalars[plan->full[i]]);
            msm_signed_digits(plan->digits + i, plan->nfull, &k, plan->c, plan->windows);
        }
    }
    return 0;
oom:
    free(kind);
    msm_plan_free(plan);
    return -1;
}

static void *msm_aligned_alloc(size_t size)
{
    return aligned_alloc(64, (size + 64) & ~(size_t)63);
}

/* ------------------------------------------------------------------ G1, G2: portable storage */

#define EC g1
#define F fq
#define F_T fq_t
#include "msm_group.h"
#define ST std
#include "msm_pair_std.h"
#include "msm_impl.h"
#undef ST
#undef EC
#undef F
#undef F_T

#define EC g2
#define F fq2
#define F_T fq2_t
#include "msm_group.h"
#define ST std
#include "msm_pair_std.h"
#include "msm_impl.h"
#undef ST
#undef EC
#undef F
#undef F_T

/* ------------------------------------------------------------------ G1, G2: AVX-512 IFMA storage */

#if MSM_HAVE_F52
#pragma GCC push_options
#pragma GCC target("avx512f,avx512ifma,avx512dq,avx512bw,avx512vl")

#define EC g1
#define F fq
#define F_T fq_t
#define ST f52
#define SF_T f52_t
#define SF(name) f52_##name
#define VF_T f52v
#define VF(name) f52v_##name
#include "msm_pair_f52.h"
#include "msm_impl.h"
#undef ST
#undef EC
#undef F
#undef F_T
#undef SF_T
#undef SF
#undef VF_T
#undef VF

#define EC g2
#define F fq2
#define F_T fq2_t
#define ST f52
#define SF_T f52x2_t
#define SF(name) f52x2_##name
#define VF_T f52v2
#define VF(name) f52v2_##name
#include "msm_pair_f52.h"
#include "msm_impl.h"
#undef ST
#undef EC
#undef F
#undef F_T
#undef SF_T
#undef SF
#undef VF_T
#undef VF

#pragma GCC pop_options
#endif

/* ------------------------------------------------------------------ dispatch */

static int simd_enabled = -1; /* -1: not decided yet */

int msm_simd_available(void)
{
#if MSM_HAVE_F52
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}

int msm_simd(int enable)
{
    if (enable >= 0) simd_enabled = enable && msm_simd_available();
    else if (simd_enabled < 0) simd_enabled = msm_simd_available();
    return simd_enabled;
}

#if MSM_HAVE_F52
#define DISPATCH(call_f52, call_std) return msm_simd(-1) ? (call_f52) : (call_std)
#else
#define DISPATCH(call_f52, call_std) return (call_std)
#endif

int g1_msm(g1_affine_t *out, const g1_affine_t *points, const fr_t *scalars, size_t n, int nthreads,
           msm_stats_t *stats)
{
    DISPATCH(g1_f52_msm(out, points, scalars, n, nthreads, stats), g1_std_msm(out, points, scalars, n, nthreads, stats));
}

int g2_msm(g2_affine_t *out, const g2_affine_t *points, const fr_t *scalars, size_t n, int nthreads,
           msm_stats_t *stats)
{
    DISPATCH(g2_f52_msm(out, points, scalars, n, nthreads, stats), g2_std_msm(out, points, scalars, n, nthreads, stats));
}

int g1_batch_sum(g1_affine_t *out, const g1_affine_t *points, size_t n, int nthreads)
{
    DISPATCH(g1_f52_batch_sum(out, points, n, nthreads), g1_std_batch_sum(out, points, n, nthreads));
}

int g2_batch_sum(g2_affine_t *out, const g2_affine_t *points, size_t n, int nthreads)
{
    DISPATCH(g2_f52_batch_sum(out, points, n, nthreads), g2_std_batch_sum(out, points, n, nthreads));
}

int g1_fixed_base_batch(g1_affine_t *out, const g1_affine_t *base, const fr_t *scalars, size_t n, int nthreads)
{
    DISPATCH(g1_f52_fixed_base_batch(out, base, scalars, n, nthreads),
             g1_std_fixed_base_batch(out, base, scalars, n, nthreads));
}

int g2_fixed_base_batch(g2_affine_t *out, const g2_affine_t *base, const fr_t *scalars, size_t n, int nthreads)
{
    DISPATCH(g2_f52_fixed_base_batch(out, base, scalars, n, nthreads),
             g2_std_fixed_base_batch(out, base, scalars, n, nthreads));
}
