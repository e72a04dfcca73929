/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-scalar multiplication for one group, instantiated by msm.c for G1 and
 * G2 (same parameters as ec_impl.h: EC, F, F_T).
 *
 * Bucket accumulation is batch-affine: the points of each bucket are summed as
 * a balanced tree, one level per round; every pair of a round across all
 * buckets is one addition with a shared inversion (Montgomery's trick, BATCH
 * pairs at a time). An affine addition then costs about 5M + 1S against 8M + 2S
 * for an xyzz mixed addition, which is where the speed over bucket-in-xyzz
 * Pippenger comes from. Exceptional pairs (equal points, opposite points,
 * infinity) are classified per pair and never enter the inversion. */

#define EC_CAT2(a, b) a##_##b
#define EC_CAT(a, b) EC_CAT2(a, b)
#define ECN(name) EC_CAT(EC, name)
#define FN(name) EC_CAT(F, name)
#define AFF ECN(affine_t)
#define XYZZ ECN(xyzz_t)

/* One pending addition out = p + q, with optional negation of either operand. */
typedef struct {
    const AFF *p, *q;
    AFF *out;
    uint8_t np, nq;
} ECN(pair_t);

#define PAIR ECN(pair_t)

typedef struct {
    PAIR *jobs;
    F_T *prefix;
    uint8_t *kinds;
    size_t count;
    int inf_possible;       /* some operand may be the point at infinity */
} ECN(pair_batch_t);

FF_INLINE void ECN(load)(AFF *r, const AFF *p, int neg)
{
    r->x = p->x;
    if (neg && !ECN(affine_is_inf)(p)) FN(neg)(&r->y, &p->y);
    else r->y = p->y;
}

/* y coordinate of a pair operand with its sign applied. */
FF_INLINE void ECN(signed_y)(F_T *r, const AFF *p, int neg)
{
    if (neg) FN(neg)(r, &p->y);
    else *r = p->y;
}

/* Classify one pair; for ADD and DBL also return the inversion denominator.
 * Operands can only be at infinity after a cancellation (inputs at infinity
 * are filtered before the first round), so the check is skipped until one happens. */
