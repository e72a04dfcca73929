# SPDX-License-Identifier: Apache-2.0
"""The engine on the CPU backend: jobs end to end, the interlock, retries,
cancellation, shutdown, configuration and the timeline's arithmetic."""
import asyncio
import contextlib
import pathlib
import random
import threading
import time

import pytest

from porep_prover import FrArray
from porep_prover.backend import Capabilities, CpuBackend, Flavor, MsmOptions, get_backend
from porep_prover.backend.base import OneLane
from porep_prover.circuits import porep_like, square_chain
from porep_prover.engine import Engine, EngineSettings, Job, inline_job, load_config
from porep_prover.engine.devices import ProvingDevice
from porep_prover.engine.inline import InlineProvider, default_registry
from porep_prover.bench.plots import gantt
from porep_prover.engine.timeline import Event, analyze, format_report, read_log, union
from porep_prover.errors import ConfigError, EngineError, JobCancelledError, JobFailedError
from porep_prover.groth16 import insecure_setup, verify

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def circuit():
    r1cs, _, _ = porep_like(600)
    params = insecure_setup(r1cs, warn=False)
    witnesses = [porep_like(600, seed=s)[1] for s in range(6)]
    return params, r1cs, witnesses


def config(**extra):
    base = {"engine.partition_workers": 2, "engine.threads": 1, "engine.devices": ["cpu"]}
    base.update(extra)
    return load_config(overrides=base)


def check_result(result, params):
    assert result.ok and len(result.proofs) == result.job.partitions
    for public, proof in zip(result.public_inputs, result.proofs):
        assert verify(params.vk, public, proof)


def test_jobs_end_to_end(circuit):
    params, r1cs, ws = circuit
    other_r1cs, other_w, _ = square_chain(300)
    other_params = insecure_setup(other_r1cs, warn=False)
    with Engine(config()) as engine:
        handles = [engine.submit(inline_job(params, r1cs, ws[:k])) for k in (1, 3, 6)]
        handles.append(engine.submit(inline_job(other_params, other_r1cs, [other_w] * 2)))
        results = [h.result(120) for h in handles]
    for res in results[:3]:
        check_result(res, params)
    check_result(results[3], other_params)
    # partition i was proved from witness i: its public inputs say so
    assert results[2].public_inputs == [w[1:r1cs.num_inputs].to_ints() for w in ws]
    srs = {s["key"]: s for s in engine.srs.status()} if engine.srs.status() else {}
    assert not srs  # cleared on shutdown


def test_async_handles(circuit):
    params, r1cs, ws = circuit

    async def run(engine):
        return await asyncio.gather(*(engine.submit(inline_job(params, r1cs, ws[:2])) for _ in range(2)))

    with Engine(config()) as engine:
        results = asyncio.run(run(engine))
    for res in results:
        check_result(res, params)


class RecordingBackend(CpuBackend):
    """The CPU backend as a device, slowed down and recording when each call runs (thread, start, end)."""

    name = "recording"
    capabilities = Capabilities(evaluates_witness=False, reference=False)

    def __init__(self, delay=0.03):
        super().__init__()
        self.delay = delay
        self.calls, self.lock = [], threading.Lock()

    def _rec(self, what, fn, *args):
        t0 = time.perf_counter()
        time.sleep(self.delay)
        out = fn(*args)
        with self.lock:
            self.calls.append((what, threading.current_thread().name, t0, time.perf_counter()))
        return out

    def prepare(self, assignment, ahead=False):
        return self._rec("prepare", super().prepare, assignment, ahead)

    def h_poly(self, a, b, c, threads, flavor=Flavor.BELLMAN):
        return self._rec("gpu", super().h_poly, a, b, c, threads, flavor)


