# SPDX-License-Identifier: Apache-2.0
"""The daemon's metrics (daemon.metrics) against a real engine on the CPU, the
engine's part of the status dict, and the status server (daemon.status_http)
on 127.0.0.1: GET /status, GET /metrics, what else it answers, and its stop."""
import http.client
import json
import math
import random
import socket
import threading
import time
import types

import pytest
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.parser import text_string_to_metric_families

from porep_prover.backend import CpuBackend
from porep_prover.circuits import porep_like
from porep_prover.daemon import status_http
from porep_prover.daemon.metrics import BUCKETS, PRIORITIES, STAGES, DaemonMetrics
from porep_prover.daemon.status_http import StatusServer, engine_status_view
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.devices import ProvingDevice
from porep_prover.engine.inline import InlineProvider, default_registry
from porep_prover.engine.timeline import Timeline
from porep_prover.errors import ConfigError, InvalidInputError, JobCancelledError, JobFailedError
from porep_prover.groth16 import insecure_setup
from status_samples import cluster_status, device_figures


class OtherKind(InlineProvider):
    kinds = ("inline-b",)


@pytest.fixture(scope="module")
def circuit():
    seeds = random.SystemRandom().sample(range(1 << 20), 4)
    print(f"witness seeds={seeds}")
    r1cs, _, _ = porep_like(301)
    return insecure_setup(r1cs, warn=False), r1cs, [porep_like(301, seed=s)[1] for s in seeds]


def engine(**extra):
    registry = default_registry()
    registry.add_provider(OtherKind())
    cfg = load_config(overrides={"engine.partition_workers": 2, "engine.threads": 1, "engine.devices": ["cpu"],
                                 "prover.max_retries": 0, **extra})
    return Engine(cfg, registry=registry)


