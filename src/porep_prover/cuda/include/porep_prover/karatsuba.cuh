/* SPDX-License-Identifier: Apache-2.0 */
/* The Fq product with one level of Karatsuba (included by field.cuh, whose
 * mont, redc_wide and sub_modulus_once it uses; MONT_MUL_KARA selects it).
 *
 * The limb products are the product's cost on the GPU: each is one 64-bit
 * multiply-add on the multiply-add pipe, the pipe the MSM's accumulation
 * is bound by, while the adds and logic run on another, half idle. Split at
 * H = N / 2 limbs, a = a0 + a1 B and b = b0 + b1 B (B = 2^(32H)):
 *
 *   a b = z0 + (z0 + z2 + s |a0 - a1| |b1 - b0|) B + z2 B^2,
 *   z0 = a0 b0, z2 = a1 b1, s the sign of (a0 - a1)(b1 - b0),
 *
 * three H x H products (3 H^2 multiply-adds) instead of N^2 = 4 H^2, for
 * some 4 N more adds; then the N Montgomery rows of redc_wide over the whole
 * product. The subtractive form keeps every operand to H limbs (no carry
 * bits to fold back in). Fq: 108 + 156 multiply-adds against CIOS's 300. */
#ifndef POREP_KARATSUBA_CUH
#define POREP_KARATSUBA_CUH

#ifndef KARA_REDC
#define KARA_REDC redc_sep
#endif