def test_interlock_one_kernel_region_at_a_time_and_preparation_overlaps(circuit):
    params, r1cs, ws = circuit
    be = RecordingBackend()
    dev = ProvingDevice("fake-gpu-0", "fake0", "gpu", be)
    with Engine(config(**{"engine.partition_workers": 3}), devices=[dev]) as engine:
        check_result(engine.prove(inline_job(params, r1cs, ws), timeout=120), params)
    events = engine.timeline.events()
    regions = sorted((s.t, e.t, s.worker) for s, e in zip(
        sorted((e for e in events if e.event == "GPU_START"), key=lambda e: e.t),
        sorted((e for e in events if e.event == "GPU_END"), key=lambda e: e.t)))
    assert len(regions) == len(ws)
    for (_a0, a1, _), (b0, _b1, _) in zip(regions, regions[1:]):
        assert a1 <= b0, "two kernel regions of one device overlapped"
    assert len({w for _, _, w in regions}) == 2  # both workers of the device took partitions
    preps = [(s.t, e.t, s.worker) for s in events if s.event == "PREP_START"
             for e in events if e.event == "PREP_END" and e.worker == s.worker and e.partition == s.partition
             and e.job == s.job]
    overlapped = [p for p in preps for r in regions if p[2] != r[2] and p[0] < r[1] and r[0] < p[1]]
    assert overlapped, "no preparation ran while the other worker held the device"


def test_devices_with_one_identity_share_one_lock(circuit):
    params, r1cs, ws = circuit
    be = RecordingBackend(delay=0.02)
    devs = [ProvingDevice("same-card", "a", "gpu", be), ProvingDevice("same-card", "b", "gpu", be)]
    with Engine(config(**{"engine.gpu_workers_per_device": 1, "engine.partition_workers": 3}), devices=devs) as e:
        check_result(e.prove(inline_job(params, r1cs, ws[:4]), timeout=120), params)
    spans = sorted((t0, t1) for what, _, t0, t1 in be.calls if what == "gpu")
    assert all(a1 <= b0 for (_, a1), (b0, _) in zip(spans, spans[1:]))


class FlakyProvider(InlineProvider):
    kinds = ("flaky",)

    def __init__(self, fail_times=1, fail_partition=1, delay=0.0):
        self.fail_left, self.fail_partition, self.delay = fail_times, fail_partition, delay
        self.lock = threading.Lock()

    def synthesize(self, job, partition, threads):
        time.sleep(self.delay)
        with self.lock:
            if partition == self.fail_partition and self.fail_left:
                self.fail_left -= 1
                raise RuntimeError("synthesis blew up")
        return super().synthesize(job, partition, threads)


def registry_with(provider):
    reg = default_registry()
    reg.add_provider(provider)
    return reg


def test_partitions_spread_over_devices_with_a_lock_each(circuit):
    """Two devices (distinct identities): each takes partitions, each one's
    kernel regions never overlap, and the two devices do run at once."""
    params, r1cs, ws = circuit
    backends = [RecordingBackend(delay=0.05), RecordingBackend(delay=0.05)]
    devs = [ProvingDevice(f"fake-gpu-{i}", f"fake{i}", "gpu", be) for i, be in enumerate(backends)]
    with Engine(config(**{"engine.partition_workers": 3}), devices=devs) as engine:
        assert [d["identity"] for d in engine.status()["devices"]] == ["fake-gpu-0", "fake-gpu-1"]
        results = [engine.submit(inline_job(params, r1cs, ws)) for _ in range(2)]
        for h in results:
            check_result(h.result(120), params)
    events = engine.timeline.events()
    per_device = {}
    for start in (e for e in events if e.event == "GPU_START"):
        end = next(e for e in events if e.event == "GPU_END" and e.t >= start.t and
                   (e.job, e.partition, e.worker) == (start.job, start.partition, start.worker))
        per_device.setdefault(start.device, []).append((start.t, end.t))
    assert set(per_device) == {"fake-gpu-0", "fake-gpu-1"}
    assert sum(len(v) for v in per_device.values()) == 2 * len(ws)
    for spans in per_device.values():
        spans.sort()
        assert all(a1 <= b0 for (_, a1), (b0, _) in zip(spans, spans[1:]))
    together = [(a, b) for a in per_device["fake-gpu-0"] for b in per_device["fake-gpu-1"]
                if a[0] < b[1] and b[0] < a[1]]
    assert together, "the two devices never worked at the same time"
    stats = analyze(events)["devices"]
    assert set(stats) == {"fake-gpu-0", "fake-gpu-1"} and all(0 < d["efficiency"] <= 1 for d in stats.values())


