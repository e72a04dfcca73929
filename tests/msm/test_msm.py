# SPDX-License-Identifier: Apache-2.0
"""MSM against naive double-and-add, Python ints and arkworks."""
import pytest
from py_arkworks_bls12381 import G1Point as ArkG1, G2Point as ArkG2, Scalar

import porep_prover as pp
from porep_prover import FrArray, G1Array, G2Array
from porep_prover.backend import get_backend
from porep_prover.errors import InvalidInputError, LengthMismatchError, UnknownBackendError
from porep_prover.field import reference as ref
from porep_prover.field.constants import R
from porep_prover.msm import _cpu as msm_cpu

CPU = get_backend("cpu")
SIMD_MODES = [False] + ([True] if msm_cpu.simd_available() else [])


@pytest.fixture(params=SIMD_MODES, ids=lambda on: "ifma" if on else "portable", autouse=True)
def simd_mode(request):
    """Every MSM test runs on the portable path and, where the CPU has it, the IFMA one."""
    before = CPU.simd()
    CPU.simd(request.param)
    assert CPU.simd() == request.param
    yield request.param
    CPU.simd(before)


def random_points(cls, rng, n):
    return cls.generator().scale([rng.randrange(1, R) for _ in range(n)])


def naive(points, scalars):
    return CPU.msm_naive(points, scalars)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 31, 100, 255, 256, 257, 1000, 4097])
def test_g1_msm_random_sizes(n, rng):
    pts = random_points(G1Array, rng, n)
    sc = FrArray.random(n, rng)
    assert pp.msm(pts, sc) == naive(pts, sc)


@pytest.mark.parametrize("n", [1, 5, 64, 300, 1025])
def test_g2_msm_random_sizes(n, rng):
    pts = random_points(G2Array, rng, n)
    sc = FrArray.random(n, rng)
    assert pp.msm(pts, sc) == naive(pts, sc)


def test_tiny_msm_against_python_ints(rng):
    for cls, curve in ((G1Array, ref.G1), (G2Array, ref.G2)):
        pts = random_points(cls, rng, 5)
        ks = [rng.randrange(R) for _ in range(5)]
        want = None
        for p, k in zip(pts.to_affine_ints(), ks):
            want = curve.add(want, curve.mul(p, k))
        assert pp.msm(pts, FrArray.from_ints(ks)).to_affine_ints()[0] == want


@pytest.mark.parametrize("cls,ark", [(G1Array, ArkG1), (G2Array, ArkG2)])
def test_msm_matches_arkworks(cls, ark, rng):
    n = 777
    pts = random_points(cls, rng, n)
    ks = [rng.randrange(R) for _ in range(n)]
    size = cls.COMPRESSED
    raw = pts.to_bytes()
    arks = [ark.from_compressed_bytes(raw[i * size:(i + 1) * size]) for i in range(n)]
    want = ark.multiexp_unchecked(arks, [Scalar(k) for k in ks]).to_compressed_bytes()
    assert pp.msm(pts, FrArray.from_ints(ks)).to_bytes() == want


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_special_scalars_and_points(threads, rng):
    n = 5000
    pts = random_points(G1Array, rng, n)
    for ks in ([0] * n, [1] * n, [R - 1] * n, [2] * n,
               [rng.choice([0, 1, 1, 1, R - 1, 2, rng.randrange(R)]) for _ in range(n)]):
        sc = FrArray.from_ints(ks)
        stats = {}
        got = pp.msm(pts, sc, threads=threads, stats=stats)
        assert got == naive(pts, sc)
        assert stats["zeros"] == ks.count(0) and stats["ones"] == ks.count(1)
        assert stats["full"] == n - ks.count(0) - ks.count(1)


def test_repeated_and_cancelling_points(rng):
    base = random_points(G1Array, rng, 3)
    # the same point many times (equal operands in one bucket), its negation, and infinity
    pts = G1Array.concat([base[0:1]] * 600 + [-base[0:1]] * 300 + [G1Array.zeros(50)] + [base[1:3]] * 100)
    n = len(pts)
    for ks in ([7] * n, [rng.randrange(R) for _ in range(n)], [1] * n):
        sc = FrArray.from_ints(ks)
        assert pp.msm(pts, sc) == naive(pts, sc)
    # a sum that cancels to infinity exactly
    pts = G1Array.concat([base, -base])
    sc = FrArray.from_ints([5, 6, 7, 5, 6, 7])
    assert pp.msm(pts, sc).is_zero()


def test_g2_repeated_points(rng):
    p = random_points(G2Array, rng, 1)
    pts = G2Array.concat([p] * 400 + [-p] * 100 + [G2Array.zeros(3)])
    sc = FrArray.from_ints([rng.choice([3, 1, R - 1]) for _ in range(len(pts))])
    assert pp.msm(pts, sc) == naive(pts, sc)


def test_batch_sum(rng):
    for cls in (G1Array, G2Array):
        pts = cls.concat([random_points(cls, rng, 333), cls.zeros(2)])
        assert pp.batch_sum(pts) == pp.msm(pts, FrArray.from_ints([1] * len(pts)))
    assert pp.batch_sum(G1Array.zeros(0)).is_zero()


def test_msm_errors(rng):
    pts = random_points(G1Array, rng, 3)
    with pytest.raises(LengthMismatchError):
        pp.msm(pts, FrArray.random(2, rng))
    with pytest.raises(InvalidInputError):
        pp.msm([1, 2, 3], FrArray.random(3, rng))
    with pytest.raises(UnknownBackendError):
        pp.msm(pts, FrArray.random(3, rng), backend="tpu")
    with pytest.raises(InvalidInputError):
        pp.msm(pts, FrArray.random(3, rng), threads=0)
    assert pp.msm(pts, [1, 2, 3]) == pp.msm(pts, FrArray.from_ints([1, 2, 3]))


def test_fixed_base_products(rng):
    ks = FrArray.random(1000, rng)
    for cls in (G1Array, G2Array):
        base = random_points(cls, rng, 1)
        assert CPU.fixed_base(base, ks, 2) == base.scale(ks.to_ints())


def test_large_msm_streaming_and_degenerate_windows(rng):
    """n past 2^15: windows of 2^12+ buckets stream, unless their digits crowd
    into few buckets (top window, repeated scalars), which take the tree path."""
    n = (1 << 15) + 3
    pts = get_backend("cpu").fixed_base(G1Array.generator(), FrArray.random(n, rng), 2)
    raw = pts.to_bytes()
    arks = [ArkG1.from_compressed_bytes_unchecked(raw[48 * i:48 * i + 48]) for i in range(n)]
    k = rng.randrange(R)
    for ks in ([rng.randrange(R) for _ in range(n)], [k] * n,
               [rng.choice([k, R - k, rng.randrange(R)]) for _ in range(n)]):
        want = ArkG1.multiexp_unchecked(arks, [Scalar(x) for x in ks]).to_compressed_bytes()
        stats = {}
        assert pp.msm(pts, FrArray.from_ints(ks), stats=stats).to_bytes() == want
        assert stats["window_bits"] >= 13
