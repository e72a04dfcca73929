/* SPDX-License-Identifier: Apache-2.0 */
/* Poseidon over BLS12-381's Fr as neptune defines it (Filecoin's tree and
 * column hashes): x^5 S-box, width t = arity + 1, 8 full rounds and 55 / 56 / 57 / 57
 * partial rounds for arity 2 / 4 / 8 / 11, round constants from the Grain LFSR
 * (field 1, S-box 1, 255 bits, t, RF, RP), the Cauchy matrix 1/(i + t + j),
 * state[0] = the Merkle domain tag 2^arity - 1, the digest state[1].
 *
 * Two schedules give the same permutation: the plain one (add constants, S-box,
 * MDS in every round) and the sparse one (partial rounds' constants folded to one
 * element and their MDS factored into matrices with a dense first row and column),
 * which is what hashing uses.
 *
 * Elements in and out are 32-byte canonical little-endian ("domain" form). */
#ifndef POREP_POSEIDON_H
#define POREP_POSEIDON_H

#include <stddef.h>
#include <stdint.h>

#include "field.h"

#define POSEIDON_MAX_WIDTH 12

/* Builds the constants of arities 2, 4, 8 and 11 once; 0 on success, -1 when
 * memory ran out. Call before any other function here (not thread-safe). */
int poseidon_init(void);

/* 1 for the arities built: 2, 4, 8, 11. */
int poseidon_arity_supported(int arity);

/* Round constants of an arity, (RF + RP) * t canonical elements; returns their count. */
size_t poseidon_round_constants(int arity, uint8_t *out, size_t capacity);

/* Hash of `arity` Montgomery elements (state[1..]) with the Merkle tag. */
void poseidon_hash_mont(int arity, const fr_t *in, fr_t *out, int plain);

/* out[i] = hash(in[arity * i .. arity * i + arity]) for i < n (OpenMP). Returns -1,
 * or the index of the first input element that is not below r (nothing is then
 * written past it in a defined way). */
int64_t poseidon_hash_batch(int arity, const uint8_t *in, size_t n, uint8_t *out, int plain);

/* Canonical bytes <-> Montgomery; fr_from_bytes returns 0 when the value is not below r. */
int fr_from_bytes(fr_t *r, const uint8_t in[32]);
void fr_to_bytes(uint8_t out[32], const fr_t *a);

/* out[i] = a[i] + b[i] mod r (Filecoin's encoding of a replica node); -1, or
 * the first index whose a or b is not below r. */
int64_t fr_add_batch(const uint8_t *a, const uint8_t *b, size_t n, uint8_t *out);

#endif
