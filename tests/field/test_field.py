# SPDX-License-Identifier: Apache-2.0
"""Fr, Fq and Fq2 native arithmetic against Python ints."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from porep_prover import FrArray
from porep_prover.errors import EncodingError, InvalidInputError, LengthMismatchError, ScalarRangeError
from porep_prover.field import _field
from porep_prover.field import reference as ref
from porep_prover.field.constants import FQ_MONT, P, R, limbs

fr = st.integers(0, R - 1)
fq = st.integers(0, P - 1)
EDGES_R = [0, 1, 2, R - 1, R - 2, (R - 1) // 2, 1 << 255 if (1 << 255) < R else R - 3, 1 << 64, (1 << 64) - 1]
EDGES_P = [0, 1, 2, P - 1, P - 2, (P - 1) // 2, (P + 1) // 2, 1 << 380, (1 << 64) - 1, 1 << 192]


def fq_array(values):
    a = np.array([limbs(v * FQ_MONT % P, 6) for v in values], dtype=np.uint64).reshape(len(values), 6)
    return a


def fq_ints(a):
    inv = pow(FQ_MONT, -1, P)
    return [int.from_bytes(row.tobytes(), "little") * inv % P for row in a]


def fq_op(op, xs, ys):
    a, b = fq_array(xs), fq_array(ys)
    out = np.zeros_like(a)
    ok = _field.fq_apply(_field.OPS[op], a, b, out)
    return fq_ints(out), list(ok)


@given(st.lists(st.tuples(fr, fr), min_size=1, max_size=40))
def test_fr_ops_match_python(pairs):
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    a, b = FrArray.from_ints(xs), FrArray.from_ints(ys)
    assert (a + b).to_ints() == [(x + y) % R for x, y in pairs]
    assert (a - b).to_ints() == [(x - y) % R for x, y in pairs]
    assert (a * b).to_ints() == [x * y % R for x, y in pairs]
    assert (-a).to_ints() == [-x % R for x in xs]
    assert a.inverse().to_ints() == [pow(x, -1, R) if x else 0 for x in xs]


def test_fr_edge_values():
    a = FrArray.from_ints(EDGES_R)
    for y in EDGES_R:
        b = FrArray.from_ints([y] * len(EDGES_R))
        assert (a * b).to_ints() == [x * y % R for x in EDGES_R]
        assert (a + b).to_ints() == [(x + y) % R for x in EDGES_R]
        assert (a - b).to_ints() == [(x - y) % R for x in EDGES_R]


@given(st.lists(st.tuples(fq, fq), min_size=1, max_size=40))
def test_fq_ops_match_python(pairs):
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    assert fq_op("add", xs, ys)[0] == [(x + y) % P for x, y in pairs]
    assert fq_op("sub", xs, ys)[0] == [(x - y) % P for x, y in pairs]
    assert fq_op("mul", xs, ys)[0] == [x * y % P for x, y in pairs]
    assert fq_op("neg", xs, ys)[0] == [-x % P for x in xs]
    assert fq_op("inv", xs, ys)[0] == [pow(x, -1, P) if x else 0 for x in xs]


def test_fq_edge_values():
    for y in EDGES_P:
        ys = [y] * len(EDGES_P)
        assert fq_op("mul", EDGES_P, ys)[0] == [x * y % P for x in EDGES_P]
        assert fq_op("add", EDGES_P, ys)[0] == [(x + y) % P for x in EDGES_P]
        assert fq_op("sub", EDGES_P, ys)[0] == [(x - y) % P for x in EDGES_P]


@given(st.lists(fq, min_size=1, max_size=20))
def test_fq_sqrt(xs):
    roots, ok = fq_op("sqrt", xs, xs)
    for x, s, good in zip(xs, roots, ok):
        assert bool(good) == (ref.fq_sqrt(x) is not None)
        if good:
            assert s * s % P == x


def fq2_op(op, xs, ys):
    a = np.concatenate([fq_array([x[0] for x in xs]), fq_array([x[1] for x in xs])], axis=1)
    b = np.concatenate([fq_array([y[0] for y in ys]), fq_array([y[1] for y in ys])], axis=1)
    out = np.zeros_like(a)
    ok = _field.fq2_apply(_field.OPS[op], np.ascontiguousarray(a), np.ascontiguousarray(b), out)
    c0, c1 = fq_ints(np.ascontiguousarray(out[:, :6])), fq_ints(np.ascontiguousarray(out[:, 6:]))
    return list(zip(c0, c1)), list(ok)


@given(st.lists(st.tuples(st.tuples(fq, fq), st.tuples(fq, fq)), min_size=1, max_size=20))
def test_fq2_ops_match_reference(pairs):
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    assert fq2_op("mul", xs, ys)[0] == [ref.fq2_mul(x, y) for x, y in pairs]
    assert fq2_op("sqr", xs, ys)[0] == [ref.fq2_mul(x, x) for x in xs]
    assert fq2_op("inv", xs, ys)[0] == [ref.fq2_inv(x) if x != (0, 0) else (0, 0) for x in xs]
    roots, ok = fq2_op("sqrt", xs, xs)
    for x, s, good in zip(xs, roots, ok):
        assert bool(good) == (ref.fq2_sqrt(x) is not None)
        if good:
            assert ref.fq2_mul(s, s) == x


def test_fr_array_conversions(rng):
    values = [rng.randrange(R) for _ in range(257)] + [0, 1, R - 1]
    a = FrArray.from_ints(values)
    assert a.to_ints() == values and len(a) == 260
    assert FrArray.from_bytes(a.to_bytes()) == a
    assert a.to_bytes() == b"".join(v.to_bytes(32, "little") for v in values)
    assert a[3] == values[3] and a[-1] == values[-1]
    assert a[10:20].to_ints() == values[10:20]
    assert FrArray.from_ints_mod([-1, R + 5]).to_ints() == [R - 1, 5]
    # Montgomery form in memory: limbs hold v * 2^256 mod r
    assert int.from_bytes(a.limbs[0].tobytes(), "little") == values[0] * (1 << 256) % R


def test_fr_array_errors():
    with pytest.raises(ScalarRangeError):
        FrArray.from_ints([R])
    with pytest.raises(ScalarRangeError):
        FrArray.from_ints([-1])
    with pytest.raises(InvalidInputError):
        FrArray.from_ints([1.5])
    with pytest.raises(EncodingError):
        FrArray.from_bytes(b"\x00" * 33)
    with pytest.raises(ScalarRangeError, match="element 1"):
        FrArray.from_bytes(bytes(32) + R.to_bytes(32, "little"))
    with pytest.raises(LengthMismatchError):
        FrArray.from_ints([1, 2]) + FrArray.from_ints([1])
    with pytest.raises(InvalidInputError):
        FrArray(np.zeros((3, 5), dtype=np.uint64))
    with pytest.raises(InvalidInputError):
        FrArray([1, 2, 3])