class OptionsLane:
    """A lane of OptionsBackend's region: its MSMs record the region's options."""

    def __init__(self, backend, options):
        self.backend, self.options = backend, options

    def __getattr__(self, name):
        return getattr(self.backend, name)

    def msm(self, points, scalars, threads):
        with self.backend.lock:
            self.backend.seen.append(self.options)
        return self.backend.msm(points, scalars, threads)


class OptionsBackend(RecordingBackend):
    """A device whose MSMs record the options of the kernel region they run in (Backend.region's)."""

    def __init__(self):
        super().__init__(delay=0.0)
        self.seen = []

    def region(self, plan=None, arrays=None, options=None, overlap=False):
        return contextlib.nullcontext(OneLane(OptionsLane(self, options)))


def test_two_engines_with_different_msm_settings_share_a_device(circuit):
    """prover.msm_tables gives an engine's kernel regions window tables (with
    prover.msm_table_copies copies) through the options of their lanes: two
    engines at once on one device, one with tables and one without, each
    runs its MSMs with its own settings, and the device is shared as it is."""
    params, r1cs, ws = circuit
    be = OptionsBackend()
    copies = random.randrange(1, 9)
    settings = [{"prover.msm_tables": True, "prover.msm_table_copies": copies}, {"prover.msm_tables": False}]
    engines = [Engine(config(**extra), devices=[ProvingDevice("fake-gpu", "fake", "gpu", be)]) for extra in settings]
    with engines[0], engines[1]:
        handles = [e.submit(inline_job(params, r1cs, ws[:3])) for e in engines]
        for h in handles:
            check_result(h.result(120), params)
    assert engines[0].devices[0].backend is be and engines[1].devices[0].backend is be
    tables = MsmOptions(tables=True, table_copies=copies)
    assert set(be.seen) == {tables, None}
    assert be.seen.count(tables) == be.seen.count(None)      # the same jobs, the same MSMs


class WitnessBackend(RecordingBackend):
    """A fake device that evaluates A, B, C itself (h_and_witness) and takes
    the queries' scalars from its copy of the witness, as the GPU does."""

    capabilities = Capabilities(evaluates_witness=True, reference=False)

    def __init__(self):
        super().__init__(delay=0.0)
        self.from_witness = self.taken = 0

    def h_and_witness(self, r1cs, witness, threads, flavor=Flavor.BELLMAN, check=True):
        self.from_witness += 1
        return super().h_and_witness(r1cs, witness, threads, flavor, check)

    def take(self, values, index):
        self.taken += 1
        return super().take(values, index)


def test_abc_evaluated_on_the_device_when_every_device_can(circuit):
    params, r1cs, ws = circuit
    be = WitnessBackend()
    dev = ProvingDevice("fake-gpu-w", "fakew", "gpu", be)
    with Engine(config(**{"prover.matvec": "device"}), devices=[dev]) as engine:
        check_result(engine.prove(inline_job(params, r1cs, ws[:3]), timeout=120), params)
        bad = ws[0].copy()
        bad.limbs[r1cs.num_inputs + 3] = FrArray.from_ints([5]).limbs[0]    # not a bit: its booleanity fails
        with pytest.raises(JobFailedError, match="UnsatisfiedError"):
            engine.prove(inline_job(params, r1cs, [bad]), timeout=120)
    assert be.from_witness >= 3 and be.taken >= 3       # B's scalars of each partition (A's: msm_shared's rows)
    mixed = [dev, ProvingDevice("cpu", "cpu", "cpu", get_backend("cpu"))]
    with Engine(config(**{"prover.matvec": "device"}), devices=mixed) as engine:
        job = inline_job(params, r1cs, ws[:2])
        check_result(engine.prove(job, timeout=120), params)
        plan = engine.plans.get(InlineProvider().srs_key(job))
        assert not plan.matvec_on_device           # the CPU device cannot: the host evaluates for all


class SmallCardBackend(WitnessBackend):
    """WitnessBackend whose memory plan keeps no circuit's matrices (a small card's budget)."""

    def device_budget(self, nbytes=0):
        return 1 << 40

    def device_plan(self, workload, budget, workers=2, g2=True, gathers=False):
        from porep_prover.memory.device_plan import plan
        self.asked = getattr(self, "asked", 0) + 1
        self.g2 = getattr(self, "g2", set()) | {g2}
        made = plan(workload, budget, workers, 0, g2, matrices=False)
        assert workload.matrix_bytes and not made.matrices
        return made


