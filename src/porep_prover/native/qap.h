/* SPDX-License-Identifier: Apache-2.0 */
/* The QAP at a point tau, for parameter generation: the column polynomials
 * of an R1CS evaluated from the Lagrange basis at tau, and the scalars the
 * Groth16 queries are made of (bellman's layout). Every loop runs on all
 * nthreads; callers validate the matrices (indptr monotone, col < ncols). */
#ifndef POREP_QAP_H
#define POREP_QAP_H

#include <stddef.h>
#include <stdint.h>

#include "field.h"

/* out[j] = sum_i M[i][j] * lagrange[i] for every variable j < ncols (M CSR:
 * indptr over rows < 2^32, col, coefficients one an entry or, with coeff_id,
 * from the table coeff). The entries are distributed into buckets of
 * adjacent columns by row ranges in parallel, then each bucket's columns are
 * summed by one thread: no serial pass over the entries. Returns 0, or -1
 * when memory runs out. */
int r1cs_eval_columns(fr_t *out, size_t ncols, const int64_t *indptr, const uint32_t *col, const fr_t *coeff,
                      const uint32_t *coeff_id, size_t rows, const fr_t *lagrange, int nthreads);

/* The queries' scalars from A_j(tau), B_j(tau), C_j(tau) (at, bt, ct; ncols
 * each) and waste = {alpha, beta, 1/gamma, 1/delta}:
 *   lin_j = beta A_j + alpha B_j + C_j
 *   ic[j] = lin_j / gamma for j < k;  l[j - k] = lin_j / delta for k <= j
 *   a: A_j for every j with a_keep[j], in order;  b: B_j likewise by b_keep.
 * a and b hold as many elements as their masks keep. Returns 0, or -1 when
 * memory runs out. */
int qap_query_scalars(fr_t *ic, fr_t *l, fr_t *a, fr_t *b, const fr_t *at, const fr_t *bt, const fr_t *ct,
                      size_t ncols, size_t k, const uint8_t *a_keep, const uint8_t *b_keep, const fr_t *waste,
                      int nthreads);

#endif
