# SPDX-License-Identifier: Apache-2.0
"""The engine as a long-running host uses it: memory flat over thousands of
jobs, plugins that hang or block held to their time limits, a bounded
shutdown whatever a plugin does, errors a retry cannot mend failed at once,
several engines with their own settings in one process."""
import gc
import logging
import os
import random
import sys
import threading
import time
import weakref

import pytest

from porep_prover.backend import CpuBackend, Flavor
from porep_prover.circuits import square_chain
from porep_prover.engine import Engine, Job, inline_job, load_config, stages
from porep_prover.engine.devices import ProvingDevice
from porep_prover.engine.inline import InlineProvider, default_registry
from porep_prover.engine.lifecycle import STOP_GRACE_SECONDS, SwitchInterval
from porep_prover.engine.timeline import Timeline, analyze
from porep_prover.errors import (CircuitFormatError, DeviceResultError, InvalidInputError, JobCancelledError,
                                 JobFailedError, KeyIntegrityError, ParamsMismatchError, PluginTimeoutError,
                                 UnsatisfiedError, WitnessError)
from porep_prover.groth16 import insecure_setup, verify, write_mapped


@pytest.fixture(scope="module")
def circuit():
    size = 40 + random.randrange(30)
    r1cs, _, _ = square_chain(size)
    params = insecure_setup(r1cs, warn=False)
    witnesses = [square_chain(size, seed=s)[1] for s in range(3)]
    return params, r1cs, witnesses


def config(**extra):
    base = {"engine.partition_workers": 1, "engine.threads": 1, "engine.devices": ["cpu"]}
    base.update(extra)
    return load_config(overrides=base)


