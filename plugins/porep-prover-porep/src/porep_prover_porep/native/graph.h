/* SPDX-License-Identifier: Apache-2.0 */
/* The SDR graph: ChaCha (rand_chacha's ChaCha8Rng is its 8-round form), BLAKE2b,
 * the bucket-sampled DRG parents, the Feistel-permuted expander parents, and the
 * parents table of every node.
 *
 * api_v11: 1 for Filecoin's API version 1.1 (the predecessor is the first DRG
 * parent; expander indices not truncated to 32 bits), 0 for version 1.0. */
#ifndef POREP_GRAPH_H
#define POREP_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#define DRG_DEGREE 6
#define EXP_DEGREE 8
#define PARENTS (DRG_DEGREE + EXP_DEGREE)

/* One ChaCha block: the state is "expand 32-byte k", key[8], words12_15[4];
 * `rounds` of 8, 12 or 20. out[16] is the keystream block as words. */
void chacha_block(const uint32_t key[8], const uint32_t words12_15[4], int rounds, uint32_t out[16]);

/* BLAKE2b-512 of a message of at most 128 bytes (one block, no key). */
void blake2b_512_short(const uint8_t *msg, size_t len, uint8_t out[64]);

/* Feistel permutation of `index` within [0, num_elements) under keys[4]. */
uint64_t feistel_permute(uint64_t num_elements, uint64_t index, const uint64_t keys[4]);

/* The DRG_DEGREE base parents of `node` in a graph of `nodes` nodes. */
void drg_parents(const uint8_t seed[28], uint32_t node, int api_v11, uint32_t out[DRG_DEGREE]);

/* The EXP_DEGREE expander parents of `node`. */
void expander_parents(const uint64_t keys[4], uint64_t nodes, uint32_t node, int api_v11, uint32_t out[EXP_DEGREE]);

/* out[PARENTS * i ..] = base then expander parents of node i, for i < nodes (OpenMP). */
void parents_table(const uint8_t seed[28], const uint64_t keys[4], uint64_t nodes, int api_v11, uint32_t *out);

#endif
