/* SPDX-License-Identifier: Apache-2.0 */
/* CPU NTT over Fr and the Groth16 H polynomial. Buffers are Fr in Montgomery
 * form; see ntt.c for the transform conventions. Return values: 0 on success,
 * -1 when memory runs out, -2 for a size above 2^32. */
#ifndef POREP_NTT_H
#define POREP_NTT_H

#include "field.h"

/* The primitive 2^log_n-th roots of unity 7^((r-1)/2^log_n) (bellman,
 * arkworks) and 5^((r-1)/2^log_n) (snarkjs). */
void fr_root_of_unity(fr_t *r, int log_n);
void fr_root_of_unity_snarkjs(fr_t *r, int log_n);

/* In place, n = 2^log_n elements, over the root omega (a primitive n-th root):
 * forward X_k = sum_j x_j omega^(jk); inverse the exact inverse. With shift,
 * forward evaluates on shift <omega> (x_j scaled by shift^j first) and
 * inverse undoes it. */
int fr_ntt_ex(fr_t *data, int log_n, const fr_t *omega, int inverse, const fr_t *shift, int nthreads);

/* out[i] = start * step^i for i < n (parallel chunks). */
void fr_powers(fr_t *out, size_t n, const fr_t *start, const fr_t *step, int nthreads);

/* In place, n = 2^log_n elements. */
int fr_ntt(fr_t *data, int log_n, int inverse, int coset, int nthreads);

/* The calling thread's stop flag (its address, NULL for none): the H
 * polynomials read it between their transforms, without a lock, and return
 * NTT_STOPPED once it is set (a clobbered, its result not to be used). */
#define NTT_STOPPED (-3)
void ntt_stop_on(const volatile int32_t *flag);
int ntt_stopped(void);
const volatile int32_t *ntt_stop_flag(void);   /* the calling thread's, for a team's threads to read */

/* Bellman-flavour quotient: a, b, c hold A.w, B.w, C.w evaluated on the
 * domain (n = 2^log_n, zero padded); afterwards a holds the coefficients of
 * H = (A B - C) / Z, whose first n - 1 entries are the h-query scalars.
 * b and c are clobbered. */
int fr_h_poly_bellman(fr_t *a, fr_t *b, fr_t *c, int log_n, int nthreads);

/* snarkjs-flavour quotient: a, b, c hold A.w, B.w, C.w on snarkjs's domain
 * (5-based roots); afterwards a[j] = (A B - C)(omega_2n^(2j+1)), the values
 * on the odd coset that pair with the .zkey H section. b, c are clobbered. */
int fr_h_poly_snarkjs(fr_t *a, fr_t *b, fr_t *c, int log_n, int nthreads);

/* AVX-512 IFMA versions (ntt_f52.c), same results; -2 where unavailable. The
 * entry points above use them when ntt_simd says so and n >= 8. */
int fr_simd_available(void);
int ntt_simd(int enable); /* 1/0: turn on/off process-wide (if available); -1: query */
int fr_ntt_simd(fr_t *data, int log_n, const fr_t *omega, int inverse, const fr_t *shift, int nthreads);
int fr_h_poly_simd(fr_t *a, fr_t *b, fr_t *c, int log_n, const fr_t *omega, const fr_t *shift, int bellman,
                   int nthreads);

#endif