def samples(text: str) -> dict:
    """{(sample name, sorted labels): value} of an exposition text."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def merged_busy(spans):
    """Reference: the length of the union of intervals, and first start to last end."""
    busy, end = 0.0, -math.inf
    for a, b in sorted(spans):
        if b > end:
            busy += b - max(a, end)
            end = b
    return busy, max(b for _, b in spans) - min(a for a, _ in spans)


def stages_of(events, job_id):
    """What a daemon reports of a job: its stage seconds from the timeline."""
    mine = [e for e in events if e.job == job_id]
    def spans(start, end):
        starts = {(e.partition, e.worker): e.t for e in mine if e.event == start}
        return sum(e.t - starts[(e.partition, e.worker)] for e in mine if e.event == end)
    submitted = min(e.t for e in mine if e.event == "JOB_SUBMIT")
    first = min((e.t for e in mine if e.event == "SYNTH_START"), default=submitted)
    return {"queue_wait": first - submitted, "srs_load": 0.0, "synthesis": spans("SYNTH_START", "SYNTH_END"),
            "gpu_compute": spans("GPU_START", "GPU_END")}


def test_counters_and_histograms_follow_the_jobs(circuit, rng):
    params, r1cs, ws = circuit
    broken = ws[0].copy()
    broken.limbs[-1] ^= 1
    metrics = DaemonMetrics()
    jobs = []
    for _ in range(rng.randrange(2, 4)):
        job = inline_job(params, r1cs, ws[:rng.randrange(1, 4)])
        job.kind = rng.choice(["inline", "inline-b"])
        jobs.append(job)
    jobs.append(inline_job(params, r1cs, [broken]))                 # fails: not satisfied, not retried
    with engine() as e:
        handles = [e.submit(j) for j in jobs]
        cancelled = e.submit(inline_job(params, r1cs, [ws[1]] * 8))
        cancelled.cancel()
        outcomes = []
        for handle in handles + [cancelled]:
            try:
                outcomes.append(("completed", handle.result(120)))
            except JobFailedError:
                outcomes.append(("failed", None))
            except JobCancelledError:
                outcomes.append(("cancelled", None))
        events = e.timeline.events()
    expected, durations, proved = {}, {}, {}
    for handle, (state, result) in zip(handles + [cancelled], outcomes):
        job = handle.job
        seconds = rng.uniform(0.005, 900.0)          # every bucket, and past the last one
        stages = stages_of(events, job.id) if state == "completed" else {}
        metrics.job_finished(job.kind, state, seconds, stages)
        expected[(job.kind, state)] = expected.get((job.kind, state), 0) + 1
        if state == "completed":
            durations.setdefault(job.kind, []).append(seconds)
            for _ in result.proofs:
                metrics.partition_proved(job.kind)
            proved[job.kind] = proved.get(job.kind, 0) + len(result.proofs)
    assert [s for s, _ in outcomes[-2:]] in (["failed", "cancelled"], ["failed", "completed"])
    got = samples(metrics.text())
    for kind in ("inline", "inline-b"):
        for state in ("completed", "failed", "cancelled"):
            assert got.get((f"porep_prover_proofs_{state}_total", (("kind", kind),)), 0) == \
                expected.get((kind, state), 0)
        assert got.get(("porep_prover_partitions_proved_total", (("kind", kind),)), 0) == proved.get(kind, 0)
        values = durations.get(kind, [])
        if not values:
            continue
        assert got[("porep_prover_proof_duration_seconds_count", (("kind", kind),))] == len(values)
        assert got[("porep_prover_proof_duration_seconds_sum", (("kind", kind),))] == pytest.approx(sum(values))
        for le in BUCKETS:
            key = ("porep_prover_proof_duration_seconds_bucket", (("kind", kind), ("le", str(le))))
            assert got[key] == sum(1 for v in values if v <= le)
        for stage in STAGES:
            key = ("porep_prover_stage_duration_seconds_count", (("kind", kind), ("stage", stage)))
            assert got[key] == len(values)
    gpu_sums = sum(v for (name, labels), v in got.items() if name == "porep_prover_stage_duration_seconds_sum"
                   and ("stage", "gpu_compute") in labels)
    assert 0 < gpu_sums == pytest.approx(sum(stages_of(events, h.job.id)["gpu_compute"]
                                             for h, (s, _) in zip(handles, outcomes) if s == "completed"))


def test_bad_reports_are_refused():
    metrics = DaemonMetrics()
    for args in [("inline", "done", 1.0, {}), ("inline", "completed", -1.0, {}),
                 ("inline", "completed", math.nan, {}), ("", "failed", 1.0, {}),
                 ("inline", "completed", 1.0, {"gpu": 1.0}), ("inline", "completed", 1.0, {"synthesis": math.inf}),
                 ("inline", "completed", True, {})]:
        with pytest.raises(InvalidInputError):
            metrics.job_finished(*args)
    with pytest.raises(InvalidInputError):
        metrics.observe([])
    assert "porep_prover_proofs_completed_total{" not in metrics.text()     # nothing counted on the way


def test_busy_seconds_count_each_kernel_region_once_across_scrapes(circuit, rng):
    """A scraper reads while jobs run (scrapes land before, inside and after
    kernel regions); the busy seconds then equal the regions' lengths."""
    params, r1cs, ws = circuit
    metrics = DaemonMetrics(efficiency_window=3600.0)
    scrapes, done = [0], threading.Event()
    with engine() as e:
        def scrape():
            deadline = time.monotonic() + 120
            while not done.is_set() and time.monotonic() < deadline:
                metrics.observe(engine_status_view(e), e)
                scrapes[0] += 1
                time.sleep(rng.uniform(0.0, 0.004))
        scraper = threading.Thread(target=scrape)
        scraper.start()
        try:
            for h in [e.submit(inline_job(params, r1cs, ws[:rng.randrange(1, 5)])) for _ in range(3)]:
                h.result(120)
        finally:
            done.set()
            scraper.join(130)
        metrics.observe(engine_status_view(e), e)
        events = e.timeline.events()
    starts = {(x.job, x.partition, x.worker): x.t for x in events if x.event == "GPU_START"}
    spans = [(starts[(x.job, x.partition, x.worker)], x.t) for x in events if x.event == "GPU_END"]
    got = samples(metrics.text())
    assert scrapes[0] > 2 and len(spans) >= 3
    assert got[("porep_prover_device_busy_seconds_total", (("device", "cpu"),))] == \
        pytest.approx(sum(b - a for a, b in spans), rel=1e-9)
    busy, span = merged_busy(spans)
    assert got[("porep_prover_device_efficiency", (("device", "cpu"),))] == pytest.approx(busy / span)
    assert got[("porep_prover_timeline_events_missed_total", ())] == 0


