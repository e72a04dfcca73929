/* SPDX-License-Identifier: Apache-2.0 */
/* Pippenger MSM on the GPU (launched by msm/gpu/msm.py), for G1 (default)
 * or G2 (compiled with -DMSM_G2). Any correct sum is the same point, so the
 * result equals the CPU's after normalisation.
 *
 *   msm_classify     scalars -> canonical (zero where the point is at
 *                    infinity); counts of zero / one / full scalars, of
 *                    each bit length (the host picks c from them) and of
 *                    repeats (whether the sort groups its atomics)
 *   msm_digits       per window, signed base-2^c digits: each (window,
 *                    point)'s key (bucket | sign), window-major; above
 *                    window 0 only for the wide scalars (a list of them),
 *                    where most scalars are narrow (bits, small words)
 *   msm_place        the bucket sizes (count), then, after the scan,
 *                    entries (point index | sign) sorted by bucket (fill):
 *                    a counting sort, a window (or part of one) at a time;
 *                    the cursors end as the buckets' ends, so no key is
 *                    stored per entry; launched a stretch of buckets at a
 *                    time, the next one filling (on a second stream)
 *                    while the last one accumulates
 *   scan_*           exclusive prefix sums of the sizes: bucket offsets
 *   msm_accumulate   over one stretch of buckets (msm_accumulate_rows: the
 *                    points through a row map, for a sort shared by arrays;
 *                    msm_accumulate_table: a window table's copies beside),
 *                    fixed chunks of entries per thread, whatever the bucket
 *                    sizes (a chunk finds its buckets from their ends by
 *                    binary search); a bucket inside one chunk is written to the sums,
 *                    the open ends of the others go to a shorter list of
 *                    partial sums, and msm_combine repeats on that list until
 *                    every bucket is complete (msm_accumulate_into and
 *                    msm_combine_into: each bucket's sum added to what it
 *                    holds, an MSM's passes sharing one set of buckets;
 *                    msm_accumulate_onto: the same, each run that starts in
 *                    its chunk starting from what its bucket holds, the
 *                    plain msm_combine after it)
 *   msm_reduce       per (window, segment of buckets): sum (b + 1) B_b
 *   msm_fold         partial sums folded by a factor, group by group
 *   msm_sum          the sum of all points (batch addition)
 *   (host)           the windows (Horner) and the normalisation
 *
 * The 0 / 1 / full split costs nothing here: a zero scalar has no digit, a
 * one has a single digit, so it costs one addition in one bucket. */
#include "porep_prover/group.cuh"

#define SIGN_BIT 0x80000000u
#define DEAD_BIT 0x80000000u  /* a partial-list key whose bucket is already written */
#define FULL_MASK 0xffffffffu
#define NO_KEY 0xffffffffu    /* a zero digit: no bucket (a real key's bucket is below 2^31 - 1) */
#define NO_ROW 0xffffffffu    /* a scalar without a point in a shared sort's other array */

/* Bit length of a canonical scalar (0 for zero; below 256 as k < r < 2^255).
 * msm_classify tallies it and msm_digits lists the wide scalars by it: the
 * host's count of them must match the list. */
DEV u32 bit_length(const fr_t &k)
{
    u32 bits = 0;
#pragma unroll
    for (int j = 0; j < 8; j++)
        if (k.v[j]) bits = 32 * j + 32 - __clz(k.v[j]);
    return bits;
}

/* counters: [0] zeros, [1] ones, [2] full, [3 + b] scalars of bit length b (0 <= b < 256),
 * [REPEATS] scalars of 2 bits or more equal to the last lane's. */
