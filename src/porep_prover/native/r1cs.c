/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "ntt.h"
#include "r1cs.h"

/* One row's dot product, coefficients one per entry. */
static inline void matvec_row_direct(fr_t *out, int64_t lo, int64_t hi, const uint32_t *col, const fr_t *coeff,
                                     const fr_t *w)
{
    static const fr_t one = {FR_ONE};
    fr_t acc = {{0, 0, 0, 0}}, t;
    for (int64_t k = lo; k < hi; k++) {
        /* Most coefficients in real circuits are one: skip the product. */
        if (fr_eq(&coeff[k], &one)) fr_add(&acc, &acc, &w[col[k]]);
        else {
            fr_mul(&t, &coeff[k], &w[col[k]]);
            fr_add(&acc, &acc, &t);
        }
    }
    *out = acc;
}

/* One row's dot product, coefficients from a table (unit[i]: table[i] is one). */
static inline void matvec_row_tabled(fr_t *out, int64_t lo, int64_t hi, const uint32_t *col, const fr_t *table,
                                     const uint32_t *id, const uint8_t *unit, const fr_t *w)
{
    fr_t acc = {{0, 0, 0, 0}}, t;
    for (int64_t k = lo; k < hi; k++) {
        uint32_t c = id[k];
        if (unit[c]) fr_add(&acc, &acc, &w[col[k]]);
        else {
            fr_mul(&t, &table[c], &w[col[k]]);
            fr_add(&acc, &acc, &t);
        }
    }
    *out = acc;
}

int r1cs_matvec(fr_t *out, const int64_t *indptr, const uint32_t *col, const fr_t *coeff,
                const uint32_t *coeff_id, size_t table_len, size_t rows, const fr_t *w, int nthreads)
{
    static const fr_t one = {FR_ONE};
    uint8_t *unit = NULL;
    if (coeff_id) {
        unit = malloc(table_len ? table_len : 1);
        if (!unit) return -1;
        for (size_t i = 0; i < table_len; i++) unit[i] = (uint8_t)fr_eq(&coeff[i], &one);
    }
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 4096)
    for (size_t i = 0; i < rows; i++) {
        if (coeff_id) matvec_row_tabled(&out[i], indptr[i], indptr[i + 1], col, coeff, coeff_id, unit, w);
        else matvec_row_direct(&out[i], indptr[i], indptr[i + 1], col, coeff, w);
    }
    free(unit);
    return 0;
}

size_t r1cs_first_unsatisfied(const fr_t *a, const fr_t *b, const fr_t *c, size_t n, int nthreads)
{
    size_t first = n;
#pragma omp parallel for num_threads(nthreads) schedule(static) reduction(min : first)
    for (size_t i = 0; i < n; i++) {
        fr_t t;
        fr_mul(&t, &a[i], &b[i]);
        if (!fr_eq(&t, &c[i]) && i < first) first = i;
    }
    return first;
}

void fr_batch_inverse(fr_t *v, size_t n, fr_t *scratch)
{
    fr_t acc, inv, t;
    fr_set_one(&acc);
    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        fr_mul(&acc, &acc, &v[i]);
    }
    fr_inv(&inv, &acc);
    for (size_t i = n; i-- > 0;) {
        fr_mul(&t, &inv, &scratch[i]);
        fr_mul(&inv, &inv, &v[i]);
        v[i] = t;
    }
}

int fr_lagrange_at(fr_t *lagrange, int log_n, const fr_t *omega_in, const fr_t *tau, int nthreads)
{
    size_t n = (size_t)1 << log_n, chunk = 1 << 14;
    size_t nchunks = (n + chunk - 1) / chunk;
    fr_t omega = *omega_in, one, z, n_fr = {{(uint64_t)n, 0, 0, 0}};
    int bad = 0;
    fr_set_one(&one);
    fr_pow_u64(&z, tau, (uint64_t)n);
    fr_sub(&z, &z, &one);                    /* tau^n - 1 */
    if (fr_is_zero(&z)) return -2;
    fr_to_mont(&n_fr, &n_fr);
    fr_inv(&n_fr, &n_fr);
    fr_mul(&z, &z, &n_fr);                   /* (tau^n - 1) / n */
#pragma omp parallel for num_threads(nthreads) schedule(static) reduction(| : bad)
    for (size_t c = 0; c < nchunks; c++) {
        size_t lo = c * chunk, hi = lo + chunk < n ? lo + chunk : n;
        fr_t w, *scratch = malloc((hi - lo) * sizeof(fr_t));
        if (!scratch) {
            bad = 1;
            continue;
        }
        fr_pow_u64(&w, &omega, (uint64_t)lo);
        for (size_t i = lo; i < hi; i++) {   /* tau - omega^i, later inverted */
            fr_sub(&lagrange[i], tau, &w);
            scratch[i - lo] = w;
            fr_mul(&w, &w, &omega);
        }
        {
            fr_t *tmp = malloc((hi - lo) * sizeof(fr_t));
            if (!tmp) {
                bad = 1;
                free(scratch);
                continue;
            }
            fr_batch_inverse(lagrange + lo, hi - lo, tmp);
            free(tmp);
        }
        for (size_t i = lo; i < hi; i++) {
            fr_mul(&lagrange[i], &lagrange[i], &scratch[i - lo]);
            fr_mul(&lagrange[i], &lagrange[i], &z);
        }
        free(scratch);
    }
    return bad ? -1 : 0;
}

/* Little-endian reads that cannot run past the end of the section. */
#define NEED(k)                                                                                                   \
    do {                                                                                                          \
        if (pos + (k) > len) {                                                                                    \
            *where = pos;                                                                                         \
            return R1CS_TRUNCATED;                                                                                \
        }                                                                                                         \
    } while (0)

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

int r1cs_parse_circom(const uint8_t *data, size_t len, size_t ncons, uint32_t nwires, int64_t *nnz,
                      int64_t *const *indptr, uint32_t *const *col, fr_t *const *coeff, size_t *where)
{
    static const uint64_t r[4] = FR_MODULUS;
    size_t pos = 0;
    int fill = col != NULL;
    for (int m = 0; m < 3; m++) nnz[m] = 0;
    for (size_t i = 0; i < ncons; i++) {
        for (int m = 0; m < 3; m++) {
            uint32_t terms;
            if (fill) indptr[m][i] = nnz[m];
            NEED(4);
            terms = le32(data + pos);
            pos += 4;
            NEED((size_t)terms * 36);
            for (uint32_t t = 0; t < terms; t++, pos += 36) {
                uint32_t wire = le32(data + pos);
                fr_t v;
                if (wire >= nwires) {
                    *where = pos;
                    return R1CS_BAD_WIRE;
                }
                memcpy(v.l, data + pos + 4, 32);
                if (limbs_geq(v.l, r, 4)) {
                    *where = pos + 4;
                    return R1CS_BAD_COEFF;
                }
                if (fill) {
                    col[m][nnz[m]] = wire;
                    fr_to_mont(&coeff[m][nnz[m]], &v);
                }
                nnz[m]++;
            }
        }
    }
    if (fill)
        for (int m = 0; m < 3; m++) indptr[m][ncons] = nnz[m];
    *where = pos;
    return 0;
}
