/* SPDX-License-Identifier: Apache-2.0 */
/* Multi-scalar multiplication for one group and one storage form of the
 * bucket points; msm.c instantiates it for G1 and G2, each with the portable
 * form (msm_pair_std.h) and, where the CPU has it, the AVX-512 IFMA form
 * (msm_pair_f52.h). The storage header supplies SPT (a stored point), the
 * staging of the input points, and the batched affine additions.
 *
 * Bucket accumulation is batch-affine: an addition costs about 5M + 1S plus
 * the amortised share of one inversion per batch, against 8M + 2S for an xyzz
 * mixed addition. Two ways to fill buckets: a balanced tree per bucket (one
 * level per round, all buckets' pairs batched together), or streaming the
 * points in order into affine buckets when there are many buckets. */

#include "msm_names.h"

FF_INLINE void MN(pair_batch_push)(MN(pair_batch_t) *b, const SPT *p, int np, const SPT *q, int nq, SPT *out)
{
    MN(pair_t) *j = &b->jobs[b->count++];
    j->p = p;
    j->q = q;
    j->np = (uint8_t)np;
    j->nq = (uint8_t)nq;
    j->out = out;
    if (b->count == MSM_BATCH) MN(pair_batch_flush)(b);
}

/* Scratch for bucket_sums over up to n entries and nb buckets. */
typedef struct {
    SPT *buf[2];
    uint32_t *cnt, *off, *active;
    MN(pair_batch_t) batch;
} MN(tree_scratch_t);

static void MN(tree_scratch_free)(MN(tree_scratch_t) *s)
{
    free(s->buf[0]);
    free(s->buf[1]);
    free(s->cnt);
    free(s->off);
    free(s->active);
    MN(pair_batch_free)(&s->batch);
    memset(s, 0, sizeof *s);
}

static int MN(tree_scratch_alloc)(MN(tree_scratch_t) *s, size_t n, size_t nb)
{
    size_t cap = (n + nb) / 2 + 1;
    memset(s, 0, sizeof *s);
    s->buf[0] = msm_aligned_alloc(cap * sizeof(SPT));
    s->buf[1] = msm_aligned_alloc(cap * sizeof(SPT));
    s->cnt = malloc((nb + 1) * sizeof(uint32_t));
    s->off = malloc((nb + 1) * sizeof(uint32_t));
    s->active = malloc((nb + 1) * sizeof(uint32_t));
    if (MN(pair_batch_alloc)(&s->batch) || !s->buf[0] || !s->buf[1] || !s->cnt || !s->off || !s->active) {
        MN(tree_scratch_free)(s);
        return -1;
    }
    return 0;
}

/* sums[b] = sum of the points listed for bucket b, for b < nb.
 * entries[s->off[b] .. s->off[b] + s->cnt[b]) (set by the caller) hold point
 * indices with the sign in bit 31. */
static void MN(bucket_sums)(SPT *sums, const SPT *points, const uint32_t *entries, size_t nb, MN(tree_scratch_t) *s)
{
    size_t nactive = 0, round = 0;
    s->batch.inf_possible = 0;
    for (size_t b = 0; b < nb; b++) {
        MN(st_set_inf)(&sums[b]);
        if (s->cnt[b]) s->active[nactive++] = (uint32_t)b;
    }
    while (nactive) {
        const SPT *src = round ? s->buf[(round - 1) & 1] : NULL;
        SPT *dst = s->buf[round & 1];
        size_t out = 0, still = 0;
        for (size_t a = 0; a < nactive; a++) {
            uint32_t b = s->active[a], k = s->cnt[b], o = s->off[b];
#define ELEM(i) (src ? &src[o + (i)] : &points[entries[o + (i)] & 0x7fffffffu])
#define SIGN(i) (src ? 0 : (int)(entries[o + (i)] >> 31))
            if (k == 1) {
                MN(st_load)(&sums[b], ELEM(0), SIGN(0));
                continue;
            }
            for (uint32_t j = 0; j + 1 < k; j += 2)
                MN(pair_batch_push)(&s->batch, ELEM(j), SIGN(j), ELEM(j + 1), SIGN(j + 1), &dst[out + j / 2]);
            if (k & 1) MN(st_load)(&dst[out + k / 2], ELEM(k - 1), SIGN(k - 1));
#undef ELEM
#undef SIGN
            s->off[b] = (uint32_t)out;
            s->cnt[b] = (k + 1) / 2;
            out += (k + 1) / 2;
            s->active[still++] = b;
        }
        MN(pair_batch_flush)(&s->batch);
        nactive = still;
        round++;
    }
}

