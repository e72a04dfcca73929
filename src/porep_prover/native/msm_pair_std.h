/* SPDX-License-Identifier: Apache-2.0 */
/* Batched affine additions with bucket points stored in the package layout
 * (std Montgomery, 64-bit limbs): the portable storage form. Included by
 * msm.c before msm_impl.h with EC, F, F_T set and ST = std.
 *
 * Every addition out = p + q of a batch shares one field inversion
 * (Montgomery's trick). Exceptional pairs (equal points, opposite points,
 * infinity) are classified per pair and never enter the inversion. */

#include "msm_names.h"

typedef AFF MN(point_t);

FF_INLINE int MN(st_is_inf)(const SPT *p) { return GN(affine_is_inf)(p); }
FF_INLINE void MN(st_set_inf)(SPT *p) { GN(affine_set_inf)(p); }
FF_INLINE void MN(st_load)(SPT *r, const SPT *p, int neg) { GN(load_affine)(r, p, neg); }
FF_INLINE void MN(st_to_affine)(AFF *r, const SPT *p) { *r = *p; }
FF_INLINE void MN(st_from_affine)(SPT *r, const AFF *p) { *r = *p; }

/* The points an MSM reads: the caller's array itself, indexed through the plan. */
typedef struct {
    const SPT *points;
    const uint32_t *full, *ones;
} MN(staged_t);

static int MN(stage)(MN(staged_t) *st, const AFF *points, const msm_plan_t *plan, int nthreads)
{
    (void)nthreads;
    st->points = points;
    st->full = plan->full;
    st->ones = plan->ones;
    return 0;
}

static void MN(unstage)(MN(staged_t) *st) { (void)st; }

typedef struct {
    const SPT *p, *q;
    SPT *out;
    uint8_t np, nq;
} MN(pair_t);

typedef struct {
    MN(pair_t) *jobs;
    F_T *prefix;
    uint8_t *kinds;
    size_t count;
    int inf_possible;       /* some operand may be the point at infinity */
} MN(pair_batch_t);

static int MN(pair_batch_alloc)(MN(pair_batch_t) *b)
{
    memset(b, 0, sizeof *b);
    b->jobs = malloc(MSM_BATCH * sizeof(MN(pair_t)));
    b->prefix = malloc(MSM_BATCH * sizeof(F_T));
    b->kinds = malloc(MSM_BATCH);
    return b->jobs && b->prefix && b->kinds ? 0 : -1;
}

static void MN(pair_batch_free)(MN(pair_batch_t) *b)
{
    free(b->jobs);
    free(b->prefix);
    free(b->kinds);
    memset(b, 0, sizeof *b);
}

/* y coordinate of a pair operand with its sign applied. */
FF_INLINE void MN(signed_y)(F_T *r, const SPT *p, int neg)
{
    if (neg) FN(neg)(r, &p->y);
    else *r = p->y;
}

/* Classify one pair; for ADD and DBL also return the inversion denominator.
 * Operands can only be at infinity after a cancellation (inputs at infinity
 * are filtered before the first round), so the check is skipped until one happens. */
static inline int MN(pair_kind)(const MN(pair_t) *j, F_T *den, int inf_possible)
{
    if (inf_possible) {
        if (GN(affine_is_inf)(j->p)) return PAIR_COPY_Q;
        if (GN(affine_is_inf)(j->q)) return PAIR_COPY_P;
    }
    if (FN(eq)(&j->p->x, &j->q->x)) {
        F_T yp, yq;
        MN(signed_y)(&yp, j->p, j->np);
        MN(signed_y)(&yq, j->q, j->nq);
        if (!FN(eq)(&yp, &yq) || FN(is_zero)(&yp)) return PAIR_INF;
        FN(dbl)(den, &yp);
        return PAIR_DBL;
    }
    FN(sub)(den, &j->q->x, &j->p->x);
    return PAIR_ADD;
}

/* Perform every addition queued in b and empty it. Pass one multiplies the
 * denominators into prefix products; pass two walks back, peeling one inverse
 * off the running inverse per pair. Even and odd pairs keep separate products
 * so that two multiplication chains are in flight instead of one. */
static void MN(pair_batch_flush)(MN(pair_batch_t) *b)
{
    F_T acc[2], inv[2], dinv, lambda, t, den, yp;
    size_t n = b->count;
    int inf_possible = b->inf_possible;
    FN(set_one)(&acc[0]);
    FN(set_one)(&acc[1]);
    for (size_t i = 0; i < n; i++) {
        /* Round one gathers points in bucket order, i.e. at random: fetch the
         * operands a few pairs ahead (a whole batch then sits in L2 for pass two). */
        if (i + MSM_PREFETCH < n) {
            const char *p = (const char *)b->jobs[i + MSM_PREFETCH].p, *q = (const char *)b->jobs[i + MSM_PREFETCH].q;
            __builtin_prefetch(p);
            __builtin_prefetch(p + sizeof(SPT) - 1);
            __builtin_prefetch(q);
            __builtin_prefetch(q + sizeof(SPT) - 1);
        }
        b->kinds[i] = (uint8_t)MN(pair_kind)(&b->jobs[i], &den, inf_possible);
        b->prefix[i] = acc[i & 1];
        if (b->kinds[i] >= PAIR_ADD) FN(mul)(&acc[i & 1], &acc[i & 1], &den);
    }
    FN(mul)(&t, &acc[0], &acc[1]);
    FN(inv)(&t, &t);
    FN(mul)(&inv[0], &t, &acc[1]);
    FN(mul)(&inv[1], &t, &acc[0]);
    for (size_t i = n; i-- > 0;) {
        const MN(pair_t) *j = &b->jobs[i];
        const F_T *xp = &j->p->x, *xq = &j->q->x;
        SPT *out = j->out;
        switch (b->kinds[i]) {
        case PAIR_COPY_P: GN(load_affine)(out, j->p, j->np); continue;
        case PAIR_COPY_Q: GN(load_affine)(out, j->q, j->nq); continue;
        case PAIR_INF:
            GN(affine_set_inf)(out);
            b->inf_possible = 1;
            continue;
        case PAIR_DBL:
            MN(signed_y)(&yp, j->p, j->np);
            FN(dbl)(&den, &yp);
            FN(sqr)(&lambda, xp);
            FN(dbl)(&t, &lambda);
            FN(add)(&lambda, &lambda, &t);      /* 3x^2 */
            break;
        default:
            MN(signed_y)(&yp, j->p, j->np);
            MN(signed_y)(&t, j->q, j->nq);
            FN(sub)(&den, xq, xp);
            FN(sub)(&lambda, &t, &yp);
        }
        FN(mul)(&dinv, &inv[i & 1], &b->prefix[i]);    /* 1/den_i */
        FN(mul)(&inv[i & 1], &inv[i & 1], &den);
        FN(mul)(&lambda, &lambda, &dinv);
        FN(sqr)(&t, &lambda);
        FN(sub)(&t, &t, xp);
        FN(sub)(&t, &t, xq);                    /* x3 = l^2 - x1 - x2 */
        FN(sub)(&den, xp, &t);
        out->x = t;
        FN(mul)(&den, &den, &lambda);
        FN(sub)(&out->y, &den, &yp);            /* y3 = l(x1 - x3) - y1 */
    }
    b->count = 0;
}

#include "msm_names_end.h"
