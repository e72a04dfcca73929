"""A set's parameters as the engine loads them: planned from their shape
(a provider's srs_shape, before they are loaded), refused once where they
cannot fit alone (later jobs of the key refused at once, nothing loaded or
made again), refused beside other sets only while those stay; and a
provider's sets kept while in use (engine.KeptParams). On the CPU."""
import collections
import gc
import logging
import threading

import pytest

from porep_prover.circuits import porep_like
from porep_prover.engine import Engine, Job, KeptParams, Registry, SrsShape, load_config
from porep_prover.errors import HostMemoryError, JobFailedError
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.memory.host_plan import Workers, make_plan
from porep_prover.memory.sizes import GIB
from porep_prover.memory.workload import Workload


@pytest.fixture(scope="module")
def circuit():
    r1cs, _, _ = porep_like(700)
    params = insecure_setup(r1cs, warn=False)
    return params, r1cs, [porep_like(700, seed=s)[1] for s in range(4)]


class Provider:
    """An inline circuit's provider of key `key`, counting its calls."""

    def __init__(self, kind, circuit, key=None):
        self.kinds, self.key = (kind,), key or kind
        self.params, self.r1cs, self.witnesses = circuit
        self.calls = collections.Counter()

    def srs_key(self, job):
        return self.key

    def load_srs(self, job):
        self.calls["load_srs"] += 1
        return self.params

    def circuit(self, job):
        return self.r1cs

    def synthesize(self, job, partition, threads):
        return self.r1cs, self.witnesses[partition]


class ShapedProvider(Provider):
    """Provider that says its parameters' shape before loading them (shape: what it says; default the true one)."""

    def __init__(self, kind, circuit, key=None, shape=None):
        super().__init__(kind, circuit, key)
        self.shape = shape

    def srs_shape(self, job):
        self.calls["srs_shape"] += 1
        return self.shape if self.shape is not None else SrsShape.of(self.params, False)


def engine_with(*providers, budget_gib=None, workers=2):
    registry = Registry()
    for p in providers:
        registry.add_provider(p)
    cfg = {"engine.threads": 1, "engine.devices": ["cpu"], "engine.partition_workers": workers}
    if budget_gib is not None:
        cfg["engine.memory_budget_gib"] = budget_gib
    return Engine(load_config(overrides=cfg), registry=registry)


def refusals(engine, kind, jobs=3, partitions=2):
    """The refusals of `jobs` jobs of kind submitted at once (each its HostMemoryError's text)."""
    handles = [engine.submit(Job(kind, partitions)) for _ in range(jobs)]
    texts = []
    for handle in handles:
        with pytest.raises(JobFailedError) as failed:
            handle.result(60)
        assert isinstance(failed.value.__cause__, HostMemoryError), failed.value
        texts.append(str(failed.value.__cause__))
    return texts


def test_a_set_whose_shape_cannot_fit_is_refused_before_it_is_loaded_and_once(circuit):
    """The process alone fills the budget: the set is refused from its
    shape, load_srs never called; every later job of the key is refused at
    once with the same error, its shape not even asked again."""
    provider = ShapedProvider("shaped", circuit)
    with engine_with(provider, budget_gib=1.0001) as engine:
        texts = refusals(engine, "shaped")
        assert not [e for e in engine.timeline.events() if e.event == "SYNTH_START"]
        assert engine.status()["memory_in_flight"] == 0 and not engine.srs.status()
        assert engine.status()["memory_held"] == engine.memory.status()["memory_held"] == 1 << 30
        with pytest.raises(HostMemoryError):
            engine.preload(Job("shaped", 1))
    assert provider.calls == {"srs_shape": 1}
    assert len(set(texts)) == 1 and "does not fit a host budget of 1.0 GiB" in texts[0] and "\n" not in texts[0]
    assert "shaped" in texts[0] and "engine.memory_budget_gib" in texts[0]


