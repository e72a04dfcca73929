/* SPDX-License-Identifier: Apache-2.0 */
/* Name builders for the MSM templates (msm_group.h, msm_pair_*.h,
 * msm_impl.h); msm_names_end.h removes them again. Expects EC, F and, for the
 * storage-level names, ST:
 *   GN(x) -> EC_x        group-level (g1_running_sums)
 *   MN(x) -> EC_ST_x     group and storage form (g1_f52_msm)
 *   FN(x) -> F_x         field (fq2_mul) */
#define EC_CAT2(a, b) a##_##b
#define EC_CAT(a, b) EC_CAT2(a, b)
#define EC_CAT3(a, b, c) a##_##b##_##c
#define EC_CATX(a, b, c) EC_CAT3(a, b, c)
#define GN(name) EC_CAT(EC, name)
#define MN(name) EC_CATX(EC, ST, name)
#define FN(name) EC_CAT(F, name)
#define AFF GN(affine_t)
#define XYZZ GN(xyzz_t)
#define SPT MN(point_t)