#define REPEATS (3 + 256)
#define COUNTERS (REPEATS + 1)
extern "C" __global__ void PREFIX(msm_classify)(const fr_t *scalars, const point *points, u32 n, fr_t *canonical,
                                                u32 *counters)
{
    __shared__ u32 tally[COUNTERS];
    for (u32 j = threadIdx.x; j < COUNTERS; j += blockDim.x) tally[j] = 0;
    __syncthreads();
    u32 mine[4] = {0, 0, 0, 0};
    const u32 lane = threadIdx.x & 31;
    /* a warp's lanes share base, so every lane takes the same turns (the shuffle below) */
    for (u32 base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        const u32 i = base + threadIdx.x;
        fr_t k;
#pragma unroll
        for (int j = 0; j < 8; j++) k.v[j] = 0;
        if (i < n) {
            fr_t one;
#pragma unroll
            for (int j = 0; j < 8; j++) one.v[j] = j == 0;
            mont_mul<8>(k, scalars[i], one); /* out of Montgomery form */
            if (points && !mont_is_zero<8>(k) && is_inf(points[i])) {
#pragma unroll
                for (int j = 0; j < 8; j++) k.v[j] = 0;
            }
            canonical[i] = k;
        }
        const u32 bits = bit_length(k);   /* 0: zero, 1: one */
        /* a wider scalar equal to the last lane's (low 64 bits): repeats put many of a
         * warp's keys on one counter, so the sort then groups them (GpuMsm._digits) */
        const u32 lo = __shfl_up_sync(FULL_MASK, k.v[0], 1), hi = __shfl_up_sync(FULL_MASK, k.v[1], 1);
        if (i >= n) continue;
        /* lengths 0 and 1 (the zeros and ones, most of a bit witness) are counted
         * in registers, not on two hot shared counters */
        if (bits > 1) atomicAdd(&tally[3 + bits], 1u);
        mine[bits < 2 ? bits : 2]++;
        mine[3] += bits > 1 && lane > 0 && k.v[0] == lo && k.v[1] == hi;
    }
    for (int j = 0; j < 2; j++) atomicAdd(&tally[3 + j], mine[j]);
    for (int j = 0; j < 3; j++) atomicAdd(&tally[j], mine[j]);
    atomicAdd(&tally[REPEATS], mine[3]);
    __syncthreads();
    for (u32 j = threadIdx.x; j < COUNTERS; j += blockDim.x)
        if (tally[j]) atomicAdd(&counters[j], tally[j]);
}

/* Signed digit of window w of k, given the carry out of window w - 1. */
DEV int signed_digit(const fr_t &k, u32 w, u32 c, u32 &carry)
{
    u32 bit = w * c, limb = bit / 32, shift = bit % 32, mask = (1u << c) - 1;
    u64 v = limb < 8 ? (u64)k.v[limb] : 0;
    if (limb + 1 < 8) v |= (u64)k.v[limb + 1] << 32; /* shift < 32 and c <= 24: two limbs suffice */
    u32 d = ((u32)(v >> shift) & mask) + carry;
    carry = d > (mask >> 1) + 1;
    return carry ? (int)d - (int)(1u << c) : (int)d;
}

/* One atomicAdd per group of lanes with the same counter (repeated scalars
 * would otherwise serialise on one address); returns the old value plus this
 * lane's rank in its group. Every lane of the warp must call it. */
DEV u32 grouped_add(u32 *counters, u32 slot, bool active)
{
    u32 key = active ? slot : FULL_MASK;
    u32 peers = __match_any_sync(FULL_MASK, key);
    u32 lane = threadIdx.x & 31, leader = __ffs(peers) - 1;
    u32 base = 0;
    if (active && lane == leader) base = atomicAdd(&counters[slot], (u32)__popc(peers));
    base = __shfl_sync(FULL_MASK, base, leader);
    return base + __popc(peers & ((1u << lane) - 1));
}