def test_a_set_without_a_shape_is_loaded_once_and_refused_once(circuit):
    """A provider that does not say the shape: its set is loaded, planned,
    refused; exactly one load_srs across several jobs of its key (and the
    partitions that waited for that load)."""
    provider = Provider("plain", circuit)
    with engine_with(provider, budget_gib=1.0001) as engine:
        texts = refusals(engine, "plain", jobs=4)
        assert not engine.srs.status()
    assert provider.calls == {"load_srs": 1} and len(set(texts)) == 1


def test_a_refusal_beside_other_sets_holds_only_while_they_stay(circuit):
    """Room for one set at a time: the second key is refused beside the
    first, before its parameters are loaded, and loaded (once) after the
    first is evicted."""
    params, r1cs, ws = circuit
    alone = make_plan(Workload.of(params, r1cs), Workers(2, 0, 2), 1 << 50)
    budget = alone.base.total + alone.held_bytes + alone.partition.total + alone.held_bytes // 2
    first, second = ShapedProvider("first", circuit), ShapedProvider("second", circuit)
    with engine_with(first, second, budget_gib=budget / GIB) as engine:
        assert engine.prove(Job("first", 2), timeout=60).ok
        (text,) = refusals(engine, "second", jobs=1, partitions=1)
        assert "beside 1 other loaded sets" in text and second.calls == {"srs_shape": 1}
        assert engine.evict_srs("first") is not None
        results = [engine.prove(Job("second", 2), timeout=60) for _ in range(2)]
    assert all(r.ok for r in results)
    assert all(verify(params.vk, p, proof) for r in results for p, proof in zip(r.public_inputs, r.proofs))
    assert second.calls == {"srs_shape": 2, "load_srs": 1}


def test_a_shape_the_set_belies_is_planned_again_from_the_set(circuit, caplog):
    params, r1cs, ws = circuit
    true = SrsShape.of(params, False)
    wrong = SrsShape(true.h, true.l, true.a, true.b_g1, true.b_g2 + 5, true.inputs)
    provider = ShapedProvider("belied", circuit, shape=wrong)
    with caplog.at_level(logging.WARNING, "porep_prover.engine"), engine_with(provider) as engine:
        result = engine.prove(Job("belied", 2), timeout=60)
        plan = engine.plans.get("belied")
    assert result.ok and any("planned again" in r.message for r in caplog.records)
    held = {item.name: item.nbytes for item in plan.held}
    assert held["SRS points"] == Workload.of(params).srs_bytes


def test_a_shape_that_is_no_shape_fails_its_job(circuit):
    provider = ShapedProvider("garbled", circuit, shape={"h": 1})
    with engine_with(provider) as engine:
        with pytest.raises(JobFailedError, match="srs_shape of provider ShapedProvider .* not an SrsShape"):
            engine.prove(Job("garbled", 1), timeout=60)
    assert provider.calls["load_srs"] == 0


def test_the_shape_of_a_circuit_is_the_shape_of_its_parameters(circuit):
    params, r1cs, _ = circuit
    assert SrsShape.of_circuit(r1cs) == SrsShape.of(params, False)
    assert SrsShape.of_circuit(r1cs, mapped=True).mapped
    shape = SrsShape.of(params, False)
    assert Workload.of_shape(shape, r1cs) == Workload.of(params, r1cs)
    workload = Workload.of_shape(shape)
    assert [a.count for a in workload.arrays] == [len(getattr(params, n)) for n in ("h", "l", "a", "b_g1", "b_g2")]
    assert [a.group for a in workload.arrays] == [getattr(params, n).GROUP for n in ("h", "l", "a", "b_g1", "b_g2")]
    assert workload.variables == r1cs.num_variables and workload.domain == r1cs.domain_size
    assert workload.matrix_bytes == 0 and Workload.of(params, r1cs, True).matrix_bytes == r1cs.device_bytes


