/* SPDX-License-Identifier: Apache-2.0 */
#include "poseidon.h"

#include <stdlib.h>
#include <string.h>

#define RF 8

typedef struct {
    int arity, t, rp;
    fr_t tag;
    fr_t *rc;                                       /* (RF + rp) * t, plain schedule */
    fr_t mds[POSEIDON_MAX_WIDTH][POSEIDON_MAX_WIDTH];
    /* sparse schedule */
    fr_t *rc_first;                                 /* RF/2 * t: the first full rounds */
    fr_t *rc_partial;                               /* rp: one constant a partial round */
    fr_t *rc_last;                                  /* RF/2 * t: the last full rounds */
    fr_t pre[POSEIDON_MAX_WIDTH][POSEIDON_MAX_WIDTH];  /* the last first-half round's matrix */
    fr_t *sparse;                                   /* rp * (2t - 1): a00, v[t-1], w[t-1] */
} params_t;

#define N_ARITIES 4
static params_t PARAMS[N_ARITIES];
static const int ARITIES[N_ARITIES] = {2, 4, 8, 11};
static const int PARTIAL_ROUNDS[N_ARITIES] = {55, 56, 57, 57};

static params_t *params_of(int arity)
{
    for (int i = 0; i < N_ARITIES; i++)
        if (ARITIES[i] == arity && PARAMS[i].rc) return &PARAMS[i];
    return NULL;
}

int poseidon_arity_supported(int arity) { return params_of(arity) != NULL; }

/* ------------------------------------------------------------------ bytes */

static const uint64_t R_LIMBS[4] = FR_MODULUS;

int fr_from_bytes(fr_t *r, const uint8_t in[32])
{
    fr_t a;
    for (int i = 0; i < 4; i++) {
        a.l[i] = 0;
        for (int j = 7; j >= 0; j--) a.l[i] = a.l[i] << 8 | in[8 * i + j];
    }
    if (limbs_geq(a.l, R_LIMBS, 4)) return 0;
    fr_to_mont(r, &a);
    return 1;
}

void fr_to_bytes(uint8_t out[32], const fr_t *a)
{
    fr_t c;
    fr_from_mont(&c, a);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++) out[8 * i + j] = (uint8_t)(c.l[i] >> (8 * j));
}

static void fr_from_u64(fr_t *r, uint64_t v)
{
    fr_t a = {{v, 0, 0, 0}};
    fr_to_mont(r, &a);
}

/* ------------------------------------------------------------------ Grain */

typedef struct {
    uint8_t s[160];   /* the 80 bits twice over, so a window never wraps */
    int head;
} grain_t;

static int grain_step(grain_t *g)
{
    const uint8_t *s = g->s + g->head;
    int bit = s[62] ^ s[51] ^ s[38] ^ s[23] ^ s[13] ^ s[0];
    g->s[g->head] = g->s[g->head + 80] = (uint8_t)bit;
    g->head = (g->head + 1) % 80;
    return bit;
}

static void grain_init(grain_t *g, int t, int rp)
{
    int bits[80], n = 0;
    const struct { int width; unsigned value; } fields[] = {
        {2, 1}, {4, 1}, {12, 255}, {12, (unsigned)t}, {10, RF}, {10, (unsigned)rp}, {30, 0x3fffffff},
    };
    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
        for (int i = fields[f].width - 1; i >= 0; i--) bits[n++] = (fields[f].value >> i) & 1;
    for (int i = 0; i < 80; i++) g->s[i] = g->s[i + 80] = (uint8_t)bits[i];
    g->head = 0;
    for (int i = 0; i < 160; i++) grain_step(g);
}

/* self-shrinking: of each pair of bits, the second when the first is set */
static int grain_bit(grain_t *g)
{
    for (;;) {
        int first = grain_step(g), second = grain_step(g);
        if (first) return second;
    }
}