/* *total, *running: weighted and plain sums of n stored points (see running_sums). */
static void MN(running_sums)(XYZZ *total, XYZZ *running, const SPT *pts, size_t n, AFF *tmp)
{
    for (size_t i = 0; i < n; i++) MN(st_to_affine)(&tmp[i], &pts[i]);
    GN(running_sums)(total, running, tmp, n);
}

/* *r = sum_b (b + 1) sums[b] for nb = 2^k buckets, at about half the cost of
 * running sums: with b = hi 2^h + lo,
 *   sum (b + 1) S_b = 2^h sum_hi hi T_hi + sum_lo (lo + 1) U_lo,
 *   T_hi = sum_lo S_(hi,lo),  U_lo = sum_hi S_(hi,lo),
 * where the T and U sums are plain batch-affine tree sums (each bucket enters
 * two of them) and only the 2^h + nb / 2^h short weighted sums run serially.
 * entries needs 2 nb slots, part and tmp nb slots each. */
static void MN(bucket_reduce)(XYZZ *r, const SPT *sums, size_t nb, MN(tree_scratch_t) *s, uint32_t *entries,
                              SPT *part, AFF *tmp)
{
    XYZZ t_total, t_sum, u_total, u_sum;
    int k = 0, h;
    size_t nlo, nhi, pos = 0;
    while (((size_t)1 << k) < nb) k++;
    if (nb < MSM_SPLIT_REDUCE || ((size_t)1 << k) != nb) {
        MN(running_sums)(r, &t_sum, sums, nb, tmp);
        return;
    }
    h = k / 2;
    nlo = (size_t)1 << h;
    nhi = nb >> h;
    for (size_t hi = 0; hi < nhi; hi++) {
        s->off[hi] = (uint32_t)pos;
        for (size_t lo = 0; lo < nlo; lo++)
            if (!MN(st_is_inf)(&sums[hi * nlo + lo])) entries[pos++] = (uint32_t)(hi * nlo + lo);
        s->cnt[hi] = (uint32_t)pos - s->off[hi];
    }
    for (size_t lo = 0; lo < nlo; lo++) {
        s->off[nhi + lo] = (uint32_t)pos;
        for (size_t hi = 0; hi < nhi; hi++)
            if (!MN(st_is_inf)(&sums[hi * nlo + lo])) entries[pos++] = (uint32_t)(hi * nlo + lo);
        s->cnt[nhi + lo] = (uint32_t)pos - s->off[nhi + lo];
    }
    MN(bucket_sums)(part, sums, entries, nhi + nlo, s);
    MN(running_sums)(&t_total, &t_sum, part, nhi, tmp);       /* sum (hi + 1) T_hi, sum T_hi */
    MN(running_sums)(&u_total, &u_sum, part + nhi, nlo, tmp); /* sum (lo + 1) U_lo */
    GN(xyzz_neg)(&t_sum, &t_sum);
    GN(xyzz_add)(&t_total, &t_total, &t_sum);                 /* sum hi T_hi */
    for (int i = 0; i < h; i++) GN(xyzz_dbl)(&t_total, &t_total);
    GN(xyzz_add)(r, &t_total, &u_total);
}

