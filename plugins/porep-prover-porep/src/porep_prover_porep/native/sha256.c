/* SPDX-License-Identifier: Apache-2.0 */
#include "sha256.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

const uint32_t SHA256_IV[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void blocks_portable(uint32_t state[8], const uint8_t *p, size_t count)
{
    for (; count--; p += 64) {
        uint32_t w[64];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
            uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g; g = f; f = e; e = d + t1;
            d = c; c = b; b = a; a = t1 + t2;
        }
        state[0] += a; state[1] += b; state[2] += c; state[3] += d;
        state[4] += e; state[5] += f; state[6] += g; state[7] += h;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define SHA_NI_BUILT 1
/* The SHA extensions' round instructions, two rounds each; the state lives as
 * (ABEF, CDGH) and the message schedule is kept four words at a time. */
__attribute__((target("sha,sse4.1")))
static void blocks_shani(uint32_t state[8], const uint8_t *p, size_t count)
{
    const __m128i shuffle = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i st1 = _mm_loadu_si128((const __m128i *)&state[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);                 /* CDAB */
    st1 = _mm_shuffle_epi32(st1, 0x1B);                 /* EFGH */
    __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);         /* ABEF */
    st1 = _mm_blend_epi16(st1, tmp, 0xF0);              /* CDGH */
    for (; count--; p += 64) {
        const __m128i abef = st0, cdgh = st1;
        __m128i m[4], msg;
        for (int i = 0; i < 4; i++)
            m[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), shuffle);
        for (int r = 0; r < 16; r++) {
            __m128i w = m[r & 3];
            if (r >= 4) {   /* schedule: w[r] from w[r-4], w[r-3], w[r-2], w[r-1] (four words each) */
                __m128i t = _mm_sha256msg1_epu32(m[r & 3], m[(r + 1) & 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(m[(r + 3) & 3], m[(r + 2) & 3], 4));
                w = m[r & 3] = _mm_sha256msg2_epu32(t, m[(r + 3) & 3]);
            }
            msg = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&K[4 * r]));
            st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
            msg = _mm_shuffle_epi32(msg, 0x0E);
            st0 = _mm_sha256rnds2_epu32(st0, st1, msg);
        }
        st0 = _mm_add_epi32(st0, abef);
        st1 = _mm_add_epi32(st1, cdgh);
    }
    tmp = _mm_shuffle_epi32(st0, 0x1B);                 /* FEBA */
    st1 = _mm_shuffle_epi32(st1, 0xB1);                 /* DCHG */
    st0 = _mm_blend_epi16(tmp, st1, 0xF0);              /* DCBA */
    st1 = _mm_alignr_epi8(st1, tmp, 8);                 /* ABEF -> HGFE */
    _mm_storeu_si128((__m128i *)&state[0], st0);
    _mm_storeu_si128((__m128i *)&state[4], st1);
}
#endif

static int use_portable = -1;   /* -1: not yet decided */

static int shani_present(void)
{
#ifdef SHA_NI_BUILT
    __builtin_cpu_init();
    return __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1");
#else
    return 0;
#endif
}

int sha256_accelerated(void)
{
    if (use_portable < 0) use_portable = !shani_present();
    return !use_portable;
}

void sha256_use_portable(int portable)
{
    use_portable = portable || !shani_present();
}

void sha256_blocks(uint32_t state[8], const uint8_t *blocks, size_t count)
{
#ifdef SHA_NI_BUILT
    if (sha256_accelerated()) {
        blocks_shani(state, blocks, count);
        return;
    }
#endif
    blocks_portable(state, blocks, count);
}

void sha256_finish(uint32_t state[8], uint64_t done, const uint8_t *tail, size_t len, uint8_t out[32])
{
    size_t whole = len / 64;
    sha256_blocks(state, tail, whole);
    uint8_t last[128] = {0};
    size_t rest = len - whole * 64;
    if (rest) memcpy(last, tail + whole * 64, rest);
    last[rest] = 0x80;
    size_t pad = rest < 56 ? 64 : 128;
    uint64_t bits = (done + len) * 8;
    for (int i = 0; i < 8; i++) last[pad - 1 - i] = (uint8_t)(bits >> (8 * i));
    sha256_blocks(state, last, pad / 64);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(state[i] >> 24);
        out[4 * i + 1] = (uint8_t)(state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(state[i] >> 8);
        out[4 * i + 3] = (uint8_t)state[i];
    }
}

void sha256_digest(const uint8_t *msg, size_t len, uint8_t out[32])
{
    uint32_t state[8];
    memcpy(state, SHA256_IV, sizeof state);
    sha256_finish(state, 0, msg, len, out);
}

void sha256_fr32_pairs(const uint8_t *in, size_t n, uint8_t *out)
{
    sha256_accelerated();   /* decided before the threads start */
    #pragma omp parallel for schedule(static) if (n > 256)
    for (size_t i = 0; i < n; i++) {
        sha256_digest(in + 64 * i, 64, out + 32 * i);
        out[32 * i + 31] &= SHA256_FR32_MASK;
    }
}
