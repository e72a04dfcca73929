/* SPDX-License-Identifier: Apache-2.0 */
/* Fixed-base products s_i G on the GPU, for parameter generation (launched
 * by msm/gpu/fixed_base.py), G1 (default) or G2 (-DMSM_G2).
 *
 *   fb_mul        per scalar: out of Montgomery form, then one mixed
 *                 addition per nonzero byte d_j from a table of
 *                 d 2^(8j) G (j < 32, d < 256): at most 32 additions and
 *                 no doublings
 *   fb_normalize  xyzz -> affine for a run of points per thread sharing one
 *                 field inversion (Montgomery's trick); infinity -> zeros
 *
 * Results are the package's affine layout, equal to the CPU's. */
#include "porep_prover/group.cuh"

#define FB_WINDOWS 32
#define FB_DIGITS 256

/* out[i] = scalars[i] G (xyzz), table[j * 256 + d] = d 2^(8j) G (affine; d = 0 unused). */
extern "C" __global__ void PREFIX(fb_mul)(const fr_t *scalars, u32 n, const point *table, proj *out)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t k, one;
#pragma unroll
        for (int j = 0; j < 8; j++) one.v[j] = j == 0;
        mont_mul<8>(k, scalars[i], one); /* out of Montgomery form: the integer's bytes */
        proj acc;
        set_inf(acc);
        for (int w = 0; w < FB_WINDOWS; w++) {
            u32 d = (k.v[w >> 2] >> (8 * (w & 3))) & 0xffu;
            if (d) add_affine(acc, acc, table[w * FB_DIGITS + d]);
        }
        out[i] = acc;
    }
}

/* Affine out[i] for i in thread t's run [t per, (t + 1) per): prefix products
 * of P_i = ZZ_i ZZZ_i, one inversion, then back: 1 / P_i, x = X ZZZ / P,
 * y = Y ZZ / P. pref holds the prefix products (n elements). */
extern "C" __global__ void PREFIX(fb_normalize)(const proj *in, u32 n, u32 per, field *pref, point *out)
{
    size_t lo, hi;
    if (!thread_run(n, per, lo, hi)) return;
    field acc, p;
    f_one(acc);
    for (size_t i = lo; i < hi; i++) {
        pref[i] = acc;
        if (!is_inf(in[i])) {
            f_mul(p, in[i].zz, in[i].zzz);
            f_mul(acc, acc, p);
        }
    }
    field inv, ip, t;
    f_inv(inv, acc);
    for (size_t i = hi; i-- > lo;) {
        const proj q = in[i];
        point r;
        if (is_inf(q)) {
            f_zero(r.x);
            f_zero(r.y);
        } else {
            f_mul(p, q.zz, q.zzz);
            f_mul(ip, inv, pref[i]);
            f_mul(inv, inv, p);
            f_mul(t, ip, q.zzz);
            f_mul(r.x, q.x, t);
            f_mul(t, ip, q.zz);
            f_mul(r.y, q.y, t);
        }
        out[i] = r;
    }
}