/* Sum of points[idx[i]] for i < n, in *r. */
static int MN(sum_points)(XYZZ *r, const SPT *points, const uint32_t *idx, size_t n)
{
    MN(tree_scratch_t) s;
    uint32_t *entries;
    SPT sum;
    AFF aff;
    GN(xyzz_set_inf)(r);
    if (n == 0) return 0;
    entries = malloc(n * sizeof(uint32_t));
    if (!entries || MN(tree_scratch_alloc)(&s, n, 1)) {
        free(entries);
        return -1;
    }
    memcpy(entries, idx, n * sizeof(uint32_t));
    s.cnt[0] = (uint32_t)n;
    s.off[0] = 0;
    MN(bucket_sums)(&sum, points, entries, 1, &s);
    MN(st_to_affine)(&aff, &sum);
    GN(xyzz_from_affine)(r, &aff);
    MN(tree_scratch_free)(&s);
    free(entries);
    return 0;
}

/* Sum of the points listed in idx, split across threads in parts of at
 * most MSM_SUM_PART (the caller's stop flag read before each). */
static int MN(sum_list)(XYZZ *r, const SPT *points, const uint32_t *idx, size_t n, int nthreads)
{
    size_t parts = (size_t)nthreads;
    const volatile int32_t *stop = stop_flag;
    int failed = 0, stopped = 0;
    if (parts > n / 4096 + 1) parts = n / 4096 + 1;
    if (parts < n / MSM_SUM_PART + 1) parts = n / MSM_SUM_PART + 1;
    int team = (size_t)nthreads < parts ? nthreads : (int)parts;
    XYZZ *partial = calloc(parts, sizeof(XYZZ));
    if (!partial) return -1;
#pragma omp parallel for num_threads(team) schedule(dynamic, 1) reduction(| : failed, stopped)
    for (size_t t = 0; t < parts; t++) {
        size_t lo = n * t / parts, hi = n * (t + 1) / parts;
        GN(xyzz_set_inf)(&partial[t]);
        if (stopped || (stop && *stop)) {
            stopped = 1;
            continue;
        }
        failed |= MN(sum_points)(&partial[t], points, idx + lo, hi - lo) != 0;
    }
    GN(xyzz_set_inf)(r);
    for (size_t t = 0; t < parts; t++) GN(xyzz_add)(r, r, &partial[t]);
    free(partial);
    return failed ? -1 : stopped ? MSM_STOPPED : 0;
}

/* State of one streaming window (see window_stream). */
typedef struct {
    SPT *buckets;
    const SPT *points;
    const uint32_t *full;
    const int32_t *digits;
    uint8_t *state;         /* per bucket: BUCKET_FILLED, BUCKET_BUSY (waiting in the batch) */
    uint32_t *queue;        /* deferred full-scalar indices */
    size_t nq;
    MN(pair_batch_t) *batch;
} MN(stream_t);

FF_INLINE void MN(stream_one)(MN(stream_t) *st, uint32_t i)
{
    int32_t d = st->digits[i];
    uint32_t b = (uint32_t)(d < 0 ? -d : d) - 1;
    const SPT *p = &st->points[st->full[i]];
    uint8_t state = st->state[b];
    if (state & BUCKET_BUSY) {
        st->queue[st->nq++] = i;
    } else if (!state) {
        MN(st_load)(&st->buckets[b], p, d < 0);
        st->state[b] = BUCKET_FILLED;
    } else {
        st->state[b] = BUCKET_FILLED | BUCKET_BUSY;
        MN(pair_batch_push)(st->batch, &st->buckets[b], 0, p, d < 0, &st->buckets[b]);
    }
}

/* Run the batch, then replay the deferred points (which may defer again). */
static void MN(stream_flush)(MN(stream_t) *st)
{
    size_t replay = st->nq;
    MN(pair_batch_t) *b = st->batch;
    for (size_t j = 0; j < b->count; j++) st->state[b->jobs[j].out - st->buckets] = BUCKET_FILLED;
    MN(pair_batch_flush)(b);
    st->nq = 0;
    for (size_t j = 0; j < replay; j++) MN(stream_one)(st, st->queue[j]); /* writes at <= j */
}

/* Bucket accumulation for many buckets: points stream in index order and
 * each is added to its affine bucket as one batched addition; a bucket
 * already waiting in the batch defers the point to a queue. Against the tree
 * (bucket_sums), point reads are sequential instead of random and no sort is
 * needed, which pays once the points outgrow the caches. A bucket that
 * cancels to infinity stays marked filled: the flush then sees an operand at
 * infinity (it sets inf_possible) and adds it exactly. Empty buckets are left
 * at infinity. */
