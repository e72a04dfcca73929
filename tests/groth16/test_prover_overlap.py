# SPDX-License-Identifier: Apache-2.0
"""prove_device's overlap mode: where the backend has a second stream of
work (Backend.beside gives a value) H's transforms are queued first, the
MSMs that do not depend on H (l, a, b_g1, and b_g2 with it) and B's gather
run on that value inside the block, and H's MSM on the backend after the
block has joined; the sums, and so the proofs, equal the mode off and
verify. The CPU backend has one stream: the mode changes nothing there.
Checked on the host's backend with a recording beside block (the GPU's
streams and joins: test_gpu_overlap_emulated.py)."""
import contextlib
import random

import pytest

from porep_prover.backend import Capabilities, get_backend
from porep_prover.circuits import porep_like
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.devices import ProvingDevice
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.groth16.prover import finish, prove_device, synthesize

CPU = get_backend("cpu")
BESIDE = ("h_scalars", "h_from_witness", "msm", "msm_many", "msm_shared", "take")


class Recording:
    """calls of backend's methods, logged as (who, method, the point arrays named)."""

    def __init__(self, backend, who, log, names):
        self.backend, self.who, self.log, self.names = backend, who, log, names

    def _named(self, args):
        found = []
        for a in args:
            items = a if isinstance(a, list) else [a]
            for item in items:
                item = item[0] if isinstance(item, tuple) else item
                if id(item) in self.names:
                    found.append(self.names[id(item)])
        return tuple(found)

    def record(self, method):
        def call(*args, **kwargs):
            self.log.append((self.who, method, self._named(args)))
            return getattr(self.backend, method)(*args, **kwargs)
        return call


class BesideCpu:
    """The host's backend with a beside block of its own: the block's value
    does the host's work, every call logged, its entry and join logged too."""

    name = "beside"
    capabilities = Capabilities(evaluates_witness=False, reference=False)

    def __init__(self, names):
        self.log, self.names = [], names
        self.main = Recording(CPU, "main", self.log, names)

    def __getattr__(self, name):
        return self.main.record(name) if name in BESIDE else getattr(CPU, name)

    @contextlib.contextmanager
    def beside(self):
        self.log.append(("enter",))
        side = Recording(CPU, "side", self.log, self.names)
        try:
            yield type("Side", (), {m: staticmethod(side.record(m)) for m in BESIDE})()
        finally:
            self.log.append(("join",))


@pytest.fixture(scope="module")
def partition():
    seed = random.SystemRandom().randrange(1 << 20)
    r1cs, witness, _ = porep_like(300 + seed % 200, seed=seed)
    return r1cs, witness, insecure_setup(r1cs, warn=False)


def proof_of(be, params, r1cs, witness, matvec, b_g2, overlap, seed):
    assignment = synthesize(params, r1cs, witness, 1, abc_on_device=matvec == "device")
    sums = prove_device(be, params, assignment, 1, b_g2=b_g2, host=CPU, overlap=overlap)
    return finish(CPU, params, assignment, sums, 1, random.Random(seed))


@pytest.mark.parametrize("matvec", ["host", "device"])
@pytest.mark.parametrize("b_g2", [False, True])
def test_overlap_mode_gives_the_same_proofs_with_h_s_msm_after_the_join(partition, matvec, b_g2):
    r1cs, witness, params = partition
    names = {id(getattr(params, q)): q for q in ("h", "l", "a", "b_g1", "b_g2")}
    seed = random.SystemRandom().randrange(1 << 30)
    want = proof_of(CPU, params, r1cs, witness, matvec, b_g2, False, seed)
    public = witness[1:r1cs.num_inputs]
    assert verify(params.vk, public, want)
    be = BesideCpu(names)
    got = proof_of(be, params, r1cs, witness, matvec, b_g2, True, seed)
    assert got == want and verify(params.vk, public, got)
    log = be.log
    enter, join = log.index(("enter",)), log.index(("join",))
    inside, after = log[enter + 1:join], log[join + 1:]
    assert all(who == "side" for who, *_ in inside)                     # nothing on the first stream meanwhile
    assert inside[0][1] in ("h_scalars", "h_from_witness")              # H's transforms queued first
    summed = {q for _, method, arrays in inside[1:] if method.startswith("msm") for q in arrays}
    assert summed == {"l", "a", "b_g1"} | ({"b_g2"} if b_g2 else set())
    assert after == [("main", "msm", ("h",))]                           # H's MSM once joined, alone


def test_the_cpu_backend_ignores_overlap_mode(partition):
    r1cs, witness, params = partition
    seed = random.SystemRandom().randrange(1 << 30)
    with CPU.beside() as side:
        assert side is None
    for matvec in ("host", "device"):
        assert proof_of(CPU, params, r1cs, witness, matvec, True, True, seed) == \
            proof_of(CPU, params, r1cs, witness, matvec, True, False, seed)


@pytest.mark.parametrize("on", [False, True])
def test_prover_overlap_msms_reaches_the_kernel_region(partition, on):
    """The engine's prover.overlap_msms: each partition's kernel region runs
    in overlap mode (one beside block a partition) or not at all; proofs verify."""
    r1cs, witness, params = partition
    be = BesideCpu({id(getattr(params, q)): q for q in ("h", "l", "a", "b_g1", "b_g2")})
    settings = {"engine.partition_workers": 1, "engine.threads": 1, "engine.devices": ["cpu"],
                "prover.overlap_msms": on}
    with Engine(load_config(overrides=settings), devices=[ProvingDevice("fake-gpu", "fake", "gpu", be)]) as engine:
        result = engine.submit(inline_job(params, r1cs, [witness, witness])).result(120)
    assert result.ok and len(result.proofs) == 2
    assert all(verify(params.vk, public, proof) for public, proof in zip(result.public_inputs, result.proofs))
    assert be.log.count(("enter",)) == be.log.count(("join",)) == (2 if on else 0)
