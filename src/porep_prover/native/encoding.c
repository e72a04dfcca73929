/* SPDX-License-Identifier: Apache-2.0 */
/* The zcash BLS12-381 encodings (also used by bellperson, blst, arkworks and
 * the Filecoin parameter files), and Fr bytes.
 *
 * A coordinate is 48 bytes big-endian; an Fq2 coordinate is c1 then c0. The
 * three top bits of the first byte are flags: 0x80 compressed, 0x40 point at
 * infinity, 0x20 sign (y is the lexicographically larger root; compressed
 * only). Uncompressed: x then y (96 / 192 bytes). Compressed: x alone. The
 * point at infinity is the flags with every other bit zero. */
#include <stdlib.h>
#include <string.h>

#include "encoding.h"

/* Threads for a batch of n items: one below a few hundred points (a few
 * thousand Fr elements), where waking the pool costs more than the work
 * (each of a .zkey header's one-point checks took 8 ms on two threads in a
 * fresh process on a 2-vCPU VM, 0.01 ms on one). */
#define POINT_GRAIN 256
#define FR_GRAIN 4096
static int threads_for(size_t n, size_t grain, int nthreads) { return n < grain ? 1 : nthreads; }
#define POINT_THREADS threads_for(n, POINT_GRAIN, nthreads) /* in the batch functions below */

#define FLAG_COMPRESSED 0x80
#define FLAG_INFINITY 0x40
#define FLAG_SIGN 0x20

static void fq_write_be(uint8_t *out, const fq_t *a)
{
    fq_t c;
    fq_from_mont(&c, a);
    for (int i = 0; i < 6; i++)
        for (int b = 0; b < 8; b++) out[(5 - i) * 8 + (7 - b)] = (uint8_t)(c.l[i] >> (8 * b));
}

/* Reads a canonical big-endian coordinate (flag bits masked by the caller). */
static int fq_read_be(fq_t *r, const uint8_t *in, uint8_t first_mask)
{
    static const uint64_t p[6] = FQ_MODULUS;
    fq_t c;
    for (int i = 0; i < 6; i++) {
        uint64_t limb = 0;
        for (int b = 0; b < 8; b++) {
            uint8_t byte = in[(5 - i) * 8 + (7 - b)];
            if (i == 5 && b == 7) byte &= first_mask;
            limb |= (uint64_t)byte << (8 * b);
        }
        c.l[i] = limb;
    }
    if (limbs_geq(c.l, p, 6)) return ENC_NOT_CANONICAL;
    fq_to_mont(r, &c);
    return ENC_OK;
}

static int rest_is_zero(const uint8_t *in, size_t len)
{
    uint8_t acc = in[0] & 0x1f;
    for (size_t i = 1; i < len; i++) acc |= in[i];
    return acc == 0;
}

/* ------------------------------------------------------------------ G1 */

void g1_encode(uint8_t *out, const g1_affine_t *p, int compressed)
{
    size_t len = compressed ? G1_COMPRESSED : G1_UNCOMPRESSED;
    if (g1_affine_is_inf(p)) {
        memset(out, 0, len);
        out[0] = FLAG_INFINITY | (compressed ? FLAG_COMPRESSED : 0);
        return;
    }
    fq_write_be(out, &p->x);
    if (compressed) {
        out[0] |= FLAG_COMPRESSED | (fq_is_lexicographically_largest(&p->y) ? FLAG_SIGN : 0);
    } else {
        fq_write_be(out + 48, &p->y);
    }
}

int g1_decode(g1_affine_t *p, const uint8_t *in, int compressed, int check_subgroup)
{
    uint8_t flags = in[0] & 0xe0;
    size_t len = compressed ? G1_COMPRESSED : G1_UNCOMPRESSED;
    int rc;
    if (!!(flags & FLAG_COMPRESSED) != !!compressed) return ENC_BAD_FLAGS;
    if (flags & FLAG_INFINITY) {
        if ((flags & FLAG_SIGN) || !rest_is_zero(in, len)) return ENC_BAD_FLAGS;
        g1_affine_set_inf(p);
        return ENC_OK;
    }
    if (!compressed && (flags & FLAG_SIGN)) return ENC_BAD_FLAGS;
    if ((rc = fq_read_be(&p->x, in, 0x1f))) return rc;
    if (compressed) {
        fq_t rhs;
        static const fq_t b = {G1_B};
        fq_sqr(&rhs, &p->x);
        fq_mul(&rhs, &rhs, &p->x);
        fq_add(&rhs, &rhs, &b);
        if (!fq_sqrt(&p->y, &rhs)) return ENC_NOT_ON_CURVE;
        if (fq_is_lexicographically_largest(&p->y) != !!(flags & FLAG_SIGN)) fq_neg(&p->y, &p->y);
    } else {
        if ((rc = fq_read_be(&p->y, in + 48, 0xff))) return rc;
        if (!g1_affine_on_curve(p)) return ENC_NOT_ON_CURVE;
    }
    if (check_subgroup && !g1_affine_in_subgroup(p)) return ENC_NOT_IN_SUBGROUP;
    return ENC_OK;
}