static void MN(window_stream)(SPT *buckets, const SPT *points, const uint32_t *full, const int32_t *digits,
                              size_t lo, size_t hi, size_t nb, MN(tree_scratch_t) *s, uint8_t *state,
                              uint32_t *queue)
{
    MN(stream_t) st = {buckets, points, full, digits, state, queue, 0, &s->batch};
    /* Keep the batch a quarter of the buckets at most so collisions stay
     * rare, and below MSM_BATCH so pair_batch_push never flushes behind our
     * back (the replay of a full queue lands in the batch too). */
    size_t cap = nb / 4 < MSM_BATCH - MSM_QUEUE ? nb / 4 : MSM_BATCH - MSM_QUEUE;
    memset(state, 0, nb);
    s->batch.inf_possible = 0;
    for (size_t i = lo; i < hi; i++) {
        if (!digits[i]) continue;
        if (s->batch.count >= cap || st.nq >= MSM_QUEUE) MN(stream_flush)(&st);
        if (i + MSM_PREFETCH < hi) __builtin_prefetch(&points[full[i + MSM_PREFETCH]]);
        MN(stream_one)(&st, (uint32_t)i);
    }
    while (st.nq || s->batch.count) MN(stream_flush)(&st);
    for (size_t b = 0; b < nb; b++)
        if (!state[b]) MN(st_set_inf)(&buckets[b]);
}

/* Per-thread buffers of the Pippenger tasks. */
typedef struct {
    MN(tree_scratch_t) tree;
    uint32_t *entries;
    SPT *sums, *part;
    AFF *tmp;
} MN(task_scratch_t);

static void MN(task_scratch_free)(MN(task_scratch_t) *t)
{
    if (t->entries) MN(tree_scratch_free)(&t->tree);
    free(t->entries);
    free(t->sums);
    free(t->part);
    free(t->tmp);
    memset(t, 0, sizeof *t);
}

static int MN(task_scratch_alloc)(MN(task_scratch_t) *t, size_t chunk, size_t nb)
{
    size_t cap = chunk > 2 * nb ? chunk : 2 * nb; /* the reduction reuses the entries */
    memset(t, 0, sizeof *t);
    t->sums = msm_aligned_alloc(nb * sizeof(SPT));
    t->part = msm_aligned_alloc(nb * sizeof(SPT));
    t->tmp = malloc(nb * sizeof(AFF));
    if (!t->sums || !t->part || !t->tmp || MN(tree_scratch_alloc)(&t->tree, cap, nb)) {
        free(t->sums);
        free(t->part);
        free(t->tmp);
        memset(t, 0, sizeof *t);
        return -1;
    }
    t->entries = malloc((cap + 1) * sizeof(uint32_t));
    if (!t->entries) {
        MN(tree_scratch_free)(&t->tree);
        MN(task_scratch_free)(t);
        return -1;
    }
    return 0;
}

/* One Pippenger window over full-scalar indices [lo, hi): the window's sum in *r. */
static void MN(window_task)(XYZZ *r, const SPT *points, const uint32_t *full, const int32_t *digits, size_t lo,
                            size_t hi, size_t nb, MN(task_scratch_t) *t)
{
    MN(tree_scratch_t) *s = &t->tree;
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
            MN(window_stream)(t->sums, points, full, digits, lo, hi, nb, s, (uint8_t *)t->part, t->entries);
            MN(bucket_reduce)(r, t->sums, nb, s, t->entries, t->part, t->tmp);
            return;
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
        t->entries[s->off[b]++] = full[i] | (d < 0 ? 0x80000000u : 0);
    }
    for (size_t b = 0; b < nb; b++) s->off[b] -= s->cnt[b];
    MN(bucket_sums)(t->sums, points, t->entries, nb, s);
    MN(bucket_reduce)(r, t->sums, nb, s, t->entries, t->part, t->tmp);
}