/* grouped_add without the positions: atomics whose values nobody waits for. */
DEV void grouped_count(u32 *counters, u32 slot, bool active)
{
    u32 peers = __match_any_sync(FULL_MASK, active ? slot : FULL_MASK);
    if (active && (threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&counters[slot], (u32)__popc(peers));
}

/* Bucket of a nonzero digit +-(b + 1) in window w: window w adds into set
 * w % sets of nb buckets, which start at (w % sets) nb. Without window
 * tables sets = windows, a set a window; with them windows share sets, each
 * window's points being copy w / sets of the table (2^(c sets k) P_i). */
DEV u32 bucket_of(int d, u32 w, u32 sets, u32 nb) { return (w % sets) * nb + (u32)(d < 0 ? -d : d) - 1; }

/* Point i's key in window w (bucket | sign, or NO_KEY): keys[i] for w = 0;
 * above it only for the wide scalars, those of at least wide_bits bits (the
 * only ones with digits there), each given a slot j < m (its rank, taken a
 * warp at a time from *taken): wide[j] = i, keys[n + (w - 1) m + j] its key.
 * With wide_bits 0 every point is wide in its own slot (j = i, m = n, wide
 * unused): keys[w n + i], the dense layout. */
extern "C" __global__ void PREFIX(msm_digits)(const fr_t *canonical, u32 n, u32 c, u32 windows, u32 sets,
                                              u32 wide_bits, u32 m, u32 *wide, u32 *taken, u32 *keys)
{
    for (u32 base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        u32 i = base + threadIdx.x, bits = 0;
        fr_t k;
        if (i < n) {
            k = canonical[i];
            bits = bit_length(k);
        }
        u32 j = i;
        if (wide_bits) { /* every lane of the warp is here: base is the same for all of them */
            bool is_wide = i < n && bits >= wide_bits;
            u32 lanes = __ballot_sync(FULL_MASK, is_wide), lane = threadIdx.x & 31, first = 0;
            u32 leader = lanes ? __ffs(lanes) - 1 : 0;
            if (lanes && lane == leader) first = atomicAdd(taken, (u32)__popc(lanes));
            first = __shfl_sync(FULL_MASK, first, leader);
            j = first + __popc(lanes & ((1u << lane) - 1));
            if (!is_wide || j >= m) j = m; /* no keys above window 0 (m counts the host's wide ones) */
            if (j < m) wide[j] = i;
        }
        if (i >= n) continue;
        u32 carry = 0;
        for (u32 w = 0; w < windows && (w == 0 || j < m); w++) {
            int d = signed_digit(k, w, c, carry);
            size_t at = w ? n + (size_t)(w - 1) * m + j : i;
            keys[at] = d ? bucket_of(d, w, sets, 1u << (c - 1)) | (d < 0 ? SIGN_BIT : 0u) : NO_KEY;
        }
    }
}

/* The counting sort's two passes over the keys: with entries null, cursor[b]
 * += the size of bucket b (count); else cursor holds the buckets' offsets on
 * entry, their ends on return, and entries the sorted (point | sign) (fill).
 * Grid (ceil(len / blockDim), rows), rows from row0 of windows x parts: a row
 * takes the keys of one window whose buckets fall in one part of its nb; len
 * is n for window 0, m above it (msm_digits' layout; the host launches the
 * two apart when m < n), and the entry names point wide[i] there (i where
 * wide is null). grouped: a warp's lanes with the same bucket take one atomic
 * (repeated keys: bits and small words); else one each (full scalars, whose
 * keys a warp rarely repeats: the grouping would only cost).
 * Rows run over (set, part, copy), the copy fastest: row r is copy k = r %
 * copies of part (r / copies) % parts of set r / (copies parts), window w =
 * set + k sets (none past the last window). Without tables (sets =
 * windows, one copy) that is window-major; with one set, part-major; so a
 * run of rows completes a stretch of buckets that the accumulation can
 * start on while the next rows fill. Blocks start in order
 * of their linear index, so the counters and entries touched at any time lie
 * in one part's stretch, which stays in L2 when it fits; points-major (every
 * window of a point at once) spread them over all windows (G1 on an H200,
 * 2^24: fill 19.2 -> 7.4 ms; 2^26: count 35.9 -> 13.6, fill 94 -> 43). */
extern "C" __global__ void PREFIX(msm_place)(const u32 *keys, u32 n, u32 m, const u32 *wide, u32 windows,
                                             u32 parts, u32 row0, u32 nb, u32 sets, u32 grouped,
                                             u32 *cursor, u32 *entries)
{
    u32 i = blockIdx.x * blockDim.x + threadIdx.x, row = row0 + blockIdx.y, copies = (windows + sets - 1) / sets;
    u32 copy = row % copies, part = row / copies % parts, set = row / (copies * parts), w = set + copy * sets;
    u32 len = w ? m : n;
    if (w >= windows || blockIdx.x * blockDim.x >= len) return; /* window 0's n keys and the others' m apart */
    u32 key = i < len ? keys[w ? n + (size_t)(w - 1) * m + i : i] : NO_KEY;
    u32 p = w && wide ? wide[i < len ? i : 0] : i; /* the point */
    u32 b = key & ~SIGN_BIT, per = (nb + parts - 1) / parts;
    bool mine = key != NO_KEY && (b - set * nb) / per == part;
    if (!__ballot_sync(FULL_MASK, mine)) return; /* narrow scalars leave the high windows' warps nothing */
    if (!entries) {                              /* count: no positions, so no returned values to wait on */
        if (grouped)
            grouped_count(cursor, b, mine);
        else if (mine)
            atomicAdd(&cursor[b], 1u);
        return;
    }
    u32 pos = grouped ? grouped_add(cursor, mine ? b : 0, mine) : mine ? atomicAdd(&cursor[b], 1u) : 0;
    /* the entry names the copy of the point window w adds: row copy n + p of the points and the table */
    if (mine) entries[pos] = (copy * n + p) | (key & SIGN_BIT);
}

/* ---------------------------------------------------------------- scan */

/* Exclusive scan of 1024-element tiles (256 threads x 4); tile totals to sums. */
extern "C" __global__ void PREFIX(scan_tiles)(const u32 *in, u32 *out, u32 n, u32 *sums)
{
    __shared__ u32 warp_tot[8];
    u32 t = threadIdx.x, lane = t & 31, warp = t >> 5;
    size_t base = (size_t)blockIdx.x * 1024 + t * 4;
    u32 v[4], s = 0;
    for (int j = 0; j < 4; j++) {
        v[j] = base + j < n ? in[base + j] : 0;
        s += v[j];
    }
    u32 x = s; /* inclusive warp scan of the thread totals */
    for (int d = 1; d < 32; d <<= 1) {
        u32 y = __shfl_up_sync(FULL_MASK, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) warp_tot[warp] = x;
    __syncthreads();
    u32 before = 0;
    for (u32 j = 0; j < warp; j++) before += warp_tot[j];
    u32 run = before + x - s;
    for (int j = 0; j < 4; j++) {
        if (base + j < n) out[base + j] = run;
        run += v[j];
    }
    if (t == 255) sums[blockIdx.x] = run;
}

/* In place, one block of 1024 threads: exclusive scan of the tile totals; the
 * grand total goes to *total. */
extern "C" __global__ void PREFIX(scan_sums)(u32 *sums, u32 tiles, u32 *total)
{
    __shared__ u32 warp_tot[32];
    __shared__ u32 carry;
    u32 t = threadIdx.x, lane = t & 31, warp = t >> 5;
    if (t == 0) carry = 0;
    __syncthreads();
    for (u32 base = 0; base < tiles; base += 1024) {
        u32 i = base + t, s = i < tiles ? sums[i] : 0, x = s;
        for (int d = 1; d < 32; d <<= 1) {
            u32 y = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= d) x += y;
        }
        if (lane == 31) warp_tot[warp] = x;
        __syncthreads();
        u32 before = carry;
        for (u32 j = 0; j < warp; j++) before += warp_tot[j];
        if (i < tiles) sums[i] = before + x - s;
        __syncthreads();
        if (t == 1023) carry = before + x;
        __syncthreads();
    }
    if (t == 0) *total = carry;
}

extern "C" __global__ void PREFIX(scan_add)(u32 *out, u32 n, const u32 *sums)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] += sums[i >> 10];
}