def test_a_region_open_at_a_scrape_is_counted_when_it_ends():
    timeline = Timeline(1000)
    fake = types.SimpleNamespace(timeline=timeline)
    metrics = DaemonMetrics(efficiency_window=3600.0)
    status = {"devices": [{"label": "gpu7", "identity": "gpu-uuid"}]}
    start = timeline.emit("GPU_START", "j", 0, "gpu7.w0", "gpu-uuid")
    metrics.observe(status, fake)
    assert ("porep_prover_device_busy_seconds_total", (("device", "gpu7"),)) not in samples(metrics.text())
    time.sleep(0.01)
    end = timeline.emit("GPU_END", "j", 0, "gpu7.w0", "gpu-uuid")
    timeline.emit("GPU_START", "j", 1, "gpu7.w1", "gpu-uuid")   # open at the next scrapes
    for _ in range(3):                                             # read again: nothing counted twice
        metrics.observe(status, fake)
        got = samples(metrics.text())
        assert got[("porep_prover_device_busy_seconds_total", (("device", "gpu7"),))] == end.t - start.t
    other = DaemonMetrics(efficiency_window=0.001)                # the window past: no efficiency sample
    other.observe(status, fake)
    time.sleep(0.01)
    other.observe(status, fake)
    assert not [k for k in samples(other.text()) if k[0] == "porep_prover_device_efficiency"]


def test_events_that_left_the_ring_are_counted_as_missed(rng):
    size, pairs = rng.randrange(2, 6), rng.randrange(5, 12)
    timeline = Timeline(size)
    for i in range(pairs):
        timeline.emit("GPU_START", "j", i, "w", "d")
        timeline.emit("GPU_END", "j", i, "w", "d")
    metrics = DaemonMetrics()
    metrics.observe({}, types.SimpleNamespace(timeline=timeline))
    got = samples(metrics.text())
    assert got[("porep_prover_timeline_events_missed_total", ())] == 2 * pairs - size
    kept = [ev for ev in timeline.events()]
    whole = sum(1 for a, b in zip(kept, kept[1:]) if a.event == "GPU_START" and b.event == "GPU_END")
    expected = sum(b.t - a.t for a, b in zip(kept, kept[1:]) if a.event == "GPU_START" and b.event == "GPU_END")
    assert whole == size // 2
    assert got[("porep_prover_device_busy_seconds_total", (("device", "d"),))] == pytest.approx(expected)


def test_timeline_since_reads_each_event_once(rng):
    size = rng.randrange(1, 20)
    timeline = Timeline(size)
    seq, seen, missed, emitted = 0, [], 0, []
    for _ in range(rng.randrange(20, 60)):
        for _ in range(rng.randrange(0, 8)):
            emitted.append(timeline.emit("SYNTH_START", "j", len(emitted)))
        events, seq, lost = timeline.since(seq)
        seen += events
        missed += lost
    assert seq == len(emitted) and len(seen) + missed == len(emitted)
    assert [e.partition for e in seen] == sorted({e.partition for e in seen})      # in order, none twice
    assert set(e.partition for e in seen) <= set(range(len(emitted)))
    assert timeline.since(seq) == ([], seq, 0)


def test_engine_status_view(circuit):
    params, r1cs, ws = circuit
    with engine(**{"engine.gpu_workers_per_device": 3}) as e:
        e.prove(inline_job(params, r1cs, ws[:2]), timeout=120)
        view = engine_status_view(e)
        kept = len(e.timeline.events())
    json.dumps(view, allow_nan=False)
    assert view["accepting"] is True
    assert [(d["label"], d["kind"], d["workers"], d["memory"]) for d in view["devices"]] == [("cpu", "cpu", 3, None)]
    assert view["workers"] == {"synthesis": 2, "per_device": 3, "device": 3, "finalizers": 3}
    assert view["engine_jobs"] == {"active": 0, "submitted": 1, "succeeded": 1, "failed": 0, "cancelled": 0}
    assert view["srs"]["resident_bytes"] == sum(s["bytes"] for s in view["srs"]["sets"]) > 0
    host = view["memory"]["host"]
    assert host["in_flight_bytes"] == 0 and 0 < host["budget_bytes"] <= host["total_bytes"]
    assert view["partitions"] == {"waiting": 0, "ready": 0, "in_flight": 0}
    assert view["timeline"] == {"kept": kept, "emitted": kept} and kept > 2


