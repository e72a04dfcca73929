# SPDX-License-Identifier: Apache-2.0
"""Samples for the live status's tests: a worker's stages made at random,
their timeline events, a full status dict with fresh numbers, and a status
server on 127.0.0.1 answering a fixed status and timeline window."""
import types

from porep_prover.daemon.metrics import DaemonMetrics
from porep_prover.daemon.status_http import StatusServer
from porep_prover.engine import timeline_window as tw
from porep_prover.engine.timeline import Event

DEVICE = "dev-A"
LANES = [("synth0", "synthesis", ""), ("synth1", "synthesis", ""), ("gpu0.w0", "device", "gpu0"),
         ("gpu0.w1", "device", "gpu0"), ("finalize_0", "finalizer", "")]


def worker_intervals(rng, worker, role, t0, until):
    """A worker's stages from t0 on, one after the other with idle time between
    (stage, job, partition, start, end), the last one past `until`."""
    out, t, n = [], t0, 0
    while t < until:
        job, part = rng.choice(["job-a", "job-b", "job-c"]), rng.randrange(0, 7)
        t += rng.uniform(0.0, 3.0)
        if role == "synthesis":
            seq = [("synthesis", rng.uniform(0.2, 6.0))]
        elif role == "device":
            seq = [("prepare", rng.uniform(0.01, 0.5)), (None, rng.uniform(0, 0.05)),
                   ("lock_wait", rng.uniform(0.0, 2.0)), ("kernel", rng.uniform(0.1, 4.0))]
        else:
            seq = [("finalize", rng.uniform(0.05, 1.5))]
        for stage, length in seq:
            if stage is not None:
                out.append((stage, job, part, t, t + length))
            t += length
        n += 1
    return out


def events_of(intervals_by_worker, now):
    """The events of those intervals that happened by `now` (as the engine
    emits them: a lock wait ends with GPU_START, which opens the kernel
    region; a synthesis worker also emits GPU_QUEUE), with job events among
    them, in time order."""
    ends = {"synthesis": "SYNTH_END", "prepare": "PREP_END", "kernel": "GPU_END", "finalize": "FINALIZE_END"}
    starts = {v: k for k, v in tw.STAGE_OF.items()}
    evs = []
    for (worker, role, _), intervals in intervals_by_worker.items():
        device = DEVICE if role == "device" else ""
        for stage, job, part, a, b in intervals:
            evs.append(Event(starts[stage], a, job, part, worker, device if stage != "synthesis" else ""))
            if stage in ends:
                evs.append(Event(ends[stage], b, job, part, worker, device))
            if stage == "synthesis":
                evs.append(Event("GPU_QUEUE", b + 1e-6, job, part, worker))
    evs += [Event("JOB_SUBMIT", now - 100.0, "job-a"), Event("JOB_END", now - 1.0, "job-b")]
    return sorted((e for e in evs if e.t <= now), key=lambda e: e.t)


def device_figures(rng, label):
    """A node's device's figures over its last minute (NodeEngine.status), fresh: no region, one, or many."""
    regions = rng.choice([0, 1, rng.randrange(2, 400)])
    busy = rng.uniform(0.01, 60.0) if regions else 0.0
    return {"label": label, "efficiency": rng.uniform(0.0, 1.0) if regions else None, "busy_seconds": busy,
            "regions": regions, "longest_gap_seconds": rng.uniform(0.001, 5.0) if regions > 1 else None,
            "longest_gap_cause": rng.choice(["synthesis", "preparation", "handover"]) if regions > 1 else None}


def cluster_status(rng, nodes=None):
    """A cluster's entry in the status (engine.cluster), its nodes' numbers fresh."""
    def node(i):
        sent = rng.randrange(0, 500)
        done = rng.randrange(0, sent + 1)
        node_id, address = f"{rng.getrandbits(128):032x}", f"127.0.0.{i + 1}"
        labels = [f"gpu{d}" for d in range(rng.randrange(0, 4))] or ["cpu"]
        return {"node_id": node_id, "label": f"ray:{address}:{node_id[:8]}", "address": address,
                "state": rng.choice(["ready", "starting", "lost"]), "why": rng.choice([None, "node died"]),
                "devices": labels, "figures_seconds": 60.0,
                "device_figures": [device_figures(rng, label) for label in labels if rng.random() < 0.9],
                "srs": [{"key": f"demo:{rng.randrange(100, 9000)}", "bytes": rng.randrange(1 << 30), "loads": 1}],
                "partitions_sent": sent, "partitions_done": done, "partitions_failed": rng.randrange(0, 5),
                "partitions_rerun": rng.randrange(0, 5), "in_flight": rng.randrange(0, 4),
                "dispatch_ms": rng.choice([None, round(rng.uniform(1, 50), 3)])}
    listed = [node(i) for i in range(nodes if nodes is not None else rng.randrange(1, 5))]
    return {"name": "ray", "address": "127.0.0.1:6379", "namespace": "porep-prover",
            "nodes_ready": sum(n["state"] == "ready" for n in listed), "nodes": listed}


