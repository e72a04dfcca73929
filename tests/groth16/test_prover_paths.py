# SPDX-License-Identifier: Apache-2.0
"""The prover's three assignments (A w, B w, C w on the host; the witness on
a device that evaluates them; a, b, c from the host and the witness on a
device that gathers the queries' scalars) give the same proof bit for bit with the same r,
s, on the CPU and on a device-like backend that keeps its scalars to itself;
the kernel region calls a backend in the order the GPU's launches follow and
gives back every device array it made, whichever way it ends."""
import random

import numpy as np
import pytest

from porep_prover import backend as backends
from porep_prover.backend import Capabilities, CpuBackend, Flavor, get_backend
from porep_prover.circuits import porep_like, square_chain
from porep_prover.errors import DeviceResultError, InvalidInputError
from porep_prover.groth16 import insecure_setup, prove, verify
from porep_prover.groth16.prover import (HostAssignment, WitnessAssignment, finish, prove_device, query_scalars,
                                         synthesize)

CPU = get_backend("cpu")
QUERIES = ("h", "l", "a", "b_g1", "b_g2")


@pytest.fixture(scope="module", params=["porep_like", "square_chain"])
def circuit(request):
    seed = random.SystemRandom().randrange(1 << 20)
    make, m = (porep_like, 600) if request.param == "porep_like" else (square_chain, 400)
    r1cs, witness, public = make(m + seed % 97, seed=seed)      # sizes that are not powers of two
    return r1cs, witness, public, insecure_setup(r1cs, warn=False)


class Held:
    """Scalars in a fake device's memory: no FrArray, so the prover can only
    hand them back to the backend. A slice is a view (it owns nothing)."""

    def __init__(self, values, tag, owner=True):
        self.values, self.tag, self.owner, self.released = values, tag, owner, 0

    def __len__(self):
        return len(self.values)

    def __getitem__(self, rows):
        return Held(self.values[rows], self.tag + "[:]", owner=False)


class DeviceLike(CpuBackend):
    """A device that evaluates A, B, C itself and keeps every scalar it makes
    (Held), recording each call the prover makes of it; the sums are the CPU's."""

    name = "device-like"
    capabilities = Capabilities(evaluates_witness=True, reference=False)

    def __init__(self, params):
        super().__init__()
        self.names = {id(getattr(params, q)): q for q in QUERIES}
        self.calls, self.made = [], []

    def _hold(self, values, tag):
        self.made.append(Held(values, tag))
        return self.made[-1]

    def h_scalars(self, a, b, c, threads, flavor=Flavor.BELLMAN):
        self.calls.append("h_scalars")
        return self._hold(CPU.h_scalars(a, b, c, threads, flavor), "h")

    def h_and_witness(self, r1cs, witness, threads, flavor=Flavor.BELLMAN, check=True):
        self.calls.append("h_and_witness")
        h, _ = CPU.h_and_witness(r1cs, witness, threads, flavor, check)
        return self._hold(h, "h"), self._hold(witness.copy(), "w")

    def take(self, values, index):
        self.calls.append("take")
        return self._hold(CPU.take(values.values, index), "b")

    def upload_scalars(self, values):
        self.calls.append("upload_scalars")
        return self._hold(values.copy(), "w")

    def release_scalars(self, values):
        self.calls.append(("release", values.tag))
        values.released += 1

    def msm(self, points, scalars, threads):
        self.calls.append(("msm", self.names[id(points)]))
        return CPU.msm(points, scalars.values if isinstance(scalars, Held) else scalars, threads)

    def msm_many(self, parts, threads):
        self.calls.append(("msm_many", tuple(self.names[id(p)] for p, _ in parts)))
        return CPU.msm_many([(p, s.values if isinstance(s, Held) else s) for p, s in parts], threads)

    def msm_shared(self, sets, scalars, threads):
        self.calls.append(("msm_shared", tuple(self.names[id(p)] for p, _ in sets)))
        return CPU.msm_shared(sets, scalars.values, threads)


MODES = {"host": {}, "device": {"abc_on_device": True}, "gathers": {"gathers": True}}


def the_proof(be, params, r1cs, witness, mode, b_g2, seed):
    assignment = synthesize(params, r1cs, witness, 1, **MODES[mode])
    sums = prove_device(be, params, assignment, 1, b_g2=b_g2, host=CPU)
    return finish(CPU, params, assignment, sums, 1, rng=random.Random(seed)), sums


@pytest.mark.parametrize("b_g2", [False, True], ids=["B_2 after", "B_2 in the region"])
def test_every_assignment_on_every_backend_gives_one_proof(circuit, b_g2):
    r1cs, witness, public, params = circuit
    seed = random.SystemRandom().randrange(1 << 32)
    want = prove(params, r1cs, witness, rng=random.Random(seed))
    assert verify(params.vk, public, want)
    for be in (CPU, DeviceLike(params)):
        for mode in MODES:
            got, sums = the_proof(be, params, r1cs, witness, mode, b_g2, seed)
            assert got.to_bytes() == want.to_bytes(), (be.name, mode)
            assert (sums.b2_acc is not None) and sums.b2_acc == CPU.msm(params.b_g2, query_scalars(
                r1cs, witness, "b", 1), 1)[0]