class MemoryBackend(CpuBackend):
    """The CPU backend as a GPU that tells its memory (or fails to)."""

    def __init__(self, free, total, resident, fails=False, planned=None, waited_ms=None):
        super().__init__()
        self.info = types.SimpleNamespace(name="Fake GPU")
        self.free, self.total, self.resident, self.fails, self.planned = free, total, resident, fails, planned
        self.memory = types.SimpleNamespace()
        if waited_ms is not None:
            self.memory.copy_wait_seen_ms = waited_ms

    def memory_status(self):
        if self.fails:
            raise RuntimeError("device lost")
        return {"total": self.total, "free": self.free, "resident": self.resident, **(self.planned or {})}


def test_device_memory_in_the_status_and_the_metrics(rng):
    total = rng.randrange(1 << 35, 1 << 37)            # above the least budget drawn below
    free, resident = rng.randrange(total), rng.randrange(1 << 32)
    planned = {"budget": rng.randrange(1 << 34, total), "planned": rng.randrange(1 << 34), "resident": resident,
               "allocated": rng.randrange(1 << 34), "peak": rng.randrange(1 << 34), "streamed": rng.randrange(1 << 40),
               "pinned": rng.randrange(1 << 36), "dropped": rng.randrange(1 << 30)}
    waited_ms = rng.uniform(0, 1e6)
    devices = [ProvingDevice("gpu-a", "gpu0", "gpu", MemoryBackend(free, total, resident, planned=planned,
                                                                   waited_ms=waited_ms)),
               ProvingDevice("gpu-b", "gpu1", "gpu", MemoryBackend(0, 0, 0, fails=True)),
               ProvingDevice("gpu-c", "gpu2", "gpu", MemoryBackend(free, total, resident))]
    with Engine(load_config(overrides={"engine.partition_workers": 1}), devices=devices) as e:
        view = engine_status_view(e)
    plan_keys = {f"{k}_bytes": v for k, v in planned.items()}
    assert [(d["label"], d["name"], d["memory"]) for d in view["devices"]] == [
        ("gpu0", "Fake GPU", {"total_bytes": total, "free_bytes": free, "resident_bytes": resident, **plan_keys}),
        ("gpu1", "Fake GPU", None),
        ("gpu2", "Fake GPU", {"total_bytes": total, "free_bytes": free, "resident_bytes": resident})]
    assert view["workers"]["device"] == len(devices) * view["workers"]["per_device"]
    metrics = DaemonMetrics()
    metrics.observe(view)
    got = samples(metrics.text())
    assert got[("porep_prover_device_memory_free_bytes", (("device", "gpu0"),))] == free
    assert got[("porep_prover_device_memory_total_bytes", (("device", "gpu0"),))] == total
    assert ("porep_prover_device_memory_free_bytes", (("device", "gpu1"),)) not in got
    for name, key in (("budget", "budget"), ("planned", "planned"), ("allocated", "allocated"), ("peak", "peak")):
        assert got[(f"porep_prover_device_memory_{name}_bytes", (("device", "gpu0"),))] == planned[key]
    assert got[("porep_prover_device_streamed_bytes", (("device", "gpu0"),))] == planned["streamed"]
    assert [d["copy_wait_seconds"] for d in view["devices"]] == [waited_ms / 1e3, None, None]
    assert got[("porep_prover_device_copy_wait_seconds", (("device", "gpu0"),))] == pytest.approx(waited_ms / 1e3)
    assert ("porep_prover_device_copy_wait_seconds", (("device", "gpu2"),)) not in got
    assert ("porep_prover_device_memory_budget_bytes", (("device", "gpu2"),)) not in got
    assert got[("porep_prover_device_workers", ())] == view["workers"]["device"]


NODE_SERIES = {"porep_prover_cluster_node_device_efficiency": "efficiency",
               "porep_prover_cluster_node_device_busy_seconds": "busy_seconds",
               "porep_prover_cluster_node_kernel_regions": "regions"}


def node_samples(text: str) -> dict:
    return {k: v for k, v in samples(text).items() if k[0].startswith("porep_prover_cluster_node_")}