/* Pippenger over the full scalars: plan->windows x plan->chunks tasks. */
static int MN(pippenger)(XYZZ *r, const SPT *points, const uint32_t *full, const msm_plan_t *plan, int nthreads)
{
    size_t ntasks = plan->windows * plan->chunks, nb = (size_t)1 << (plan->c - 1);
    XYZZ *partial = calloc(ntasks, sizeof(XYZZ));
    const volatile int32_t *stop = stop_flag;     /* the caller's: the team's threads have none of their own */
    int failed = 0, stopped = 0;
    if (!partial) return -1;
#pragma omp parallel num_threads(nthreads) reduction(| : failed, stopped)
    {
        size_t chunk_max = (plan->nfull + plan->chunks - 1) / plan->chunks;
        MN(task_scratch_t) t;
        int ok = !MN(task_scratch_alloc)(&t, chunk_max, nb);
        failed |= !ok;
#pragma omp for schedule(dynamic, 1)
        for (size_t k = 0; k < ntasks; k++) {
            size_t w = k / plan->chunks, ch = k % plan->chunks;
            size_t lo = ch * chunk_max, hi = lo + chunk_max;
            if (hi > plan->nfull) hi = plan->nfull;
            if (!ok || lo >= hi || stopped) continue;
            if (stop && *stop) {
                stopped = 1;
                continue;
            }
            MN(window_task)(&partial[k], points, full, plan->digits + w * plan->nfull, lo, hi, nb, &t);
        }
        if (ok) MN(task_scratch_free)(&t);
    }
    if (stopped && !failed) {
        free(partial);
        return MSM_STOPPED;
    }
    if (!failed) {
        XYZZ acc;
        GN(xyzz_set_inf)(&acc);
        for (size_t w = plan->windows; w-- > 0;) {
            for (int i = 0; i < plan->c; i++) GN(xyzz_dbl)(&acc, &acc);
            for (size_t ch = 0; ch < plan->chunks; ch++) GN(xyzz_add)(&acc, &acc, &partial[w * plan->chunks + ch]);
        }
        *r = acc;
    }
    free(partial);
    return failed ? -1 : 0;
}

