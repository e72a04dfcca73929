/* SPDX-License-Identifier: Apache-2.0 */
/* MSM pieces that depend on the group only (not on the storage form of the
 * bucket points): included once per group by msm.c with EC, F, F_T set. */

#include "msm_names.h"

/* *r = *p, negated when neg (infinity stays infinity). */
FF_INLINE void GN(load_affine)(AFF *r, const AFF *p, int neg)
{
    r->x = p->x;
    if (neg && !GN(affine_is_inf)(p)) FN(neg)(&r->y, &p->y);
    else r->y = p->y;
}

/* *total = sum_b (b + 1) sums[b] and *running = sum_b sums[b], by running
 * sums from the top bucket down (two xyzz additions per bucket). */
static void GN(running_sums)(XYZZ *total, XYZZ *running, const AFF *sums, size_t nb)
{
    GN(xyzz_set_inf)(running);
    GN(xyzz_set_inf)(total);
    for (size_t b = nb; b-- > 0;) {
        GN(xyzz_add_affine)(running, running, &sums[b]);
        GN(xyzz_add)(total, total, running);
    }
}

/* Pippenger with xyzz buckets, one thread: for inputs too small for the
 * batch-affine rounds to amortise their inversions. */
static int GN(pippenger_small)(XYZZ *r, const AFF *points, const msm_plan_t *plan)
{
    size_t nb = (size_t)1 << (plan->c - 1);
    XYZZ *buckets = malloc(nb * sizeof(XYZZ)), acc, running, total;
    if (!buckets) return -1;
    GN(xyzz_set_inf)(&acc);
    for (size_t w = plan->windows; w-- > 0;) {
        const int32_t *digits = plan->digits + w * plan->nfull;
        for (int i = 0; i < plan->c; i++) GN(xyzz_dbl)(&acc, &acc);
        for (size_t b = 0; b < nb; b++) GN(xyzz_set_inf)(&buckets[b]);
        for (size_t i = 0; i < plan->nfull; i++) {
            AFF p;
            int32_t d = digits[i];
            if (!d) continue;
            GN(load_affine)(&p, &points[plan->full[i]], d < 0);
            GN(xyzz_add_affine)(&buckets[(d < 0 ? -d : d) - 1], &buckets[(d < 0 ? -d : d) - 1], &p);
        }
        GN(xyzz_set_inf)(&running);
        GN(xyzz_set_inf)(&total);
        for (size_t b = nb; b-- > 0;) {
            GN(xyzz_add)(&running, &running, &buckets[b]);
            GN(xyzz_add)(&total, &total, &running);
        }
        GN(xyzz_add)(&acc, &acc, &total);
    }
    *r = acc;
    free(buckets);
    return 0;
}

/* Reference: double-and-add per point, summed in xyzz. Slow; for tests. */
void GN(msm_naive)(AFF *out, const AFF *points, const fr_t *scalars, size_t n)
{
    XYZZ acc, t;
    GN(xyzz_set_inf)(&acc);
    for (size_t i = 0; i < n; i++) {
        fr_t k;
        fr_from_mont(&k, &scalars[i]);
        GN(xyzz_mul_limbs)(&t, &points[i], k.l, 255);
        GN(xyzz_add)(&acc, &acc, &t);
    }
    GN(xyzz_to_affine)(out, &acc);
}

#include "msm_names_end.h"
