/* SPDX-License-Identifier: Apache-2.0 */
/* Number-theoretic transform (the radix-2 FFT over Fr) on the CPU, and the
 * Groth16 quotient polynomial H built from it.
 *
 * Conventions (bellman, arkworks, snarkjs agree): omega_n = 7^((r-1)/n) is the
 * primitive n-th root of unity for n = 2^log_n <= 2^32.
 *   forward:  X_k = sum_j x_j omega^(jk)                 natural order in and out
 *   inverse:  x_j = n^-1 sum_k X_k omega^(-jk)
 *   coset:    forward evaluates on g*<omega>: x_j is first scaled by g^j;
 *             inverse scales the result by g^-j afterwards.
 * Iterative Cooley-Tukey (DIT) after a bit-reversal permutation. The first
 * NTT_BLOCK_LOG stages run block by block so that a block stays in L2; the
 * remaining stages are one parallel sweep each. */
#include <stdlib.h>
#include <string.h>

#include "ntt.h"

#define NTT_BLOCK_LOG 12
/* Elements per parallel chunk for the power tables and pointwise passes. */
#define NTT_CHUNK 4096

/* For i < n: out[i] = start * step^i (out != NULL), or data[i] *= that.
 * Parallel in chunks, each computing its own first power. */
static void powers_pass(fr_t *out, fr_t *data, size_t n, const fr_t *start, const fr_t *step, int nthreads)
{
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t c = 0; c < (n + NTT_CHUNK - 1) / NTT_CHUNK; c++) {
        size_t lo = c * NTT_CHUNK, hi = lo + NTT_CHUNK < n ? lo + NTT_CHUNK : n;
        fr_t cur;
        fr_pow_u64(&cur, step, (uint64_t)lo);
        fr_mul(&cur, &cur, start);
        for (size_t i = lo; i < hi; i++) {
            if (out) out[i] = cur;
            else fr_mul(&data[i], &data[i], &cur);
            fr_mul(&cur, &cur, step);
        }
    }
}

void fr_powers(fr_t *out, size_t n, const fr_t *start, const fr_t *step, int nthreads)
{
    powers_pass(out, NULL, n, start, step, nthreads);
}

static void fr_scale_by_powers(fr_t *data, size_t n, const fr_t *start, const fr_t *step, int nthreads)
{
    powers_pass(NULL, data, n, start, step, nthreads);
}

/* The primitive 2^log_n-th root from a primitive 2^32-th one. */
static void root_from(fr_t *r, const fr_t *root32, int log_n)
{
    *r = *root32;
    for (int i = log_n; i < FR_TWO_ADICITY; i++) fr_sqr(r, r);
}

void fr_root_of_unity(fr_t *r, int log_n)
{
    static const fr_t root = {FR_ROOT_OF_UNITY};
    root_from(r, &root, log_n);
}

void fr_root_of_unity_snarkjs(fr_t *r, int log_n)
{
    static const fr_t root = {FR_ROOT_OF_UNITY_5};
    root_from(r, &root, log_n);
}

static inline size_t bit_reverse(size_t x, int bits)
{
    size_t r = 0;
    for (int i = 0; i < bits; i++) {
        r = (r << 1) | (x & 1);
        x >>= 1;
    }
    return r;
}

FF_INLINE void butterfly(fr_t *u, fr_t *v, const fr_t *w)
{
    fr_t t;
    fr_mul(&t, v, w);
    fr_sub(v, u, &t);
    fr_add(u, u, &t);
}

/* Stages with half-length 2^s for s in [s_lo, s_hi) on one contiguous block. */
static void dit_stages(fr_t *a, size_t len, int s_lo, int s_hi, const fr_t *tw, int log_n)
{
    for (int s = s_lo; s < s_hi; s++) {
        size_t half = (size_t)1 << s, stride = (size_t)1 << (log_n - 1 - s);
        for (size_t start = 0; start < len; start += 2 * half)
            for (size_t j = 0; j < half; j++) butterfly(&a[start + j], &a[start + j + half], &tw[j * stride]);
    }
}

/* In-place Cooley-Tukey DIT on natural-order input: bit reversal, then the
 * stages; tw[j] = w^j for j < n/2. */
static void dit(fr_t *data, int log_n, const fr_t *tw, int nthreads)
{
    size_t n = (size_t)1 << log_n, half_n = n / 2;
    int block_log = log_n < NTT_BLOCK_LOG ? log_n : NTT_BLOCK_LOG;
    size_t block = (size_t)1 << block_log;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        size_t j = bit_reverse(i, log_n);
        if (i < j) {
            fr_t t = data[i];
            data[i] = data[j];
            data[j] = t;
        }
    }
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t b = 0; b < n / block; b++) dit_stages(data + b * block, block, 0, block_log, tw, log_n);
    for (int s = block_log; s < log_n; s++) {
        size_t half = (size_t)1 << s, stride = (size_t)1 << (log_n - 1 - s);
#pragma omp parallel for num_threads(nthreads) schedule(static)
        for (size_t k = 0; k < half_n; k++) {
            size_t j = k & (half - 1), start = (k >> s) << (s + 1);
            butterfly(&data[start + j], &data[start + j + half], &tw[j * stride]);
        }
    }
}

static int simd_enabled = -1; /* -1: not decided yet */