/* the next candidate below r: 255 bits, most significant first */
static void grain_element(grain_t *g, fr_t *out)
{
    for (;;) {
        fr_t a = {{0, 0, 0, 0}};
        for (int i = 254; i >= 0; i--)
            if (grain_bit(g)) a.l[i / 64] |= (uint64_t)1 << (i % 64);
        if (!limbs_geq(a.l, R_LIMBS, 4)) {
            fr_to_mont(out, &a);
            return;
        }
    }
}

/* ------------------------------------------------------------------ matrices */

typedef fr_t matrix_t[POSEIDON_MAX_WIDTH][POSEIDON_MAX_WIDTH];

static void mat_mul(matrix_t out, matrix_t a, matrix_t b, int n)
{
    matrix_t r;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            fr_t acc = {{0, 0, 0, 0}}, p;
            for (int k = 0; k < n; k++) {
                fr_mul(&p, &a[i][k], &b[k][j]);
                fr_add(&acc, &acc, &p);
            }
            r[i][j] = acc;
        }
    memcpy(out, r, sizeof r);
}

/* Gauss-Jordan; 0 when singular (never for a Cauchy matrix's minors) */
static int mat_inv(matrix_t out, matrix_t in, int n)
{
    matrix_t a;
    memcpy(a, in, sizeof a);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            memset(&out[i][j], 0, sizeof(fr_t));
            if (i == j) fr_set_one(&out[i][j]);
        }
    for (int c = 0; c < n; c++) {
        int p = c;
        while (p < n && fr_is_zero(&a[p][c])) p++;
        if (p == n) return 0;
        for (int j = 0; j < n; j++) {
            fr_t x = a[c][j]; a[c][j] = a[p][j]; a[p][j] = x;
            x = out[c][j]; out[c][j] = out[p][j]; out[p][j] = x;
        }
        fr_t inv;
        fr_inv(&inv, &a[c][c]);
        for (int j = 0; j < n; j++) {
            fr_mul(&a[c][j], &a[c][j], &inv);
            fr_mul(&out[c][j], &out[c][j], &inv);
        }
        for (int i = 0; i < n; i++) {
            if (i == c || fr_is_zero(&a[i][c])) continue;
            fr_t f = a[i][c], p2;
            for (int j = 0; j < n; j++) {
                fr_mul(&p2, &f, &a[c][j]);
                fr_sub(&a[i][j], &a[i][j], &p2);
                fr_mul(&p2, &f, &out[c][j]);
                fr_sub(&out[i][j], &out[i][j], &p2);
            }
        }
    }
    return 1;
}

/* x <- M x */
static void mat_apply(fr_t *x, matrix_t m, int t)
{
    fr_t y[POSEIDON_MAX_WIDTH], p;
    for (int i = 0; i < t; i++) {
        memset(&y[i], 0, sizeof(fr_t));
        for (int j = 0; j < t; j++) {
            fr_mul(&p, &m[i][j], &x[j]);
            fr_add(&y[i], &y[i], &p);
        }
    }
    memcpy(x, y, t * sizeof(fr_t));
}

/* ------------------------------------------------------------------ setup */