def with_providers(*providers):
    registry = default_registry()
    for provider in providers:
        registry.add_provider(provider)
    return registry


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Payload:
    """A job's payload: bytes of its own (an object a weak reference can tell is no longer held)."""

    def __init__(self, size: int):
        self.data = bytearray(os.urandom(16)) * (size // 16)


class TinyProvider:
    """Jobs of kind "tiny": one precomputed circuit and witness for every partition."""
    kinds = ("tiny",)

    def __init__(self, params, r1cs, witness):
        self.params, self.r1cs, self.witness = params, r1cs, witness

    def srs_key(self, job):
        return "tiny"

    def load_srs(self, job):
        return self.params

    def synthesize(self, job, partition, threads):
        return self.r1cs, self.witness


class Stand:
    """What the groth16 steps hand on, in place of an assignment, the sums and a proof."""
    nbytes = 4096


def test_memory_stays_flat_over_thousands_of_jobs(circuit, monkeypatch):
    """Jobs with 64 KiB payloads through every stage (the groth16 steps stood
    in for, so that a job costs the engine's own work only): after a
    warm-up, RSS and the count of live objects stay flat, and a finished
    job's payload is held by nothing in the engine."""
    params, r1cs, ws = circuit
    # every event is logged, to a handler that keeps nothing (the test's log capture would keep them all)
    timeline_log = logging.getLogger("porep_prover.timeline")
    monkeypatch.setattr(timeline_log, "propagate", False)
    monkeypatch.setattr(timeline_log, "handlers", [logging.NullHandler()])
    monkeypatch.setattr(timeline_log, "level", logging.INFO)
    monkeypatch.setattr(stages, "synthesize", lambda *a, **k: Stand())
    monkeypatch.setattr(stages, "prove_device", lambda *a, **k: Stand())
    monkeypatch.setattr(stages, "finish", lambda *a, **k: Stand())
    settings = {"prover.verify": False, "engine.timeline_events": 3000, "engine.partition_workers": 2}
    engine = Engine(config(**settings), registry=with_providers(TinyProvider(params, r1cs, ws[0])))

    def run(count: int, sample: list | None = None) -> None:
        for start in range(0, count, 200):
            handles = [engine.submit(Job("tiny", random.randrange(1, 3), Payload(64 << 10)))
                       for _ in range(min(200, count - start))]
            if sample is not None:
                sample.append(weakref.ref(handles[0].job.payload))
            assert all(h.result(60).ok for h in handles)
            del handles

    try:
        run(1000)                                  # warm-up: the timeline's ring fills, the allocator settles
        gc.collect()
        rss, objects = rss_bytes(), len(gc.get_objects())
        sample = []
        t = time.perf_counter()
        run(3000, sample)
        seconds = time.perf_counter() - t
        gc.collect()
        grown, more = rss_bytes() - rss, len(gc.get_objects()) - objects
        status = engine.status()
    finally:
        engine.shutdown()
    assert grown < 16 << 20, f"RSS grew {grown / 2**20:.1f} MiB over 3000 jobs (their payloads: 188 MiB)"
    assert more < 2000, f"{more} more live objects after 3000 jobs"
    assert not [ref for ref in sample if ref() is not None], "a finished job's payload is still held"
    assert status["jobs_active"] == 0 and status["jobs_total"] == status["jobs_succeeded"] == 4000
    assert status["timeline_events"]["kept"] == 3000 and status["timeline_events"]["emitted"] > 4000 * 10
    assert status["memory_in_flight"] == status["memory_pending"] == 0
    print(f"{seconds / 3000 * 1e6:.0f} us a job, RSS {grown / 2**20:+.1f} MiB, {more:+d} objects")


class HangingProvider(InlineProvider):
    """Kind "hang": `where` ("synthesize" or "load_srs") blocks until release is set."""
    kinds = ("hang",)

    def __init__(self, where: str):
        self.where, self.release, self.calls = where, threading.Event(), 0

    def srs_key(self, job):
        return f"hang:{id(job)}"

    def load_srs(self, job):
        if self.where == "load_srs":
            self.calls += 1
            self.release.wait()
        return super().load_srs(job)

    def synthesize(self, job, partition, threads):
        if self.where == "synthesize":
            self.calls += 1
            self.release.wait()
        return super().synthesize(job, partition, threads)


def hanging_job(params, r1cs, ws):
    job = inline_job(params, r1cs, ws[:1])
    job.kind = "hang"
    return job


@pytest.mark.parametrize("where", ["synthesize", "load_srs"])
def test_a_hung_provider_fails_its_job_and_the_others_go_on(circuit, where):
    """One synthesis worker: a provider call that never returns fails its job
    at engine.provider_timeout_seconds (not retried), and the jobs after it
    are proved."""
    params, r1cs, ws = circuit
    provider = HangingProvider(where)
    limit = 0.3 + random.random() * 0.3
    try:
        with Engine(config(**{"engine.provider_timeout_seconds": limit}), registry=with_providers(provider)) as e:
            t = time.monotonic()
            stuck = e.submit(hanging_job(params, r1cs, ws))
            good = [e.submit(inline_job(params, r1cs, ws[:2])) for _ in range(2)]
            with pytest.raises(JobFailedError, match="not retried") as info:
                stuck.result(30)
            assert limit <= time.monotonic() - t < limit + 10
            for h in good:
                result = h.result(60)
                assert all(verify(params.vk, p, proof) for p, proof in zip(result.public_inputs, result.proofs))
        cause = info.value.__cause__
        assert isinstance(cause, PluginTimeoutError) and where in cause.plugin and cause.seconds == limit
        assert provider.calls == 1 and analyze(e.timeline.events())["retries"] == 0
    finally:
        provider.release.set()


class RecordingSink:
    def __init__(self, block: threading.Event | None = None):
        self.block, self.jobs = block, []

    def deliver(self, result):
        self.jobs.append(result.job.id)
        if self.block is not None:
            self.block.wait()


def test_a_blocking_sink_holds_up_neither_the_other_sinks_nor_the_jobs(circuit, caplog):
    params, r1cs, ws = circuit
    release = threading.Event()
    registry = default_registry()
    stuck, fast = RecordingSink(release), RecordingSink()
    registry.add_sink("stuck", stuck)
    registry.add_sink("fast", fast)
    limit = 0.2 + random.random() * 0.2
    cfg = config(**{"engine.result_sinks": ["stuck", "fast"], "engine.sink_timeout_seconds": limit})
    try:
        with caplog.at_level("ERROR", logger="porep_prover.engine"):
            engine = Engine(cfg, registry=registry)
            handles = [engine.submit(inline_job(params, r1cs, ws[:1])) for _ in range(4)]
            for h in handles:
                assert h.result(60).ok                 # no handle waits on a sink
            ids = [h.job.id for h in handles]
            deadline = time.monotonic() + 30
            while (sorted(fast.jobs) != sorted(ids) or not engine.status()["plugin_calls_stuck"]) and \
                    time.monotonic() < deadline:
                time.sleep(0.02)
            assert engine.status()["plugin_calls_stuck"] == ["sink.stuck"]
            t = time.monotonic()
            engine.shutdown(wait=False)
            assert time.monotonic() - t < STOP_GRACE_SECONDS + 3
        assert sorted(fast.jobs) == sorted(ids) and len(stuck.jobs) == 1
        assert "has not returned within" in caplog.text and "is not delivered to it" in caplog.text
    finally:
        release.set()


@pytest.mark.parametrize("wait", [False, True])
def test_shutdown_is_bounded_with_a_hung_provider_and_a_hung_sink(circuit, wait):
    """A provider with no time limit that never returns and a sink that never
    returns: shutdown(wait=False), or shutdown(wait=True, timeout=T), returns
    in bounded time and every handle is resolved."""
    params, r1cs, ws = circuit
    provider, release = HangingProvider("synthesize"), threading.Event()
    registry = with_providers(provider)
    registry.add_sink("stuck", RecordingSink(release))
    limit = 0.3
    cfg = config(**{"engine.provider_timeout_seconds": 0, "engine.result_sinks": ["stuck"],
                    "engine.sink_timeout_seconds": limit})
    try:
        engine = Engine(cfg, registry=registry)
        handles = [engine.submit(hanging_job(params, r1cs, ws)) for _ in range(3)]
        time.sleep(0.2)                                      # the worker is in the provider's call
        t = time.monotonic()
        if wait:
            engine.shutdown(wait=True, timeout=1.0)
        else:
            engine.shutdown(wait=False)
        took = time.monotonic() - t
        assert took < (1.0 if wait else 0) + 2 * limit + 3, took
        for h in handles:
            with pytest.raises(JobCancelledError):
                h.result(0)
        assert not [t for t in threading.enumerate() if t.name.startswith(("synth", "cpu.w", "finalize"))
                    and t.is_alive() and not t.name.endswith(".provider")]
    finally:
        provider.release.set()
        release.set()


class FailingProvider(InlineProvider):
    """Kind "failing": every synthesize raises exc (counted)."""
    kinds = ("failing",)

    def __init__(self, exc):
        self.exc, self.calls = exc, 0

    def synthesize(self, job, partition, threads):
        self.calls += 1
        raise self.exc


@pytest.mark.parametrize("exc, retried", [
    (InvalidInputError("bad"), False), (WitnessError("short"), False), (ParamsMismatchError("other"), False),
    (CircuitFormatError("malformed"), False), (UnsatisfiedError("row 3", 3), False),
    (KeyIntegrityError("damaged"), False), (DeviceResultError("fault"), True), (RuntimeError("flaky"), True),
    (OSError("disk"), True)])
def test_errors_a_retry_cannot_mend_are_not_retried(circuit, exc, retried):
    params, r1cs, ws = circuit
    provider = FailingProvider(exc)
    retries = random.randrange(1, 4)
    job = inline_job(params, r1cs, ws[:1])
    job.kind = "failing"
    with Engine(config(**{"prover.max_retries": retries}), registry=with_providers(provider)) as engine:
        with pytest.raises(JobFailedError) as info:
            engine.prove(job, timeout=60)
    assert info.value.__cause__ is exc
    assert provider.calls == (retries + 1 if retried else 1)
    assert ("not retried" in str(info.value)) is not retried
    assert analyze(engine.timeline.events())["retries"] == (retries if retried else 0)


class ThreadsBackend(CpuBackend):
    """The CPU backend as a device, recording the thread counts its H step is given."""
    name = "threads"

    def __init__(self):
        super().__init__()
        self.threads = []

    def h_poly(self, a, b, c, threads, flavor=Flavor.BELLMAN):
        self.threads.append(threads)
        return super().h_poly(a, b, c, threads, flavor)


class ThreadsProvider(InlineProvider):
    def __init__(self, kind):
        self.kinds, self.threads = (kind,), []

    def synthesize(self, job, partition, threads):
        self.threads.append(threads)
        return super().synthesize(job, partition, threads)


def test_two_engines_with_different_settings_in_one_process(circuit):
    """Each engine runs with its own threads, budget and switch interval; the
    interval (the process's) is the shortest asked while both run, and is
    put back when the last one stops."""
    params, r1cs, ws = circuit
    before = sys.getswitchinterval()
    asked = [{"engine.threads": 1, "engine.synthesis_threads": 2, "engine.memory_budget_gib": 3.5,
              "engine.switch_interval_ms": 0.5},
             {"engine.threads": 3, "engine.synthesis_threads": 1, "engine.memory_budget_gib": 2.5,
              "engine.switch_interval_ms": 0.2}]
    engines, providers, backends = [], [], []
    for i, extra in enumerate(asked):
        providers.append(ThreadsProvider(f"kind{i}"))
        backends.append(ThreadsBackend())
        engines.append(Engine(config(**extra), registry=with_providers(providers[-1]),
                              devices=[ProvingDevice("cpu", f"cpu{i}", "cpu", backends[-1])]))
        assert sys.getswitchinterval() == pytest.approx(min([before] + [a["engine.switch_interval_ms"] / 1e3
                                                                        for a in asked[:i + 1]]))
    handles = []
    for i, engine in enumerate(engines):
        job = inline_job(params, r1cs, ws)
        job.kind = f"kind{i}"
        handles.append(engine.submit(job))
    for h in handles:
        assert h.result(60).ok
    for engine, extra, provider, backend in zip(engines, asked, providers, backends):
        assert set(provider.threads) == {extra["engine.synthesis_threads"]}
        assert set(backend.threads) == {extra["engine.threads"]}
        assert engine.status()["memory_budget"] == int(extra["engine.memory_budget_gib"] * 2**30)
    engines[1].shutdown()
    assert sys.getswitchinterval() == pytest.approx(min(before, 0.0005))
    engines[0].shutdown()
    assert sys.getswitchinterval() == before


def test_switch_interval_knob_keeps_a_change_made_by_someone_else():
    knob, before = SwitchInterval(), sys.getswitchinterval()
    try:
        first = knob.hold(0.001)
        assert sys.getswitchinterval() == pytest.approx(min(before, 0.001))
        assert knob.hold(0) is None                       # 0: no request
        sys.setswitchinterval(0.002)                      # the application's own choice, while an engine runs
        second = knob.hold(0.0004)
        assert sys.getswitchinterval() == pytest.approx(0.0004)
        knob.release(second)
        assert sys.getswitchinterval() == pytest.approx(0.001)
        knob.release(first)
        knob.release(first)                               # twice: nothing more
        assert sys.getswitchinterval() == pytest.approx(0.002)   # theirs, not the interpreter's first
    finally:
        sys.setswitchinterval(before)


def test_timeline_keeps_its_last_events():
    size = random.randrange(3, 20)
    timeline = Timeline(size)
    for i in range(3 * size):
        timeline.emit("JOB_SUBMIT", f"j{i}")
    kept = timeline.events()
    assert [e.job for e in kept] == [f"j{i}" for i in range(2 * size, 3 * size)]
    assert timeline.emitted == 3 * size and len(timeline) == size


def test_batch_reports_pick_their_own_jobs(circuit):
    """Two batches on one engine: each report counts its own jobs' partitions;
    with a timeline too short for a batch the report says what it lost."""
    from porep_prover.bench import run_batch
    params, r1cs, ws = circuit
    with Engine(config()) as engine:
        first = run_batch(engine, lambda i: inline_job(params, r1cs, ws[:2]), 2, 1)
        second = run_batch(engine, lambda i: inline_job(params, r1cs, ws[:3]), 1, 1)
    assert [sum(d["partitions"] for d in r.devices.values()) for r in (first, second)] == [4, 3]
    assert first.events_lost == second.events_lost == 0
    with Engine(config(**{"engine.timeline_events": 10})) as engine:
        short = run_batch(engine, lambda i: inline_job(params, r1cs, ws[:3]), 2, 1)
    assert short.events_lost > 0 and any("no longer kept" in line for line in short.lines())


def test_preload_reads_mapped_parameters(circuit, tmp_path):
    params, r1cs, ws = circuit
    path = tmp_path / "c.pmap"
    write_mapped(path, params)
    with Engine(config(**{"srs.preload": [str(path)]})) as engine:
        (entry,) = engine.srs.status()
        assert entry["key"] == f"params:{path}" and entry["bytes"] == 0     # mapped: page cache
        with engine.srs.lease(entry["key"], None) as loaded:
            assert loaded.vk == params.vk


def test_a_job_in_the_engine_cannot_be_submitted_twice(circuit):
    params, r1cs, ws = circuit
    slow = HangingProvider("synthesize")
    try:
        with Engine(config(**{"engine.provider_timeout_seconds": 5}), registry=with_providers(slow)) as engine:
            job = hanging_job(params, r1cs, ws)
            handle = engine.submit(job)
            with pytest.raises(InvalidInputError, match="in the engine already"):
                engine.submit(job)
            slow.release.set()
            assert handle.result(60).ok
            assert engine.submit(job).result(60).ok     # once finished, the same job may come again
    finally:
        slow.release.set()
