/* SPDX-License-Identifier: Apache-2.0 */
#include "graph.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ ChaCha */

#define ROTL32(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#define QUARTER(a, b, c, d)                          \
    do {                                             \
        a += b; d ^= a; d = ROTL32(d, 16);           \
        c += d; b ^= c; b = ROTL32(b, 12);           \
        a += b; d ^= a; d = ROTL32(d, 8);            \
        c += d; b ^= c; b = ROTL32(b, 7);            \
    } while (0)

void chacha_block(const uint32_t key[8], const uint32_t words12_15[4], int rounds, uint32_t out[16])
{
    uint32_t in[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    memcpy(in + 4, key, 32);
    memcpy(in + 12, words12_15, 16);
    uint32_t x[16];
    memcpy(x, in, sizeof x);
    for (int i = 0; i < rounds; i += 2) {
        QUARTER(x[0], x[4], x[8], x[12]);
        QUARTER(x[1], x[5], x[9], x[13]);
        QUARTER(x[2], x[6], x[10], x[14]);
        QUARTER(x[3], x[7], x[11], x[15]);
        QUARTER(x[0], x[5], x[10], x[15]);
        QUARTER(x[1], x[6], x[11], x[12]);
        QUARTER(x[2], x[7], x[8], x[13]);
        QUARTER(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++) out[i] = x[i] + in[i];
}

/* rand_chacha's ChaCha8Rng: the keystream's words in order, a 64-bit block
 * counter in words 12-13 from zero, stream 0; a u64 draw is two words, low first. */
typedef struct {
    uint32_t key[8];
    uint64_t block;
    uint32_t buf[16];
    int pos;
} chacha8_rng;

static void chacha8_rng_seed(chacha8_rng *rng, const uint8_t seed[32])
{
    for (int i = 0; i < 8; i++)
        rng->key[i] = (uint32_t)seed[4 * i] | (uint32_t)seed[4 * i + 1] << 8 | (uint32_t)seed[4 * i + 2] << 16 |
                      (uint32_t)seed[4 * i + 3] << 24;
    rng->block = 0;
    rng->pos = 16;
}

static uint32_t chacha8_rng_word(chacha8_rng *rng)
{
    if (rng->pos == 16) {
        uint32_t w[4] = {(uint32_t)rng->block, (uint32_t)(rng->block >> 32), 0, 0};
        chacha_block(rng->key, w, 8, rng->buf);
        rng->block++;
        rng->pos = 0;
    }
    return rng->buf[rng->pos++];
}

static uint64_t chacha8_rng_u64(chacha8_rng *rng)
{
    uint64_t lo = chacha8_rng_word(rng);
    return lo | (uint64_t)chacha8_rng_word(rng) << 32;
}

/* ------------------------------------------------------------------ BLAKE2b */

static const uint64_t B2B_IV[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

static const uint8_t B2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

#define ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))
#define B2B_G(a, b, c, d, x, y)                       \
    do {                                              \
        a = a + b + (x); d = ROTR64(d ^ a, 32);       \
        c = c + d; b = ROTR64(b ^ c, 24);             \
        a = a + b + (y); d = ROTR64(d ^ a, 16);       \
        c = c + d; b = ROTR64(b ^ c, 63);             \
    } while (0)

/* one round: the columns, then the diagonals, each G mixing two message words */
#define B2B_ROUND(G, v, m, s)                                  \
    do {                                                       \
        G(v[0], v[4], v[8], v[12], m[(s)[0]], m[(s)[1]]);      \
        G(v[1], v[5], v[9], v[13], m[(s)[2]], m[(s)[3]]);      \
        G(v[2], v[6], v[10], v[14], m[(s)[4]], m[(s)[5]]);     \
        G(v[3], v[7], v[11], v[15], m[(s)[6]], m[(s)[7]]);     \
        G(v[0], v[5], v[10], v[15], m[(s)[8]], m[(s)[9]]);     \
        G(v[1], v[6], v[11], v[12], m[(s)[10]], m[(s)[11]]);   \
        G(v[2], v[7], v[8], v[13], m[(s)[12]], m[(s)[13]]);    \
        G(v[3], v[4], v[9], v[14], m[(s)[14]], m[(s)[15]]);    \
    } while (0)

void blake2b_512_short(const uint8_t *msg, size_t len, uint8_t out[64])
{
    uint64_t h[8], v[16], m[16];
    uint8_t block[128] = {0};
    memcpy(block, msg, len);
    memcpy(h, B2B_IV, sizeof h);
    h[0] ^= 0x01010000ULL ^ 64;   /* digest length 64, no key, fanout and depth 1 */
    for (int i = 0; i < 16; i++) {
        m[i] = 0;
        for (int j = 7; j >= 0; j--) m[i] = m[i] << 8 | block[8 * i + j];
    }
    memcpy(v, h, sizeof h);
    memcpy(v + 8, B2B_IV, sizeof B2B_IV);
    v[12] ^= (uint64_t)len;
    v[14] = ~v[14];               /* the last block */
    for (int r = 0; r < 12; r++) {
        B2B_ROUND(B2B_G, v, m, B2B_SIGMA[r]);
    }
    for (int i = 0; i < 8; i++) {
        h[i] ^= v[i] ^ v[i + 8];
        for (int j = 0; j < 8; j++) out[8 * i + j] = (uint8_t)(h[i] >> (8 * j));
    }
}

/* ------------------------------------------------------------------ Feistel */

#define FEISTEL_ROUNDS 3

static uint64_t feistel_round(uint64_t right, uint64_t key, uint64_t right_mask)
{
    uint8_t data[16], hash[64];
    for (int i = 0; i < 8; i++) {
        data[i] = (uint8_t)(right >> (56 - 8 * i));
        data[8 + i] = (uint8_t)(key >> (56 - 8 * i));
    }
    blake2b_512_short(data, 16, hash);
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) r = r << 8 | hash[i];
    return r & right_mask;
}

static uint64_t feistel_encode(uint64_t index, const uint64_t keys[4], uint64_t left_mask, uint64_t right_mask,
                               int half_bits)
{
    uint64_t left = (index & left_mask) >> half_bits, right = index & right_mask;
    for (int i = 0; i < FEISTEL_ROUNDS; i++) {
        uint64_t next_right = left ^ feistel_round(right, keys[i], right_mask);
        left = right;
        right = next_right;
    }
    return left << half_bits | right;
}

uint64_t feistel_permute(uint64_t num_elements, uint64_t index, const uint64_t keys[4])
{
    /* the fewest even number of bits covering num_elements, split in halves */
    uint64_t next_pow4 = 4;
    int log4 = 1;
    while (next_pow4 < num_elements) {
        next_pow4 *= 4;
        log4++;
    }
    uint64_t right_mask = ((uint64_t)1 << log4) - 1, left_mask = right_mask << log4;
    /* cycle-walking: the even bit count covers values past num_elements */
    uint64_t u = feistel_encode(index, keys, left_mask, right_mask, log4);
    while (u >= num_elements) u = feistel_encode(u, keys, left_mask, right_mask, log4);
    return u;
}

/* ------------------------------------------------------------------ parents */

void drg_parents(const uint8_t seed[28], uint32_t node, int api_v11, uint32_t out[DRG_DEGREE])
{
    if (node < 2) {
        memset(out, 0, DRG_DEGREE * sizeof *out);
        return;
    }
    uint8_t full[32];
    memcpy(full, seed, 28);
    for (int i = 0; i < 4; i++) full[28 + i] = (uint8_t)(node >> (8 * i));
    chacha8_rng rng;
    chacha8_rng_seed(&rng, full);
    const uint64_t m_prime = DRG_DEGREE - 1;
    const uint64_t metagraph_node = (uint64_t)node * m_prime;
    /* Filecoin computes this through f64 (exact below 2^53 metagraph nodes) */
    const uint64_t n_buckets = (uint64_t)ceil(log2((double)metagraph_node));
    uint32_t *drawn = api_v11 ? out + 1 : out;
    for (uint64_t k = 0; k < m_prime; k++) {
        uint64_t bucket = chacha8_rng_u64(&rng) % n_buckets + 1;
        uint64_t largest = metagraph_node < ((uint64_t)1 << bucket) ? metagraph_node : ((uint64_t)1 << bucket);
        uint64_t smallest = largest >> 1 > 2 ? largest >> 1 : 2;
        uint64_t distance = smallest + chacha8_rng_u64(&rng) % (largest - smallest + 1);
        uint32_t mapped = (uint32_t)((metagraph_node - distance) / m_prime);
        drawn[k] = mapped == node ? node - 1 : mapped;
    }
    out[api_v11 ? 0 : m_prime] = node - 1;
}

void expander_parents(const uint64_t keys[4], uint64_t nodes, uint32_t node, int api_v11, uint32_t out[EXP_DEGREE])
{
    const uint64_t n = nodes * EXP_DEGREE;
    for (int i = 0; i < EXP_DEGREE; i++) {
        uint64_t t = feistel_permute(n, (uint64_t)node * EXP_DEGREE + (uint64_t)i, keys);
        /* version 1.0 truncates the permuted index to 32 bits before dividing */
        out[i] = api_v11 ? (uint32_t)(t / EXP_DEGREE) : (uint32_t)t / EXP_DEGREE;
    }
}

/* Four Feistel permutations at a time on AVX2: a lane takes the next (node, i) as
 * soon as its value lands inside the domain, so the cycle-walking of one lane
 * never idles the others. */
#if defined(__x86_64__) && defined(__GNUC__)
#define EXPANDER_X4 1
#include <immintrin.h>

#define B2B_G4(a, b, c, d, x, y)                                                           \
    do {                                                                                   \
        a = _mm256_add_epi64(_mm256_add_epi64(a, b), x);                                   \
        d = _mm256_shuffle_epi32(_mm256_xor_si256(d, a), 0xB1);                            \
        c = _mm256_add_epi64(c, d);                                                        \
        b = _mm256_shuffle_epi8(_mm256_xor_si256(b, c), rot24);                            \
        a = _mm256_add_epi64(_mm256_add_epi64(a, b), y);                                   \
        d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), rot16);                            \
        c = _mm256_add_epi64(c, d);                                                        \
        b = _mm256_xor_si256(b, c);                                                        \
        b = _mm256_or_si256(_mm256_srli_epi64(b, 63), _mm256_add_epi64(b, b));             \
    } while (0)

