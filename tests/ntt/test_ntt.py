# SPDX-License-Identifier: Apache-2.0
"""NTT against an O(n^2) DFT over Python ints."""
import pytest

import porep_prover as pp
from porep_prover import FrArray
from porep_prover.errors import DomainSizeError
from porep_prover.backend import get_backend
from porep_prover.field.constants import FR_GENERATOR, R
from porep_prover.ntt import _cpu as ntt_cpu

CPU = get_backend("cpu")


@pytest.fixture(params=[False] + ([True] if ntt_cpu.simd_available() else []),
                ids=lambda on: "ifma" if on else "portable", autouse=True)
def simd_mode(request):
    """Every NTT test runs on the portable path and, where the CPU has it, the IFMA one."""
    before = CPU.simd()
    CPU.simd(request.param)
    yield request.param
    CPU.simd(before)


def dft(xs, inverse=False, coset=False):
    n = len(xs)
    w = pow(FR_GENERATOR, (R - 1) // n, R)
    if inverse:
        w = pow(w, -1, R)
    if coset and not inverse:
        xs = [x * pow(FR_GENERATOR, j, R) % R for j, x in enumerate(xs)]
    out = [sum(x * pow(w, j * k, R) for j, x in enumerate(xs)) % R for k in range(n)]
    if inverse:
        n_inv = pow(n, -1, R)
        out = [v * n_inv % R for v in out]
        if coset:
            g_inv = pow(FR_GENERATOR, -1, R)
            out = [v * pow(g_inv, j, R) % R for j, v in enumerate(out)]
    return out


@pytest.mark.parametrize("log_n", [0, 1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("coset", [False, True])
def test_ntt_matches_dft(log_n, inverse, coset, rng):
    xs = [rng.randrange(R) for _ in range(1 << log_n)]
    got = pp.ntt(FrArray.from_ints(xs), inverse=inverse, coset=coset)
    assert got.to_ints() == dft(xs, inverse, coset)


@pytest.mark.parametrize("log_n", [12, 13, 15, 17])
def test_roundtrip_large(log_n, rng):
    # beyond the cache block (2^12), so the strided stages run too
    xs = FrArray.random(1 << log_n, rng)
    for coset in (False, True):
        ys = pp.ntt(xs, coset=coset, threads=3)
        assert ys != xs
        assert pp.ntt(ys, inverse=True, coset=coset) == xs


def test_large_ntt_spot_check(rng):
    n = 1 << 13
    xs = [rng.randrange(R) for _ in range(n)]
    ys = pp.ntt(FrArray.from_ints(xs)).to_ints()
    w = pow(FR_GENERATOR, (R - 1) // n, R)
    for k in (0, 1, 2, 4095, 4096, n - 1, rng.randrange(n)):
        wk = pow(w, k, R)
        acc, p = 0, 1
        for x in xs:
            acc += x * p
            p = p * wk % R
        assert ys[k] == acc % R


def test_input_untouched_and_errors(rng):
    xs = FrArray.random(64, rng)
    before = xs.copy()
    pp.ntt(xs)
    assert xs == before
    for n in (3, 6, 100):
        with pytest.raises(DomainSizeError):
            pp.ntt(FrArray.random(n, rng))
    with pytest.raises(DomainSizeError):
        pp.ntt(FrArray.zeros(0))
