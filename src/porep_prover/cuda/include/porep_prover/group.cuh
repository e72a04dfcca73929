/* SPDX-License-Identifier: Apache-2.0 */
/* The group a kernel module is built for: G1 (default) or G2 (-DMSM_G2).
 * field, point (affine) and proj (xyzz) name its types, PREFIX(name) its
 * kernels (g1_name or g2_name). */
#ifndef POREP_GROUP_CUH
#define POREP_GROUP_CUH

#include "porep_prover/ec.cuh"

#ifdef MSM_G2
typedef fq2_t field;
#define PREFIX(name) g2_##name
#else
typedef fq_t field;
#define PREFIX(name) g1_##name
#endif
typedef affine<field> point;
typedef xyzz<field> proj;

/* This thread's run [lo, hi) of count items cut into runs of per (one
 * thread a run, the last run shorter); false when it has none. */
DEV bool thread_run(size_t count, u32 per, size_t &lo, size_t &hi)
{
    lo = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * per;
    hi = lo + per < count ? lo + per : count;
    return lo < count;
}

#endif