@pytest.mark.parametrize("tables", [False, True])
def test_a_gpu_plans_a_set_s_shape_as_it_plans_the_set(circuit, tables):
    """The GPU backend's device plan (its window tables counted too) reads
    a set's lengths and groups alone: its plan of the set's shape, before
    the set exists, is its plan of the set, and its window tables are the
    MSM side's (none without them). Pure arithmetic: no device."""
    import types
    GpuBackend = pytest.importorskip("porep_prover.backend.gpu").GpuBackend
    from porep_prover.msm.gpu.plan import table_copies, table_plan
    params, r1cs, _ = circuit
    be = GpuBackend.__new__(GpuBackend)
    be.msm_ops = types.SimpleNamespace(tables=tables, table_copies=None, tuning=types.SimpleNamespace(table_bits=None))
    for matrices in (None, r1cs):
        for gathers in (False, True):
            said = be.device_plan(Workload.of_shape(SrsShape.of(params, False), matrices, True), 8 * GIB, 2, True,
                                  gathers)
            assert said == be.device_plan(Workload.of(params, matrices, True), 8 * GIB, 2, True, gathers)
            assert said.table_copies == (table_copies(*table_plan(len(params.h), 1)) if tables else 0)


# ------------------------------------------------------------ a provider's sets kept while in use

class Made:
    """Parameters made by a count (a stand-in for a set: anything a weak reference can hold)."""


def test_kept_params_hand_out_one_set_while_it_is_held_and_free_it_after():
    kept, made = KeptParams(), []

    def make():
        made.append(Made())
        return made[-1]
    held = kept.get("k", make)
    assert kept.get("k", make) is held and len(made) == 1 and kept.keys() == ["k"]
    other = kept.get("other", make)
    assert other is not held and len(made) == 2
    del held, other
    made.clear()
    gc.collect()
    assert kept.keys() == []                     # nothing holds them: freed
    again = kept.get("k", make)
    assert len(made) == 1 and again is made[0]


def test_kept_params_load_a_key_once_for_callers_at_once():
    kept, made, started, release = KeptParams(), [], threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(10)
        made.append(Made())
        return made[-1]
    got = []
    first = threading.Thread(target=lambda: got.append(kept.get("k", slow)))
    first.start()
    started.wait(10)
    second = threading.Thread(target=lambda: got.append(kept.get("k", slow)))
    second.start()
    second.join(0.2)
    assert second.is_alive()          # waits for the first load
    release.set()
    first.join(10)
    second.join(10)
    assert len(made) == 1 and got[0] is got[1]

    def fails():
        raise RuntimeError("no parameters")
    with pytest.raises(RuntimeError):
        kept.get("bad", fails)
    assert kept.get("bad", Made) is not None     # a failed load keeps nothing: the next one loads


class KeptProvider(Provider):
    """Provider whose parameters are made (counted) and kept while in use, as the porep providers keep theirs."""

    kept = KeptParams()

    def load_srs(self, job):
        def make():
            self.calls["made"] += 1
            params = self.params
            return type(params)(params.vk, params.h, params.l, params.a, params.b_g1, params.b_g2)
        self.calls["load_srs"] += 1
        return self.kept.get(self.key, make)


def test_a_provider_s_set_is_made_once_while_any_holds_it(circuit):
    """Two jobs, an eviction while a caller holds the set, a second engine:
    made once; evicted with nothing else holding it, it is freed, and made
    again for the next job."""
    provider = KeptProvider("kept", circuit)
    with engine_with(provider) as engine:
        assert all(engine.prove(Job("kept", 2), timeout=60).ok for _ in range(2))
        held = provider.load_srs(Job("kept", 1))         # a caller of the provider holds the set
        assert engine.evict_srs("kept") is not None
        assert engine.prove(Job("kept", 1), timeout=60).ok
    with engine_with(provider) as engine:
        assert engine.prove(Job("kept", 1), timeout=60).ok
        assert provider.calls["made"] == 1
        del held
        assert engine.evict_srs("kept") is not None
        gc.collect()
        assert provider.kept.keys() == []
        assert engine.prove(Job("kept", 1), timeout=60).ok
    assert provider.calls["made"] == 2