def expected_node_samples(cluster: dict, lost_kept: bool) -> dict:
    """Reference: the series a cluster's status should give: a node ready or starting, all its own;
    a lost one's partition counts while lost_kept."""
    out = {}
    for n in cluster["nodes"]:
        live = n["state"] in ("ready", "starting")
        if not live and not lost_kept:
            continue
        for key in ("done", "failed", "rerun"):
            out[(f"porep_prover_cluster_node_partitions_{key}", (("node", n["label"]),))] = n[f"partitions_{key}"]
        for f in n["device_figures"] if live else []:
            for name, key in NODE_SERIES.items():
                if f[key] is not None:
                    out[(name, (("device", f["label"]), ("node", n["label"])))] = f[key]
    return out


def test_cluster_node_gauges_follow_the_status_and_a_lost_node_goes(rng):
    cluster = cluster_status(rng, nodes=rng.randrange(3, 7))
    first, second, third = cluster["nodes"][:3]
    first["state"] = second["state"] = "ready"
    third["state"] = "lost"
    first["device_figures"] = [device_figures(rng, label) for label in first["devices"]]
    first["device_figures"][0].update(regions=rng.randrange(1, 99), efficiency=rng.uniform(0.01, 1.0))
    metrics = DaemonMetrics()
    metrics.observe({"cluster": cluster})
    got = node_samples(metrics.text())
    assert got == expected_node_samples(cluster, lost_kept=True)
    device = (("device", first["devices"][0]), ("node", first["label"]))
    assert got[("porep_prover_cluster_node_device_efficiency", device)] == first["device_figures"][0]["efficiency"]
    assert got[("porep_prover_cluster_node_partitions_rerun", (("node", third["label"]),))] == third["partitions_rerun"]
    assert samples(metrics.text())[("porep_prover_cluster_nodes_ready", ())] == cluster["nodes_ready"]

    first["state"], first["partitions_rerun"] = "lost", rng.randrange(1, 9)   # its device series go, its reruns show
    for f in second["device_figures"]:
        f.update(regions=0, efficiency=None, busy_seconds=0.0)
    second["partitions_done"] += rng.randrange(1, 50)
    metrics.observe({"cluster": cluster})
    got = node_samples(metrics.text())
    assert got == expected_node_samples(cluster, lost_kept=True)
    assert {labels for _, labels in got if ("node", first["label"]) in labels} == {(("node", first["label"]),)}
    assert not any(name == "porep_prover_cluster_node_device_efficiency" and ("node", second["label"]) in labels
                   for name, labels in got)
    metrics.lost_node_series_seconds = 0.0                    # past their time: the lost nodes' series go
    metrics.observe({"cluster": cluster})
    assert node_samples(metrics.text()) == expected_node_samples(cluster, lost_kept=False)
    metrics.observe({})                                       # no cluster: no node series
    assert node_samples(metrics.text()) == {}


# ------------------------------------------------------------ the HTTP server

