# SPDX-License-Identifier: Apache-2.0
"""Slow, obviously-correct BLS12-381 arithmetic on Python ints.

The oracle for the native code's tests and the place where derived constants are
computed from their definitions. Fq2 elements are tuples (c0, c1) meaning c0 + c1*i;
points are affine tuples (x, y) or None for the point at infinity. Nothing here
is fast and nothing on a hot path calls it.
"""
from __future__ import annotations

from .constants import B_G1, B_G2, G1_X, G1_Y, G2_X, G2_Y, P, R

# ---------------------------------------------------------------- Fq and Fq2


def fq_sqrt(a: int) -> int | None:
    """A square root of a in Fq (p = 3 mod 4), or None if a is not a square."""
    s = pow(a, (P + 1) // 4, P)
    return s if s * s % P == a % P else None


def fq2_add(a, b):
    return ((a[0] + b[0]) % P, (a[1] + b[1]) % P)


def fq2_sub(a, b):
    return ((a[0] - b[0]) % P, (a[1] - b[1]) % P)


def fq2_neg(a):
    return ((-a[0]) % P, (-a[1]) % P)


def fq2_mul(a, b):
    return ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)


def fq2_inv(a):
    t = pow(a[0] * a[0] + a[1] * a[1], P - 2, P)
    return (a[0] * t % P, (-a[1] * t) % P)


def fq2_pow(a, e: int):
    result, base = (1, 0), a
    while e:
        if e & 1:
            result = fq2_mul(result, base)
        base = fq2_mul(base, base)
        e >>= 1
    return result


def fq2_conj(a):
    return (a[0], (-a[1]) % P)


def fq2_sqrt(a) -> tuple[int, int] | None:
    """A square root in Fq2, or None (Adj and Rodriguez-Henriquez, Alg. 9, p = 3 mod 4)."""
    if a == (0, 0):
        return (0, 0)
    a1 = fq2_pow(a, (P - 3) // 4)
    alpha = fq2_mul(fq2_mul(a1, a1), a)
    x0 = fq2_mul(a1, a)
    if alpha == (P - 1, 0):
        x = fq2_mul((0, 1), x0)
    else:
        x = fq2_mul(fq2_pow(fq2_add((1, 0), alpha), (P - 1) // 2), x0)
    return x if fq2_mul(x, x) == a else None


# ---------------------------------------------------------------- curves


class Curve:
    """Short Weierstrass y^2 = x^3 + b over Fq (G1) or Fq2 (G2), affine arithmetic."""

    def __init__(self, b, add, sub, mul, inv, neg, zero, one, three):
        self.b, self._add, self._sub, self._mul, self._inv, self._neg = b, add, sub, mul, inv, neg
        self.zero, self.one, self.three = zero, one, three

    def on_curve(self, pt) -> bool:
        if pt is None:
            return True
        x, y = pt
        return self._mul(y, y) == self._add(self._mul(self._mul(x, x), x), self.b)

    def neg(self, pt):
        return None if pt is None else (pt[0], self._neg(pt[1]))

    def add(self, p1, p2):
        if p1 is None:
            return p2
        if p2 is None:
            return p1
        (x1, y1), (x2, y2) = p1, p2
        if x1 == x2:
            if y1 != y2 or y1 == self.zero:
                return None
            lam = self._mul(self._mul(self.three, self._mul(x1, x1)), self._inv(self._add(y1, y1)))
        else:
            lam = self._mul(self._sub(y2, y1), self._inv(self._sub(x2, x1)))
        x3 = self._sub(self._sub(self._mul(lam, lam), x1), x2)
        return (x3, self._sub(self._mul(lam, self._sub(x1, x3)), y1))

    def mul(self, pt, k: int):
        """k * pt for any int k (negative allowed)."""
        if k < 0:
            return self.mul(self.neg(pt), -k)
        acc = None
        for bit in bin(k)[2:] if k else "":
            acc = self.add(acc, acc)
            if bit == "1":
                acc = self.add(acc, pt)
        return acc


G1 = Curve(B_G1, lambda a, b: (a + b) % P, lambda a, b: (a - b) % P, lambda a, b: a * b % P,
           lambda a: pow(a, P - 2, P), lambda a: (-a) % P, 0, 1, 3)
G2 = Curve(B_G2, fq2_add, fq2_sub, fq2_mul, fq2_inv, fq2_neg, (0, 0), (1, 0), (3, 0))
G1_GENERATOR = (G1_X, G1_Y)
G2_GENERATOR = (G2_X, G2_Y)

# psi constants: 1/(1+i)^((p-1)/3) and 1/(1+i)^((p-1)/2).
PSI_X = fq2_inv(fq2_pow((1, 1), (P - 1) // 3))
PSI_Y = fq2_inv(fq2_pow((1, 1), (P - 1) // 2))


def g2_psi(pt):
    """The untwist-Frobenius-twist endomorphism of E2."""
    if pt is None:
        return None
    return (fq2_mul(fq2_conj(pt[0]), PSI_X), fq2_mul(fq2_conj(pt[1]), PSI_Y))


def g1_in_subgroup(pt) -> bool:
    return G1.on_curve(pt) and G1.mul(pt, R) is None


def g2_in_subgroup(pt) -> bool:
    return G2.on_curve(pt) and G2.mul(pt, R) is None


def g1_from_x(x: int, greatest: bool):
    """The curve point with this x and the larger (or smaller) y, or None if none exists."""
    y = fq_sqrt((x * x * x + B_G1) % P)
    if y is None:
        return None
    if (y > (P - 1) // 2) != greatest:
        y = P - y
    return (x, y)


def fr_inv(a: int) -> int:
    return pow(a, R - 2, R)

