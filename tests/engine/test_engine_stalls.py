# SPDX-License-Identifier: Apache-2.0
"""No plugin stalls the engine, and cancel stops the work: a provider stuck
in a call gets its worker a stand-in; a scheduler stuck in a call is set
aside; a worker whose loop dies is replaced; a plugin raising what no
plugin may (SystemExit) fails its partition, not its worker; a sink that
never returns holds up no handle and no shutdown; a job cancelled while its
parameters are made stops their making, and none of its partitions starts."""
import logging
import random
import threading
import time

import pytest

from porep_prover.circuits import square_chain
from porep_prover.engine import Engine, inline_job, load_config, scheduler_guard, stages
from porep_prover.engine.inline import InlineProvider, default_registry
from porep_prover.engine.lifecycle import STOP_GRACE_SECONDS
from porep_prover.engine.registry import FifoScheduler
from porep_prover.errors import JobCancelledError, JobFailedError, PluginError
from porep_prover.groth16 import insecure_setup, verify


@pytest.fixture(scope="module")
def circuit():
    size = 30 + random.randrange(40)
    r1cs, _, _ = square_chain(size)
    params = insecure_setup(r1cs, warn=False)
    return params, r1cs, [square_chain(size, seed=s)[1] for s in range(3)]


def config(**extra):
    base = {"engine.partition_workers": 1, "engine.threads": 1, "engine.devices": ["cpu"]}
    return load_config(overrides={**base, **extra})


def with_providers(*providers, registry=None):
    registry = registry or default_registry()
    for provider in providers:
        registry.add_provider(provider)
    return registry


def of_kind(job, kind):
    job.kind = kind
    return job