def get(port, path, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type"), resp.read()
    finally:
        conn.close()


def daemon_status(rng):
    return {"version": "0", "uptime_seconds": rng.uniform(1, 1e5), "accepting": True,
            "queue": {p: rng.randrange(0, 50) for p in PRIORITIES},
            "jobs": {"counts": {"queued": 1, "running": rng.randrange(0, 9), "completed": 0, "failed": 0,
                                "cancelled": 0}, "active": []},
            "devices": [{"label": "gpu0", "identity": "gpu-x", "kind": "gpu",
                         "memory": {"total_bytes": 80 << 30, "free_bytes": rng.randrange(1 << 30, 80 << 30)}}],
            "workers": {"device": rng.randrange(1, 9)}, "partitions": {"waiting": 3, "ready": 1, "in_flight": 2},
            "srs": {"resident_bytes": rng.randrange(1 << 40)},
            "memory": {"host": {"in_flight_bytes": rng.randrange(1 << 35), "budget_bytes": 1 << 36}}}


def test_status_and_metrics_over_http(rng):
    status = daemon_status(rng)
    calls = []
    metrics = DaemonMetrics()
    metrics.job_finished("demo", "completed", 2.0, {"synthesis": 1.0})
    with StatusServer(("127.0.0.1", 0), status=lambda: calls.append(1) or status, metrics=metrics) as server:
        assert server.port > 0
        code, kind, body = get(server.port, "/status")
        assert (code, kind) == (200, "application/json") and json.loads(body) == status
        code, kind, body = get(server.port, "/metrics?from=prometheus")
        assert (code, kind) == (200, CONTENT_TYPE_LATEST)
        got = samples(body.decode())
        for p in PRIORITIES:
            assert got[("porep_prover_queue_depth", (("priority", p),))] == status["queue"][p]
        assert got[("porep_prover_running_jobs", ())] == status["jobs"]["counts"]["running"]
        assert got[("porep_prover_device_workers", ())] == status["workers"]["device"]
        assert got[("porep_prover_uptime_seconds", ())] == pytest.approx(status["uptime_seconds"])
        assert got[("porep_prover_srs_resident_bytes", ())] == status["srs"]["resident_bytes"]
        assert got[("porep_prover_memory_in_flight_bytes", ())] == status["memory"]["host"]["in_flight_bytes"]
        assert got[("porep_prover_device_memory_free_bytes", (("device", "gpu0"),))] == \
            status["devices"][0]["memory"]["free_bytes"]
        assert got[("porep_prover_proofs_completed_total", (("kind", "demo"),))] == 1
        for path in ("/index.html", "/status/", "/status/livex", "/metricsx", "/../status", "/favicon.ico"):
            assert get(server.port, path)[0] == 404
        assert get(server.port, "/status", "POST")[0] == 405
        assert len(calls) == 2


def test_a_failing_status_is_500_and_the_server_goes_on(rng):
    state = {"fail": True}

    def status():
        if state["fail"]:
            raise RuntimeError("journal closed")
        return {"uptime_seconds": 1.0}

    with StatusServer(("127.0.0.1", 0), status=status, metrics=DaemonMetrics()) as server:
        for path in ("/status", "/metrics"):
            code, kind, body = get(server.port, path)
            assert code == 500 and "journal closed" in json.loads(body)["error"]
        state["fail"] = False
        assert get(server.port, "/status")[0] == 200


def test_stop_is_bounded_with_idle_connections_open():
    server = StatusServer(("127.0.0.1", 0), status=dict, metrics=DaemonMetrics(), timeout=30.0).start()
    port = server.port
    idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
    try:
        began = time.monotonic()
        server.stop()
        assert time.monotonic() - began < status_http.STOP_SECONDS
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        server.stop()                        # again: nothing
    finally:
        for s in idle:
            s.close()


def test_connections_past_the_limit_get_503(monkeypatch):
    monkeypatch.setattr(status_http, "MAX_CONNECTIONS", 2)
    # the server's time limit outlasts the wait below, so the idle connections hold their slots throughout
    # even on a loaded host; each sends half a request so its handler is surely the one reading it
    with StatusServer(("127.0.0.1", 0), status=dict, metrics=DaemonMetrics(), timeout=60.0) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(2)]
        for s in idle:
            s.sendall(b"GET /status HTTP/1.1\r\n")
        try:
            deadline, code = time.monotonic() + 30, None
            while code != 503 and time.monotonic() < deadline:    # once the idle ones hold both slots
                code = get(server.port, "/status")[0]
                time.sleep(0.01)
            assert code == 503
        finally:
            for s in idle:
                s.close()
        deadline, code = time.monotonic() + 10, None
        while code != 200 and time.monotonic() < deadline:        # their slots come back
            code = get(server.port, "/status")[0]
            time.sleep(0.01)
        assert code == 200


def test_bad_addresses():
    for address in [("127.0.0.1", -1), ("127.0.0.1", 70000), ("127.0.0.1", "80"), "127.0.0.1:80", ("127.0.0.1",)]:
        with pytest.raises(InvalidInputError):
            StatusServer(address, status=dict, metrics=DaemonMetrics())
    with pytest.raises(InvalidInputError):
        StatusServer(("127.0.0.1", 0), status={}, metrics=DaemonMetrics())
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        with pytest.raises(ConfigError, match="cannot listen"):
            StatusServer(("127.0.0.1", taken.getsockname()[1]), status=dict, metrics=DaemonMetrics()).start()
    finally:
        taken.close()