/* ---------------------------------------------------------------- buckets */

/* Where a chunk's first and last runs go: slot 2t and 2t + 1 of the next
 * list. A run that is a whole bucket is written to sums (INTO: added to
 * what sums holds, the buckets of an MSM's earlier passes) and leaves a dead
 * slot (identity); an open run leaves its sum, to be combined with its
 * neighbours' at the next level. Keys stay sorted, so the list is again
 * sorted by bucket. */
template <bool INTO>
DEV void flush(proj *sums, u32 *next_keys, proj *next, u32 t, u32 key, bool dead, const proj &acc, bool open,
               bool first, bool last)
{
    proj id;
    set_inf(id);
    if (!open && !dead) {
        if (INTO) {
            proj held = sums[key];
            add(held, held, acc);
            sums[key] = held;
        } else {
            sums[key] = acc;
        }
    }
    u32 k = key | ((open && !dead) ? 0u : DEAD_BIT);
    if (first) {
        next_keys[2 * t] = k;
        next[2 * t] = open ? acc : id;
    }
    if (last) {
        next_keys[2 * t + 1] = k;
        next[2 * t + 1] = (open && !first) ? acc : id;
    }
}

/* The bucket holding entry pos: the first b >= from with ends[b] > pos
 * (ends non-decreasing, ends[last - 1] > pos). The next bucket is tried
 * first: where the scalars are spread, it is the one. */
