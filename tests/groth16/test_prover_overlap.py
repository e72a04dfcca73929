# SPDX-License-Identifier: Apache-2.0
"""prove_device's overlap mode: where the backend's region has a side lane
(Backend.region(overlap=True): a second stream of work) H's transforms are
queued first on main, the MSMs that do not depend on H (l, a, b_g1, and b_g2
with it) and B's gather run on the side lane, and H's MSM on main after the
lanes have joined; the sums, and so the proofs, equal the mode off and
verify. The CPU backend has one stream: the mode changes nothing there.
Checked on the host's backend with a recording region (the GPU's streams
and joins: test_gpu_overlap_emulated.py)."""
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
LANE = ("h_scalars", "h_and_witness", "msm", "msm_many", "msm_shared", "take", "release_scalars")


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

    def lane(self):
        """A lane whose every method is the backend's, recorded."""
        return type("Lane", (), {m: staticmethod(self.record(m)) for m in LANE})()


class RecordingRegion:
    """A region whose lanes do the host's work, every call logged (main, and
    side with overlap); its joins logged too."""

    def __init__(self, log, names, overlap):
        self.log = log
        self.main = Recording(CPU, "main", log, names).lane()
        self.side = Recording(CPU, "side", log, names).lane() if overlap else None

    def join(self):
        if self.side is not None:
            self.log.append(("join",))


class OverlapCpu:
    """The host's backend with a region of two lanes where overlap is asked
    for: the region's entry and joins logged beside the lanes' calls."""

    name = "beside"
    capabilities = Capabilities(evaluates_witness=False, reference=False)

    def __init__(self, names):
        self.log, self.names = [], names

    def __getattr__(self, name):
        return getattr(CPU, name)

    @contextlib.contextmanager
    def region(self, plan=None, arrays=None, options=None, overlap=False):
        if overlap:
            self.log.append(("enter",))
        region = RecordingRegion(self.log, self.names, overlap)
        try:
            yield region
        finally:
            region.join()


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
    be = OverlapCpu(names)
    got = proof_of(be, params, r1cs, witness, matvec, b_g2, True, seed)
    assert got == want and verify(params.vk, public, got)
    log = [e for e in be.log if e[1:2] != ("release_scalars",)]
    enter, join = log.index(("enter",)), log.index(("join",))
    first, inside, after = log[enter + 1], log[enter + 2:join], log[join + 1:]
    assert first[:2] in (("main", "h_scalars"), ("main", "h_and_witness"))   # H's transforms queued first, on main
    assert all(who == "side" for who, *_ in inside)                     # then nothing on main until the join
    summed = {q for _, method, arrays in inside if method.startswith("msm") for q in arrays}
    assert summed == {"l", "a", "b_g1"} | ({"b_g2"} if b_g2 else set())
    assert after[0] == ("main", "msm", ("h",))                          # H's MSM once joined, alone
    assert set(after[1:]) <= {("join",)}                                # the region's end joins again: harmless


def test_the_cpu_backend_ignores_overlap_mode(partition):
    r1cs, witness, params = partition
    seed = random.SystemRandom().randrange(1 << 30)
    with CPU.region(overlap=True) as region:
        assert region.side is None and region.main is CPU
    for matvec in ("host", "device"):
        assert proof_of(CPU, params, r1cs, witness, matvec, True, True, seed) == \
            proof_of(CPU, params, r1cs, witness, matvec, True, False, seed)


@pytest.mark.parametrize("on", [False, True])
def test_prover_overlap_msms_reaches_the_kernel_region(partition, on):
    """The engine's prover.overlap_msms: each partition's kernel region runs
    in overlap mode (one region of two lanes a partition) or not at all; proofs verify."""
    r1cs, witness, params = partition
    be = OverlapCpu({id(getattr(params, q)): q for q in ("h", "l", "a", "b_g1", "b_g2")})
    settings = {"engine.partition_workers": 1, "engine.threads": 1, "engine.devices": ["cpu"],
                "prover.overlap_msms": on}
    with Engine(load_config(overrides=settings), devices=[ProvingDevice("fake-gpu", "fake", "gpu", be)]) as engine:
        result = engine.submit(inline_job(params, r1cs, [witness, witness])).result(120)
    assert result.ok and len(result.proofs) == 2
    assert all(verify(params.vk, public, proof) for public, proof in zip(result.public_inputs, result.proofs))
    enters = [i for i, e in enumerate(be.log) if e == ("enter",)]
    assert len(enters) == (2 if on else 0)
    for start, end in zip(enters, enters[1:] + [len(be.log)]):      # each region joined before the next began
        assert ("join",) in be.log[start:end]
    assert on or ("join",) not in be.log
