/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "qap.h"

/* One matrix entry on its way to its column's sum. */
typedef struct {
    uint32_t col, row;
    uint64_t coeff; /* index into the coefficients (the table's, when tabled) */
} qap_entry_t;

/* The first row whose entries start at or after nnz_target (indptr is monotone). */
static size_t row_at(const int64_t *indptr, size_t rows, int64_t nnz_target)
{
    size_t lo = 0, hi = rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (indptr[mid] < nnz_target) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Bucket b holds columns [b << shift, (b + 1) << shift): small enough that a
 * bucket's sums stay in cache, few enough that the per-part counts do. */
static int bucket_shift(size_t ncols)
{
    int shift = 10;
    while ((ncols >> shift) >= ((size_t)1 << 16)) shift++;
    return shift;
}

int r1cs_eval_columns(fr_t *out, size_t ncols, const int64_t *indptr, const uint32_t *col, const fr_t *coeff,
                      const uint32_t *coeff_id, size_t rows, const fr_t *lagrange, int nthreads)
{
    int parts = nthreads > 0 ? nthreads : 1, shift = bucket_shift(ncols);
    size_t nb = (ncols >> shift) + 1, nnz = (size_t)indptr[rows];
    size_t *count = calloc((size_t)parts * nb, sizeof(size_t)), *start = malloc((nb + 1) * sizeof(size_t));
    size_t *row_lo = malloc(((size_t)parts + 1) * sizeof(size_t));
    qap_entry_t *entries = malloc((nnz ? nnz : 1) * sizeof(qap_entry_t));
    if (!count || !start || !row_lo || !entries) {
        free(count);
        free(start);
        free(row_lo);
        free(entries);
        return -1;
    }
    for (int p = 0; p <= parts; p++) row_lo[p] = row_at(indptr, rows, (int64_t)(nnz * (size_t)p / (size_t)parts));
    row_lo[parts] = rows;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        size_t *mine = count + (size_t)p * nb;
        for (int64_t e = indptr[row_lo[p]]; e < indptr[row_lo[p + 1]]; e++) mine[col[e] >> shift]++;
    }
    /* count[p][b] becomes where part p writes its first entry of bucket b */
    start[0] = 0;
    for (size_t b = 0; b < nb; b++) {
        size_t at = start[b];
        for (int p = 0; p < parts; p++) {
            size_t c = count[(size_t)p * nb + b];
            count[(size_t)p * nb + b] = at;
            at += c;
        }
        start[b + 1] = at;
    }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; p++) {
        size_t *next = count + (size_t)p * nb;
        for (size_t i = row_lo[p]; i < row_lo[p + 1]; i++)
            for (int64_t e = indptr[i]; e < indptr[i + 1]; e++) {
                qap_entry_t *slot = &entries[next[col[e] >> shift]++];
                slot->col = col[e];
                slot->row = (uint32_t)i;
                slot->coeff = coeff_id ? coeff_id[e] : (uint64_t)e;
            }
    }
    memset(out, 0, ncols * sizeof(fr_t));
#pragma omp parallel for num_threads(parts) schedule(dynamic, 1)
    for (size_t b = 0; b < nb; b++) {
        fr_t t;
        for (size_t e = start[b]; e < start[b + 1]; e++) {
            const qap_entry_t *x = &entries[e];
            fr_mul(&t, &coeff[x->coeff], &lagrange[x->row]);
            fr_add(&out[x->col], &out[x->col], &t);
        }
    }
    free(count);
    free(start);
    free(row_lo);
    free(entries);
    return 0;
}

#define QAP_CHUNK ((size_t)1 << 16) /* variables a task: the masks' counts are made a chunk at a time */

int qap_query_scalars(fr_t *ic, fr_t *l, fr_t *a, fr_t *b, const fr_t *at, const fr_t *bt, const fr_t *ct,
                      size_t ncols, size_t k, const uint8_t *a_keep, const uint8_t *b_keep, const fr_t *waste,
                      int nthreads)
{
    size_t chunks = (ncols + QAP_CHUNK - 1) / QAP_CHUNK;
    size_t *a_at = malloc((chunks + 1) * sizeof(size_t)), *b_at = malloc((chunks + 1) * sizeof(size_t));
    const fr_t *alpha = &waste[0], *beta = &waste[1], *gamma_inv = &waste[2], *delta_inv = &waste[3];
    if (!a_at || !b_at) {
        free(a_at);
        free(b_at);
        return -1;
    }
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * QAP_CHUNK, hi = lo + QAP_CHUNK < ncols ? lo + QAP_CHUNK : ncols, na = 0, nb = 0;
        for (size_t j = lo; j < hi; j++) {
            na += a_keep[j] != 0;
            nb += b_keep[j] != 0;
        }
        a_at[c + 1] = na;
        b_at[c + 1] = nb;
    }
    a_at[0] = b_at[0] = 0;
    for (size_t c = 0; c < chunks; c++) {
        a_at[c + 1] += a_at[c];
        b_at[c + 1] += b_at[c];
    }
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * QAP_CHUNK, hi = lo + QAP_CHUNK < ncols ? lo + QAP_CHUNK : ncols;
        size_t ia = a_at[c], ib = b_at[c];
        for (size_t j = lo; j < hi; j++) {
            fr_t lin, t;
            fr_mul(&lin, &at[j], beta);
            fr_mul(&t, &bt[j], alpha);
            fr_add(&lin, &lin, &t);
            fr_add(&lin, &lin, &ct[j]);
            if (j < k) fr_mul(&ic[j], &lin, gamma_inv);
            else fr_mul(&l[j - k], &lin, delta_inv);
            if (a_keep[j]) a[ia++] = at[j];
            if (b_keep[j]) b[ib++] = bt[j];
        }
    }
    free(a_at);
    free(b_at);
    return 0;
}
