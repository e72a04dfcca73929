/* SPDX-License-Identifier: Apache-2.0 */
/* Point and scalar encodings; see encoding.c for the byte formats. */
#ifndef POREP_ENCODING_H
#define POREP_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "ec.h"

#define G1_COMPRESSED 48
#define G1_UNCOMPRESSED 96
#define G2_COMPRESSED 96
#define G2_UNCOMPRESSED 192

enum {
    ENC_OK = 0,
    ENC_BAD_FLAGS = 1,         /* flag bits inconsistent with the form or the payload */
    ENC_NOT_CANONICAL = 2,     /* a coordinate is >= p */
    ENC_NOT_ON_CURVE = 3,      /* (x, y) off the curve, or no y for a compressed x */
    ENC_NOT_IN_SUBGROUP = 4,   /* on the curve but outside the prime-order subgroup */
};

void g1_encode(uint8_t *out, const g1_affine_t *p, int compressed);
void g2_encode(uint8_t *out, const g2_affine_t *p, int compressed);
int g1_decode(g1_affine_t *p, const uint8_t *in, int compressed, int check_subgroup);
int g2_decode(g2_affine_t *p, const uint8_t *in, int compressed, int check_subgroup);

void g1_encode_batch(uint8_t *out, const g1_affine_t *p, size_t n, int compressed, int nthreads);
void g2_encode_batch(uint8_t *out, const g2_affine_t *p, size_t n, int compressed, int nthreads);
/* Return ENC_OK, or the error of the lowest failing index (stored in *bad_index). */
int g1_decode_batch(g1_affine_t *p, const uint8_t *in, size_t n, int compressed, int check_subgroup,
                    int nthreads, size_t *bad_index);
int g2_decode_batch(g2_affine_t *p, const uint8_t *in, size_t n, int compressed, int check_subgroup,
                    int nthreads, size_t *bad_index);
/* Lowest index failing the check (coordinates >= p fail both), or n. */
size_t g1_first_not_in_subgroup(const g1_affine_t *p, size_t n, int nthreads);
size_t g2_first_not_in_subgroup(const g2_affine_t *p, size_t n, int nthreads);
size_t g1_first_not_on_curve(const g1_affine_t *p, size_t n, int nthreads);
size_t g2_first_not_on_curve(const g2_affine_t *p, size_t n, int nthreads);

/* Fr as 32 bytes little-endian, canonical (< r). decode returns the lowest
 * non-canonical index, or n. */
void fr_encode_batch(uint8_t *out, const fr_t *a, size_t n, int nthreads);
size_t fr_decode_batch(fr_t *a, const uint8_t *in, size_t n, int nthreads);
void fr_to_mont_batch(fr_t *a, size_t n, int nthreads);
void fr_from_mont_batch(fr_t *a, size_t n, int nthreads);

#endif