DEV u32 bucket_at(const u32 *ends, u32 from, u32 last, u32 pos)
{
    if (ends[from] > pos) return from;
    u32 lo = from + 1, hi = last - 1;
    while (lo < hi) {
        u32 mid = lo + (hi - lo) / 2;
        if (ends[mid] > pos)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Level 1 over buckets [first, last): their entries (point index | sign;
 * through rows, the scalar's index), sorted by bucket, are positions [base,
 * base + count); bucket b holds [offsets[b], ends[b]). Only these buckets'
 * ends are read, so the fill may still be writing the others'. Chunk t's
 * open runs go to slots 2t, 2t + 1. PLAIN: entry i's point is points[i].
 * ROWS: points[rows[i]], none where rows[i] is NO_ROW (one sort of the
 * scalars serving several arrays of points, GpuMsm.msm_shared). TABLE:
 * points[i] below n, else table[i - n] (a window table's shifted copies
 * beside the points). A kernel each, so the plain one keeps its registers. */
enum Source { PLAIN, ROWS, TABLE };

/* ONTO (a later pass's buckets, msm_accumulate_onto): a run that starts in
 * its chunk starts from what its bucket holds, so a bucket complete in the
 * chunk is stored as the plain kernel stores it, and one split across
 * chunks carries what it held in its first piece alone (the plain combine
 * levels then finish it). No lane adds a held sum at a flush: INTO's
 * general addition there stalls the warp whenever any lane's run ends. */
template <Source SRC, bool INTO = false, bool ONTO = false>
DEV void accumulate_level1(const point *points, const u32 *rows, const point *table, u32 n, const u32 *entries,
                           const u32 *offsets, const u32 *ends, u32 first, u32 last, u32 base, u32 count,
                           u32 chunk, proj *sums, u32 *next_keys, proj *next)
{
    u32 chunks = (count + chunk - 1) / chunk, total = base + count;
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < chunks; t += gridDim.x * blockDim.x) {
        u32 lo = base + t * chunk, hi = min(lo + chunk, total);
        u32 key = bucket_at(ends, first, last, lo), end = ends[key];
        bool open_left = offsets[key] < lo, first_run = true;
        proj acc;
        if (ONTO && !open_left)
            acc = sums[key];
        else
            set_inf(acc);
        for (u32 pos = lo; pos < hi; pos++) {
            if (pos == end) {
                flush<INTO>(sums, next_keys, next, t, key, false, acc, open_left, first_run, false);
                first_run = open_left = false;
                key = bucket_at(ends, key + 1, last, pos);
                end = ends[key];
                if (ONTO)
                    acc = sums[key];
                else
                    set_inf(acc);
            }
            u32 e = entries[pos], row = e & ~SIGN_BIT;
            if (SRC == ROWS) row = rows[row];
            const point *src = SRC == TABLE && row >= n ? table + (row - n) : points + row;
            if (SRC != ROWS || row != NO_ROW) add_affine(acc, acc, *src, (e & SIGN_BIT) != 0);
        }
        bool open_right = end > hi;
        flush<INTO>(sums, next_keys, next, t, key, false, acc, open_left || open_right, first_run, true);
    }
}

extern "C" __global__ void PREFIX(msm_accumulate)(const point *points, const u32 *entries, const u32 *offsets,
                                                  const u32 *ends, u32 first, u32 last, u32 base, u32 count,
                                                  u32 chunk, proj *sums, u32 *next_keys, proj *next)
{
    accumulate_level1<PLAIN>(points, nullptr, nullptr, 0, entries, offsets, ends, first, last, base, count, chunk,
                             sums, next_keys, next);
}

extern "C" __global__ void PREFIX(msm_accumulate_rows)(const point *points, const u32 *rows, const u32 *entries,
                                                       const u32 *offsets, const u32 *ends, u32 first, u32 last,
                                                       u32 base, u32 count, u32 chunk, proj *sums, u32 *next_keys,
                                                       proj *next)
{
    accumulate_level1<ROWS>(points, rows, nullptr, 0, entries, offsets, ends, first, last, base, count, chunk,
                            sums, next_keys, next);
}

extern "C" __global__ void PREFIX(msm_accumulate_table)(const point *points, const point *table, u32 n,
                                                        const u32 *entries, const u32 *offsets, const u32 *ends,
                                                        u32 first, u32 last, u32 base, u32 count, u32 chunk,
                                                        proj *sums, u32 *next_keys, proj *next)
{
    accumulate_level1<TABLE>(points, nullptr, table, n, entries, offsets, ends, first, last, base, count, chunk,
                             sums, next_keys, next);
}

/* msm_accumulate over an MSM's later pass: each bucket's sum added to what
 * sums holds (one set of buckets for all its passes, reduced once). A kernel
 * of its own, so the others keep their code and registers. */
extern "C" __global__ void PREFIX(msm_accumulate_into)(const point *points, const u32 *entries, const u32 *offsets,
                                                       const u32 *ends, u32 first, u32 last, u32 base, u32 count,
                                                       u32 chunk, proj *sums, u32 *next_keys, proj *next)
{
    accumulate_level1<PLAIN, true>(points, nullptr, nullptr, 0, entries, offsets, ends, first, last, base, count,
                                   chunk, sums, next_keys, next);
}

/* msm_accumulate over an MSM's later pass, each run that starts in its
 * chunk starting from its bucket's sum (ONTO above); its open runs are
 * finished by the plain msm_combine. */
extern "C" __global__ void PREFIX(msm_accumulate_onto)(const point *points, const u32 *entries, const u32 *offsets,
                                                       const u32 *ends, u32 first, u32 last, u32 base, u32 count,
                                                       u32 chunk, proj *sums, u32 *next_keys, proj *next)
{
    accumulate_level1<PLAIN, false, true>(points, nullptr, nullptr, 0, entries, offsets, ends, first, last, base,
                                          count, chunk, sums, next_keys, next);
}

/* Level 2 and on: the same over a list of partial sums (keys may be dead). */
template <bool INTO>
DEV void combine_level(const u32 *keys, const proj *values, u32 total, u32 chunk, proj *sums, u32 *next_keys,
                       proj *next)
{
    u32 chunks = (total + chunk - 1) / chunk;
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < chunks; t += gridDim.x * blockDim.x) {
        u32 lo = t * chunk, hi = min(lo + chunk, total);
        u32 key = keys[lo] & ~DEAD_BIT;
        bool dead = (keys[lo] & DEAD_BIT) != 0;
        bool open_left = lo > 0 && (keys[lo - 1] & ~DEAD_BIT) == key, first = true;
        proj acc;
        set_inf(acc);
        for (u32 pos = lo; pos < hi; pos++) {
            u32 k = keys[pos] & ~DEAD_BIT;
            if (k != key) {
                flush<INTO>(sums, next_keys, next, t, key, dead, acc, open_left, first, false);
                first = open_left = false;
                key = k;
                dead = (keys[pos] & DEAD_BIT) != 0;
                set_inf(acc);
            }
            if (!dead) add(acc, acc, values[pos]);
        }
        bool open_right = hi < total && (keys[hi] & ~DEAD_BIT) == key;
        flush<INTO>(sums, next_keys, next, t, key, dead, acc, open_left || open_right, first, true);
    }
}

