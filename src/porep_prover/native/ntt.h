/* SPDX-License-Identifier: Apache-2.0 */
/* CPU NTT over Fr and the Groth16 H polynomial. Buffers are Fr in Montgomery
 * form; see ntt.c for the transform conventions. Return values: 0 on success,
 * -1 when memory runs out, -2 for a size above 2^32. */
#ifndef POREP_NTT_H
#define POREP_NTT_H

#include "field.h"

/* The primitive 2^log_n-th root of unity 7^((r-1)/2^log_n). */
void fr_root_of_unity(fr_t *r, int log_n);

/* out[i] = start * step^i for i < n (parallel chunks). */
void fr_powers(fr_t *out, size_t n, const fr_t *start, const fr_t *step, int nthreads);

/* In place, n = 2^log_n elements. */
int fr_ntt(fr_t *data, int log_n, int inverse, int coset, int nthreads);

/* Bellman-flavour quotient: a, b, c hold A.w, B.w, C.w evaluated on the
 * domain (n = 2^log_n, zero padded); afterwards a holds the coefficients of
 * H = (A B - C) / Z, whose first n - 1 entries are the h-query scalars.
 * b and c are clobbered. */
int fr_h_poly_bellman(fr_t *a, fr_t *b, fr_t *c, int log_n, int nthreads);

#endif