static int build(params_t *P, int arity, int rp)
{
    const int t = arity + 1, rounds = RF + rp, half = RF / 2;
    P->arity = arity;
    P->t = t;
    P->rp = rp;
    fr_from_u64(&P->tag, ((uint64_t)1 << arity) - 1);
    P->rc = malloc(sizeof(fr_t) * rounds * t);
    P->rc_first = malloc(sizeof(fr_t) * half * t);
    P->rc_last = malloc(sizeof(fr_t) * half * t);
    P->rc_partial = malloc(sizeof(fr_t) * rp);
    P->sparse = malloc(sizeof(fr_t) * rp * (2 * t - 1));
    if (!P->rc || !P->rc_first || !P->rc_last || !P->rc_partial || !P->sparse) return -1;

    grain_t g;
    grain_init(&g, t, rp);
    for (int i = 0; i < rounds * t; i++) grain_element(&g, &P->rc[i]);

    for (int i = 0; i < t; i++)
        for (int j = 0; j < t; j++) {
            fr_t s;
            fr_from_u64(&s, (uint64_t)(i + t + j));
            fr_inv(&P->mds[i][j], &s);
        }

    /* Constants: a partial round's x + c splits into (c0, 0, ...) and (0, c1, ...);
     * the second passes the S-box unchanged and, through M, joins the next round's. */
    memcpy(P->rc_first, P->rc, sizeof(fr_t) * half * t);
    fr_t carry[POSEIDON_MAX_WIDTH] = {{{0}}};
    for (int k = 0; k < rp; k++) {
        fr_t c[POSEIDON_MAX_WIDTH];
        for (int i = 0; i < t; i++) fr_add(&c[i], &P->rc[(half + k) * t + i], &carry[i]);
        P->rc_partial[k] = c[0];
        memset(&c[0], 0, sizeof(fr_t));
        mat_apply(c, P->mds, t);
        memcpy(carry, c, sizeof(fr_t) * t);
    }
    memcpy(P->rc_last, P->rc + (half + rp) * t, sizeof(fr_t) * half * t);
    for (int i = 0; i < t; i++) fr_add(&P->rc_last[i], &P->rc_last[i], &carry[i]);

    /* Matrices, from the last partial round back: cur = A'' A' with A' = diag(1, minor)
     * and A'' dense only in its first row and column; A' commutes with the round's
     * S-box and constant, so it moves into the previous round's matrix. */
    matrix_t cur;
    memcpy(cur, P->mds, sizeof cur);
    for (int k = rp - 1; k >= 0; k--) {
        matrix_t minor, minor_inv;
        for (int i = 1; i < t; i++)
            for (int j = 1; j < t; j++) minor[i - 1][j - 1] = cur[i][j];
        if (!mat_inv(minor_inv, minor, t - 1)) return -1;
        fr_t *s = P->sparse + (size_t)k * (2 * t - 1);
        s[0] = cur[0][0];
        for (int j = 0; j < t - 1; j++) {            /* v = cur[0][1:] minor^-1 */
            fr_t acc = {{0, 0, 0, 0}}, p;
            for (int i = 0; i < t - 1; i++) {
                fr_mul(&p, &cur[0][i + 1], &minor_inv[i][j]);
                fr_add(&acc, &acc, &p);
            }
            s[1 + j] = acc;
            s[t + j] = cur[j + 1][0];                  /* w */
        }
        matrix_t prime;
        memset(prime, 0, sizeof prime);
        fr_set_one(&prime[0][0]);
        for (int i = 1; i < t; i++)
            for (int j = 1; j < t; j++) prime[i][j] = minor[i - 1][j - 1];
        mat_mul(cur, prime, P->mds, t);
    }
    memcpy(P->pre, cur, sizeof cur);
    return 0;
}

int poseidon_init(void)
{
    for (int i = 0; i < N_ARITIES; i++)
        if (!PARAMS[i].rc && build(&PARAMS[i], ARITIES[i], PARTIAL_ROUNDS[i]) != 0) {
            free(PARAMS[i].rc);
            PARAMS[i].rc = NULL;
            return -1;
        }
    return 0;
}

size_t poseidon_round_constants(int arity, uint8_t *out, size_t capacity)
{
    params_t *P = params_of(arity);
    if (!P) return 0;
    size_t n = (size_t)(RF + P->rp) * P->t;
    for (size_t i = 0; i < n && i < capacity; i++) fr_to_bytes(out + 32 * i, &P->rc[i]);
    return n;
}

/* ------------------------------------------------------------------ hashing */

FF_INLINE void sbox(fr_t *x)
{
    fr_t x2, x4;
    fr_sqr(&x2, x);
    fr_sqr(&x4, &x2);
    fr_mul(x, x, &x4);
}

