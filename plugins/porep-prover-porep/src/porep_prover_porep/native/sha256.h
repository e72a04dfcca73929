/* SPDX-License-Identifier: Apache-2.0 */
/* SHA-256 (FIPS 180-4) as Filecoin uses it: whole digests, and digests truncated
 * to Fr ("fr32": the top two bits of the last byte cleared, so the 32 bytes read
 * little-endian are below 2^254 < r).
 *
 * The compression runs on the CPU's SHA extensions when it has them, else in
 * portable C; sha256_use_portable forces the portable one (tests compare them). */
#ifndef POREP_SHA256_H
#define POREP_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_FR32_MASK 0x3f

extern const uint32_t SHA256_IV[8];

/* state <- compress(state, blocks), `count` consecutive 64-byte blocks. */
void sha256_blocks(uint32_t state[8], const uint8_t *blocks, size_t count);

/* Whole digest of `len` bytes. */
void sha256_digest(const uint8_t *msg, size_t len, uint8_t out[32]);

/* Finish a message whose `done` leading bytes are already in `state` (a multiple
 * of 64) with `len` more bytes at `tail`; writes the big-endian digest. */
void sha256_finish(uint32_t state[8], uint64_t done, const uint8_t *tail, size_t len, uint8_t out[32]);

/* out[i] = fr32(sha256(in[64 i .. 64 i + 64])) for i < n: one binary Merkle row
 * (OpenMP over i). */
void sha256_fr32_pairs(const uint8_t *in, size_t n, uint8_t *out);

/* 1: the SHA extensions are in use; 0: the portable compression. */
int sha256_accelerated(void);
void sha256_use_portable(int portable);

#endif