def test_abc_left_to_the_host_where_a_device_s_plan_cannot_keep_the_matrices(circuit):
    """prover.matvec = device on a device whose budget cannot keep the
    circuit's matrices: each partition is synthesized with A w, B w, C w on
    the host (no H from the witness, no gathers), and the proofs verify."""
    params, r1cs, ws = circuit
    be = SmallCardBackend()
    dev = ProvingDevice("fake-gpu-s", "fakes", "gpu", be)
    with Engine(config(**{"prover.matvec": "device"}), devices=[dev]) as engine:
        check_result(engine.prove(inline_job(params, r1cs, ws[:3]), timeout=120), params)
    # one plan, made as the set loaded: the devices asked once for each way prover.gather = "auto" weighs
    assert be.asked == 2 and be.from_witness == 0 and be.taken == 0
    assert be.g2 == {False}          # asked for the plan of prover.b_g2 = host (the default): no G2 points on it


class SharingBackend(WitnessBackend):
    """WitnessBackend that also shares a sort between arrays (msm_shared), as
    the GPU does: each set's sum from the scalars its rows give it."""

    def __init__(self):
        super().__init__()
        self.shared = []

    def msm_shared(self, sets, scalars, threads):
        self.shared.append([len(p) for p, _ in sets])
        return super().msm_shared(sets, scalars, threads)


@pytest.mark.parametrize("b_g2", ["device", "host"])
def test_one_sort_for_l_and_a_and_for_b1_and_b2(circuit, b_g2):
    """A device that shares sorts: L with the A query's aux rows (its input
    rows on the host), and B_1 with B_2 where B_2 is on the device; every
    proof verifies."""
    params, r1cs, ws = circuit
    be = SharingBackend()
    dev = ProvingDevice("fake-gpu-s", "fakes", "gpu", be)
    with Engine(config(**{"prover.matvec": "device", "prover.b_g2": b_g2}), devices=[dev]) as engine:
        check_result(engine.prove(inline_job(params, r1cs, ws[:2]), timeout=120), params)
    pair = [len(params.l), len(params.a)]
    assert be.shared.count(pair) == 2
    assert be.shared.count([len(params.b_g1), len(params.b_g2)]) == (2 if b_g2 == "device" else 0)
    assert be.taken == 2                       # B's scalars only: A's come through the rows


def test_retry_then_success(circuit):
    params, r1cs, ws = circuit
    job = inline_job(params, r1cs, ws[:3])
    job.kind = "flaky"
    with Engine(config(), registry=registry_with(FlakyProvider(fail_times=2))) as engine:
        check_result(engine.prove(job, timeout=120), params)
    assert analyze(engine.timeline.events())["retries"] == 2


def test_failing_partition_fails_its_job_only(circuit):
    params, r1cs, ws = circuit
    bad = inline_job(params, r1cs, ws[:3])
    bad.kind = "flaky"
    with Engine(config(**{"prover.max_retries": 1}),
                registry=registry_with(FlakyProvider(fail_times=99, fail_partition=2))) as engine:
        h_bad = engine.submit(bad)
        h_good = engine.submit(inline_job(params, r1cs, ws[:2]))
        with pytest.raises(JobFailedError) as info:
            h_bad.result(120)
        check_result(h_good.result(120), params)
    assert info.value.partition == 2 and "synthesis blew up" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_unsatisfied_witness_fails_the_job(circuit):
    params, r1cs, ws = circuit
    broken = ws[0].copy()
    broken.limbs[-1] ^= 1
    with Engine(config(**{"prover.max_retries": 0})) as engine:
        with pytest.raises(JobFailedError, match="UnsatisfiedError"):
            engine.prove(inline_job(params, r1cs, [broken]), timeout=60)


