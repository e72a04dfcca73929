# SPDX-License-Identifier: Apache-2.0
"""Demo and benchmark circuits with satisfying witnesses.

square_chain: x_{i+1} = x_i^2, every witness value a full field element (the
    worst case for MSMs; what snarkjs benchmarks use).
porep_like: the shape of a PoRep partition in miniature: mostly boolean
    variables (booleanity, XOR and bit-packing constraints as SHA-256 makes
    them) with a minority of full field products, and public inputs bound to
    some of those products.

Both are built with numpy (no per-constraint Python loop beyond the small
coefficient lists) and return (R1CS, witness, public_inputs). Sizes are
bounded: at least one constraint (porep_like: twice its public inputs),
at most MAX_CONSTRAINTS (2^28: the circuit, its witness and the domain's
arrays are built in memory, a few GiB at that size; the domain's own limit,
2^32 less the inputs, is beyond any host that builds them); seeds are
integers from 0 to 2^64 - 1. InvalidInputError says the range otherwise.
"""
from __future__ import annotations

import random
from typing import Protocol

import numpy as np

from .errors import InvalidInputError
from .field.constants import R
from .field.fr_array import FrArray
from .r1cs.system import R1CS, SparseMatrix

__all__ = ["CIRCUITS", "MAX_CONSTRAINTS", "MAX_PUBLIC", "MAX_SEED", "fr_small", "porep_like", "square_chain"]

MAX_CONSTRAINTS = 1 << 28
MAX_PUBLIC = 1 << 16
MAX_SEED = (1 << 64) - 1