/* ------------------------------------------------------------------ G2 */

static void fq2_write_be(uint8_t *out, const fq2_t *a)
{
    fq_write_be(out, &a->c1);
    fq_write_be(out + 48, &a->c0);
}

static int fq2_read_be(fq2_t *r, const uint8_t *in, uint8_t first_mask)
{
    int rc = fq_read_be(&r->c1, in, first_mask);
    return rc ? rc : fq_read_be(&r->c0, in + 48, 0xff);
}

void g2_encode(uint8_t *out, const g2_affine_t *p, int compressed)
{
    size_t len = compressed ? G2_COMPRESSED : G2_UNCOMPRESSED;
    if (g2_affine_is_inf(p)) {
        memset(out, 0, len);
        out[0] = FLAG_INFINITY | (compressed ? FLAG_COMPRESSED : 0);
        return;
    }
    fq2_write_be(out, &p->x);
    if (compressed) {
        out[0] |= FLAG_COMPRESSED | (fq2_is_lexicographically_largest(&p->y) ? FLAG_SIGN : 0);
    } else {
        fq2_write_be(out + 96, &p->y);
    }
}

int g2_decode(g2_affine_t *p, const uint8_t *in, int compressed, int check_subgroup)
{
    uint8_t flags = in[0] & 0xe0;
    size_t len = compressed ? G2_COMPRESSED : G2_UNCOMPRESSED;
    int rc;
    if (!!(flags & FLAG_COMPRESSED) != !!compressed) return ENC_BAD_FLAGS;
    if (flags & FLAG_INFINITY) {
        if ((flags & FLAG_SIGN) || !rest_is_zero(in, len)) return ENC_BAD_FLAGS;
        g2_affine_set_inf(p);
        return ENC_OK;
    }
    if (!compressed && (flags & FLAG_SIGN)) return ENC_BAD_FLAGS;
    if ((rc = fq2_read_be(&p->x, in, 0x1f))) return rc;
    if (compressed) {
        fq2_t rhs;
        static const fq2_t b = G2_B;
        fq2_sqr(&rhs, &p->x);
        fq2_mul(&rhs, &rhs, &p->x);
        fq2_add(&rhs, &rhs, &b);
        if (!fq2_sqrt(&p->y, &rhs)) return ENC_NOT_ON_CURVE;
        if (fq2_is_lexicographically_largest(&p->y) != !!(flags & FLAG_SIGN)) fq2_neg(&p->y, &p->y);
    } else {
        if ((rc = fq2_read_be(&p->y, in + 96, 0xff))) return rc;
        if (!g2_affine_on_curve(p)) return ENC_NOT_ON_CURVE;
    }
    if (check_subgroup && !g2_affine_in_subgroup(p)) return ENC_NOT_IN_SUBGROUP;
    return ENC_OK;
}

/* ------------------------------------------------------------------ arrays */

/* Coordinates below p: arrays mapped from files (e.g. a .zkey) can hold anything. */
static int fq_canonical(const fq_t *a)
{
    static const uint64_t p[6] = FQ_MODULUS;
    return !limbs_geq(a->l, p, 6);
}

static int g1_affine_canonical(const g1_affine_t *a) { return fq_canonical(&a->x) && fq_canonical(&a->y); }

static int g2_affine_canonical(const g2_affine_t *a)
{
    return fq_canonical(&a->x.c0) && fq_canonical(&a->x.c1) && fq_canonical(&a->y.c0) && fq_canonical(&a->y.c1);
}

/* Batch forms: element i at in + i * stride. The lowest failing index wins so
 * the error a caller reports does not depend on thread timing. */