def full_status(rng, cluster=False):
    """A daemon status dict with every key the page and the terminal read,
    numbers fresh; with cluster, the cluster's nodes too."""
    def job(i):
        parts = rng.randrange(1, 40)
        proved = rng.randrange(0, parts)
        return {"job_id": f"{rng.getrandbits(64):016x}", "request_id": "", "kind": "demo",
                "priority": rng.choice(["low", "normal", "high", "critical"]), "state": "running",
                "partitions": parts, "queued": parts - proved, "in_flight": min(2, parts - proved), "proved": proved,
                "failed": 0, "submitted_unix_ms": 1}
    return {"version": "0.1.0", "uptime_seconds": rng.uniform(1, 1e6), "accepting": rng.random() < 0.5,
            "devices": [{"label": "gpu0", "kind": "gpu", "identity": DEVICE, "name": "NVIDIA H100", "workers": 2,
                         "memory": {"total_bytes": 80 << 30, "free_bytes": rng.randrange(1 << 30, 80 << 30),
                                    "resident_bytes": rng.randrange(1 << 34), "budget_bytes": 32 << 30,
                                    "planned_bytes": rng.choice([None, rng.randrange(1 << 35)]),
                                    "allocated_bytes": rng.randrange(1 << 35), "peak_bytes": rng.randrange(1 << 35),
                                    "streamed_bytes": rng.randrange(1 << 40), "pinned_bytes": rng.randrange(1 << 36),
                                    "dropped_bytes": 0},
                         "copy_wait_seconds": rng.uniform(0, 1e4)}],
            "workers": {"synthesis": 2, "per_device": 2, "device": 2, "finalizers": 2},
            "queue": {p: rng.randrange(0, 50) for p in ("low", "normal", "high", "critical")},
            "jobs": {"counts": {"queued": rng.randrange(9), "running": 2, "completed": rng.randrange(999),
                                "failed": rng.randrange(9), "cancelled": rng.randrange(9)},
                     "active": [job(i) for i in range(rng.randrange(1, 4))]},
            "partitions": {"waiting": rng.randrange(99), "ready": rng.randrange(9), "in_flight": rng.randrange(9)},
            "engine_jobs": {"active": 2, "submitted": 9, "succeeded": 7, "failed": 0, "cancelled": 0},
            "srs": {"resident_bytes": rng.randrange(1 << 36), "budget_bytes": rng.choice([0, 1 << 37]),
                    "sets": [{"key": "demo:5000", "bytes": rng.randrange(1 << 30), "leases": 1, "loads": 2,
                              "idle_seconds": None, "loading": False}]},
            "memory": {"host": {"total_bytes": 64 << 30, "available_bytes": rng.randrange(1 << 35),
                                "in_flight_bytes": rng.randrange(1 << 33), "pending_bytes": 0,
                                "budget_bytes": 48 << 30}},
            "plugin_calls_stuck": [], "timeline": {"kept": 10, "emitted": 10},
            **({"cluster": cluster_status(rng)} if cluster else {})}


def synthetic_window(rng, now=None):
    now = now if now is not None else 1_800_000_000.0
    intervals = {lane: worker_intervals(rng, lane[0], lane[1], now - 70, now + 5) for lane in LANES}
    return tw.window(events_of(intervals, now), LANES, [(DEVICE, "gpu0")], now, 60.0)


def serve(rng, status=None, window=None):
    """A status server on 127.0.0.1 answering a fixed status and window."""
    status = status if status is not None else full_status(rng)
    window = window if window is not None else synthetic_window(rng)
    engine = types.SimpleNamespace(asked=[])          # asked: the window lengths asked for
    engine.timeline_window = lambda seconds: engine.asked.append(seconds) or window
    return StatusServer(("127.0.0.1", 0), status=lambda: status, metrics=DaemonMetrics(), engine=engine), status, window
