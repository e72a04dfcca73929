/* SPDX-License-Identifier: Apache-2.0 */
/* Sparse R1CS kernels on the CPU.
 *
 * A matrix is CSR over constraints: row i holds entries [indptr[i],
 * indptr[i+1]) with variable index col[k] (inputs first, then aux) and
 * coefficient coeff[k] (Fr, Montgomery). Callers validate indptr and col
 * beforehand; these kernels trust them. */
#ifndef POREP_R1CS_H
#define POREP_R1CS_H

#include <stddef.h>
#include <stdint.h>

#include "field.h"

/* out[i] = sum_k coeff[k] * w[col[k]] for every row i < rows. */
int r1cs_matvec(fr_t *out, const int64_t *indptr, const uint32_t *col, const fr_t *coeff,
                const uint32_t *coeff_id, size_t table_len, size_t rows, const fr_t *w, int nthreads);

/* Index of the first i < n with a[i] * b[i] != c[i], or n when all hold. */
size_t r1cs_first_unsatisfied(const fr_t *a, const fr_t *b, const fr_t *c, size_t n, int nthreads);

/* lagrange[i] = L_i(tau) over the size-n = 2^log_n domain:
 * L_i(tau) = omega^i (tau^n - 1) / (n (tau - omega^i)). tau must not be a
 * root of unity of that order (returns -2 then); -1 when memory runs out. */
int fr_lagrange_at(fr_t *lagrange, int log_n, const fr_t *omega, const fr_t *tau, int nthreads);

enum { R1CS_TRUNCATED = -3, R1CS_BAD_WIRE = -4, R1CS_BAD_COEFF = -5 };

/* circom's .r1cs constraints section (data, len): ncons records of three linear
 * combinations {u32 nTerms; nTerms x (u32 wire, 32-byte LE canonical Fr)}.
 * With col == NULL: only counts the terms of A, B, C into nnz[3]. Otherwise
 * also fills CSR arrays (indptr[m] with ncons + 1 slots, col[m], coeff[m] in
 * Montgomery form). *where receives the byte offset reached (or of the error).
 * Returns 0, R1CS_TRUNCATED, R1CS_BAD_WIRE (>= nwires) or R1CS_BAD_COEFF (>= r). */
int r1cs_parse_circom(const uint8_t *data, size_t len, size_t ncons, uint32_t nwires, int64_t *nnz,
                      int64_t *const *indptr, uint32_t *const *col, fr_t *const *coeff, size_t *where);

/* Montgomery's trick: v[i] = 1/v[i] for all i (all must be non-zero). */
void fr_batch_inverse(fr_t *v, size_t n, fr_t *scratch);

#endif
