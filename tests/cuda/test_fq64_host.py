# SPDX-License-Identifier: Apache-2.0
"""The FP64-pipe Fq product (cuda/include/porep_prover/fq64.cuh) built for the
host, where IEEE doubles round as on the device: its exact limb splits and
signed Montgomery digits checked against Python integers, without a GPU."""
import shutil
import subprocess

import pytest

from porep_prover.cuda.modules import INCLUDE
from porep_prover.field.constants import P

W = 1 << 48
R_INV = pow(1 << 384, -1, P)

HARNESS = r"""
#include <stdio.h>
#include "porep_prover/fq64.cuh"
/* each line: a's 8 limbs, b's 8 limbs (integers); out: r's 8 limbs */
int main(void)
{
    long long x;
    fq64 a, b, r;
    for (;;) {
        for (int i = 0; i < 16; i++) {
            if (scanf("%lld", &x) != 1) return 0;
            (i < 8 ? a.v[i] : b.v[i - 8]) = (double)x;
        }
        fq64_mul(r, a, b);
        for (int i = 0; i < 8; i++) printf("%.0f ", r.v[i]);
        printf("\n");
    }
}
"""


@pytest.fixture(scope="module")
def fq64_mul(tmp_path_factory):
    """Multiplies limb vectors through the header's fq64_mul, built with the host's C++ compiler."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    d = tmp_path_factory.mktemp("fq64")
    (d / "harness.cpp").write_text(HARNESS)
    exe = d / "harness"
    subprocess.run([cxx, "-O2", "-ffp-contract=off", f"-I{INCLUDE[0]}", str(d / "harness.cpp"), "-o", str(exe), "-lm"],
                   check=True)

    def run(pairs):
        text = "".join(" ".join(map(str, a + b)) + "\n" for a, b in pairs)
        out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout
        return [[int(v) for v in line.split()] for line in out.splitlines()]
    return run


def unsigned_limbs(v):
    return [(v >> (48 * k)) % W for k in range(8)]


def signed_limbs(v, rng):
    """v (|v| < p) in 8 limbs: the low seven signed in [-2^47, 2^47], each
    chosen at random between the two digits that fit, the top one the rest."""
    out = []
    for _ in range(7):
        d = v % W
        if d > W // 2 or (d and rng.random() < 0.3 and d - W >= -W // 2):
            d -= W
        out.append(d)
        v = (v - d) // W
    return out + [v]


def value(limbs):
    return sum(x << (48 * k) for k, x in enumerate(limbs))


def test_products_match_python(fq64_mul, rng):
    """a b / 2^384 mod p for canonical and signed-limb inputs (|a|, |b| < p),
    edge values included; every output below 0.63 p in magnitude, its low
    limbs within [-2^47, 2^47]: the bounds that let outputs feed inputs."""
    edge = [0, 1, P - 1, 1 - P, (1 << 384) % P, W - 1, (W - 1) << 288, P >> 1]
    vals = [(a, b) for a in edge for b in edge]
    vals += [(rng.randrange(P), rng.randrange(P)) for _ in range(2000)]
    vals += [(rng.randrange(1 - P, P), rng.randrange(1 - P, P)) for _ in range(2000)]
    pairs = [(unsigned_limbs(a) if a >= 0 and i % 2 else signed_limbs(a, rng), signed_limbs(b, rng))
             for i, (a, b) in enumerate(vals)]
    assert all(value(la) == a and value(lb) == b for (a, b), (la, lb) in zip(vals, pairs))
    got = fq64_mul(pairs)
    assert len(got) == len(vals)
    for (a, b), r in zip(vals, got):
        assert (value(r) - a * b * R_INV) % P == 0
        assert abs(value(r)) < 0.63 * P
        assert all(abs(x) <= W // 2 for x in r[:7])


def test_chains_stay_exact(fq64_mul, rng):
    """Outputs fed back as inputs, 60 times: the signed form is closed."""
    xs = [rng.randrange(P) for _ in range(200)]
    ys = [rng.randrange(P) for _ in range(200)]
    cur = [unsigned_limbs(x) for x in xs]
    for _ in range(60):
        cur = fq64_mul([(c, unsigned_limbs(y)) for c, y in zip(cur, ys)])
    for x, y, r in zip(xs, ys, cur):
        assert value(r) % P == x * pow(y * R_INV, 60, P) % P