extern "C" __global__ void PREFIX(msm_combine)(const u32 *keys, const proj *values, u32 total, u32 chunk,
                                               proj *sums, u32 *next_keys, proj *next)
{
    combine_level<false>(keys, values, total, chunk, sums, next_keys, next);
}

extern "C" __global__ void PREFIX(msm_combine_into)(const u32 *keys, const proj *values, u32 total, u32 chunk,
                                                    proj *sums, u32 *next_keys, proj *next)
{
    combine_level<true>(keys, values, total, chunk, sums, next_keys, next);
}

/* k p for a small k >= 0 (double-and-add from the top set bit). */
DEV void mul_small(proj &r, const proj &p, u32 k)
{
    proj acc;
    set_inf(acc);
    for (int bit = 31 - __clz(k | 1); bit >= 0; bit--) {
        dbl(acc, acc);
        if ((k >> bit) & 1) add(acc, acc, p);
    }
    r = acc;
}

/* partial[w * segments + s] = sum over the segment's buckets b of (b + 1) B_b. */
extern "C" __global__ void PREFIX(msm_reduce)(const proj *sums, u32 nb, u32 windows, u32 segments, proj *partial)
{
    u32 total = windows * segments, per = (nb + segments - 1) / segments;
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        u32 w = t / segments, s = t % segments;
        u32 lo = min(s * per, nb), hi = min(lo + per, nb);
        proj running, acc, shifted;
        set_inf(running);
        set_inf(acc);
        for (u32 b = hi; b-- > lo;) { /* acc = sum (b - lo + 1) B_b, running = sum B_b */
            add(running, running, sums[(size_t)w * nb + b]);
            add(acc, acc, running);
        }
        mul_small(shifted, running, lo); /* + lo sum B_b: weights b + 1 */
        add(acc, acc, shifted);
        partial[t] = acc;
    }
}

