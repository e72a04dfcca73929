/* SPDX-License-Identifier: Apache-2.0 */
/* The NTT and the H pipelines on AVX-512 IFMA (f52r.h): same results as the
 * scalar code in ntt.c, which picks this path at run time.
 *
 * Data live as groups of eight consecutive elements, five limb vectors each.
 * DIT (bit-reversed in, natural out) and DIF (natural in, bit-reversed out)
 * stages let the H pipelines skip every bit reversal: the conversion in can
 * gather in bit-reversed order, pointwise products do not care about order,
 * and the conversion out scatters wherever the result belongs. Stages with a
 * butterfly span of 8 or more pair whole groups; the three smaller ones work
 * inside a group with lane permutes. The first (DIT) or last (DIF) stages run
 * block by block so a block stays in L2. */
#include <stdlib.h>
#include <string.h>

#include "ntt.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(POREP_PORTABLE)
#include "f52r.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512ifma,avx512dq,avx512bw,avx512vl")

#define BLOCK_LOG 12 /* elements per cache block: 4096 x 40 bytes */
#define CHUNK 1024   /* groups per parallel chunk of a pass */

typedef struct {
    frv *tw;        /* stage h >= 8: h/8 groups at offset (h - 8) / 8 */
    frv intra[3];   /* stages h = 1, 2, 4: lane l gets w_2h^(l mod h) if l & h, else 1 */
    int log_n;
} twiddles_t;

static inline size_t bitrev(size_t x, int bits)
{
    size_t r = 0;
    for (int i = 0; i < bits; i++, x >>= 1) r = (r << 1) | (x & 1);
    return r;
}

/* f52r vector of eight std scalars. */
static void frv_from8(frv *r, const fr_t *v)
{
    frv_pack(r, v, _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
}

/* [start * step^l for l < 8] and step^8 in every lane, as f52r vectors. */
static void geometric8(frv *first, frv *step8, const fr_t *start, const fr_t *step)
{
    fr_t v[8], s8[8];
    v[0] = *start;
    for (int l = 1; l < 8; l++) fr_mul(&v[l], &v[l - 1], step);
    fr_pow_u64(&s8[0], step, 8);
    for (int l = 1; l < 8; l++) s8[l] = s8[0];
    frv_from8(first, v);
    frv_from8(step8, s8);
}

/* The powers start * step^(8g + l), in parallel chunks: stored in out[g]
   (scale = 0), or multiplied into it (scale = 1). */
static void powers(frv *out, size_t ngroups, const fr_t *start, const fr_t *step, int scale, int nthreads)
{
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t c = 0; c < (ngroups + CHUNK - 1) / CHUNK; c++) {
        size_t lo = c * CHUNK, hi = lo + CHUNK < ngroups ? lo + CHUNK : ngroups;
        fr_t s0;
        frv cur, step8;
        fr_pow_u64(&s0, step, 8 * (uint64_t)lo);
        fr_mul(&s0, &s0, start);
        geometric8(&cur, &step8, &s0, step);
        for (size_t g = lo; g < hi; g++) {
            if (scale)
                frv_mul(&out[g], &out[g], &cur);
            else
                out[g] = cur;
            frv_mul(&cur, &cur, &step8);
        }
    }
}

/* out[g] = start * step^(8g + l). */
static void geometric(frv *out, size_t ngroups, const fr_t *start, const fr_t *step, int nthreads)
{
    powers(out, ngroups, start, step, 0, nthreads);
}

static void twiddles_free(twiddles_t *t) { free(t->tw); }

static int twiddles_build(twiddles_t *t, int log_n, const fr_t *omega, int nthreads)
{
    size_t n = (size_t)1 << log_n;
    fr_t one, w;
    fr_set_one(&one);
    t->log_n = log_n;
    t->tw = n >= 16 ? aligned_alloc(64, ((n / 8) * sizeof(frv) + 63) & ~(size_t)63) : NULL;
    if (n >= 16 && !t->tw) return -1;
    for (size_t h = 8; h < n; h *= 2) {
        fr_pow_u64(&w, omega, (uint64_t)(n / (2 * h)));    /* w_2h */
        geometric(t->tw + (h - 8) / 8, h / 8, &one, &w, nthreads);
    }
    for (int k = 0; k < 3; k++) {
        size_t h = (size_t)1 << k;
        fr_t v[8];
        fr_pow_u64(&w, omega, (uint64_t)(n / (2 * h)));
        for (int l = 0; l < 8; l++) {
            if (l & h) fr_pow_u64(&v[l], &w, (uint64_t)(l % h));
            else v[l] = one;
        }
        frv_from8(&t->intra[k], v);
    }
    return 0;
}