def until(predicate, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def alive(prefix: str) -> list[str]:
    return sorted(t.name for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()
                  and not t.name.endswith(".provider"))


class Blocking(InlineProvider):
    """Kind "block": every synthesize waits for release (counted)."""
    kinds = ("block",)

    def __init__(self):
        self.release, self.calls = threading.Event(), 0

    def srs_key(self, job):
        return "block"

    def synthesize(self, job, partition, threads):
        self.calls += 1
        self.release.wait(60)
        return super().synthesize(job, partition, threads)


def test_a_stalled_provider_call_gets_its_worker_a_stand_in(circuit, caplog):
    """One synthesis worker, no time limit: the jobs after a stuck call are
    proved by a stand-in; the stuck partition is kept when its call returns;
    the stalled worker then ends."""
    params, r1cs, ws = circuit
    provider = Blocking()
    cfg = config(**{"engine.provider_timeout_seconds": 0, "engine.provider_stall_seconds": 0.2})
    try:
        with caplog.at_level(logging.WARNING, logger="porep_prover.engine"), \
                Engine(cfg, registry=with_providers(provider)) as engine:
            stuck = engine.submit(of_kind(inline_job(params, r1cs, ws[:1]), "block"))
            assert until(lambda: provider.calls == 1)
            good = [engine.submit(inline_job(params, r1cs, ws[:2])) for _ in range(4)]
            assert all(h.result(30).ok for h in good) and not stuck.done()
            assert alive("synth") == ["synth0", "synth0.1"]
            provider.release.set()
            result = stuck.result(30)
            assert verify(params.vk, ws[0][1:r1cs.num_inputs].to_ints(), result.proofs[0])
            assert until(lambda: alive("synth") == ["synth0.1"])          # the stalled worker ended
        assert "synth0.1 takes its place" in caplog.text
    finally:
        provider.release.set()


def test_stand_ins_are_bounded_whatever_a_provider_does(circuit):
    """Every call stalls: at most partition_workers stalled workers wait at
    once, so the threads stay bounded; the limit still fails the jobs."""
    params, r1cs, ws = circuit
    provider = Blocking()
    workers = random.randrange(1, 3)
    cfg = config(**{"engine.partition_workers": workers, "engine.provider_timeout_seconds": 1.5,
                    "engine.provider_stall_seconds": 0.1})
    try:
        with Engine(cfg, registry=with_providers(provider)) as engine:
            handles = [engine.submit(of_kind(inline_job(params, r1cs, ws[:1]), "block")) for _ in range(6)]
            time.sleep(1.0)
            assert len(alive("synth")) <= 2 * workers
            for h in handles:
                with pytest.raises(JobFailedError, match="did not return within"):
                    h.result(60)
            assert len(alive("synth")) <= 2 * workers
    finally:
        provider.release.set()


class Stuck(FifoScheduler):
    """FIFO until its `after`-th pop, which never returns (until released)."""

    def __init__(self, after):
        super().__init__()
        self.after, self.pops, self.release = after, 0, threading.Event()

    def pop(self):
        self.pops += 1
        if self.pops == self.after:
            self.release.wait(60)
        return super().pop()


def test_a_scheduler_stuck_in_a_call_is_set_aside(circuit, monkeypatch, caplog):
    params, r1cs, ws = circuit
    monkeypatch.setattr(scheduler_guard, "CALL_SECONDS", 0.3)
    made = []
    registry = default_registry()
    registry.add_scheduler("stuck", lambda: made.append(Stuck(random.randrange(1, 4))) or made[-1])
    cfg = config(**{"engine.scheduler": "stuck", "engine.partition_workers": 2})
    try:
        with caplog.at_level(logging.ERROR, logger="porep_prover.engine"):
            t = time.monotonic()
            with Engine(cfg, registry=registry) as engine:
                handles = [engine.submit(inline_job(params, r1cs, ws)) for _ in range(3)]
                assert all(h.result(60).ok for h in handles)
            assert time.monotonic() - t < 30
        assert "scheduler stuck failed" in caplog.text and "did not return within 0.3 s" in caplog.text
    finally:
        for s in made:
            s.release.set()


class Crash(BaseException):
    """What kills a worker's loop (no Exception: nothing on the way catches it)."""


@pytest.mark.parametrize("where", ["synthesis", "device"])
def test_a_worker_whose_loop_dies_is_replaced(circuit, monkeypatch, caplog, where):
    """The partition it held is tried again, the job is proved, and the worker goes on under its name."""
    params, r1cs, ws = circuit
    crashed = []
    method = "_queue_ready" if where == "synthesis" else "_kernel_region"
    original = getattr(stages.Stages, method)

    def once(self, *args, **kwargs):
        if not crashed:
            crashed.append(threading.current_thread().name)
            raise Crash("a bug")
        return original(self, *args, **kwargs)
    monkeypatch.setattr(stages.Stages, method, once)
    with caplog.at_level(logging.ERROR, logger="porep_prover.engine"):
        with Engine(config(), registry=default_registry()) as engine:
            handles = [engine.submit(inline_job(params, r1cs, ws[:2])) for _ in range(2)]
            results = [h.result(60) for h in handles]
            lanes = {name for name, _, _ in engine._workers.lanes()}
    assert all(r.ok for r in results) and len(crashed) == 1 and crashed[0] in lanes
    assert f"worker {crashed[0]} failed (1 times); a fresh loop takes its place" in caplog.text


class Exiting(InlineProvider):
    """Kind "exit": synthesize raises SystemExit."""
    kinds = ("exit",)

    def synthesize(self, job, partition, threads):
        raise SystemExit(3)


def test_a_provider_raising_system_exit_fails_its_job_not_the_worker(circuit):
    params, r1cs, ws = circuit
    with Engine(config(**{"prover.max_retries": 0}), registry=with_providers(Exiting())) as engine:
        bad = engine.submit(of_kind(inline_job(params, r1cs, ws[:1]), "exit"))
        with pytest.raises(JobFailedError) as info:
            bad.result(30)
        assert isinstance(info.value.__cause__, PluginError) and "SystemExit" in str(info.value.__cause__)
        assert engine.prove(inline_job(params, r1cs, ws[:2]), timeout=60).ok
        assert alive("synth") == ["synth0"]


class Hanging:
    def __init__(self):
        self.release, self.jobs = threading.Event(), []

    def deliver(self, result):
        self.jobs.append(result.job.id)
        self.release.wait(60)


@pytest.mark.parametrize("wait", [True, False])
def test_a_sink_that_never_returns_holds_up_no_handle_and_no_shutdown(circuit, wait):
    params, r1cs, ws = circuit
    sink, limit = Hanging(), 0.3
    registry = default_registry()
    registry.add_sink("hang", sink)
    try:
        engine = Engine(config(**{"engine.result_sinks": ["hang"], "engine.sink_timeout_seconds": limit}),
                        registry=registry)
        handles = [engine.submit(inline_job(params, r1cs, ws[:1])) for _ in range(5)]
        t = time.monotonic()
        assert all(h.result(30).ok for h in handles)
        assert time.monotonic() - t < 30
        t = time.monotonic()
        engine.shutdown(wait=wait)
        took = time.monotonic() - t
        # waiting: the first delivery's limit, the one queued behind it, then every other is skipped
        assert took < (3 * limit + 5 if wait else STOP_GRACE_SECONDS + 1), took
        assert len(sink.jobs) == 1
    finally:
        sink.release.set()


class SlowMaking(InlineProvider):
    """Kind "making": load_srs makes parameters in `steps` steps of 20 ms,
    looking at job.ended between them (as the demo's and porep-shaped's
    insecure_setup does between queries); `written` once made."""
    kinds = ("making",)

    def __init__(self, params, steps=500):
        self.params, self.steps = params, steps
        self.started, self.stopped, self.written = threading.Event(), threading.Event(), []

    def srs_key(self, job):
        return "making"

    def load_srs(self, job):
        self.started.set()
        try:
            for _ in range(self.steps):
                job.raise_if_ended()
                time.sleep(0.02)
        except JobCancelledError:
            self.stopped.set()
            raise
        self.written.append(job.id)
        return self.params


def test_cancel_stops_parameter_making_and_starts_no_partition(circuit):
    params, r1cs, ws = circuit
    provider = SlowMaking(params)
    timeline = []
    with Engine(config(**{"engine.partition_workers": 2}), registry=with_providers(provider)) as engine:
        job = of_kind(inline_job(params, r1cs, ws), "making")
        handle = engine.submit(job)
        assert provider.started.wait(30)
        assert handle.cancel()
        cancelled_at = time.time()
        with pytest.raises(JobCancelledError):
            handle.result(5)
        assert provider.stopped.wait(2) and not provider.written
        assert engine.prove(inline_job(params, r1cs, ws[:1]), timeout=60).ok       # the workers go on
        time.sleep(0.3)
        timeline = engine.timeline.events()
    starts = [e for e in timeline if e.job == job.id and e.event == "SYNTH_START"]
    assert not starts, f"{len(starts)} partitions of the cancelled job started"
    assert any(e.event == "JOB_END" and e.job == job.id and e.t <= cancelled_at for e in timeline)


def test_a_load_stopped_for_a_cancelled_job_is_made_again_for_another(circuit):
    """Two jobs wait on one parameter set; the one whose worker makes it is
    cancelled: the making stops, and the other job's worker makes it anew."""
    params, r1cs, ws = circuit
    provider = SlowMaking(params, steps=25)
    with Engine(config(**{"engine.partition_workers": 2}), registry=with_providers(provider)) as engine:
        first = engine.submit(of_kind(inline_job(params, r1cs, ws[:1]), "making"))
        assert provider.started.wait(30)
        second = engine.submit(of_kind(inline_job(params, r1cs, ws[1:2]), "making"))
        time.sleep(0.1)
        first.cancel()
        result = second.result(60)
    assert verify(params.vk, ws[1][1:r1cs.num_inputs].to_ints(), result.proofs[0])
    assert provider.stopped.is_set() and provider.written == [second.job.id]


def test_the_demo_kind_stops_making_parameters_for_a_job_that_ended(tmp_path, monkeypatch):
    """The daemon's demo provider: a job that ends while its parameters are
    made stops the making at the next query, and no file is written; one
    ended before gets nothing made."""
    from porep_prover.daemon import demo
    from porep_prover.engine import Job
    provider, n = demo.DemoProvider(str(tmp_path)), random.randrange(64, 200)
    job = Job(demo.KIND, 2, provider.parse_payload({"constraints": n}, 2))
    real, queries = demo.insecure_setup, []

    def setup(r1cs, progress=None, **kwargs):
        def ending(*args):
            queries.append(args[0])
            job.ended = True              # as the engine does when the job is cancelled
            progress(*args)
        return real(r1cs, progress=ending, **kwargs)
    monkeypatch.setattr(demo, "insecure_setup", setup)
    with pytest.raises(JobCancelledError):
        provider.load_srs(job)
    assert queries == ["ic"] and not list(tmp_path.iterdir())
    monkeypatch.setattr(demo, "insecure_setup", real)
    with pytest.raises(JobCancelledError):
        provider.load_srs(job)
    assert not list(tmp_path.iterdir())
    fresh = Job(demo.KIND, 2, job.payload)
    params = provider.load_srs(fresh)
    assert params.h is not None and [p.name for p in tmp_path.iterdir()] == [f"porep-like-{n}.params"]


class KeyNever(InlineProvider):
    """Kind "keyless": srs_key never returns (until released)."""
    kinds = ("keyless",)

    def __init__(self):
        self.release = threading.Event()

    def srs_key(self, job):
        self.release.wait(60)
        return "keyless"


def test_a_provider_whose_srs_key_never_returns_fails_its_job_at_the_limit(circuit):
    params, r1cs, ws = circuit
    provider = KeyNever()
    try:
        with Engine(config(**{"engine.provider_timeout_seconds": 0.5}), registry=with_providers(provider)) as engine:
            stuck = engine.submit(of_kind(inline_job(params, r1cs, ws[:1]), "keyless"))
            good = engine.submit(inline_job(params, r1cs, ws[:1]))
            with pytest.raises(JobFailedError, match="srs_key of provider KeyNever"):
                stuck.result(30)
            assert good.result(30).ok
    finally:
        provider.release.set()