/* out[g * per_out + j] = sum of in[g * per_in + i] over j f <= i < (j + 1) f, f = ceil(per_in / per_out). */
extern "C" __global__ void PREFIX(msm_fold)(const proj *in, u32 groups, u32 per_in, u32 per_out, proj *out)
{
    u32 total = groups * per_out, f = (per_in + per_out - 1) / per_out;
    for (u32 t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        u32 g = t / per_out, j = t % per_out;
        proj acc;
        set_inf(acc);
        for (u32 i = j * f; i < min((j + 1) * f, per_in); i++) add(acc, acc, in[(size_t)g * per_in + i]);
        out[t] = acc;
    }
}

/* out[i] = 2^c in[i] (xyzz, c doublings): a window table's next copy of
 * the bases, made affine after by fb_normalize (fixed_base.cu). */
extern "C" __global__ void PREFIX(msm_shift)(const point *in, u32 n, u32 c, proj *out)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        proj acc;
        from_affine(acc, in[i]);
        for (u32 j = 0; j < c; j++) dbl(acc, acc);
        out[i] = acc;
    }
}

/* partial[t] = sum of points[i] for i = t, t + T, t + 2T, ... (T = the launched thread count). */
extern "C" __global__ void PREFIX(msm_sum)(const point *points, u32 count, proj *partial)
{
    u32 t = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    proj acc;
    set_inf(acc);
    for (u32 i = t; i < count; i += stride) add_affine(acc, acc, points[i]);
    partial[t] = acc;
}

/* x[i] <- x[i]^(2^iters) over Fq by squares (Montgomery: each square divides by R). */
extern "C" __global__ void PREFIX(fq_sqr_chain)(fq_t *x, u32 n, u32 iters)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fq_t v = x[i];
        for (u32 k = 0; k < iters; k++) f_sqr(v, v);
        x[i] = v;
    }
}

/* x[i] <- x[i] y[i]^iters over Fq (the field's throughput, for the benchmarks). */
extern "C" __global__ void PREFIX(fq_mul_chain)(fq_t *x, const fq_t *y, u32 n, u32 iters)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fq_t v = x[i], w = y[i];
        for (u32 k = 0; k < iters; k++) mont_mul<12>(v, v, w);
        x[i] = v;
    }
}

/* x[i] <- (x[i] y[i] + z[i] w[i]) / R mod p (f_mul2: two products, one reduction; for the tests). */
extern "C" __global__ void PREFIX(fq_mul2_vec)(fq_t *x, const fq_t *y, const fq_t *z, const fq_t *w, u32 n)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fq_t v;
        mont_mul2<12>(v, x[i], y[i], z[i], w[i]);
        x[i] = v;
    }
}