static inline __m512i partner(int h)
{
    return _mm512_set_epi64(7 ^ h, 6 ^ h, 5 ^ h, 4 ^ h, 3 ^ h, 2 ^ h, 1 ^ h, 0 ^ h);
}

static inline __mmask8 v_lanes(int h)
{
    return (__mmask8)(h == 1 ? 0xaa : h == 2 ? 0xcc : 0xf0);
}

/* Butterflies of span h inside one group. */
static inline void intra_dit(frv *x, const twiddles_t *t, int k)
{
    int h = 1 << k;
    frv y, p, sum, diff;
    frv_mul(&y, x, &t->intra[k]);          /* v lanes: v w; u lanes: u */
    frv_permute(&p, &y, partner(h));
    frv_add(&sum, &y, &p);                 /* u lanes: u + v w */
    frv_sub(&diff, &p, &y);                /* v lanes: u - v w */
    frv_blend(&sum, v_lanes(h), &diff);
    *x = sum;
}

static inline void intra_dif(frv *x, const twiddles_t *t, int k)
{
    int h = 1 << k;
    frv p, sum, diff;
    frv_permute(&p, x, partner(h));
    frv_add(&sum, x, &p);                  /* u lanes: u + v */
    frv_sub_lazy(&diff, &p, x);            /* v lanes: u - v */
    frv_blend(&sum, v_lanes(h), &diff);
    frv_mul(x, &sum, &t->intra[k]);        /* v lanes times w */
}

/* One stage of span h >= 8 over groups [g0, g0 + len) (len a multiple of 2h/8). */
static inline void stage_dit(frv *a, size_t g0, size_t len, size_t h, const frv *tw)
{
    size_t hg = h / 8;
    for (size_t b = g0; b < g0 + len; b += 2 * hg)
        for (size_t q = 0; q < hg; q++) {
            frv v, u = a[b + q];
            frv_mul(&v, &a[b + hg + q], &tw[q]);
            frv_add(&a[b + q], &u, &v);
            frv_sub(&a[b + hg + q], &u, &v);
        }
}

static inline void stage_dif(frv *a, size_t g0, size_t len, size_t h, const frv *tw)
{
    size_t hg = h / 8;
    for (size_t b = g0; b < g0 + len; b += 2 * hg)
        for (size_t q = 0; q < hg; q++) {
            frv d, u = a[b + q], v = a[b + hg + q];
            frv_add(&a[b + q], &u, &v);
            frv_sub_lazy(&d, &u, &v);
            frv_mul(&a[b + hg + q], &d, &tw[q]);
        }
}

/* A full sweep of one large stage, parallel over butterfly vectors. */
static void sweep(frv *a, size_t ngroups, size_t h, const frv *tw, int dif, int nthreads)
{
    size_t hg = h / 8, pairs = ngroups / 2;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t k = 0; k < pairs; k++) {
        size_t q = k % hg, b = (k / hg) * 2 * hg;
        frv u = a[b + q], v = a[b + hg + q], d;
        if (dif) {
            frv_add(&a[b + q], &u, &v);
            frv_sub_lazy(&d, &u, &v);
            frv_mul(&a[b + hg + q], &d, &tw[q]);
        } else {
            frv_mul(&v, &v, &tw[q]);
            frv_add(&a[b + q], &u, &v);
            frv_sub(&a[b + hg + q], &u, &v);
        }
    }
}

/* Bit-reversed input -> natural output. */
static void dit(frv *a, const twiddles_t *t, int nthreads)
{
    int log_n = t->log_n, block_log = log_n < BLOCK_LOG ? log_n : BLOCK_LOG;
    size_t ngroups = ((size_t)1 << log_n) / 8, bg = ((size_t)1 << block_log) / 8;
    const volatile int32_t *stop = ntt_stop_flag();      /* set: the rest is skipped, a is not to be used */
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t blk = 0; blk < ngroups / bg; blk++) {
        frv *x = a + blk * bg;
        if (stop && *stop) continue;
        for (size_t g = 0; g < bg; g++)
            for (int k = 0; k < 3; k++) intra_dit(&x[g], t, k);
        for (size_t h = 8; h < ((size_t)1 << block_log); h *= 2) stage_dit(x, 0, bg, h, t->tw + (h - 8) / 8);
    }
    for (size_t h = (size_t)1 << block_log; h < ((size_t)1 << log_n) && !(stop && *stop); h *= 2)
        sweep(a, ngroups, h, t->tw + (h - 8) / 8, 0, nthreads);
}

