/* SPDX-License-Identifier: Apache-2.0 */
/* Batch-affine additions beside the XYZZ mixed additions the MSM's
 * accumulation runs, on the same points, for the benchmarks (bench_gpu.py
 * --sections batch_affine) and the tests: what would summing a bucket's
 * points as a tree of affine additions, each round's inversions shared by
 * Montgomery's trick, give against adding them one by one into an XYZZ sum?
 *
 *   affine_pair_sums  one round of the tree: out[k] = in[2k] + in[2k + 1],
 *                     a thread's run of pairs sharing one inversion: 5
 *                     products and a square a pair, and the inversion's
 *                     ~570 products over the run; the prefix products go
 *                     through memory (pref), as a real round's would
 *   xyzz_run_sums     the accumulation's way: out[t] = the sum of run t of
 *                     `per` points, one mixed addition a point (8 products,
 *                     2 squares, one in a sum of two products)
 *
 * The pairs' x must differ (random points: they do); the tree's rounds,
 * its odd points and equal x are left to a real accumulation. */
#include "porep_prover/group.cuh"

/* out[k] = in[2k] + in[2k + 1] for k in thread t's run [t per, (t + 1) per) of the pairs. */
extern "C" __global__ void PREFIX(affine_pair_sums)(const point *in, u32 pairs, u32 per, field *pref, point *out)
{
    size_t lo, hi;
    if (!thread_run(pairs, per, lo, hi)) return;
    field acc, d;
    f_one(acc);
    for (size_t k = lo; k < hi; k++) {
        pref[k] = acc;
        f_sub(d, in[2 * k + 1].x, in[2 * k].x);
        f_mul(acc, acc, d);
    }
    field inv, ik, lambda, t;
    f_inv(inv, acc);
    for (size_t k = hi; k-- > lo;) {
        const point p = in[2 * k], q = in[2 * k + 1];
        f_sub(d, q.x, p.x);
        f_mul(ik, inv, pref[k]);   /* 1 / (q.x - p.x) */
        f_mul(inv, inv, d);        /* 1 / the prefix below k */
        f_sub(t, q.y, p.y);
        f_mul(lambda, t, ik);
        point r;
        f_sqr(r.x, lambda);
        f_sub(r.x, r.x, p.x);
        f_sub(r.x, r.x, q.x);
        f_sub(t, p.x, r.x);
        f_mul(r.y, lambda, t);
        f_sub(r.y, r.y, p.y);
        out[k] = r;
    }
}

/* out[t] = sum of in[i] for i in run t, [t per, (t + 1) per), by mixed additions. */
extern "C" __global__ void PREFIX(xyzz_run_sums)(const point *in, u32 n, u32 per, proj *out)
{
    size_t lo, hi;
    if (!thread_run(n, per, lo, hi)) return;
    proj acc;
    set_inf(acc);
    for (size_t i = lo; i < hi; i++) add_affine(acc, acc, in[i]);
    out[lo / per] = acc;
}