static inline int ECN(pair_kind)(const PAIR *j, F_T *den, int inf_possible)
{
    if (inf_possible) {
        if (ECN(affine_is_inf)(j->p)) return PAIR_COPY_Q;
        if (ECN(affine_is_inf)(j->q)) return PAIR_COPY_P;
    }
    if (FN(eq)(&j->p->x, &j->q->x)) {
        F_T yp, yq;
        ECN(signed_y)(&yp, j->p, j->np);
        ECN(signed_y)(&yq, j->q, j->nq);
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
static void ECN(pair_batch_flush)(ECN(pair_batch_t) *b)
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
            __builtin_prefetch(p + sizeof(AFF) - 1);
            __builtin_prefetch(q);
            __builtin_prefetch(q + sizeof(AFF) - 1);
        }
        b->kinds[i] = (uint8_t)ECN(pair_kind)(&b->jobs[i], &den, inf_possible);
        b->prefix[i] = acc[i & 1];
        if (b->kinds[i] >= PAIR_ADD) FN(mul)(&acc[i & 1], &acc[i & 1], &den);
    }
    FN(mul)(&t, &acc[0], &acc[1]);
    FN(inv)(&t, &t);
    FN(mul)(&inv[0], &t, &acc[1]);
    FN(mul)(&inv[1], &t, &acc[0]);
    for (size_t i = n; i-- > 0;) {
        const PAIR *j = &b->jobs[i];
        const F_T *xp = &j->p->x, *xq = &j->q->x;
        AFF *out = j->out;
        switch (b->kinds[i]) {
        case PAIR_COPY_P: ECN(load)(out, j->p, j->np); continue;
        case PAIR_COPY_Q: ECN(load)(out, j->q, j->nq); continue;
        case PAIR_INF:
            ECN(affine_set_inf)(out);
            b->inf_possible = 1;
            continue;
        case PAIR_DBL:
            ECN(signed_y)(&yp, j->p, j->np);
            FN(dbl)(&den, &yp);
            FN(sqr)(&lambda, xp);
            FN(dbl)(&t, &lambda);
            FN(add)(&lambda, &lambda, &t);      /* 3x^2 */
            break;
        default:
            ECN(signed_y)(&yp, j->p, j->np);
            ECN(signed_y)(&t, j->q, j->nq);
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

FF_INLINE void ECN(pair_batch_push)(ECN(pair_batch_t) *b, const AFF *p, int np, const AFF *q, int nq,
                                   AFF *out)
{
    PAIR *j = &b->jobs[b->count++];
    j->p = p;
    j->q = q;
    j->np = (uint8_t)np;
    j->nq = (uint8_t)nq;
    j->out = out;
    if (b->count == MSM_BATCH) ECN(pair_batch_flush)(b);
}

/* Scratch for ECN(bucket_sums) over up to n entries and nb buckets. */
typedef struct {
    AFF *buf[2];
    uint32_t *cnt, *off, *active;
    ECN(pair_batch_t) batch;
} ECN(tree_scratch_t);

static void ECN(tree_scratch_free)(ECN(tree_scratch_t) *s)
{
    free(s->buf[0]);
    free(s->buf[1]);
    free(s->cnt);
    free(s->off);
    free(s->active);
    free(s->batch.jobs);
    free(s->batch.prefix);
    free(s->batch.kinds);
    memset(s, 0, sizeof *s);
}

static int ECN(tree_scratch_alloc)(ECN(tree_scratch_t) *s, size_t n, size_t nb)
{
    size_t cap = (n + nb) / 2 + 1;
    memset(s, 0, sizeof *s);
    s->buf[0] = malloc(cap * sizeof(AFF));
    s->buf[1] = malloc(cap * sizeof(AFF));
    s->cnt = malloc((nb + 1) * sizeof(uint32_t));
    s->off = malloc((nb + 1) * sizeof(uint32_t));
    s->active = malloc((nb + 1) * sizeof(uint32_t));
    s->batch.jobs = malloc(MSM_BATCH * sizeof(PAIR));
    s->batch.prefix = malloc(MSM_BATCH * sizeof(F_T));
    s->batch.kinds = malloc(MSM_BATCH);
    if (!s->buf[0] || !s->buf[1] || !s->cnt || !s->off || !s->active || !s->batch.jobs ||
        !s->batch.prefix || !s->batch.kinds) {
        ECN(tree_scratch_free)(s);
        return -1;
    }
    return 0;
}

/* sums[b] = sum of the points listed for bucket b, for b < nb.
 * entries[s->off[b] .. s->off[b] + s->cnt[b]) (set by the caller) hold point
 * indices with the sign in bit 31. */
static void ECN(bucket_sums)(AFF *sums, const AFF *points, const uint32_t *entries, size_t nb,
                             ECN(tree_scratch_t) *s)
{
    size_t nactive = 0, round = 0;
    s->batch.inf_possible = 0;
    for (size_t b = 0; b < nb; b++) {
        ECN(affine_set_inf)(&sums[b]);
        if (s->cnt[b]) s->active[nactive++] = (uint32_t)b;
    }
    while (nactive) {
        const AFF *src = round ? s->buf[(round - 1) & 1] : NULL;
        AFF *dst = s->buf[round & 1];
        size_t out = 0, still = 0;
        for (size_t a = 0; a < nactive; a++) {
            uint32_t b = s->active[a], k = s->cnt[b], o = s->off[b];
#define ELEM(i) (src ? &src[o + (i)] : &points[entries[o + (i)] & 0x7fffffffu])
#define SIGN(i) (src ? 0 : (int)(entries[o + (i)] >> 31))
            if (k == 1) {
                ECN(load)(&sums[b], ELEM(0), SIGN(0));
                continue;
            }
            for (uint32_t j = 0; j + 1 < k; j += 2)
                ECN(pair_batch_push)(&s->batch, ELEM(j), SIGN(j), ELEM(j + 1), SIGN(j + 1), &dst[out + j / 2]);
            if (k & 1) ECN(load)(&dst[out + k / 2], ELEM(k - 1), SIGN(k - 1));
#undef ELEM
#undef SIGN
            s->off[b] = (uint32_t)out;
            s->cnt[b] = (k + 1) / 2;
            out += (k + 1) / 2;
            s->active[still++] = b;
        }
        ECN(pair_batch_flush)(&s->batch);
        nactive = still;
        round++;
    }
}

/* *total = sum_b (b + 1) sums[b] and *running = sum_b sums[b], by running
 * sums from the top bucket down (two xyzz additions per bucket). */
static void ECN(running_sums)(XYZZ *total, XYZZ *running, const AFF *sums, size_t nb)
{
    ECN(xyzz_set_inf)(running);
    ECN(xyzz_set_inf)(total);
    for (size_t b = nb; b-- > 0;) {
        ECN(xyzz_add_affine)(running, running, &sums[b]);
        ECN(xyzz_add)(total, total, running);
    }
}

/* *r = sum_b (b + 1) sums[b] for nb = 2^k buckets, at about half the cost of
 * running sums: with b = hi 2^h + lo,
 *   sum (b + 1) S_b = 2^h sum_hi hi T_hi + sum_lo (lo + 1) U_lo,
 *   T_hi = sum_lo S_(hi,lo),  U_lo = sum_hi S_(hi,lo),
 * where the T and U sums are plain batch-affine tree sums (each bucket enters
 * two of them) and only the 2^h + nb / 2^h short weighted sums run serially.
 * entries needs 2 nb slots, part nb slots. */
static void ECN(bucket_reduce)(XYZZ *r, const AFF *sums, size_t nb, ECN(tree_scratch_t) *s, uint32_t *entries,
                               AFF *part)
{
    XYZZ t_total, t_sum, u_total, u_sum;
    int k = 0, h;
    size_t nlo, nhi, pos = 0;
    while (((size_t)1 << k) < nb) k++;
    if (nb < MSM_SPLIT_REDUCE || ((size_t)1 << k) != nb) {
        ECN(running_sums)(r, &t_sum, sums, nb);
        return;
    }
    h = k / 2;
    nlo = (size_t)1 << h;
    nhi = nb >> h;
    for (size_t hi = 0; hi < nhi; hi++) {
        s->off[hi] = (uint32_t)pos;
        for (size_t lo = 0; lo < nlo; lo++)
            if (!ECN(affine_is_inf)(&sums[hi * nlo + lo])) entries[pos++] = (uint32_t)(hi * nlo + lo);
        s->cnt[hi] = (uint32_t)pos - s->off[hi];
    }
    for (size_t lo = 0; lo < nlo; lo++) {
        s->off[nhi + lo] = (uint32_t)pos;
        for (size_t hi = 0; hi < nhi; hi++)
            if (!ECN(affine_is_inf)(&sums[hi * nlo + lo])) entries[pos++] = (uint32_t)(hi * nlo + lo);
        s->cnt[nhi + lo] = (uint32_t)pos - s->off[nhi + lo];
    }
    ECN(bucket_sums)(part, sums, entries, nhi + nlo, s);
    ECN(running_sums)(&t_total, &t_sum, part, nhi);       /* sum (hi + 1) T_hi, sum T_hi */
    ECN(running_sums)(&u_total, &u_sum, part + nhi, nlo); /* sum (lo + 1) U_lo */
    ECN(xyzz_neg)(&t_sum, &t_sum);
    ECN(xyzz_add)(&t_total, &t_total, &t_sum);            /* sum hi T_hi */
    for (int i = 0; i < h; i++) ECN(xyzz_dbl)(&t_total, &t_total);
    ECN(xyzz_add)(r, &t_total, &u_total);
}

/* Sum of points[idx[i]] for i < n (idx NULL: the first n points), in *r. */
static int ECN(sum_points)(XYZZ *r, const AFF *points, const uint32_t *idx, size_t n)
{
    ECN(tree_scratch_t) s;
    uint32_t *entries;
    AFF sum;
    ECN(xyzz_set_inf)(r);
    if (n == 0) return 0;
    entries = malloc(n * sizeof(uint32_t));
    if (!entries || ECN(tree_scratch_alloc)(&s, n, 1)) {
        free(entries);
        return -1;
    }
    for (size_t i = 0; i < n; i++) entries[i] = idx ? idx[i] : (uint32_t)i;
    s.cnt[0] = (uint32_t)n;
    s.off[0] = 0;
    ECN(bucket_sums)(&sum, points, entries, 1, &s);
    ECN(xyzz_from_affine)(r, &sum);
    ECN(tree_scratch_free)(&s);
    free(entries);
    return 0;
}

/* State of one streaming window (see window_stream). */
typedef struct {
    AFF *buckets;
    const AFF *points;
    const uint32_t *full;
    const int32_t *digits;
    uint8_t *busy;          /* bucket has an addition waiting in the batch */
    uint32_t *queue;        /* deferred full-scalar indices */
    size_t nq;
    ECN(pair_batch_t) *batch;
} ECN(stream_t);

FF_INLINE void ECN(stream_one)(ECN(stream_t) *st, uint32_t i)
{
    int32_t d = st->digits[i];
    uint32_t b = (uint32_t)(d < 0 ? -d : d) - 1;
    const AFF *p = &st->points[st->full[i]];
    if (st->busy[b]) {
        st->queue[st->nq++] = i;
    } else if (ECN(affine_is_inf)(&st->buckets[b])) {
        ECN(load)(&st->buckets[b], p, d < 0);
    } else {
        st->busy[b] = 1;
        ECN(pair_batch_push)(st->batch, &st->buckets[b], 0, p, d < 0, &st->buckets[b]);
    }
}

/* Run the batch, then replay the deferred points (which may defer again). */
static void ECN(stream_flush)(ECN(stream_t) *st, size_t nb)
{
    size_t replay = st->nq;
    ECN(pair_batch_flush)(st->batch);
    memset(st->busy, 0, nb);
    st->nq = 0;
    for (size_t j = 0; j < replay; j++) ECN(stream_one)(st, st->queue[j]); /* writes at <= j */
}

/* Bucket accumulation for many buckets: points stream in index order and
 * each is added to its affine bucket as one batched addition; a bucket
 * already waiting in the batch defers the point to a queue. Against the tree
 * (bucket_sums), point reads are sequential instead of random and no sort is
 * needed, which pays once the points outgrow the caches. */
static void ECN(window_stream)(AFF *buckets, const AFF *points, const uint32_t *full, const int32_t *digits,
                               size_t lo, size_t hi, size_t nb, ECN(tree_scratch_t) *s, uint8_t *busy,
                               uint32_t *queue)
{
    ECN(stream_t) st = {buckets, points, full, digits, busy, queue, 0, &s->batch};
    /* Keep the batch well below the bucket count so collisions stay rare, and
     * below MSM_BATCH so pair_batch_push never flushes behind our back. */
    size_t cap = nb / 8 < MSM_BATCH - MSM_QUEUE ? nb / 8 : MSM_BATCH - MSM_QUEUE;
    memset(busy, 0, nb);
    for (size_t b = 0; b < nb; b++) ECN(affine_set_inf)(&buckets[b]);
    s->batch.inf_possible = 0;
    for (size_t i = lo; i < hi; i++) {
        if (!digits[i]) continue;
        if (s->batch.count >= cap || st.nq >= MSM_QUEUE) ECN(stream_flush)(&st, nb);
        if (i + MSM_PREFETCH < hi) __builtin_prefetch(&points[full[i + MSM_PREFETCH]]);
        ECN(stream_one)(&st, (uint32_t)i);
    }
    while (st.nq || s->batch.count) ECN(stream_flush)(&st, nb);
}

/* One Pippenger window over full-scalar indices [lo, hi): the window's sum in *r. */
static int ECN(window_task)(XYZZ *r, const AFF *points, const uint32_t *full, const int32_t *digits,
                            size_t lo, size_t hi, size_t nb, ECN(tree_scratch_t) *s,
                            uint32_t *entries, AFF *sums, AFF *part)
{
    memset(s->cnt, 0, nb * sizeof(uint32_t));
    for (size_t i = lo; i < hi; i++) {
        int32_t d = digits[i];
        if (d) s->cnt[(d < 0 ? -d : d) - 1]++;
    }
    if (nb >= MSM_STREAM) {
        /* Streaming needs the points spread over many buckets: a window with
         * few live buckets (the top one, repeated scalars) would stall on
         * collisions, and goes through the tree instead. */
        size_t live = 0, most = 0, total = 0;
        for (size_t b = 0; b < nb; b++) {
            live += s->cnt[b] != 0;
            total += s->cnt[b];
            if (s->cnt[b] > most) most = s->cnt[b];
        }
        if (live >= nb / 2 && most <= 8 * (total / live) + 16) {
            ECN(window_stream)(sums, points, full, digits, lo, hi, nb, s, (uint8_t *)part, entries);
            ECN(bucket_reduce)(r, sums, nb, s, entries, part);
            return 0;
        }
    }
    uint32_t acc = 0;
    for (size_t b = 0; b < nb; b++) {
        s->off[b] = acc;
        acc += s->cnt[b];
    }
    /* off[] doubles as the fill cursor, then is rewound below. */
    for (size_t i = lo; i < hi; i++) {
        int32_t d = digits[i];
        if (!d) continue;
        uint32_t b = (uint32_t)(d < 0 ? -d : d) - 1;
        entries[s->off[b]++] = full[i] | (d < 0 ? 0x80000000u : 0);
    }
    for (size_t b = 0; b < nb; b++) s->off[b] -= s->cnt[b];
    ECN(bucket_sums)(sums, points, entries, nb, s);
    ECN(bucket_reduce)(r, sums, nb, s, entries, part);
    return 0;
}

/* Pippenger over the scalars classified as full: plan->windows x plan->chunks tasks. */
static int ECN(pippenger)(XYZZ *r, const AFF *points, const msm_plan_t *plan, int nthreads)
{
    size_t ntasks = plan->windows * plan->chunks, nb = (size_t)1 << (plan->c - 1);
    XYZZ *partial = calloc(ntasks, sizeof(XYZZ));
    int failed = 0;
    if (!partial) return -1;
#pragma omp parallel num_threads(nthreads) reduction(| : failed)
    {
        size_t chunk_max = (plan->nfull + plan->chunks - 1) / plan->chunks;
        size_t cap = chunk_max > 2 * nb ? chunk_max : 2 * nb; /* the reduction reuses the scratch */
        ECN(tree_scratch_t) s;
        uint32_t *entries = malloc((cap + 1) * sizeof(uint32_t));
        AFF *sums = malloc(nb * sizeof(AFF)), *part = malloc(nb * sizeof(AFF));
        int ok = entries && sums && part && !ECN(tree_scratch_alloc)(&s, cap, nb);
        failed |= !ok;
#pragma omp for schedule(dynamic, 1)
        for (size_t t = 0; t < ntasks; t++) {
            size_t w = t / plan->chunks, ch = t % plan->chunks;
            size_t lo = ch * chunk_max, hi = lo + chunk_max;
            if (hi > plan->nfull) hi = plan->nfull;
            if (!ok || lo >= hi) continue;
            ECN(window_task)(&partial[t], points, plan->full, plan->digits + w * plan->nfull, lo, hi, nb, &s,
                             entries, sums, part);
        }
        if (ok) ECN(tree_scratch_free)(&s);
        free(entries);
        free(sums);
        free(part);
    }
    if (!failed) {
        XYZZ acc;
        ECN(xyzz_set_inf)(&acc);
        for (size_t w = plan->windows; w-- > 0;) {
            for (int i = 0; i < plan->c; i++) ECN(xyzz_dbl)(&acc, &acc);
            for (size_t ch = 0; ch < plan->chunks; ch++) ECN(xyzz_add)(&acc, &acc, &partial[w * plan->chunks + ch]);
        }
        *r = acc;
    }
    free(partial);
    return failed ? -1 : 0;
}

/* Pippenger with xyzz buckets, one thread: for inputs too small for the
 * batch-affine rounds to amortise their inversions. */
static int ECN(pippenger_small)(XYZZ *r, const AFF *points, const msm_plan_t *plan)
{
    size_t nb = (size_t)1 << (plan->c - 1);
    XYZZ *buckets = malloc(nb * sizeof(XYZZ)), acc, running, total;
    if (!buckets) return -1;
    ECN(xyzz_set_inf)(&acc);
    for (size_t w = plan->windows; w-- > 0;) {
        const int32_t *digits = plan->digits + w * plan->nfull;
        for (int i = 0; i < plan->c; i++) ECN(xyzz_dbl)(&acc, &acc);
        for (size_t b = 0; b < nb; b++) ECN(xyzz_set_inf)(&buckets[b]);
        for (size_t i = 0; i < plan->nfull; i++) {
            AFF p;
            if (!digits[i]) continue;
            ECN(load)(&p, &points[plan->full[i]], digits[i] < 0);
            ECN(xyzz_add_affine)(&buckets[(digits[i] < 0 ? -digits[i] : digits[i]) - 1],
                                 &buckets[(digits[i] < 0 ? -digits[i] : digits[i]) - 1], &p);
        }
        ECN(xyzz_set_inf)(&running);
        ECN(xyzz_set_inf)(&total);
        for (size_t b = nb; b-- > 0;) {
            ECN(xyzz_add)(&running, &running, &buckets[b]);
            ECN(xyzz_add)(&total, &total, &running);
        }
        ECN(xyzz_add)(&acc, &acc, &total);
    }
    *r = acc;
    free(buckets);
    return 0;
}

/* out[i] = scalars[i] * base for i < n (scalars in Montgomery form): signed
 * windows over a table of d * 2^(c w) * base, accumulated batch-affine across
 * all scalars of a thread, one window at a time. Returns 0 or -1 (memory). */
int ECN(fixed_base_batch)(AFF *out, const AFF *base, const fr_t *scalars, size_t n, int nthreads)
{
    int c = msm_window_bits(n) > 4 ? msm_window_bits(n) - 2 : 3;
    size_t windows = 255 / (size_t)c + 1, nd = (size_t)1 << (c - 1);
    AFF *table = malloc(windows * nd * sizeof(AFF));
    int failed = 0;
    if (nthreads < 1) nthreads = 1;
    if (!table) return -1;
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) reduction(| : failed)
    for (size_t w = 0; w < windows; w++) {
        XYZZ step, cur, *row = malloc(nd * sizeof(XYZZ));
        F_T *scratch = malloc(nd * sizeof(F_T));
        if (!row || !scratch) {
            failed = 1;
        } else {
            ECN(xyzz_from_affine)(&step, base);
            for (size_t i = 0; i < w * (size_t)c; i++) ECN(xyzz_dbl)(&step, &step);
            cur = step;
            row[0] = cur;
            for (size_t d = 1; d < nd; d++) {
                ECN(xyzz_add)(&cur, &cur, &step);
                row[d] = cur;
            }
            ECN(xyzz_batch_to_affine)(table + w * nd, row, nd, scratch);
        }
        free(row);
        free(scratch);
    }
    if (failed) {
        free(table);
        return -1;
    }
#pragma omp parallel num_threads(nthreads) reduction(| : failed)
    {
        ECN(tree_scratch_t) s;
        int32_t *digits = malloc(windows * sizeof(int32_t) * 1024);
        if (!digits || ECN(tree_scratch_alloc)(&s, 2, 1)) {
            failed = 1;
            free(digits);
            digits = NULL;
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t lo = 0; lo < n; lo += 1024) {
            size_t hi = lo + 1024 < n ? lo + 1024 : n;
            if (!digits) continue;
            for (size_t i = lo; i < hi; i++) {
                fr_t k;
                fr_from_mont(&k, &scalars[i]);
                msm_signed_digits(digits + (i - lo), 1024, &k, c, windows);
                ECN(affine_set_inf)(&out[i]);
            }
            s.batch.inf_possible = 1;
            /* Each scalar appears once per window: flush between windows so
             * no accumulator is in a batch twice. */
            for (size_t w = 0; w < windows; w++) {
                for (size_t i = lo; i < hi; i++) {
                    int32_t d = digits[w * 1024 + (i - lo)];
                    if (d) ECN(pair_batch_push)(&s.batch, &out[i], 0, &table[w * nd + (size_t)(d < 0 ? -d : d) - 1],
                                                d < 0, &out[i]);
                }
                ECN(pair_batch_flush)(&s.batch);
            }
        }
        if (digits) {
            ECN(tree_scratch_free)(&s);
            free(digits);
        }
    }
    free(table);
    return failed ? -1 : 0;
}

/* Sum of the points whose scalar is one, split across threads. */
static int ECN(sum_ones)(XYZZ *r, const AFF *points, const uint32_t *ones, size_t n, int nthreads)
{
    int parts = nthreads, failed = 0;
    if ((size_t)parts > n / 4096 + 1) parts = (int)(n / 4096 + 1);
    XYZZ *partial = calloc((size_t)parts, sizeof(XYZZ));
    if (!partial) return -1;
#pragma omp parallel for num_threads(parts) schedule(static, 1) reduction(| : failed)
    for (int t = 0; t < parts; t++) {
        size_t lo = n * (size_t)t / (size_t)parts, hi = n * (size_t)(t + 1) / (size_t)parts;
        failed |= ECN(sum_points)(&partial[t], points, ones + lo, hi - lo) != 0;
    }
    ECN(xyzz_set_inf)(r);
    for (int t = 0; t < parts; t++) ECN(xyzz_add)(r, r, &partial[t]);
    free(partial);
    return failed ? -1 : 0;
}

/* out = sum scalars[i] * points[i]. Scalars in Montgomery form (as FrArray
 * stores them). Zero scalars and points at infinity are skipped, scalars equal
 * to one are summed by batch addition, the rest go through Pippenger.
 * Returns 0, or -1 when memory runs out. */
int ECN(msm)(AFF *out, const AFF *points, const fr_t *scalars, size_t n, int nthreads, msm_stats_t *stats)
{
    msm_plan_t plan;
    XYZZ acc, part;
    int rc;
    if (nthreads < 1) nthreads = 1;
    rc = msm_plan_build(&plan, scalars, n, (const uint8_t *)points, sizeof(AFF), nthreads);
    if (rc) return rc;
    rc = ECN(sum_ones)(&acc, points, plan.ones, plan.nones, nthreads);
    if (!rc && plan.nfull) {
        if (plan.nfull < MSM_SMALL) rc = ECN(pippenger_small)(&part, points, &plan);
        else rc = ECN(pippenger)(&part, points, &plan, nthreads);
        ECN(xyzz_add)(&acc, &acc, &part);
    }
    if (!rc) ECN(xyzz_to_affine)(out, &acc);
    if (stats) {
        stats->zeros = n - plan.nones - plan.nfull;
        stats->ones = plan.nones;
        stats->full = plan.nfull;
        stats->window_bits = plan.c;
    }
    msm_plan_free(&plan);
    return rc;
}

/* out = sum of points[i] (batch addition). */
int ECN(batch_sum)(AFF *out, const AFF *points, size_t n, int nthreads)
{
    uint32_t *idx = malloc((n + 1) * sizeof(uint32_t));
    size_t m = 0;
    XYZZ acc;
    int rc;
    if (!idx) return -1;
    for (size_t i = 0; i < n; i++)
        if (!ECN(affine_is_inf)(&points[i])) idx[m++] = (uint32_t)i;
    rc = ECN(sum_ones)(&acc, points, idx, m, nthreads < 1 ? 1 : nthreads);
    if (!rc) ECN(xyzz_to_affine)(out, &acc);
    free(idx);
    return rc;
}

/* Reference: double-and-add per point, summed in xyzz. Slow; for tests. */
void ECN(msm_naive)(AFF *out, const AFF *points, const fr_t *scalars, size_t n)
{
    XYZZ acc, t;
    ECN(xyzz_set_inf)(&acc);
    for (size_t i = 0; i < n; i++) {
        fr_t k;
        fr_from_mont(&k, &scalars[i]);
        ECN(xyzz_mul_limbs)(&t, &points[i], k.l, 255);
        ECN(xyzz_add)(&acc, &acc, &t);
    }
    ECN(xyzz_to_affine)(out, &acc);
}

#undef PAIR
#undef AFF
#undef XYZZ
#undef ECN
#undef FN
#undef EC_CAT
#undef EC_CAT2