/* Natural input -> bit-reversed output. */
static void dif(frv *a, const twiddles_t *t, int nthreads)
{
    int log_n = t->log_n, block_log = log_n < BLOCK_LOG ? log_n : BLOCK_LOG;
    size_t ngroups = ((size_t)1 << log_n) / 8, bg = ((size_t)1 << block_log) / 8;
    const volatile int32_t *stop = ntt_stop_flag();      /* set: the rest is skipped, a is not to be used */
    for (size_t h = ((size_t)1 << log_n) / 2; h >= ((size_t)1 << block_log) && !(stop && *stop); h /= 2)
        sweep(a, ngroups, h, t->tw + (h - 8) / 8, 1, nthreads);
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t blk = 0; blk < ngroups / bg; blk++) {
        frv *x = a + blk * bg;
        if (stop && *stop) continue;
        for (size_t h = ((size_t)1 << block_log) / 2; h >= 8; h /= 2) stage_dif(x, 0, bg, h, t->tw + (h - 8) / 8);
        for (size_t g = 0; g < bg; g++)
            for (int k = 2; k >= 0; k--) intra_dif(&x[g], t, k);
    }
}

/* std -> groups, element j of the result taken from data[reversed ? bitrev(j) : j]. */
static void pack_all(frv *a, const fr_t *data, int log_n, int reversed, int nthreads)
{
    size_t ngroups = ((size_t)1 << log_n) / 8;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t g = 0; g < ngroups; g++) {
        long long idx[8];
        for (int l = 0; l < 8; l++) idx[l] = (long long)(reversed ? bitrev(8 * g + (size_t)l, log_n) : 8 * g + (size_t)l);
        frv_pack(&a[g], data, _mm512_loadu_si512(idx));
    }
}

static void unpack_all(fr_t *data, const frv *a, int log_n, int reversed, int nthreads)
{
    size_t ngroups = ((size_t)1 << log_n) / 8;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t g = 0; g < ngroups; g++) {
        long long idx[8];
        for (int l = 0; l < 8; l++) idx[l] = (long long)(reversed ? bitrev(8 * g + (size_t)l, log_n) : 8 * g + (size_t)l);
        frv_unpack(data, a[g], _mm512_loadu_si512(idx));
    }
}

/* a[j] *= start * step^j (natural order). */
static void scale_all(frv *a, size_t ngroups, const fr_t *start, const fr_t *step, int nthreads)
{
    powers(a, ngroups, start, step, 1, nthreads);
}

static frv *groups_alloc(int log_n)
{
    size_t bytes = ((size_t)1 << log_n) / 8 * sizeof(frv);
    return aligned_alloc(64, (bytes + 63) & ~(size_t)63);
}

static void n_inverse(fr_t *r, int log_n)
{
    fr_t n = {{(uint64_t)1 << log_n, 0, 0, 0}};
    fr_to_mont(&n, &n);
    fr_inv(r, &n);
}

int fr_ntt_simd(fr_t *data, int log_n, const fr_t *omega, int inverse, const fr_t *shift, int nthreads)
{
    size_t ngroups = ((size_t)1 << log_n) / 8;
    twiddles_t t;
    fr_t w = *omega, one;
    frv *a = groups_alloc(log_n);
    if (!a) return -1;
    if (inverse) fr_inv(&w, &w);
    if (twiddles_build(&t, log_n, &w, nthreads)) {
        free(a);
        return -1;
    }
    fr_set_one(&one);
    if (!inverse && shift) {
        pack_all(a, data, log_n, 0, nthreads);
        scale_all(a, ngroups, &one, shift, nthreads);
        dif(a, &t, nthreads);
        unpack_all(data, a, log_n, 1, nthreads);
    } else {
        pack_all(a, data, log_n, 1, nthreads);
        dit(a, &t, nthreads);
        if (inverse) {
            fr_t start, step = one;
            n_inverse(&start, log_n);
            if (shift) fr_inv(&step, shift);
            scale_all(a, ngroups, &start, &step, nthreads);
        }
        unpack_all(data, a, log_n, 0, nthreads);
    }
    twiddles_free(&t);
    free(a);
    return 0;
}