def test_cancel_and_shutdown_without_waiting(circuit):
    params, r1cs, ws = circuit
    slow = FlakyProvider(fail_times=0, delay=0.2)
    jobs = []
    for _ in range(3):
        j = inline_job(params, r1cs, ws[:4])
        j.kind = "flaky"
        jobs.append(j)
    engine = Engine(config(**{"engine.partition_workers": 1}), registry=registry_with(slow))
    handles = [engine.submit(j) for j in jobs]
    assert handles[1].cancel()
    with pytest.raises(JobCancelledError):
        handles[1].result(5)
    assert not handles[1].cancel()          # already over
    engine.shutdown(wait=False)
    for h in handles:
        assert h.done()                      # every accepted job is resolved
    with pytest.raises(EngineError):
        engine.submit(inline_job(params, r1cs, ws[:1]))


def test_shutdown_waits_for_accepted_jobs(circuit):
    params, r1cs, ws = circuit
    engine = Engine(config())
    handles = [engine.submit(inline_job(params, r1cs, ws[:2])) for _ in range(3)]
    engine.shutdown(wait=True)
    for h in handles:
        check_result(h.result(0), params)


def test_unknown_job_kind_and_bad_jobs(circuit):
    params, r1cs, ws = circuit
    with Engine(config()) as engine:
        with pytest.raises(EngineError, match="no synthesis provider"):
            engine.submit(Job("nope", 1))
    with pytest.raises(ValueError):
        Job("inline", 0)


