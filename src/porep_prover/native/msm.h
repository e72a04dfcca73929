/* SPDX-License-Identifier: Apache-2.0 */
/* CPU multi-scalar multiplication for G1 and G2.
 *
 * Contract for every entry point: points are affine in the package layout
 * (Montgomery coordinates, infinity all zero), scalars are Fr in Montgomery
 * form, out receives an affine point. nthreads >= 1 OpenMP threads are used.
 * The return value is 0, or -1 when an allocation failed (nothing is written
 * to out then). The functions release no locks and touch no Python state, so
 * callers run them without the GIL. */
#ifndef POREP_MSM_H
#define POREP_MSM_H

#include <stddef.h>
#include <stdint.h>

#include "ec.h"

/* How the scalars of one MSM were split, for timings and tests. */
typedef struct {
    size_t zeros, ones, full;
    int window_bits;
} msm_stats_t;

/* The scalar split and signed digits shared by G1 and G2. */
typedef struct {
    uint32_t *ones, *full;
    size_t nones, nfull;
    int32_t *digits;          /* digits[w * nfull + i] for full scalar i, window w */
    size_t windows, chunks;
    int c;
} msm_plan_t;

/* What an MSM returns when the calling thread's stop flag was set while it
 * ran (msm_stop_on: the flag's address, NULL for none; read without a lock
 * between window tasks, so a stop lands within one task): out is unwritten. */
#define MSM_STOPPED (-3)
void msm_stop_on(const volatile int32_t *flag);

int msm_window_bits(size_t n);
/* Signed base-2^c digits of a canonical scalar < 2^255, each in
 * (-2^(c-1), 2^(c-1)]: out[w * stride] for w < windows = 255 / c + 1. */
void msm_signed_digits(int32_t *out, size_t stride, const fr_t *k, int c, size_t windows);
int msm_plan_build(msm_plan_t *plan, const fr_t *scalars, size_t n, const uint8_t *points, size_t point_size,
                   int nthreads);
void msm_plan_free(msm_plan_t *plan);

/* The AVX-512 IFMA path: whether this CPU (and build) has it; msm_simd(1|0)
 * turns it on or off for the whole process (-1 only queries), returning the
 * state. On by default where available. Results are identical either way. */
int msm_simd_available(void);
int msm_simd(int enable);

int g1_msm(g1_affine_t *out, const g1_affine_t *points, const fr_t *scalars, size_t n, int nthreads,
           msm_stats_t *stats);
int g2_msm(g2_affine_t *out, const g2_affine_t *points, const fr_t *scalars, size_t n, int nthreads,
           msm_stats_t *stats);
int g1_batch_sum(g1_affine_t *out, const g1_affine_t *points, size_t n, int nthreads);
int g2_batch_sum(g2_affine_t *out, const g2_affine_t *points, size_t n, int nthreads);
int g1_fixed_base_batch(g1_affine_t *out, const g1_affine_t *base, const fr_t *scalars, size_t n, int nthreads);
int g2_fixed_base_batch(g2_affine_t *out, const g2_affine_t *base, const fr_t *scalars, size_t n, int nthreads);
void g1_msm_naive(g1_affine_t *out, const g1_affine_t *points, const fr_t *scalars, size_t n);
void g2_msm_naive(g2_affine_t *out, const g2_affine_t *points, const fr_t *scalars, size_t n);

#endif