def _count(name: str, value, minimum: int, maximum: int) -> int:
    """value as an int in [minimum, maximum], or InvalidInputError saying the range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not minimum <= value <= maximum:
        raise InvalidInputError(f"{name} must be an integer from {minimum} to {maximum}, got {value!r}")
    return int(value)


def fr_small(values) -> FrArray:
    """FrArray of small signed ints (|v| < 2^63), vectorised."""
    v = np.asarray(values, dtype=np.int64)
    mag = FrArray(np.zeros((len(v), 4), dtype=np.uint64))
    mag.limbs[:, 0] = np.abs(v).astype(np.uint64)
    mag = FrArray.from_bytes(mag.limbs.tobytes())
    if (v < 0).any():
        neg = -mag
        mag.limbs[v < 0] = neg.limbs[v < 0]
    return mag


def _matrix(rows: list, cols: list, coeffs: list, nrows: int) -> SparseMatrix:
    return SparseMatrix.from_arrays(np.concatenate(rows) if rows else np.zeros(0, np.int64),
                                    np.concatenate(cols) if cols else np.zeros(0, np.int64),
                                    fr_small(np.concatenate(coeffs)) if coeffs else FrArray.zeros(0), nrows)


def square_chain(num_constraints: int, seed: int = 0) -> tuple[R1CS, FrArray, list[int]]:
    """x_{i+1} = x_i^2 for i < m; the last square is the one public input."""
    m = _count("square_chain: num_constraints", num_constraints, 1, MAX_CONSTRAINTS)
    rng = random.Random(_count("square_chain: seed", seed, 0, MAX_SEED))
    xs = [rng.randrange(2, R)]
    for _ in range(m):
        xs.append(xs[-1] * xs[-1] % R)
    # variables: 0 one, 1 out (public), 2 + i = x_i for i < m (x_m is out)
    idx = np.arange(m, dtype=np.int64)
    var_in = 2 + idx
    var_out = np.where(idx == m - 1, 1, 3 + idx)
    ones = [np.ones(m, np.int64)]
    a = _matrix([idx], [var_in], ones, m)
    c = _matrix([idx], [var_out], ones, m)
    witness = FrArray.from_ints([1, xs[m]] + xs[:m])
    return R1CS(2, m, a, a, c), witness, [xs[m]]


def porep_like(num_constraints: int, num_public: int = 4, seed: int = 0) -> tuple[R1CS, FrArray, list[int]]:
    """About 19/20 boolean constraints (booleanity, XOR, 8-bit packing) and 1/20
    full-field products; num_public products are exposed as public inputs."""
    num_public = _count("porep_like: num_public", num_public, 0, MAX_PUBLIC)
    # the products (at least num_public of them) and the public bindings need 2 num_public rows
    m = _count("porep_like: num_constraints", num_constraints, max(1, 2 * num_public), MAX_CONSTRAINTS)
    seed = _count("porep_like: seed", seed, 0, MAX_SEED)
    rng = np.random.default_rng(seed)
    body = m - num_public
    n_pack = body // 40
    n_mul = max(num_public, body // 20)
    n_xor = (body - 9 * n_pack - n_mul) // 3
    n_bool = body - 9 * n_pack - n_mul - 3 * n_xor
    if n_xor < 0 or n_bool < 0:
        raise InvalidInputError(f"porep_like: {m} constraints is too few for {num_public} public inputs")
    k = 1 + num_public
    # per matrix: its entries' rows, columns and coefficients, in blocks
    rows: dict[str, tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]] = {
        "a": ([], [], []), "b": ([], [], []), "c": ([], [], [])}
    values: list[np.ndarray] = []   # small aux values in variable order, None marks the full block
    nxt = {"var": k, "row": 0}

    def vars_(count: int) -> np.ndarray:
        v = np.arange(nxt["var"], nxt["var"] + count, dtype=np.int64)
        nxt["var"] += count
        return v

    def rows_(count: int) -> np.ndarray:
        r = np.arange(nxt["row"], nxt["row"] + count, dtype=np.int64)
        nxt["row"] += count
        return r

    def put(mat: str, r: np.ndarray, v: np.ndarray, coeff) -> None:
        rows[mat][0].append(r)
        rows[mat][1].append(v)
        rows[mat][2].append(np.broadcast_to(np.asarray(coeff, np.int64), r.shape).copy())

    def booleanity(bits: np.ndarray) -> None:       # b * b = b
        r = rows_(len(bits))
        for mat in "abc":
            put(mat, r, bits, 1)

    # XOR gadgets: a, b bits; c = a xor b via (2a) * b = a + b - c.
    ab = rng.integers(0, 2, size=(2, n_xor), dtype=np.int64)
    va, vb, vc = vars_(n_xor), vars_(n_xor), vars_(n_xor)
    values += [ab[0], ab[1], ab[0] ^ ab[1]]
    booleanity(va)
    booleanity(vb)
    r = rows_(n_xor)
    put("a", r, va, 2)
    put("b", r, vb, 1)
    for v, k_ in ((va, 1), (vb, 1), (vc, -1)):
        put("c", r, v, k_)
    # Packing: 8 bits with booleanity, then (sum 2^i b_i) * 1 = p.
    bits = rng.integers(0, 2, size=(n_pack, 8), dtype=np.int64)
    vbits = vars_(8 * n_pack).reshape(n_pack, 8)
    vp = vars_(n_pack)
    values += [bits.reshape(-1), bits @ (1 << np.arange(8))]
    booleanity(vbits.reshape(-1))
    r = rows_(n_pack)
    for i in range(8):
        put("a", r, vbits[:, i], 1 << i)
    put("b", r, r * 0, 1)
    put("c", r, vp, 1)
    # Lone booleans to fill the constraint count exactly.
    vlone = vars_(n_bool)
    values.append(rng.integers(0, 2, size=n_bool, dtype=np.int64))
    booleanity(vlone)
    small = FrArray.concat([fr_small(v) for v in values])
    # Full-field products x * y = z, and public_i = z_i.
    py = random.Random(seed)
    x = FrArray.from_ints(py.randrange(R) for _ in range(n_mul))
    y = FrArray.from_ints(py.randrange(R) for _ in range(n_mul))
    z = x * y
    vx, vy, vz = vars_(n_mul), vars_(n_mul), vars_(n_mul)
    r = rows_(n_mul)
    put("a", r, vx, 1)
    put("b", r, vy, 1)
    put("c", r, vz, 1)
    r = rows_(num_public)
    put("a", r, vz[:num_public], 1)
    put("b", r, r * 0, 1)
    put("c", r, np.arange(1, k, dtype=np.int64), 1)
    public = z[:num_public].to_ints()
    witness = FrArray.concat([FrArray.from_ints([1] + public), small, x, y, z])
    mats = [_matrix(*rows[n], m) for n in "abc"]
    return R1CS(k, nxt["var"] - k, *mats), witness, public


class DemoCircuit(Protocol):
    """A demo circuit: (R1CS, witness, public inputs) for about num_constraints constraints, drawn from seed."""

    def __call__(self, num_constraints: int, *, seed: int = 0) -> tuple[R1CS, FrArray, list[int]]: ...


# the demo circuits by name
CIRCUITS: dict[str, DemoCircuit] = {"porep-like": porep_like, "square-chain": square_chain}