def test_config_file_and_errors(tmp_path):
    example = ROOT / "contrib" / "porep-prover.example.toml"
    cfg = load_config(example)                      # the documented example is valid with the built-ins alone
    assert cfg.get("engine.gpu_workers_per_device") == 2
    text = example.read_text()
    from porep_prover.hooks import installed_settings
    for key in installed_settings().defaults():     # every key is documented there, a plugin's commented out
        section, name = key.split(".")
        assert f"[{section}]" in text and (f"\n{name} = " in text or f"\n# {name} = " in text), key
    good = tmp_path / "c.toml"
    good.write_text("[engine]\npartition_workers = 5\n[srs]\nidle_evict_seconds = 3\n")
    cfg = load_config(good, ["engine.partition_workers=7", "logging.level=debug"])
    assert cfg.get("engine.partition_workers") == 7 and cfg.get("logging.level") == "DEBUG"
    assert cfg.get("srs.idle_evict_seconds") == 3.0
    cases = {"[engine]\nworkers = 2\n": "engine.workers", "[engine]\npartition_workers = -1\n":
             "engine.partition_workers", "[engine]\ndevices = [\"tpu\"]\n": "engine.devices",
             "[gpu]\nx = 1\n": "gpu", "threads = 3\n": "threads", "[prover]\nverify = 1\n": "prover.verify"}
    for body, key in cases.items():
        bad = tmp_path / "bad.toml"
        bad.write_text(body)
        with pytest.raises(ConfigError) as info:
            load_config(bad)
        assert info.value.key == key and key in str(info.value)
    bad.write_text("[engine\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError):
        load_config(None, ["engine.partition_workers"])
    with pytest.raises(ConfigError):
        load_config(None, ["engine.nope=1"])
    import os
    cores = os.cpu_count() or 2

    def resolved(*overrides):
        return EngineSettings.resolve(load_config(None, list(overrides)))
    assert resolved("engine.partition_workers=2").synthesis_threads == max(1, cores // 2)
    assert resolved("engine.partition_workers=64").synthesis_threads == 1
    assert resolved("engine.synthesis_threads=3").synthesis_threads == 3
    listed = load_config(None, ["engine.devices=gpu:0, gpu:1", "srs.preload=a.params"])
    assert listed.get("engine.devices") == ["gpu:0", "gpu:1"] and listed.get("srs.preload") == ["a.params"]
    assert load_config(None, ['devices=["cpu"]']).get("engine.devices") == ["cpu"]
    with pytest.raises(ConfigError) as info:
        load_config(None, ["prover.b_g2=gpu"])
    assert info.value.key == "prover.b_g2"
    assert load_config(None, ["prover.upload=ahead"]).get("prover.upload") == "ahead"
    with pytest.raises(ConfigError) as info:
        load_config(None, ["prover.upload=early"])
    assert info.value.key == "prover.upload"


def ev(event, t, job="j", partition=0, worker="w0", device="d"):
    return Event(event, t, job, partition, worker, device)


def test_timeline_arithmetic(tmp_path):
    events = [ev("JOB_SUBMIT", 0.0, partition=-1, worker=""),
              ev("GPU_QUEUE", 0.5, partition=0), ev("GPU_QUEUE", 0.6, partition=1),
              ev("LOCK_WAIT", 1.0, partition=0, worker="w0"), ev("GPU_START", 1.0, partition=0, worker="w0"),
              ev("GPU_END", 3.0, partition=0, worker="w0"),
              ev("LOCK_WAIT", 1.5, partition=1, worker="w1"), ev("GPU_START", 3.0, partition=1, worker="w1"),
              ev("GPU_END", 4.0, partition=1, worker="w1"),
              ev("SYNTH_END", 4.25, partition=2, worker="s0"), ev("SYNTH_END", 0.4, partition=2, job="k"),
              ev("LOCK_WAIT", 4.5, partition=2, worker="w0"), ev("GPU_START", 5.0, partition=2, worker="w0"),
              ev("GPU_END", 6.0, partition=2, worker="w0"),
              ev("JOB_END", 6.5, partition=-1, worker="")]
    stats = analyze(events)
    dev = stats["devices"]["d"]
    assert dev["span"] == pytest.approx(5.0) and dev["busy"] == pytest.approx(4.0)
    assert dev["efficiency"] == pytest.approx(0.8) and dev["gaps"]["count"] == 1
    assert dev["gaps"]["max"] == pytest.approx(1.0)
    gap = dev["longest_gap"]          # partition 2 of job j ended it: synthesized late, then the lock asked for
    assert (gap["job"], gap["partition"], gap["prepared"]) == ("j", 2, None)
    assert gap["length"] == pytest.approx(1.0) and gap["synthesized"] == pytest.approx(0.25)
    assert gap["lock_asked"] == pytest.approx(0.5)
    assert stats["lock_wait"]["max"] == pytest.approx(1.5) and stats["lock_wait"]["count"] == 3
    assert stats["lock_hold"]["mean"] == pytest.approx(4.0 / 3)
    assert stats["worker_gaps"]["count"] == 1 and stats["worker_gaps"]["max"] == pytest.approx(2.0)
    assert stats["stages"]["queue"]["max"] == pytest.approx(0.9)
    assert stats["jobs"]["max"] == pytest.approx(6.5)
    assert union([(0, 1), (0.5, 2), (3, 4)]) == [(0, 2), (3, 4)]
    log = tmp_path / "engine.log"
    import json
    lines = ["2026-12-02 noise line\n"] + [
        f"INFO porep_prover.timeline TIMELINE {json.dumps(e.__dict__)}\n" for e in events] + ["TIMELINE {bad\n"]
    log.write_text("".join(lines))
    assert read_log(log) == events
    assert "GPU efficiency 80.00%" in format_report(stats)
    assert "longest gap 1000.0 ms, ended by job j partition 2 (synthesized +250.0 ms, lock asked +500.0 ms" \
        in format_report(stats)
    gantt(events, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def planned_budget_gib(params, r1cs, partitions: float) -> float:
    """A host budget (GiB) with room for this many partitions of the inline
    circuit on the CPU beside the process and what the set holds (its plan's
    figures, made for a budget that fits anything)."""
    from porep_prover.memory.host_plan import Workers, make_plan
    from porep_prover.memory.workload import Workload
    plan = make_plan(Workload.of(params, r1cs), Workers(4, 0, 2), 1 << 50)
    return (plan.base.total + plan.held_bytes + partitions * plan.partition.total) / 2**30


def test_memory_budget_limits_partitions_in_flight(circuit):
    params, r1cs, ws = circuit
    budget = planned_budget_gib(params, r1cs, 1.5)       # one partition at a time
    cfg = config(**{"engine.memory_budget_gib": budget, "engine.partition_workers": 4})
    with Engine(cfg) as engine:
        check_result(engine.prove(inline_job(params, r1cs, ws[:4]), timeout=120), params)
    events = sorted(engine.timeline.events(), key=lambda e: e.t)
    live, peak = 0, 0
    for e in events:  # synthesis start .. finalize end may not overlap across partitions
        if e.event == "SYNTH_START":
            live += 1
        elif e.event == "FINALIZE_END":
            live -= 1
        peak = max(peak, live)
    assert peak == 1


def test_b_g2_in_the_kernel_region_gives_the_same_valid_proof(circuit, rng):
    """prove_device(b_g2=True) computes B_2 where the lock is held; finish then skips it."""
    from porep_prover.groth16.prover import finish, prove_device, synthesize
    params, r1cs, ws = circuit
    cpu = get_backend("cpu")
    seed = rng.randrange(1 << 30)
    proofs = []
    for in_region in (False, True):
        synth = synthesize(params, r1cs, ws[1], 1)
        dev = prove_device(cpu, params, synth, 1, b_g2=in_region)
        assert (dev.b2_acc is not None) == in_region
        proofs.append(finish(cpu, params, synth, dev, 1, rng=random.Random(seed)))
    assert proofs[0].to_bytes() == proofs[1].to_bytes()
    assert verify(params.vk, ws[1][1:r1cs.num_inputs].to_ints(), proofs[1])


def test_switch_interval_is_set_while_running_and_restored():
    import sys
    before = sys.getswitchinterval()
    engine = Engine(config(**{"engine.switch_interval_ms": 0.25}))
    try:
        assert sys.getswitchinterval() == pytest.approx(min(before, 0.00025))
    finally:
        engine.shutdown()
    assert sys.getswitchinterval() == before


def test_a_loaded_set_holds_its_plan_s_bytes(circuit):
    """The host budget is the whole process's: the default (the host less
    its margin) or the setting's, and a loaded set holds its plan's bytes
    of it (the SRS, the circuit) until it is dropped."""
    from porep_prover.memory.budgets import default_host_budget
    params, r1cs, ws = circuit
    with Engine(config()) as engine:
        assert engine.status()["memory_budget"] == engine.settings.memory_budget_bytes == default_host_budget()
        before = engine.status()["memory_held"]
        check_result(engine.prove(inline_job(params, r1cs, ws[:1]), timeout=120), params)
        (key,) = [s["key"] for s in engine.srs.status()]
        plan = engine.plans.get(key)
        assert plan.held_bytes >= r1cs.host_bytes + sum(getattr(params, a).limbs.nbytes
                                                        for a in ("h", "l", "a", "b_g1", "b_g2"))
        assert engine.status()["memory_held"] == before + plan.held_bytes
        assert engine.evict_srs(key) is not None
        assert engine.status()["memory_held"] == before and engine.plans.get(key) is None
    fixed = Engine(config(**{"engine.memory_budget_gib": 2}))
    try:
        assert fixed.status()["memory_budget"] == 2 << 30
    finally:
        fixed.shutdown()


def test_default_budget_waits_for_free_host_memory(circuit, monkeypatch):
    """Without a set budget, a synthesis starts only while the host's free memory
    (less the default budget's margin) covers it and the syntheses still
    allocating; with nothing in flight the plan alone decides."""
    from porep_prover.engine import memory as host
    params, r1cs, ws = circuit
    monkeypatch.setattr(host, "host_available_bytes", lambda: host.host_margin(host.host_limit_bytes()) + 1)
    with Engine(config(**{"engine.partition_workers": 4})) as engine:
        check_result(engine.prove(inline_job(params, r1cs, ws[:4]), timeout=120), params)
        assert engine.status()["memory_pending"] == 0
    starts = [e for e in engine.timeline.events() if e.event in ("SYNTH_START", "SYNTH_END")]
    starts.sort(key=lambda e: e.t)
    live = peak = 0
    for e in starts:
        live += 1 if e.event == "SYNTH_START" else -1
        peak = max(peak, live)
    assert peak == 1


def test_a_partition_the_host_cannot_hold_still_runs_with_a_warning(circuit, monkeypatch, caplog):
    from porep_prover.engine import memory as host
    params, r1cs, ws = circuit
    monkeypatch.setattr(host, "host_available_bytes", lambda: 0)
    with caplog.at_level("WARNING", logger="porep_prover.engine"):
        with Engine(config(**{"engine.partition_workers": 1})) as engine:
            check_result(engine.prove(inline_job(params, r1cs, ws[:2]), timeout=120), params)
    assert "the host may run out of memory" in caplog.text
