/* SPDX-License-Identifier: Apache-2.0 */
/* R1CS evaluation on the GPU (launched by r1cs/gpu.py): a, b, c =
 * A w, B w, C w from the CSR matrices and the witness, as the CPU's
 * native/r1cs.c computes them, and the satisfaction check a b = c.
 *
 *   r1cs_matvec        one row per thread: out[i] = sum_k coeff_k w[col_k],
 *                      coefficients one per entry or from a table (ids);
 *                      a coefficient equal to one costs an addition only
 *   r1cs_unsatisfied   the first i < n with a[i] b[i] != c[i] (atomicMin)
 *   r1cs_take          a query's scalars gathered from the witness
 *   r1cs_put           scalars scattered to rows (the inverse of a row map)
 *
 * Same Montgomery layout as the host, so results match bit for bit. */
#include "porep_prover/field.cuh"

typedef long long i64;

/* out[i] for i < rows; coeff_id null: coeff has one entry per nonzero. */
extern "C" __global__ void r1cs_matvec(const i64 *indptr, const u32 *col, const fr_t *coeff, const u32 *coeff_id,
                                       u32 rows, const fr_t *w, fr_t *out)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += gridDim.x * blockDim.x) {
        fr_t acc, t;
#pragma unroll
        for (int j = 0; j < 8; j++) acc.v[j] = 0;
        for (i64 k = indptr[i]; k < indptr[i + 1]; k++) {
            const fr_t c = coeff[coeff_id ? (i64)coeff_id[k] : k];
            const fr_t x = w[col[k]];
            bool one = true;
#pragma unroll
            for (int j = 0; j < 8; j++) one &= c.v[j] == mont_one<8>()[j];
            if (one) {
                mont_add<8>(acc, acc, x);
            } else {
                mont_mul<8>(t, c, x);
                mont_add<8>(acc, acc, t);
            }
        }
        out[i] = acc;
    }
}

/* *first = min(*first, i) for every i < n with a[i] b[i] != c[i]. */
extern "C" __global__ void r1cs_unsatisfied(const fr_t *a, const fr_t *b, const fr_t *c, u32 n, u32 *first)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        fr_t t;
        mont_mul<8>(t, a[i], b[i]);
        if (!mont_eq<8>(t, c[i])) atomicMin(first, i);
    }
}

/* out[i] = w[idx[i]] for i < n; *first = min(*first, i) for every idx[i] >= wn (nothing read there). */
extern "C" __global__ void r1cs_take(const fr_t *w, u32 wn, const u32 *idx, u32 n, fr_t *out, u32 *first)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u32 j = idx[i];
        if (j < wn)
            out[i] = w[j];
        else
            atomicMin(first, i);
    }
}

/* out[rows[i]] = v[i] for i < n where rows[i] != NO_ROW (out zeroed before);
 * *first = min(*first, i) for every rows[i] >= on that is not NO_ROW. */
extern "C" __global__ void r1cs_put(const fr_t *v, const u32 *rows, u32 n, fr_t *out, u32 on, u32 *first)
{
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        u32 j = rows[i];
        if (j < on)
            out[j] = v[i];
        else if (j != 0xffffffffu)
            atomicMin(first, i);
    }
}
