/* SPDX-License-Identifier: Apache-2.0 */
/* Batched affine additions on AVX-512 IFMA, eight pairs at a time: the bucket
 * points live in the f52 form (f52.h) for the whole MSM. Included by msm.c
 * before msm_impl.h with EC, F, F_T, ST = f52 and:
 *   SF_T / SF(name)   scalar f52 element type and functions (f52_t / f52x2_t)
 *   VF_T / VF(name)   vector type and functions (f52v / f52v2)
 *
 * Pair i of a batch runs in lane i % 8; each lane keeps its own chain of
 * prefix products, and the eight chain totals are inverted together with one
 * scalar inversion. Exceptional pairs (equal or opposite x, infinity) are
 * masked out of the vector pass and done one by one in xyzz afterwards. */

#include "msm_names.h"

typedef struct {
    SF_T x, y;
} MN(point_t);

static inline int MN(st_is_inf)(const SPT *p) { return SF(is_zero)(&p->x) && SF(is_zero)(&p->y); }
static inline void MN(st_set_inf)(SPT *p) { memset(p, 0, sizeof *p); }

static inline void MN(st_load)(SPT *r, const SPT *p, int neg)
{
    r->x = p->x;
    if (neg) SF(neg)(&r->y, &p->y);
    else r->y = p->y;
}

static inline void MN(st_to_affine)(AFF *r, const SPT *p)
{
    SF(to_std)(&r->x, &p->x);
    SF(to_std)(&r->y, &p->y);
}

static inline void MN(st_from_affine)(SPT *r, const AFF *p)
{
    SF(from_std)(&r->x, &p->x);
    SF(from_std)(&r->y, &p->y);
}

/* The points an MSM reads, converted: full scalars' points first, then the ones'. */
typedef struct {
    SPT *points;
    uint32_t *full, *ones;
} MN(staged_t);

static void MN(unstage)(MN(staged_t) *st)
{
    free(st->points);
    free(st->full);
    memset(st, 0, sizeof *st);
}

static int MN(stage)(MN(staged_t) *st, const AFF *points, const msm_plan_t *plan, int nthreads)
{
    size_t n = plan->nfull + plan->nones;
    memset(st, 0, sizeof *st);
    st->points = msm_aligned_alloc((n + 1) * sizeof(SPT));
    st->full = malloc((n + 1) * sizeof(uint32_t));
    if (!st->points || !st->full) {
        MN(unstage)(st);
        return -1;
    }
    st->ones = st->full + plan->nfull;
    const volatile int32_t *stop = stop_flag;   /* set: the rest is skipped (the caller reads it next) */
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        if (stop && *stop) continue;
        uint32_t src = i < plan->nfull ? plan->full[i] : plan->ones[i - plan->nfull];
        MN(st_from_affine)(&st->points[i], &points[src]);
        st->full[i] = (uint32_t)i;
    }
    return 0;
}

typedef struct {
    const SPT *p, *q;
    SPT *out;
    uint8_t np, nq;
} MN(pair_t);

typedef struct {
    MN(pair_t) *jobs;
    VF_T *prefix;           /* one vector per group of eight pairs */
    uint8_t *exc;           /* lanes of each group left to the scalar path */
    size_t count;
    int inf_possible;
} MN(pair_batch_t);

static int MN(pair_batch_alloc)(MN(pair_batch_t) *b)
{
    memset(b, 0, sizeof *b);
    b->jobs = malloc((MSM_BATCH + 8) * sizeof(MN(pair_t)));
    b->prefix = msm_aligned_alloc((MSM_BATCH / 8 + 1) * sizeof(VF_T));
    b->exc = malloc(MSM_BATCH / 8 + 1);
    return b->jobs && b->prefix && b->exc ? 0 : -1;
}

static void MN(pair_batch_free)(MN(pair_batch_t) *b)
{
    free(b->jobs);
    free(b->prefix);
    free(b->exc);
    memset(b, 0, sizeof *b);
}

/* r[i] = 1 / a[i] in every lane (all non-zero): one scalar inversion. */
F52_TARGET static void MN(lane_inverses)(VF_T *r, const VF_T *a)
{
    SF_T tmp[8] __attribute__((aligned(64)));
    SF_T *ptr[8];
    const SF_T *cptr[8];
    F_T v[8], pre[8], acc, inv, t;
    for (int i = 0; i < 8; i++) {
        ptr[i] = &tmp[i];
        cptr[i] = &tmp[i];
    }
    VF(scatter)(ptr, *a, 0xff);
    FN(set_one)(&acc);
    for (int i = 0; i < 8; i++) {
        SF(to_std)(&v[i], &tmp[i]);
        pre[i] = acc;
        FN(mul)(&acc, &acc, &v[i]);
    }
    FN(inv)(&inv, &acc);
    for (int i = 8; i-- > 0;) {
        FN(mul)(&t, &inv, &pre[i]);
        FN(mul)(&inv, &inv, &v[i]);
        SF(from_std)(&tmp[i], &t);
    }
    VF(gather)(r, cptr);
}

