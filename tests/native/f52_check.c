/* The AVX-512 IFMA field arithmetic (f52.h) against field.h on random and edge
 * values: form changes both ways, mul, add, sub, conditional negation and the
 * zero test, for Fq and Fq2. Prints "ok" or the first failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f52.h"

static uint64_t state;
static uint64_t rnd(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static void rand_fq(fq_t *a, int k)
{
    static const uint64_t p[6] = FQ_MODULUS;
    fq_t c;
    if (k % 11 == 0) memset(&c, 0, sizeof c);                  /* zero */
    else if (k % 11 == 1) {                                     /* p - 1 */
        memcpy(c.l, p, sizeof c.l);
        c.l[0] -= 1;
    } else {
        for (int i = 0; i < 6; i++) c.l[i] = rnd();
        c.l[5] &= 0x0fffffffffffffffULL;                        /* < 2^380 < p */
    }
    fq_to_mont(a, &c);
}

F52_TARGET static int check(void)
{
    int bad = 0;
    for (int it = 0; it < 3000; it++) {
        fq_t a[8], b[8];
        f52_t A[8], B[8], R[8];
        const f52_t *pa[8], *pb[8];
        f52_t *pr[8];
        f52v va, vb, vr;
        for (int i = 0; i < 8; i++) {
            rand_fq(&a[i], it + i);
            rand_fq(&b[i], it * 3 + i);
            if (it % 5 == 0 && i == 2) b[i] = a[i];
            f52_from_std(&A[i], &a[i]);
            f52_from_std(&B[i], &b[i]);
            pa[i] = &A[i];
            pb[i] = &B[i];
            pr[i] = &R[i];
            fq_t back;
            f52_to_std(&back, &A[i]);
            bad += !fq_eq(&back, &a[i]);
        }
        f52v_gather(&va, pa);
        f52v_gather(&vb, pb);
        for (int op = 0; op < 5; op++) {
            if (op == 0) f52v_mul(&vr, &va, &vb);
            else if (op == 1) f52v_add(&vr, &va, &vb);
            else if (op == 2) f52v_sub(&vr, &va, &vb);
            else if (op == 3) f52v_cond_neg(&vr, &va, 0x5a);
            else {
                f52v_sub(&vr, &va, &vb);
                f52v_mul(&vr, &vr, &vr);
            }
            __mmask8 zero = f52v_is_zero(&vr);
            f52v_scatter(pr, vr, 0xff);
            for (int i = 0; i < 8; i++) {
                fq_t want, got;
                if (op == 0) fq_mul(&want, &a[i], &b[i]);
                else if (op == 1) fq_add(&want, &a[i], &b[i]);
                else if (op == 2) fq_sub(&want, &a[i], &b[i]);
                else if (op == 3) {
                    want = a[i];
                    if ((0x5a >> i) & 1) fq_neg(&want, &a[i]);
                } else {
                    fq_sub(&want, &a[i], &b[i]);
                    fq_mul(&want, &want, &want);
                }
                f52_to_std(&got, &R[i]);
                if (!fq_eq(&got, &want) || ((zero >> i) & 1) != fq_is_zero(&want)) {
                    if (bad++ < 5) printf("fq op %d lane %d wrong\n", op, i);
                }
            }
        }
        /* Fq2 products from pairs of the same values */
        f52x2_t X[8], Y[8], Z[8];
        const f52x2_t *px[8], *py[8];
        f52x2_t *pz[8];
        f52v2 vx, vy, vz;
        for (int i = 0; i < 8; i++) {
            fq2_t x = {a[i], b[i]}, y = {b[i], a[(i + 1) % 8]};
            f52x2_from_std(&X[i], &x);
            f52x2_from_std(&Y[i], &y);
            px[i] = &X[i];
            py[i] = &Y[i];
            pz[i] = &Z[i];
        }
        f52v2_gather(&vx, px);
        f52v2_gather(&vy, py);
        f52v2_mul(&vz, &vx, &vy);
        f52v2_scatter(pz, vz, 0xff);
        for (int i = 0; i < 8; i++) {
            fq2_t x = {a[i], b[i]}, y = {b[i], a[(i + 1) % 8]}, want, got;
            fq2_mul(&want, &x, &y);
            f52x2_to_std(&got, &Z[i]);
            if (!fq2_eq(&got, &want) && bad++ < 5) printf("fq2 mul lane %d wrong\n", i);
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    state = argc > 1 ? strtoull(argv[1], NULL, 10) | 1 : 88172645463325252ULL;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512ifma")) {
        printf("skip\n");
        return 0;
    }
    int bad = check();
    printf(bad ? "failures: %d\n" : "ok\n", bad);
    return bad != 0;
}