/* the first word of BLAKE2b-512 of four 16-byte messages (words m0, m1 each) */
__attribute__((target("avx2")))
static __m256i blake2b_first_word_x4(__m256i m0, __m256i m1)
{
    const __m256i rot16 = _mm256_setr_epi8(2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9,
                                           2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9);
    const __m256i rot24 = _mm256_setr_epi8(3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10,
                                           3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10);
    const __m256i zero = _mm256_setzero_si256();
    const uint64_t h0 = B2B_IV[0] ^ 0x01010000ULL ^ 64;
    __m256i v[16], m[16];
    for (int i = 0; i < 8; i++) {
        v[i] = _mm256_set1_epi64x((long long)(i ? B2B_IV[i] : h0));
        v[8 + i] = _mm256_set1_epi64x((long long)B2B_IV[i]);
    }
    v[12] = _mm256_xor_si256(v[12], _mm256_set1_epi64x(16));
    v[14] = _mm256_xor_si256(v[14], _mm256_set1_epi64x(-1));
    for (int i = 0; i < 16; i++) m[i] = zero;
    m[0] = m0;
    m[1] = m1;
    for (int r = 0; r < 12; r++) {
        B2B_ROUND(B2B_G4, v, m, B2B_SIGMA[r]);
    }
    return _mm256_xor_si256(_mm256_set1_epi64x((long long)h0), _mm256_xor_si256(v[0], v[8]));
}

