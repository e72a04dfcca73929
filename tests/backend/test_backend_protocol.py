# SPDX-License-Identifier: Apache-2.0
"""Every backend has every method of the Backend protocol and declares its
capabilities; the CPU backend does what a device does from its own memory as
the host does it (take a gather, msm_shared one MSM per set, H from the
witness evaluated here), each checked against the plain computation."""
import random

import numpy as np
import pytest

from porep_prover.backend import Backend, Capabilities, CpuBackend, Flavor, MsmOptions, Prepared, get_backend
from porep_prover.backend.base import NO_ROW, Lane
from porep_prover.circuits import porep_like
from porep_prover.errors import InvalidInputError, LengthMismatchError, UnsatisfiedError
from porep_prover.field.constants import R
from porep_prover.field.fr_array import FrArray
from porep_prover.groth16 import insecure_setup
from porep_prover.groth16.prover import query_scalars, synthesize

CPU = get_backend("cpu")
PROTOCOLS = (Lane, Backend)
METHODS = sorted({name for protocol in PROTOCOLS for name in vars(protocol) if not name.startswith("_")})


def backend_classes():
    gpu = pytest.importorskip("porep_prover.backend.gpu")
    return [CpuBackend, gpu.GpuBackend]


def test_every_backend_has_every_method_and_declares_its_capabilities():
    assert {"take", "msm_shared", "h_and_witness", "h_scalars", "prepare", "release_prepared", "release_points",
            "release_resident", "release_scalars", "region"} <= set(METHODS)
    for cls in backend_classes():
        # defined by the class or a base of its own (GpuBackend's device parts), never by the protocol's stubs
        missing = [name for name in METHODS
                   if not callable(next((vars(k)[name] for k in cls.__mro__ if name in vars(k) and k not in PROTOCOLS),
                                        None))]
        assert not missing, f"{cls.__name__} lacks {missing}"
        assert isinstance(cls.capabilities, Capabilities)
    gpu = pytest.importorskip("porep_prover.backend.gpu")
    assert CpuBackend.capabilities == Capabilities(evaluates_witness=False, reference=True)
    assert gpu.GpuBackend.capabilities == Capabilities(evaluates_witness=True, reference=False,
                                                       stops_between_steps=False)


def test_flavor_is_named_once_and_strings_still_name_it():
    assert Flavor.of("snarkjs") is Flavor.SNARKJS and Flavor.of(Flavor.BELLMAN) is Flavor.BELLMAN
    with pytest.raises(InvalidInputError, match="flavor 'bellmann'"):
        Flavor.of("bellmann")
    rnd = random.Random()
    n = 1 << rnd.randrange(2, 6)
    a, b, c = (FrArray.from_ints([rnd.randrange(1 << 250) for _ in range(n)]) for _ in range(3))
    for flavor in Flavor:
        by_name = CPU.h_poly(a.copy(), b.copy(), c.copy(), 1, flavor.value)
        assert by_name == CPU.h_poly(a.copy(), b.copy(), c.copy(), 1, flavor)
        assert len(by_name) == (n if flavor is Flavor.SNARKJS else n - 1)
    with pytest.raises(InvalidInputError):
        CPU.h_poly(a, b, c, 1, "groth")


@pytest.fixture(scope="module")
def partition():
    seed = random.SystemRandom().randrange(1 << 20)
    r1cs, witness, _ = porep_like(500 + seed % 300, seed=seed)
    return r1cs, witness, insecure_setup(r1cs, warn=False)


def test_cpu_take_is_a_gather(partition):
    r1cs, witness, _ = partition
    for q in "ab":
        got = CPU.take(witness, r1cs.query_index(q, np.uint32))
        assert np.array_equal(got.limbs, query_scalars(r1cs, witness, q, 1).limbs)
    with pytest.raises(InvalidInputError, match=r"index\[1\] is past"):
        CPU.take(witness, np.array([0, len(witness)], dtype=np.uint32))
    with pytest.raises(InvalidInputError, match="uint32"):
        CPU.take(witness, r1cs.query_index("a"))


def test_cpu_msm_shared_is_one_msm_per_set(partition, rng):
    r1cs, witness, params = partition
    k = r1cs.num_inputs
    aux = witness[k:]
    rows = r1cs.query_rows("a")
    got_l, got_a = CPU.msm_shared([(params.l, None), (params.a, rows)], aux, 1)
    idx = r1cs.query_index("a")
    first = int(np.searchsorted(idx, k))
    assert got_l == CPU.msm(params.l, aux, 1)[0]
    assert got_a == CPU.msm(params.a[first:], FrArray(witness.limbs[idx[first:]]), 1)[0]
    b = FrArray.from_ints([rng.randrange(R) for _ in range(len(params.b_g1))])
    b1, b2 = CPU.msm_shared([(params.b_g1, None), (params.b_g2, None)], b, 1)
    assert b1 == CPU.msm(params.b_g1, b, 1)[0] and b2 == CPU.msm(params.b_g2, b, 1)[0]
    bad = rows.copy()
    bad[rng.randrange(len(bad))] = len(params.a)
    with pytest.raises(InvalidInputError, match="past the"):
        CPU.msm_shared([(params.a, bad)], aux, 1)
    with pytest.raises(InvalidInputError, match="uint32"):
        CPU.msm_shared([(params.a, rows.astype(np.int64))], aux, 1)
    with pytest.raises(LengthMismatchError):
        CPU.msm_shared([(params.l[1:], None)], aux, 1)
    assert CPU.msm_shared([(params.a, np.full(len(aux), NO_ROW, np.uint32))], aux, 1)[0].is_zero()


def test_cpu_h_and_witness_is_the_host_s_h(partition):
    r1cs, witness, params = partition
    host = synthesize(params, r1cs, witness, 1)
    want = CPU.h_poly(host.a, host.b, host.c, 1, Flavor.BELLMAN)
    h, kept = CPU.h_and_witness(r1cs, witness, 1)
    assert h == want and kept is witness
    bad = witness.copy()
    bad.limbs[r1cs.num_inputs + 2] = FrArray.from_ints([7]).limbs[0]
    with pytest.raises(UnsatisfiedError):
        CPU.h_and_witness(r1cs, bad, 1)
    CPU.h_and_witness(r1cs, bad, 1, check=False)          # unchecked: the proof fails later, not here


def test_cpu_stages_nothing_and_takes_no_options(partition):
    r1cs, witness, params = partition
    assignment = synthesize(params, r1cs, witness, 1)
    staged = CPU.prepare(assignment, ahead=True)
    assert isinstance(staged, Prepared) and staged.assignment is assignment and staged.arena is None
    CPU.release_prepared(staged)
    CPU.release_scalars(witness)
    CPU.release_points(params.h)
    CPU.release_resident()
    with CPU.region(MsmOptions(tables=True, table_copies=2), overlap=True) as region:
        assert region.main is CPU and region.side is None      # one lane, the backend itself: no option applies