/* Evaluations on the coset shift <omega> of the polynomial interpolated from
 * the natural-order values in data: bit-reversed order, left in a. */
static void to_coset(frv *a, const fr_t *data, const twiddles_t *fwd, const twiddles_t *inv, const fr_t *shift,
                     int nthreads)
{
    int log_n = fwd->log_n;
    fr_t n_inv;
    n_inverse(&n_inv, log_n);
    pack_all(a, data, log_n, 1, nthreads);
    dit(a, inv, nthreads);                                   /* n * coefficients, natural */
    scale_all(a, ((size_t)1 << log_n) / 8, &n_inv, shift, nthreads);
    dif(a, fwd, nthreads);                                   /* coset values, bit-reversed */
}

int fr_h_poly_simd(fr_t *a, fr_t *b, fr_t *c, int log_n, const fr_t *omega, const fr_t *shift, int bellman,
                   int nthreads)
{
    size_t ngroups = ((size_t)1 << log_n) / 8;
    twiddles_t fwd, inv;
    fr_t w_inv;
    frv *va = groups_alloc(log_n), *vb = groups_alloc(log_n), *vc = groups_alloc(log_n);
    int rc = -1;
    fr_inv(&w_inv, omega);
    if (!va || !vb || !vc || twiddles_build(&fwd, log_n, omega, nthreads)) goto out;
    if (twiddles_build(&inv, log_n, &w_inv, nthreads)) {
        twiddles_free(&fwd);
        goto out;
    }
    {
        frv *to[3] = {va, vb, vc};
        fr_t *from[3] = {a, b, c};
        for (int k = 0; k < 3; k++) {
            if (ntt_stopped()) {
                rc = NTT_STOPPED;
                goto stopped;
            }
            to_coset(to[k], from[k], &fwd, &inv, shift, nthreads);
        }
    }
    {
        frv zv;
        if (bellman) {
            /* divide by Z = shift^n - 1, constant on the coset */
            fr_t z, one, zs[8];
            fr_set_one(&one);
            fr_pow_u64(&z, shift, (uint64_t)1 << log_n);
            fr_sub(&z, &z, &one);
            fr_inv(&z, &z);
            for (int l = 0; l < 8; l++) zs[l] = z;
            frv_from8(&zv, zs);
        }
#pragma omp parallel for num_threads(nthreads) schedule(static)
        for (size_t g = 0; g < ngroups; g++) {
            frv t;
            frv_mul(&t, &va[g], &vb[g]);
            frv_sub(&va[g], &t, &vc[g]);
            if (bellman) frv_mul(&va[g], &va[g], &zv);
        }
    }
    if (ntt_stopped()) {
        rc = NTT_STOPPED;
        goto stopped;
    }
    if (bellman) {
        /* back to coefficients: bit-reversed in, natural out, then undo the coset */
        fr_t n_inv, shift_inv;
        n_inverse(&n_inv, log_n);
        fr_inv(&shift_inv, shift);
        dit(va, &inv, nthreads);
        scale_all(va, ngroups, &n_inv, &shift_inv, nthreads);
        unpack_all(a, va, log_n, 0, nthreads);
    } else {
        unpack_all(a, va, log_n, 1, nthreads);
    }
    rc = 0;
stopped:
    twiddles_free(&fwd);
    twiddles_free(&inv);
out:
    free(va);
    free(vb);
    free(vc);
    return rc;
}

#pragma GCC pop_options

int fr_simd_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
}

#else

int fr_ntt_simd(fr_t *data, int log_n, const fr_t *omega, int inverse, const fr_t *shift, int nthreads)
{
    (void)data, (void)log_n, (void)omega, (void)inverse, (void)shift, (void)nthreads;
    return -2;
}

int fr_h_poly_simd(fr_t *a, fr_t *b, fr_t *c, int log_n, const fr_t *omega, const fr_t *shift, int bellman,
                   int nthreads)
{
    (void)a, (void)b, (void)c, (void)log_n, (void)omega, (void)shift, (void)bellman, (void)nthreads;
    return -2;
}

int fr_simd_available(void) { return 0; }

#endif