#define DEFINE_BATCH(G, SIZE_C, SIZE_U)                                                                     \
    void G##_encode_batch(uint8_t *out, const G##_affine_t *p, size_t n, int compressed, int nthreads)     \
    {                                                                                                       \
        size_t len = compressed ? SIZE_C : SIZE_U;                                                          \
        _Pragma("omp parallel for num_threads(POINT_THREADS) schedule(static)")                             \
        for (size_t i = 0; i < n; i++) G##_encode(out + i * len, &p[i], compressed);                        \
    }                                                                                                       \
    int G##_decode_batch(G##_affine_t *p, const uint8_t *in, size_t n, int compressed, int check_subgroup, \
                         int nthreads, size_t *bad_index)                                                   \
    {                                                                                                       \
        size_t len = compressed ? SIZE_C : SIZE_U, first = n;                                               \
        _Pragma("omp parallel for num_threads(POINT_THREADS) schedule(dynamic, 256) reduction(min : first)")\
        for (size_t i = 0; i < n; i++) {                                                                    \
            if (i > first) continue;                                                                        \
            if (G##_decode(&p[i], in + i * len, compressed, check_subgroup) != ENC_OK) first = i;           \
        }                                                                                                   \
        if (first == n) return ENC_OK;                                                                      \
        *bad_index = first;                                                                                 \
        return G##_decode(&p[first], in + first * len, compressed, check_subgroup);                         \
    }                                                                                                       \
    size_t G##_first_not_in_subgroup(const G##_affine_t *p, size_t n, int nthreads)                         \
    {                                                                                                       \
        size_t first = n;                                                                                   \
        _Pragma("omp parallel for num_threads(POINT_THREADS) schedule(dynamic, 256) reduction(min : first)")\
        for (size_t i = 0; i < n; i++)                                                                      \
            if (i < first && (!G##_affine_canonical(&p[i]) || !G##_affine_in_subgroup(&p[i]))) first = i;   \
        return first;                                                                                       \
    }                                                                                                       \
    size_t G##_first_not_on_curve(const G##_affine_t *p, size_t n, int nthreads)                            \
    {                                                                                                       \
        size_t first = n;                                                                                   \
        _Pragma("omp parallel for num_threads(POINT_THREADS) schedule(static) reduction(min : first)")      \
        for (size_t i = 0; i < n; i++)                                                                      \
            if (i < first && (!G##_affine_canonical(&p[i]) || !G##_affine_on_curve(&p[i]))) first = i;      \
        return first;                                                                                       \
    }

DEFINE_BATCH(g1, G1_COMPRESSED, G1_UNCOMPRESSED)
DEFINE_BATCH(g2, G2_COMPRESSED, G2_UNCOMPRESSED)

/* ------------------------------------------------------------------ Fr */

void fr_encode_batch(uint8_t *out, const fr_t *a, size_t n, int nthreads)
{
#pragma omp parallel for num_threads(threads_for(n, FR_GRAIN, nthreads)) schedule(static)
    for (size_t i = 0; i < n; i++) {
        fr_t c;
        fr_from_mont(&c, &a[i]);
        memcpy(out + 32 * i, c.l, 32); /* little-endian hosts: limbs are the bytes */
    }
}

size_t fr_decode_batch(fr_t *a, const uint8_t *in, size_t n, int nthreads)
{
    static const uint64_t r[4] = FR_MODULUS;
    size_t first = n;
#pragma omp parallel for num_threads(threads_for(n, FR_GRAIN, nthreads)) schedule(static) reduction(min : first)
    for (size_t i = 0; i < n; i++) {
        fr_t c;
        memcpy(c.l, in + 32 * i, 32);
        if (limbs_geq(c.l, r, 4)) {
            if (i < first) first = i;
            continue;
        }
        fr_to_mont(&a[i], &c);
    }
    return first;
}

void fr_to_mont_batch(fr_t *a, size_t n, int nthreads)
{
#pragma omp parallel for num_threads(threads_for(n, FR_GRAIN, nthreads)) schedule(static)
    for (size_t i = 0; i < n; i++) fr_to_mont(&a[i], &a[i]);
}

void fr_from_mont_batch(fr_t *a, size_t n, int nthreads)
{
#pragma omp parallel for num_threads(threads_for(n, FR_GRAIN, nthreads)) schedule(static)
    for (size_t i = 0; i < n; i++) fr_from_mont(&a[i], &a[i]);
}