/* out = p + q through xyzz: the exceptional pairs. */
static void MN(pair_scalar)(const MN(pair_t) *j)
{
    AFF p, q, r;
    XYZZ t;
    MN(st_to_affine)(&p, j->p);
    MN(st_to_affine)(&q, j->q);
    GN(load_affine)(&p, &p, j->np);
    GN(load_affine)(&q, &q, j->nq);
    GN(xyzz_from_affine)(&t, &p);
    GN(xyzz_add_affine)(&t, &t, &q);
    GN(xyzz_to_affine)(&r, &t);
    MN(st_from_affine)(j->out, &r);
}

/* Operand pointers of group g (pairs 8g .. 8g+7); lanes past count repeat the
 * last pair and are reported in *pad. */
static inline void MN(group_ptrs)(const MN(pair_batch_t) *b, size_t g, const SF_T **px, const SF_T **py,
                                  const SF_T **qx, const SF_T **qy, SF_T **ox, SF_T **oy, __mmask8 *np,
                                  __mmask8 *nq, __mmask8 *pad)
{
    *np = *nq = *pad = 0;
    for (int i = 0; i < 8; i++) {
        size_t k = 8 * g + (size_t)i;
        if (k >= b->count) {
            *pad |= (__mmask8)(1u << i);
            k = b->count - 1;
        }
        const MN(pair_t) *j = &b->jobs[k];
        px[i] = &j->p->x;
        py[i] = &j->p->y;
        qx[i] = &j->q->x;
        qy[i] = &j->q->y;
        ox[i] = &j->out->x;
        oy[i] = &j->out->y;
        *np |= (__mmask8)(j->np << i);
        *nq |= (__mmask8)(j->nq << i);
    }
}

F52_TARGET static void MN(pair_batch_flush)(MN(pair_batch_t) *b)
{
    size_t ng = (b->count + 7) / 8;
    const SF_T *px[8], *py[8], *qx[8], *qy[8];
    SF_T *ox[8], *oy[8];
    __mmask8 np, nq, pad;
    VF_T acc, inv, one, den, xp, xq, yp, yq, dinv, lam, t, x3;
    if (!b->count) return;
    VF(set_one)(&one);
    acc = one;
    for (size_t g = 0; g < ng; g++) {
        __mmask8 exc;
        MN(group_ptrs)(b, g, px, py, qx, qy, ox, oy, &np, &nq, &pad);
        VF(gather)(&xp, px);
        VF(gather)(&xq, qx);
        VF(sub)(&den, &xq, &xp);
        exc = VF(is_zero)(&den) | pad;
        if (b->inf_possible) {
            for (int i = 0; i < 8; i++) {
                const MN(pair_t) *j = &b->jobs[8 * g + (size_t)i < b->count ? 8 * g + (size_t)i : b->count - 1];
                if (MN(st_is_inf)(j->p) || MN(st_is_inf)(j->q)) exc |= (__mmask8)(1u << i);
            }
        }
        VF(blend)(&den, exc, &one);
        b->prefix[g] = acc;
        b->exc[g] = exc;
        VF(mul)(&acc, &acc, &den);
    }
    MN(lane_inverses)(&inv, &acc);
    for (size_t g = ng; g-- > 0;) {
        MN(group_ptrs)(b, g, px, py, qx, qy, ox, oy, &np, &nq, &pad);
        VF(gather)(&xp, px);
        VF(gather)(&xq, qx);
        VF(gather)(&yp, py);
        VF(gather)(&yq, qy);
        VF(sub_lazy)(&den, &xq, &xp);
        VF(blend)(&den, b->exc[g], &one);
        VF(mul)(&dinv, &inv, &b->prefix[g]);   /* 1/den in every lane */
        VF(mul)(&inv, &inv, &den);
        VF(cond_neg)(&yp, &yp, np);
        VF(cond_neg)(&yq, &yq, nq);
        VF(sub_lazy)(&lam, &yq, &yp);
        VF(mul)(&lam, &lam, &dinv);
        VF(sqr)(&t, &lam);
        VF(sub)(&t, &t, &xp);
        VF(sub)(&x3, &t, &xq);                 /* x3 = l^2 - x1 - x2 */
        VF(sub_lazy)(&t, &xp, &x3);
        VF(mul)(&t, &t, &lam);
        VF(sub)(&t, &t, &yp);                  /* y3 = l(x1 - x3) - y1 */
        VF(scatter)(ox, x3, (__mmask8)~b->exc[g]);
        VF(scatter)(oy, t, (__mmask8)~b->exc[g]);
    }
    for (size_t g = 0; g < ng; g++) {
        if (!b->exc[g]) continue;
        for (int i = 0; i < 8; i++) {
            size_t k = 8 * g + (size_t)i;
            if (k < b->count && (b->exc[g] >> i) & 1) {
                MN(pair_scalar)(&b->jobs[k]);
                if (MN(st_is_inf)(b->jobs[k].out)) b->inf_possible = 1;
            }
        }
    }
    b->count = 0;
}

#include "msm_names_end.h"