def test_the_public_prove_on_a_device_takes_either_assignment(circuit, monkeypatch):
    r1cs, witness, public, params = circuit
    device = DeviceLike(params)
    monkeypatch.setitem(backends._GPU, 0, device)                 # what backend="gpu" gets
    seed = random.SystemRandom().randrange(1 << 32)
    proofs = [prove(params, r1cs, witness, backend=b, matvec=m, rng=random.Random(seed)).to_bytes()
              for b, m in (("cpu", "host"), ("gpu", "host"), ("gpu", "device"))]
    assert proofs[0] == proofs[1] == proofs[2]
    assert "h_and_witness" in device.calls and "h_scalars" in device.calls
    with pytest.raises(InvalidInputError, match="does not evaluate A, B, C"):
        prove(params, r1cs, witness, matvec="device")


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("b_g2", [False, True], ids=["B_2 after", "B_2 in the region"])
def test_kernel_region_calls_the_backend_in_the_gpu_s_order(circuit, mode, b_g2):
    """The order of the backend's calls, which decides the GPU's launches
    and when its memory is given back; every array it made is given back
    once. Gathering, the witness crosses only once H's scalars are given back."""
    r1cs, witness, _, params = circuit
    be = DeviceLike(params)
    assignment = synthesize(params, r1cs, witness, 1, **MODES[mode])
    prove_device(be, params, assignment, 1, b_g2=b_g2, host=CPU)
    if mode != "host":
        want = ["h_and_witness"] if mode == "device" else ["h_scalars"]
        want += [("msm", "h"), ("release", "h")] + (["upload_scalars"] if mode == "gathers" else [])
        want += [("msm_shared", ("l", "a")), "take"]
        want += [("msm_shared", ("b_g1", "b_g2"))] if b_g2 else [("msm", "b_g1")]
        want += [("release", "w"), ("release", "b")]
    else:
        want = ["h_scalars", ("msm", "a"), ("msm_many", ("l", "h")), ("release", "h"), ("msm", "b_g1")]
        want += [("msm", "b_g2")] if b_g2 else []
    assert be.calls == want
    assert [h.released for h in be.made] == [1] * len(be.made)


class FailsAt(DeviceLike):
    """DeviceLike whose MSM over one query's points raises."""

    def __init__(self, params, query):
        super().__init__(params)
        self.query = query

    def msm(self, points, scalars, threads):
        if self.names[id(points)] == self.query:
            raise RuntimeError(f"the device failed in the MSM of {self.query}")
        return super().msm(points, scalars, threads)


@pytest.mark.parametrize("on_device,query", [(False, "a"), (False, "b_g1"), (True, "h"), (True, "b_g1")])
def test_a_failing_region_gives_back_what_it_made(circuit, on_device, query):
    r1cs, witness, _, params = circuit
    be = FailsAt(params, query)
    with pytest.raises(RuntimeError, match=f"MSM of {query}"):
        prove_device(be, params, synthesize(params, r1cs, witness, 1, abc_on_device=on_device), 1, host=CPU)
    assert be.made and [h.released for h in be.made] == [1] * len(be.made)


def test_prove_device_takes_an_assignment_and_the_host_for_a_witness(circuit):
    r1cs, witness, _, params = circuit
    with pytest.raises(InvalidInputError, match="host's backend"):
        prove_device(CPU, params, WitnessAssignment(r1cs, witness), 1)
    with pytest.raises(InvalidInputError, match="not tuple"):
        prove_device(CPU, params, (r1cs, witness), 1)


class WrongL(DeviceLike):
    """DeviceLike whose shared sort gets L wrong (off by the generator)."""

    def msm_shared(self, sets, scalars, threads):
        out = super().msm_shared(sets, scalars, threads)
        return [out[0] + type(out[0]).generator()] + out[1:] if self.calls[-1][1][0] == "l" else out


def test_a_device_fault_on_the_witness_path_is_named(circuit, monkeypatch):
    r1cs, witness, public, params = circuit
    monkeypatch.setitem(backends._GPU, 0, WrongL(params))
    with pytest.raises(DeviceResultError, match=r"L \+ H \(lh_acc\)"):
        prove(params, r1cs, witness, backend="gpu", matvec="device")
    assert not verify(params.vk, public, prove(params, r1cs, witness, backend="gpu", matvec="device", verify=False))


def test_assignments_hold_what_a_device_uploads(circuit):
    r1cs, witness, _, params = circuit
    host = synthesize(params, r1cs, witness, 1)
    assert isinstance(host, HostAssignment) and set(host.arrays()) == {"a", "b", "c", "l_scalars", "a_scalars",
                                                                        "b_scalars"}
    assert host.nbytes == sum(v.limbs.nbytes for v in host.arrays().values())
    kept = synthesize(params, r1cs, witness, 1, abc_on_device=True)
    assert list(kept.arrays()) == ["witness"] and kept.arrays()["witness"] is witness
    assert kept.nbytes == witness.limbs.nbytes
    assert np.array_equal(host.b_scalars.limbs, query_scalars(r1cs, witness, "b", 1).limbs)
