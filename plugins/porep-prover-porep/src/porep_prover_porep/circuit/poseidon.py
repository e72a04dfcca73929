# SPDX-License-Identifier: Apache-2.0
"""neptune's legacy Poseidon circuit (neptune::circuit::poseidon_hash, what
filecoin-hashers' column and tree hashes use; not circuit2's
poseidon_hash_allocated, which allocates differently), with neptune's preprocessed
constants: the round constants compressed through the inverse MDS matrix
(one constant a partial round), and the partial rounds' matrices factored
into sparse ones (dense first row and column) after a pre-sparse matrix.

A hash of arity a (width t = a + 1, RF = 8 full rounds, RP partial) costs
3 (t RF + RP - 1) + (t RF + RP - a) constraints, each with one variable:
311, 505 and 598 for arities 2, 8 and 11. The state between S-boxes is kept
as linear combinations (neptune's Elt::Num); each S-box input is allocated
with one constraint, then squared, squared and multiplied.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Sequence

from .. import poseidon as native_poseidon
from ..fr32 import R
from .system import ONE, LC, TraceCS

FULL_ROUNDS = 8
Matrix = list[list[int]]


def _inv(x: int) -> int:
    return pow(x, -1, R)


def _mat_mul(a: Matrix, b: Matrix) -> Matrix:
    n = len(a)
    return [[sum(a[i][k] * b[k][j] for k in range(n)) % R for j in range(n)] for i in range(n)]


def _invert(m: Matrix) -> Matrix:
    n = len(m)
    a = [row[:] + [int(i == j) for j in range(n)] for i, row in enumerate(m)]
    for col in range(n):
        pivot = next(r for r in range(col, n) if a[r][col])
        a[col], a[pivot] = a[pivot], a[col]
        f = _inv(a[col][col])
        a[col] = [x * f % R for x in a[col]]
        for r in range(n):
            if r != col and a[r][col]:
                g = a[r][col]
                a[r] = [(x - g * y) % R for x, y in zip(a[r], a[col])]
    return [row[n:] for row in a]


def _minor(m: Matrix) -> Matrix:
    return [row[1:] for row in m[1:]]


def _apply(m: Matrix, v: Sequence[int]) -> list[int]:
    """neptune's apply_matrix: the row vector v times m."""
    return [sum(m[i][j] * v[i] for i in range(len(v))) % R for j in range(len(v))]


@dataclass(frozen=True)
class Constants:
    """One arity's constants as neptune's PoseidonConstants holds them."""
    arity: int
    partial_rounds: int
    tag: int
    compressed: tuple[int, ...]
    mds: Matrix
    pre_sparse: Matrix
    sparse: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]     # (w_hat, v_rest) a partial round

    @property
    def width(self) -> int:
        return self.arity + 1


def _compress(rc: list[int], t: int, rp: int, m_inv: Matrix) -> list[int]:
    half = FULL_ROUNDS // 2

    def keys(r: int) -> list[int]:
        return rc[r * t:(r + 1) * t]
    out = keys(0)
    for i in range(half - 1):
        out += _apply(m_inv, keys(i + 1))
    partial: list[int] = []
    acc = keys(half + rp)
    for i in range(rp):
        inverted = _apply(m_inv, acc)
        partial.append(inverted[0])
        inverted[0] = 0
        acc = [(x + y) % R for x, y in zip(keys(half + rp - i - 1), inverted)]
    out += _apply(m_inv, acc)
    out += partial[::-1]
    for i in range(1, half):
        out += _apply(m_inv, keys(i + half + rp))
    return out