static void permute_plain(const params_t *P, fr_t *x)
{
    const int t = P->t;
    for (int r = 0; r < RF + P->rp; r++) {
        for (int i = 0; i < t; i++) fr_add(&x[i], &x[i], &P->rc[r * t + i]);
        int full = r < RF / 2 || r >= RF / 2 + P->rp;
        for (int i = 0; i < (full ? t : 1); i++) sbox(&x[i]);
        mat_apply(x, (fr_t (*)[POSEIDON_MAX_WIDTH])P->mds, t);
    }
}

static void permute_sparse(const params_t *P, fr_t *x)
{
    const int t = P->t, half = RF / 2;
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < t; i++) {
            fr_add(&x[i], &x[i], &P->rc_first[r * t + i]);
            sbox(&x[i]);
        }
        mat_apply(x, (fr_t (*)[POSEIDON_MAX_WIDTH])(r == half - 1 ? P->pre : P->mds), t);
    }
    for (int k = 0; k < P->rp; k++) {
        const fr_t *s = P->sparse + (size_t)k * (2 * t - 1);
        fr_add(&x[0], &x[0], &P->rc_partial[k]);
        sbox(&x[0]);
        fr_t y0, p;
        fr_mul(&y0, &s[0], &x[0]);
        for (int j = 1; j < t; j++) {
            fr_mul(&p, &s[j], &x[j]);
            fr_add(&y0, &y0, &p);
            fr_mul(&p, &s[t + j - 1], &x[0]);
            fr_add(&x[j], &x[j], &p);
        }
        x[0] = y0;
    }
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < t; i++) {
            fr_add(&x[i], &x[i], &P->rc_last[r * t + i]);
            sbox(&x[i]);
        }
        mat_apply(x, (fr_t (*)[POSEIDON_MAX_WIDTH])P->mds, t);
    }
}

void poseidon_hash_mont(int arity, const fr_t *in, fr_t *out, int plain)
{
    const params_t *P = params_of(arity);
    fr_t x[POSEIDON_MAX_WIDTH];
    x[0] = P->tag;
    memcpy(x + 1, in, sizeof(fr_t) * arity);
    if (plain)
        permute_plain(P, x);
    else
        permute_sparse(P, x);
    *out = x[1];
}

int64_t poseidon_hash_batch(int arity, const uint8_t *in, size_t n, uint8_t *out, int plain)
{
    int64_t bad = -1;
    #pragma omp parallel for schedule(static) if (n > 64)
    for (size_t i = 0; i < n; i++) {
        fr_t x[POSEIDON_MAX_WIDTH], h;
        int ok = 1;
        for (int j = 0; j < arity && ok; j++)
            if (!fr_from_bytes(&x[j], in + 32 * ((size_t)arity * i + j))) {
                ok = 0;
                int64_t at = (int64_t)((size_t)arity * i + j);
                #pragma omp critical(poseidon_bad)
                if (bad < 0 || at < bad) bad = at;
            }
        if (!ok) continue;
        poseidon_hash_mont(arity, x, &h, plain);
        fr_to_bytes(out + 32 * i, &h);
    }
    return bad;
}

int64_t fr_add_batch(const uint8_t *a, const uint8_t *b, size_t n, uint8_t *out)
{
    int64_t bad = -1;
    #pragma omp parallel for schedule(static) if (n > 4096)
    for (size_t i = 0; i < n; i++) {
        fr_t x, y;
        if (!fr_from_bytes(&x, a + 32 * i) || !fr_from_bytes(&y, b + 32 * i)) {
            #pragma omp critical(fr_add_bad)
            if (bad < 0 || (int64_t)i < bad) bad = (int64_t)i;
            continue;
        }
        fr_add(&x, &x, &y);
        fr_to_bytes(out + 32 * i, &x);
    }
    return bad;
}