/* out = sum scalars[i] * points[i] (see msm.h). */
static int MN(msm)(AFF *out, const AFF *points, const fr_t *scalars, size_t n, int nthreads, msm_stats_t *stats)
{
    msm_plan_t plan;
    MN(staged_t) st;
    XYZZ acc, part;
    int rc;
    if (nthreads < 1) nthreads = 1;
    rc = msm_plan_build(&plan, scalars, n, (const uint8_t *)points, sizeof(AFF), nthreads);
    if (rc) return rc;
    if (stop_flag && *stop_flag) {
        msm_plan_free(&plan);
        return MSM_STOPPED;
    }
    if (plan.nfull < MSM_SMALL) {
        /* too small to pay for staging: xyzz buckets on the caller's points */
        rc = GN(pippenger_small)(&part, points, &plan);
        if (!rc) rc = MN(stage)(&st, points, &plan, 1);
        if (!rc) {
            rc = MN(sum_list)(&acc, st.points, st.ones, plan.nones, nthreads);
            MN(unstage)(&st);
        }
    } else {
        rc = MN(stage)(&st, points, &plan, nthreads);
        if (!rc) {
            rc = stop_flag && *stop_flag ? MSM_STOPPED : MN(sum_list)(&acc, st.points, st.ones, plan.nones, nthreads);
            if (!rc) rc = MN(pippenger)(&part, st.points, st.full, &plan, nthreads);
            MN(unstage)(&st);
        }
    }
    if (!rc) {
        GN(xyzz_add)(&acc, &acc, &part);
        GN(xyzz_to_affine)(out, &acc);
    }
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
static int MN(batch_sum)(AFF *out, const AFF *points, size_t n, int nthreads)
{
    fr_t *ones = malloc((n + 1) * sizeof(fr_t));
    msm_stats_t stats;
    int rc;
    if (!ones) return -1;
    for (size_t i = 0; i < n; i++) fr_set_one(&ones[i]);
    rc = MN(msm)(out, points, ones, n, nthreads, &stats);
    free(ones);
    return rc;
}

/* out[i] = scalars[i] * base for i < n (scalars in Montgomery form): signed
 * windows over a table of d * 2^(c w) * base, accumulated batch-affine across
 * all scalars of a thread, one window at a time. Returns 0 or -1 (memory). */
static int MN(fixed_base_batch)(AFF *out, const AFF *base, const fr_t *scalars, size_t n, int nthreads)
{
    int c = msm_window_bits(n) > 4 ? msm_window_bits(n) - 2 : 3;
    size_t windows = 255 / (size_t)c + 1, nd = (size_t)1 << (c - 1);
    SPT *table = msm_aligned_alloc(windows * nd * sizeof(SPT));
    int failed = 0;
    if (nthreads < 1) nthreads = 1;
    if (!table) return -1;
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) reduction(| : failed)
    for (size_t w = 0; w < windows; w++) {
        XYZZ step, cur, *row = malloc(nd * sizeof(XYZZ));
        AFF *aff = malloc(nd * sizeof(AFF));
        F_T *scratch = malloc(nd * sizeof(F_T));
        if (!row || !aff || !scratch) {
            failed = 1;
        } else {
            GN(xyzz_from_affine)(&step, base);
            for (size_t i = 0; i < w * (size_t)c; i++) GN(xyzz_dbl)(&step, &step);
            cur = step;
            row[0] = cur;
            for (size_t d = 1; d < nd; d++) {
                GN(xyzz_add)(&cur, &cur, &step);
                row[d] = cur;
            }
            GN(xyzz_batch_to_affine)(aff, row, nd, scratch);
            for (size_t d = 0; d < nd; d++) MN(st_from_affine)(&table[w * nd + d], &aff[d]);
        }
        free(row);
        free(aff);
        free(scratch);
    }
    if (failed) {
        free(table);
        return -1;
    }
#pragma omp parallel num_threads(nthreads) reduction(| : failed)
    {
        MN(pair_batch_t) batch;
        int32_t *digits = malloc(windows * sizeof(int32_t) * MSM_FIXED_CHUNK);
        SPT *acc = msm_aligned_alloc(MSM_FIXED_CHUNK * sizeof(SPT));
        int ok = digits && acc && !MN(pair_batch_alloc)(&batch);
        failed |= !ok;
#pragma omp for schedule(dynamic, 1)
        for (size_t lo = 0; lo < n; lo += MSM_FIXED_CHUNK) {
            size_t hi = lo + MSM_FIXED_CHUNK < n ? lo + MSM_FIXED_CHUNK : n;
            if (!ok) continue;
            for (size_t i = lo; i < hi; i++) {
                fr_t k;
                fr_from_mont(&k, &scalars[i]);
                msm_signed_digits(digits + (i - lo), MSM_FIXED_CHUNK, &k, c, windows);
                MN(st_set_inf)(&acc[i - lo]);
            }
            batch.inf_possible = 0;
            /* Each scalar appears once per window: flush between windows so
             * no accumulator is in a batch twice. An accumulator still at
             * infinity takes its first table point by copy. */
            for (size_t w = 0; w < windows; w++) {
                for (size_t i = lo; i < hi; i++) {
                    int32_t d = digits[w * MSM_FIXED_CHUNK + (i - lo)];
                    const SPT *entry = &table[w * nd + (size_t)(d < 0 ? -d : d) - 1];
                    if (!d) continue;
                    if (MN(st_is_inf)(&acc[i - lo])) MN(st_load)(&acc[i - lo], entry, d < 0);
                    else MN(pair_batch_push)(&batch, &acc[i - lo], 0, entry, d < 0, &acc[i - lo]);
                }
                MN(pair_batch_flush)(&batch);
            }
            for (size_t i = lo; i < hi; i++) MN(st_to_affine)(&out[i], &acc[i - lo]);
        }
        if (ok) MN(pair_batch_free)(&batch);
        free(digits);
        free(acc);
    }
    free(table);
    return failed ? -1 : 0;
}

#include "msm_names_end.h"