int ntt_simd(int enable)
{
    if (enable >= 0) simd_enabled = enable && fr_simd_available();
    else if (simd_enabled < 0) simd_enabled = fr_simd_available();
    return simd_enabled;
}

int fr_ntt_ex(fr_t *data, int log_n, const fr_t *omega, int inverse, const fr_t *shift, int nthreads)
{
    size_t n = (size_t)1 << log_n, half_n = n / 2;
    fr_t w, one;
    fr_t *tw;
    if (log_n < 0 || log_n > FR_TWO_ADICITY) return -2;
    if (nthreads < 1) nthreads = 1;
    if (log_n >= 3 && ntt_simd(-1)) return fr_ntt_simd(data, log_n, omega, inverse, shift, nthreads);
    fr_set_one(&one);
    if (shift && !inverse) fr_scale_by_powers(data, n, &one, shift, nthreads);
    if (log_n > 0) {
        tw = malloc(half_n * sizeof(fr_t));
        if (!tw) return -1;
        w = *omega;
        if (inverse) fr_inv(&w, &w);
        fr_powers(tw, half_n, &one, &w, nthreads);
        dit(data, log_n, tw, nthreads);
        free(tw);
    }
    if (inverse) {
        fr_t n_inv, step;
        fr_t n_fr = {{(uint64_t)n, 0, 0, 0}};
        fr_to_mont(&n_fr, &n_fr);
        fr_inv(&n_inv, &n_fr);
        if (shift) fr_inv(&step, shift);
        else step = one;
        fr_scale_by_powers(data, n, &n_inv, &step, nthreads);
    }
    return 0;
}

int fr_ntt(fr_t *data, int log_n, int inverse, int coset, int nthreads)
{
    static const fr_t g = {FR_GENERATOR};
    fr_t omega;
    if (log_n < 0 || log_n > FR_TWO_ADICITY) return -2;
    fr_root_of_unity(&omega, log_n);
    return fr_ntt_ex(data, log_n, &omega, inverse, coset ? &g : NULL, nthreads);
}

static _Thread_local const volatile int32_t *stop_flag;

void ntt_stop_on(const volatile int32_t *flag)
{
    stop_flag = flag;
}

int ntt_stopped(void)
{
    return stop_flag && *stop_flag;
}

const volatile int32_t *ntt_stop_flag(void)
{
    return stop_flag;
}

int fr_h_poly_bellman(fr_t *a, fr_t *b, fr_t *c, int log_n, int nthreads)
{
    size_t n = (size_t)1 << log_n;
    int rc = 0;
    fr_t z_inv, g_n, one;
    static const fr_t g = {FR_GENERATOR};
    if (log_n >= 3 && log_n <= FR_TWO_ADICITY && ntt_simd(-1)) {
        fr_t omega;
        fr_root_of_unity(&omega, log_n);
        return fr_h_poly_simd(a, b, c, log_n, &omega, &g, 1, nthreads);
    }
    /* a, b, c: evaluations on <omega> -> coefficients -> evaluations on g<omega> */
    fr_t *v[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        if (ntt_stopped()) return NTT_STOPPED;
        rc |= fr_ntt(v[k], log_n, 1, 0, nthreads);
        rc |= fr_ntt(v[k], log_n, 0, 1, nthreads);
    }
    if (rc) return rc;
    if (ntt_stopped()) return NTT_STOPPED;
    /* Z(x) = x^n - 1 is the constant g^n - 1 on the whole coset. */
    fr_pow_u64(&g_n, &g, (uint64_t)n);
    fr_set_one(&one);
    fr_sub(&z_inv, &g_n, &one);
    fr_inv(&z_inv, &z_inv);
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        fr_t t;
        fr_mul(&t, &a[i], &b[i]);
        fr_sub(&t, &t, &c[i]);
        fr_mul(&a[i], &t, &z_inv);
    }
    return fr_ntt(a, log_n, 1, 1, nthreads);
}

int fr_h_poly_snarkjs(fr_t *a, fr_t *b, fr_t *c, int log_n, int nthreads)
{
    static const fr_t shift32 = {FR_SNARKJS_SHIFT};
    size_t n = (size_t)1 << log_n;
    fr_t omega, shift;
    fr_t *v[3] = {a, b, c};
    if (log_n < 0 || log_n >= FR_TWO_ADICITY + 1) return -2;
    fr_root_of_unity_snarkjs(&omega, log_n);
    /* the odd coset omega_2n <omega_n>; at 2^32 there is no 2^33-th root and
     * snarkjs shifts by 25 instead */
    if (log_n < FR_TWO_ADICITY) fr_root_of_unity_snarkjs(&shift, log_n + 1);
    else shift = shift32;
    if (log_n >= 3 && ntt_simd(-1)) return fr_h_poly_simd(a, b, c, log_n, &omega, &shift, 0, nthreads);
    for (int k = 0; k < 3; k++) {
        if (ntt_stopped()) return NTT_STOPPED;
        int rc = fr_ntt_ex(v[k], log_n, &omega, 1, NULL, nthreads);
        if (!rc) rc = fr_ntt_ex(v[k], log_n, &omega, 0, &shift, nthreads);
        if (rc) return rc;
    }
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t i = 0; i < n; i++) {
        fr_t t;
        fr_mul(&t, &a[i], &b[i]);
        fr_sub(&a[i], &t, &c[i]);
    }
    return 0;
}
