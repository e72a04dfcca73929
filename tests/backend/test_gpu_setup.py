# SPDX-License-Identifier: Apache-2.0
"""Parameters made on the GPU with the fixed-base products downloaded
straight into the parameters' arrays (insecure_setup direct=True,
GpuFixedBase.fixed_base_into) against the CPU's, bit for bit, for the same
toxic waste (marked gpu: skipped without a CUDA device; the same host code
runs on an emulated device in tests/msm/test_fixed_base_emulated.py)."""
import importlib
import random

import numpy as np
import pytest

from porep_prover import FrArray, G1Array, G2Array
from porep_prover.backend import get_backend, gpu_available
from porep_prover.circuits import porep_like
from porep_prover.field.constants import R
from porep_prover.groth16 import insecure_setup, prove, verify

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no CUDA device")]

CPU = get_backend("cpu")
FIXED_BASE = importlib.import_module("porep_prover.msm.gpu.fixed_base")


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
def test_fixed_base_into_matches_cpu_in_chunks(gpu, cls, rng, monkeypatch):
    n, chunk = rng.randrange(2000, 5000), rng.randrange(300, 1500)
    monkeypatch.setattr(FIXED_BASE, "CHUNK", chunk)
    ints = [rng.randrange(R) for _ in range(n)]
    ints[:6] = [0, 1, R - 1, 255, 1 << 200, (255 << 248) % R]
    scalars = FrArray.from_ints(ints)
    base = cls.generator().scale([rng.randrange(1, R)])
    done = []
    got = gpu.fixed_base_ops.fixed_base_into(base, scalars, done.append)
    assert np.array_equal(got.limbs, CPU.fixed_base(base, scalars, 2).limbs)
    assert done == [min(n, s + chunk) for s in range(0, n, chunk)]


def test_direct_setup_on_gpu_equals_cpu_and_proves(rng, monkeypatch):
    r1cs, witness, public = porep_like(3000 + rng.randrange(500))
    seed = rng.randrange(1 << 30)
    monkeypatch.setattr(FIXED_BASE, "CHUNK", 1000)
    told = []
    direct = insecure_setup(r1cs, rng=random.Random(seed), backend="gpu", warn=False, direct=True,
                            progress=lambda q, done, total: told.append(q))
    on_cpu = insecure_setup(r1cs, rng=random.Random(seed), backend="cpu", warn=False)
    for q in ("h", "l", "a", "b_g1", "b_g2"):
        assert np.array_equal(getattr(direct, q).limbs, getattr(on_cpu, q).limbs), q
    assert np.array_equal(direct.vk.ic.limbs, on_cpu.vk.ic.limbs)
    assert set(told) == {"ic", "h", "l", "a", "b_g1", "b_g2"}
    assert verify(direct.vk, public, prove(direct, r1cs, witness, backend="gpu", rng=rng))