def _factor(m: Matrix, rp: int) -> tuple[Matrix, list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """neptune's factor_to_sparse_matrixes: (pre-sparse matrix, the partial rounds' (w_hat, v_rest))."""
    t = len(m)
    cur, found = m, []
    for _ in range(rp):
        hat_inv = _invert(_minor(cur))
        w = [cur[i][0] for i in range(1, t)]
        w_hat = _apply(hat_inv, w)
        found.append(((cur[0][0], *w_hat), tuple(cur[0][1:])))
        prime = [[int(i == j == 0) if i == 0 or j == 0 else cur[i][j] for j in range(t)] for i in range(t)]
        cur = _mat_mul(m, prime)
    return cur, found[::-1]


@functools.cache
def constants(arity: int) -> Constants:
    """neptune's constants of a Merkle-tree hash of this arity (2, 8 or 11)."""
    t, rp = arity + 1, native_poseidon.PARTIAL_ROUNDS[arity]
    m = [[_inv(i + t + j) for j in range(t)] for i in range(t)]
    rc = native_poseidon.round_constants(arity)
    pre, sparse = _factor(m, rp)
    return Constants(arity, rp, (1 << arity) - 1, tuple(_compress(rc, t, rp, _invert(m))), m, pre, tuple(sparse))

# ---------------------------------------------------------------- the circuit


class _Elt:
    """An allocated variable (ref) or a linear combination with its value."""
    __slots__ = ("ref", "lc", "value")

    def __init__(self, ref: int | None = None, lc: LC | None = None, value: int | None = None):
        self.ref, self.lc, self.value = ref, lc, value

    def as_lc(self) -> LC:
        return {self.ref: 1} if self.ref is not None else dict(self.lc or {})


def _scalar_product(elts: Sequence[_Elt], scalars: Sequence[int]) -> _Elt:
    lc: LC = {}
    value: int | None = 0
    for e, s in zip(elts, scalars):
        for r, c in e.as_lc().items():
            lc[r] = (lc.get(r, 0) + c * s) % R
        value = None if value is None or e.value is None else (value + e.value * s) % R
    return _Elt(lc=lc, value=value)


def _allocated(cs: TraceCS, e: _Elt) -> tuple[int, int | None]:
    if e.ref is not None:
        return e.ref, e.value
    v = cs.alloc_solved(e.value)
    cs.enforce(e.as_lc(), {ONE: 1}, {v: 1})
    return v, e.value


def _square(cs: TraceCS, x: int, value: int | None, add: int = 0) -> tuple[int, int | None]:
    out = None if value is None else (value + add) ** 2 % R
    v = cs.alloc_solved(out)
    lc = {x: 1, ONE: add} if add else {x: 1}
    cs.enforce(lc, dict(lc), {v: 1})
    return v, out


def _mul_sum(cs: TraceCS, a: int, a_value, b: int, b_value, pre: int | None, post: int | None):
    """(b + pre) a + post, allocated and enforced."""
    out = None if a_value is None or b_value is None else ((b_value + (pre or 0)) * a_value + (post or 0)) % R
    v = cs.alloc_solved(out)
    cs.enforce({b: 1, ONE: pre} if pre is not None else {b: 1}, {a: 1},
               {v: 1, ONE: -post} if post is not None else {v: 1})
    return v, out


def _sbox(cs: TraceCS, e: _Elt, pre: int | None, post: int | None) -> _Elt:
    x, xv = _allocated(cs, e)
    x2, x2v = _square(cs, x, xv, pre or 0)
    x4, x4v = _square(cs, x2, x2v)
    out, value = _mul_sum(cs, x4, x4v, x, xv, pre, post)
    return _Elt(ref=out, value=value)


def poseidon_hash(cs: TraceCS, preimage: Sequence[int], tag: int | None = None) -> int:
    """The Merkle-tree Poseidon hash of allocated numbers (refs), as neptune's
    legacy circuit allocates it (with another domain tag where given: the
    same constants, state[0] the tag); returns the digest's variable."""
    k = constants(len(preimage))
    if tag is not None:
        k = dataclasses.replace(k, tag=tag % R)
    t, rp, half = k.width, k.partial_rounds, FULL_ROUNDS // 2
    state = [_Elt(lc={ONE: k.tag}, value=k.tag)] + [_Elt(ref=r, value=cs.value(r)) for r in preimage]
    offset, rnd = 0, 0

    def mix() -> None:
        nonlocal state, rnd
        if rnd == half - 1:
            state = [_scalar_product(state, [k.pre_sparse[i][j] for i in range(t)]) for j in range(t)]
        elif half - 1 < rnd < half + rp:
            w_hat, v_rest = k.sparse[rnd - half]
            first = state[0]
            state = [_scalar_product(state, w_hat)] + [
                _scalar_product([state[j], first], [1, v_rest[j - 1]]) for j in range(1, t)]
        else:
            state = [_scalar_product(state, [k.mds[i][j] for i in range(t)]) for j in range(t)]
        rnd += 1

    def full_round(first: bool, last: bool) -> None:
        nonlocal offset
        pre = list(k.compressed[offset:offset + t]) if first else []
        offset += len(pre)
        post = list(k.compressed[offset:offset + t]) if first or not last else []
        offset += len(post)
        for i in range(t):
            p = post[i] if post else None
            if first and i == 0:
                tag = (pow((k.tag + pre[0]) % R, 5, R) + post[0]) % R
                state[0] = _Elt(lc={ONE: tag}, value=tag)
            else:
                state[i] = _sbox(cs, state[i], pre[i] if first else None, p)
        mix()

    full_round(True, False)
    for _ in range(1, half):
        full_round(False, False)
    for _ in range(rp):
        state[0] = _sbox(cs, state[0], None, k.compressed[offset])
        offset += 1
        mix()
    for _ in range(half - 1):
        full_round(False, False)
    full_round(False, True)
    return _allocated(cs, state[1])[0]