/* the expander parents of nodes [first, first + count), into table rows */
__attribute__((target("avx2")))
static void expander_rows_x4(const uint64_t keys[4], uint64_t nodes, uint64_t first, uint64_t count, int api_v11,
                             uint32_t *table)
{
    const uint64_t n = nodes * EXP_DEGREE;
    uint64_t next_pow4 = 4;
    int half = 1;
    while (next_pow4 < n) {
        next_pow4 *= 4;
        half++;
    }
    const uint64_t right_mask = ((uint64_t)1 << half) - 1, left_mask = right_mask << half;
    uint64_t next = first * EXP_DEGREE, end = (first + count) * EXP_DEGREE;
    uint64_t job[4], left[4], right[4];
    int round[4], active[4] = {0, 0, 0, 0};
    for (;;) {
        int any = 0;
        for (int l = 0; l < 4; l++) {
            if (!active[l] && next < end) {
                job[l] = next;
                left[l] = (next & left_mask) >> half;
                right[l] = next & right_mask;
                round[l] = 0;
                active[l] = 1;
                next++;
            }
            any |= active[l];
        }
        if (!any) return;
        uint64_t m0[4], m1[4], h[4];
        for (int l = 0; l < 4; l++) {
            m0[l] = active[l] ? __builtin_bswap64(right[l]) : 0;
            m1[l] = active[l] ? __builtin_bswap64(keys[round[l]]) : 0;
        }
        _mm256_storeu_si256((__m256i *)h, blake2b_first_word_x4(_mm256_loadu_si256((const __m256i *)m0),
                                                                  _mm256_loadu_si256((const __m256i *)m1)));
        for (int l = 0; l < 4; l++) {
            if (!active[l]) continue;
            uint64_t next_right = left[l] ^ (__builtin_bswap64(h[l]) & right_mask);
            left[l] = right[l];
            right[l] = next_right;
            if (++round[l] < FEISTEL_ROUNDS) continue;
            uint64_t u = left[l] << half | right[l];
            if (u < n) {
                uint64_t node = job[l] / EXP_DEGREE;
                table[PARENTS * node + DRG_DEGREE + job[l] % EXP_DEGREE] =
                    api_v11 ? (uint32_t)(u / EXP_DEGREE) : (uint32_t)u / EXP_DEGREE;
                active[l] = 0;
            } else {                  /* cycle-walking: encode the value again */
                left[l] = (u & left_mask) >> half;
                right[l] = u & right_mask;
                round[l] = 0;
            }
        }
    }
}
#endif

void parents_table(const uint8_t seed[28], const uint64_t keys[4], uint64_t nodes, int api_v11, uint32_t *out)
{
    const uint64_t chunk = 1024;
#ifdef EXPANDER_X4
    __builtin_cpu_init();
    const int x4 = __builtin_cpu_supports("avx2");
#else
    const int x4 = 0;
#endif
    #pragma omp parallel for schedule(dynamic, 1)
    for (uint64_t start = 0; start < nodes; start += chunk) {
        uint64_t stop = start + chunk < nodes ? start + chunk : nodes;
        for (uint64_t i = start; i < stop; i++) {
            drg_parents(seed, (uint32_t)i, api_v11, out + PARENTS * i);
            if (!x4) expander_parents(keys, nodes, (uint32_t)i, api_v11, out + PARENTS * i + DRG_DEGREE);
        }
#ifdef EXPANDER_X4
        if (x4) expander_rows_x4(keys, nodes, start, stop - start, api_v11, out);
#endif
    }
}
