# SPDX-License-Identifier: Apache-2.0
"""The engine's per-partition surface, what a journal above it needs: jobs
that prove only some of their partitions, the on_partition callback with
each proof and its timings, progress, a drain that finishes the partitions
in flight, prompt cancellation, preload and eviction of parameters."""
import random
import threading
import time

import pytest

from porep_prover.circuits import porep_like
from porep_prover.engine import Engine, Job, inline_job, load_config
from porep_prover.engine.inline import InlineProvider, default_registry
from porep_prover.engine.interlock import kernel_region
from porep_prover.errors import InvalidInputError, JobCancelledError
from porep_prover.groth16 import Proof, insecure_setup, verify


@pytest.fixture(scope="module")
def circuit():
    n = random.randrange(150, 260)                 # not a power of two
    r1cs, _, _ = porep_like(n)
    params = insecure_setup(r1cs, warn=False)
    seeds = random.sample(range(1 << 30), 6)
    return params, r1cs, [porep_like(n, seed=s)[1] for s in seeds]


def config(**extra):
    base = {"engine.partition_workers": 1, "engine.threads": 1, "engine.devices": ["cpu"]}
    base.update(extra)
    return load_config(overrides=base)


class CountingProvider(InlineProvider):
    """The inline provider under kind "counted", counting its synthesize
    calls per partition, each after `delay` seconds; its parameters' load
    takes load_delay seconds."""
    kinds = ("counted",)

    def __init__(self, delay=0.0, load_delay=0.0):
        self.delay, self.load_delay, self.calls, self.lock = delay, load_delay, {}, threading.Lock()

    def load_srs(self, job):
        time.sleep(self.load_delay)
        return super().load_srs(job)

    def synthesize(self, job, partition, threads):
        with self.lock:
            self.calls[partition] = self.calls.get(partition, 0) + 1
        time.sleep(self.delay)
        return super().synthesize(job, partition, threads)


def counted_job(params, r1cs, ws, **fields):
    job = inline_job(params, r1cs, ws)
    return Job("counted", job.partitions, job.payload, **fields)


def engine_with(provider, **settings):
    registry = default_registry()
    registry.add_provider(provider)
    return Engine(config(**settings), registry=registry)


def test_only_proves_the_partitions_named(circuit):
    params, r1cs, ws = circuit
    provider = CountingProvider()
    only = set(random.sample(range(len(ws)), 3))
    with engine_with(provider) as engine:
        result = engine.prove(counted_job(params, r1cs, ws, only=only), timeout=120)
    assert set(provider.calls) == only and all(n == 1 for n in provider.calls.values())
    for i, (proof, public) in enumerate(zip(result.proofs, result.public_inputs)):
        if i in only:
            assert verify(params.vk, public, proof) and public == ws[i][1:r1cs.num_inputs].to_ints()
        else:
            assert proof is None and public is None and result.timings[i] is None


@pytest.mark.parametrize("only", [set(), {-1}, {6}, {1, 2.0}, "01", {True}])
def test_only_out_of_range_is_refused(only):
    with pytest.raises(InvalidInputError, match="only"):
        Job("inline", 6, only=only)


def test_on_partition_gets_each_proof_and_its_timings_before_the_job_ends(circuit):
    params, r1cs, ws = circuit
    seen, lock = [], threading.Lock()
    handle_box = {}

    def record(result):
        with lock:
            seen.append((result, handle_box["h"].done()))

    with engine_with(CountingProvider(load_delay=0.2)) as engine:
        job = counted_job(params, r1cs, ws[:4], on_partition=record)
        handle_box["h"] = handle = engine.submit(job)
        result = handle.result(120)
    assert sorted(r.index for r, _ in seen) == [0, 1, 2, 3]
    assert not any(done for _, done in seen)                       # every call came before the handle resolved
    for r, _ in seen:
        assert r.job is job and Proof.from_bytes(r.proof.to_bytes()) == result.proofs[r.index]
        assert verify(params.vk, r.public_inputs, r.proof)
        t = r.timings
        assert t == result.timings[r.index]
        assert min(t.queue_wait, t.srs_load, t.synthesis, t.gpu_compute) >= 0 and t.synthesis > 0 < t.gpu_compute
        assert t.total >= t.queue_wait + t.srs_load + t.synthesis + t.gpu_compute - 1e-6
        assert job.submitted <= t.started <= job.submitted + t.total
    # the first partition waited for the parameters' load; the others found them resident
    by_start = sorted((r.timings for r, _ in seen), key=lambda t: t.started)
    assert by_start[0].srs_load >= 0.2 and all(t.srs_load < 0.1 for t in by_start[1:])