DEV u32 add_cc(u32 a, u32 b)
{
    u32 r;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DEV u32 addc_cc(u32 a, u32 b)
{
    u32 r;
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DEV u32 addc(u32 a, u32 b)
{
    u32 r;
    asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DEV u32 sub_cc(u32 a, u32 b)
{
    u32 r;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
DEV u32 subc_cc(u32 a, u32 b)
{
    u32 r;
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}
/* 0 or 2^32 - 1: the borrow out of the chain before it, as a mask. */
DEV u32 borrow_mask()
{
    u32 r;
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(r));
    return r;
}

/* z (2H limbs) = x y for H-limb x, y: the limb products split by the
 * parity of i + j into two accumulators (cross_row, as the square's cross
 * products), one carry chain a row each, then one add chain. H^2
 * multiply-adds. */
template <int H>
DEV void mul_half(u32 (&z)[2 * H], const u32 *x, const u32 *y)
{
    u32 ev[2 * H], od[2 * H];
    int top_ev = -1, top_od = 0;   /* od's limb 0 (weight 0) takes no product */
#pragma unroll
    for (int i = 0; i < H; i++) {
        top_ev = cross_row<H, 2 * H>(ev, x, y[i], i, i & 1, top_ev);
        top_od = cross_row<H, 2 * H>(od, x, y[i], i, (i & 1) ^ 1, top_od);
    }
#pragma unroll
    for (int k = 0; k < 2 * H; k++) {
        if (k > top_ev) ev[k] = 0;
        if (k > top_od) od[k] = 0;
    }
    z[0] = ev[0];
    z[1] = add_cc(ev[1], od[1]);
#pragma unroll
    for (int k = 2; k < 2 * H - 1; k++) z[k] = addc_cc(ev[k], od[k]);
    z[2 * H - 1] = addc(ev[2 * H - 1], od[2 * H - 1]);
}

/* d = |x - y| over H limbs; returns the mask of its sign (all ones when x < y). */
template <int H>
DEV u32 abs_diff(u32 (&d)[H], const u32 *x, const u32 *y)
{
    d[0] = sub_cc(x[0], y[0]);
#pragma unroll
    for (int j = 1; j < H; j++) d[j] = subc_cc(x[j], y[j]);
    const u32 s = borrow_mask();
    /* negate when it borrowed: ~d + 1 */
    d[0] = add_cc(d[0] ^ s, s & 1u);
#pragma unroll
    for (int j = 1; j < H; j++) d[j] = (j < H - 1) ? addc_cc(d[j] ^ s, 0u) : addc(d[j] ^ s, 0u);
    return s;
}

/* t (2N limbs) = a b, by one level of Karatsuba (see the header). */
template <int N>
DEV void mul_kara_full(u32 (&t)[2 * N], const mont<N> &a, const mont<N> &b)
{
    constexpr int H = N / 2;
    u32 z0[N], z2[N], z1[N], da[H], db[H], mid[N + 1];
    mul_half<H>(z0, a.v, b.v);
    mul_half<H>(z2, a.v + H, b.v + H);
    const u32 s = abs_diff<H>(da, a.v, a.v + H) ^ abs_diff<H>(db, b.v + H, b.v);
    mul_half<H>(z1, da, db);
    /* mid = z0 + z2 + s z1 = a0 b1 + a1 b0, in [0, 2^(32N + 1)): N + 1 limbs */
    mid[0] = add_cc(z0[0], z2[0]);
#pragma unroll
    for (int k = 1; k < N; k++) mid[k] = addc_cc(z0[k], z2[k]);
    mid[N] = addc(0u, 0u);
    add_cc(s & 1u, 0xffffffffu);            /* carry in = 1 when subtracting: - z1 = ~z1 + 1 */
#pragma unroll
    for (int k = 0; k < N; k++) mid[k] = addc_cc(mid[k], z1[k] ^ s);
    mid[N] = addc(mid[N], s);
    /* t = z0 + mid B + z2 B^2 < 2^(64N) */
#pragma unroll
    for (int k = 0; k < H; k++) t[k] = z0[k];
    t[H] = add_cc(z0[H], mid[0]);
#pragma unroll
    for (int k = 1; k < H; k++) t[H + k] = addc_cc(z0[H + k], mid[k]);
#pragma unroll
    for (int k = 0; k < H; k++) t[N + k] = addc_cc(z2[k], mid[H + k]);
    t[N + H] = addc_cc(z2[H], mid[N]);
#pragma unroll
    for (int k = H + 1; k < N; k++) t[N + k] = (k < N - 1) ? addc_cc(z2[k], 0u) : addc(z2[k], 0u);
}

/* Limb i of acc, or 0 where no row has written it (top: the highest written). */
template <int L>
DEV u32 limb_or_zero(const u32 (&acc)[L], int i, int top) { return i <= top ? acc[i] : 0u; }

/* r = t / 2^(32N) mod m for t < m 2^(32N) (2N limbs): Montgomery's rows
 * without moving t. Row i's q_i m goes into two accumulators by the parity
 * of the limb sum i + j (cross_row, as the products), so no limb is shifted
 * or folded row by row; only limb i's column, t_i + re_i + ro_i and the
 * carry from the column below, is summed, to give q_i and the next carry
 * (at most 3). The three are added at the end: N^2 + N multiply-adds and
 * about 9 N adds, against redc_wide's N^2 + N and N^2 + 2N adds. */
template <int N>
DEV void redc_sep(mont<N> &r, const u32 (&t)[2 * N])
{
    const u32 *m = modulus<N>();
    const u32 inv = modulus_inv<N>();
    u32 re[2 * N], ro[2 * N], cin = 0;
    int top_re = -1, top_ro = -1;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const u32 q = (t[i] + limb_or_zero(re, i, top_re) + limb_or_zero(ro, i, top_ro) + cin) * inv;
        top_re = cross_row<N, 2 * N>(re, m, q, i, i & 1, top_re);
        top_ro = cross_row<N, 2 * N>(ro, m, q, i, (i & 1) ^ 1, top_ro);
        /* column i now sums to 0 mod 2^32: its carry out */
        u32 x = add_cc(t[i], limb_or_zero(re, i, top_re)), c = addc(0u, 0u);
        x = add_cc(x, limb_or_zero(ro, i, top_ro));
        c = addc(c, 0u);
        add_cc(x, cin);
        cin = addc(c, 0u);
    }
    /* (t + sum q_i m 2^(32 i)) / 2^(32N) < 2m < 2^(32N): no chain below carries out */
    u32 w[N];
    w[0] = add_cc(t[N], limb_or_zero(re, N, top_re));
#pragma unroll
    for (int k = 1; k < N; k++) w[k] = addc_cc(t[N + k], limb_or_zero(re, N + k, top_re));
    w[0] = add_cc(w[0], limb_or_zero(ro, N, top_ro));
#pragma unroll
    for (int k = 1; k < N; k++) w[k] = addc_cc(w[k], limb_or_zero(ro, N + k, top_ro));
    w[0] = add_cc(w[0], cin);
#pragma unroll
    for (int k = 1; k < N; k++) w[k] = addc_cc(w[k], 0u);
    sub_modulus_once<N>(r, w);
}

/* r = a b / 2^(32N) mod m (a, b < m): the Karatsuba product, then redc_wide. */
template <int N>
DEV void mont_mul_kara(mont<N> &r, const mont<N> &a, const mont<N> &b)
{
    u32 t[2 * N];
    mul_kara_full<N>(t, a, b);
    KARA_REDC<N>(r, t);
}

/* r = (a b + c d) / 2^(32N) mod m: both products by Karatsuba, one
 * reduction. The sum stays below 2 m^2 < m 2^(32N) (m < 2^(32N - 1)), as
 * redc_wide needs. */
template <int N>
DEV void mont_mul2_kara(mont<N> &r, const mont<N> &a, const mont<N> &b, const mont<N> &c, const mont<N> &d)
{
    u32 t[2 * N], u[2 * N];
    mul_kara_full<N>(t, a, b);
    mul_kara_full<N>(u, c, d);
    t[0] = add_cc(t[0], u[0]);
#pragma unroll
    for (int k = 1; k < 2 * N - 1; k++) t[k] = addc_cc(t[k], u[k]);
    t[2 * N - 1] = addc(t[2 * N - 1], u[2 * N - 1]);
    KARA_REDC<N>(r, t);
}

#endif