def test_a_failing_callback_fails_its_partition_which_is_proved_again(circuit):
    params, r1cs, ws = circuit
    calls = []

    def flaky(result):
        calls.append(result.index)
        if calls.count(result.index) == 1 and result.index == 1:
            raise OSError("disk full")

    with Engine(config(**{"prover.max_retries": 1})) as engine:
        job = inline_job(params, r1cs, ws[:3])
        job.on_partition = flaky
        result = engine.prove(job, timeout=120)
    assert sorted(calls) == [0, 1, 1, 2]
    assert all(verify(params.vk, p, q) for p, q in zip(result.public_inputs, result.proofs))


def test_progress_then_drain_finishes_the_partitions_in_flight(circuit):
    params, r1cs, ws = circuit
    provider = CountingProvider(delay=0.3)
    proved = []
    engine = engine_with(provider)
    job = counted_job(params, r1cs, ws, on_partition=lambda r: proved.append(r.index))
    handle = engine.submit(job)
    deadline = time.monotonic() + 30
    while (engine.job_progress(job.id) or {}).get("in_flight", 0) == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    progress = engine.job_progress(job.id)
    assert progress["in_flight"] >= 1 and progress["queued"] + progress["in_flight"] + progress["proved"] == len(ws)
    engine.drain(timeout=30)
    with pytest.raises(JobCancelledError):
        handle.result(5)
    started = set(provider.calls)
    assert started and set(proved) == started         # what had started was proved; nothing after
    assert len(started) < len(ws)
    assert engine.job_progress(job.id) is None


def test_a_partition_handed_out_before_a_drain_does_not_start_after_it(circuit):
    """The worker took a partition and waits for its parameters when the
    drain comes: the partition goes back to its job and is not synthesized."""
    params, r1cs, ws = circuit
    provider = CountingProvider(load_delay=1.0)
    engine = engine_with(provider)
    job = counted_job(params, r1cs, ws)
    handle = engine.submit(job)
    deadline = time.monotonic() + 30
    while (engine.job_progress(job.id) or {}).get("in_flight", 0) == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert engine.job_progress(job.id)["in_flight"] == 1
    t = time.monotonic()
    engine.drain(timeout=30)
    assert time.monotonic() - t < 5                    # the drain did not wait for a proof
    with pytest.raises(JobCancelledError):
        handle.result(5)
    assert provider.calls == {}


def test_cancel_of_a_running_job_is_prompt(circuit):
    params, r1cs, ws = circuit
    with engine_with(CountingProvider(delay=0.5)) as engine:
        handle = engine.submit(counted_job(params, r1cs, ws))
        time.sleep(0.1)                                  # its first partition is in its provider's call
        t = time.monotonic()
        assert handle.cancel()
        with pytest.raises(JobCancelledError):
            handle.result(5)
        assert time.monotonic() - t < 1.0


def test_preload_and_evict(circuit):
    params, r1cs, ws = circuit
    with Engine(config()) as engine:
        job = inline_job(params, r1cs, ws[:1])
        first = engine.preload(job)
        again = engine.preload(job)
        assert not first["already_loaded"] and again["already_loaded"] and first["key"] == again["key"]
        assert first["bytes"] > 0 and first["seconds"] >= 0
        assert engine.evict_srs(first["key"]) == first["bytes"]
        assert engine.evict_srs(first["key"]) is None            # gone
        assert engine.evict_srs("no-such-key") is None


def test_kernel_region_gives_its_moments():
    with kernel_region("test-device-moments") as region:
        time.sleep(0.01)
        assert region.start > 0 and region.end == 0
    assert region.end - region.start >= 0.01
