# SPDX-License-Identifier: Apache-2.0
"""The daemon's Prometheus metrics, named porep_prover_* after the reference
daemon's (cuzk_proofs_completed_total, cuzk_queue_depth, ...), in a registry
of their own (never prometheus_client's global one, so that two daemons in
one process, or a host program's own metrics, do not mix).

Two kinds of update:
- as jobs end: job_finished (the proof counters, and for a completed job the
  duration histograms) and partition_proved;
- at scrape time, observe(status, engine): the gauges from the daemon's
  status dict (status_http.StatusServer documents it), and from the engine's
  timeline the device busy seconds (every kernel region counted once, when
  its GPU_END is read) and the GPU efficiency over the last
  efficiency_window seconds.

Exported (label names in braces):
    porep_prover_proofs_completed_total{kind}      jobs whose every partition was proved and verified
    porep_prover_proofs_failed_total{kind}
    porep_prover_proofs_cancelled_total{kind}
    porep_prover_partitions_proved_total{kind}
    porep_prover_proof_duration_seconds{kind}      histogram: accepted to finished, completed jobs
    porep_prover_stage_duration_seconds{kind,stage}  histogram, stage: queue_wait, srs_load, synthesis,
                                                   gpu_compute (each summed over the job's partitions)
    porep_prover_uptime_seconds
    porep_prover_accepting                         1 while jobs are accepted, 0 while draining
    porep_prover_queue_depth{priority}             jobs accepted, none of their partitions started
    porep_prover_running_jobs
    porep_prover_device_workers                       device workers, on every device the engine proves on
    porep_prover_partitions_waiting                for a synthesis worker
    porep_prover_partitions_ready                  synthesized, waiting for a device worker
    porep_prover_partitions_in_flight              handed to a worker, not yet proved or failed
    porep_prover_device_efficiency{device}            union of kernel regions / first start .. last end,
                                                   over the regions ended in the window (absent: none)
    porep_prover_device_busy_seconds_total{device} seconds in kernel regions (the device's lock held)
    porep_prover_timeline_events_missed_total      events that left the engine's ring before a scrape
                                                   read them (busy seconds undercount by their regions)
    porep_prover_srs_resident_bytes                host bytes of the parameter sets loaded
    porep_prover_memory_in_flight_bytes            host bytes of partitions from synthesis to finalization
    porep_prover_memory_budget_bytes               host bytes the process may hold (the memory plans' budget)
    porep_prover_memory_held_bytes                 of it, the process's base and the loaded sets' by their plans
    porep_prover_device_memory_free_bytes{device}, porep_prover_device_memory_total_bytes{device}
    porep_prover_device_memory_budget_bytes{device}, ..._planned_bytes, ..._allocated_bytes, ..._peak_bytes
                                                   the process's budget on a GPU, its plan's peak, what it holds
    porep_prover_device_streamed_bytes{device}     parameter bytes streamed from host memory
    porep_prover_device_copy_wait_seconds{device}  seconds its kernels stood waiting for streamed chunks
  with engine.cluster (the status's cluster.nodes; node: the node's label, ray:ADDRESS:ID, else its id;
  a node's device series while it is ready or starting; its partition series until
  LOST_NODE_SERIES_SECONDS after it was first seen lost or failed, then removed):
    porep_prover_cluster_nodes_ready
    porep_prover_cluster_node_device_efficiency{node,device}   the node's own figure over its last
                                                   figures_seconds (absent: no kernel region ended there)
    porep_prover_cluster_node_device_busy_seconds{node,device}  seconds in kernel regions, same window
    porep_prover_cluster_node_kernel_regions{node,device}   kernel regions ended in that window
    porep_prover_cluster_node_partitions_done{node}, ..._failed{node}, ..._rerun{node}
                                                   the head's counts of the node's partitions (rerun: those
                                                   in flight there when it was lost, proved elsewhere)
"""
from __future__ import annotations

import collections
import math
import threading
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from ..engine.timeline import busy_over_span, kernel_regions
from ..errors import InvalidInputError

# 10 ms .. 10 min: a partition's kernel region of a small circuit to a 32 GiB PoRep job on a busy host
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0, 120.0, 300.0, 600.0)
STATES = ("completed", "failed", "cancelled")
STAGES = ("queue_wait", "srs_load", "synthesis", "gpu_compute")
PRIORITIES = ("low", "normal", "high", "critical")
LIVE_NODE_STATES = ("ready", "starting")     # a cluster node's device series are kept in these states only
LOST_NODE_SERIES_SECONDS = 600.0    # a lost node's partition counts stay this long (its reruns seen), then go
EFFICIENCY_WINDOW_SECONDS = 60.0
MAX_OPEN_REGIONS = 4096        # kernel regions started and not yet seen ending, carried between scrapes
MAX_RECENT_REGIONS = 100_000   # kernel regions kept for the efficiency window


def _seconds(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InvalidInputError(f"{what} must be a finite number of seconds, 0 or more, got {value!r}")
    return float(value)


def _number(status: dict, *path) -> float | None:
    """The number at status[path[0]][path[1]]...; None where a key is missing or the value is no number."""
    value = status
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


class DaemonMetrics:
    """The metrics of one daemon; text() is the Prometheus exposition.

    efficiency_window: seconds of kernel regions the GPU efficiency gauge is
    computed over (by their end). Thread-safe."""

    def __init__(self, efficiency_window: float = EFFICIENCY_WINDOW_SECONDS):
        self.efficiency_window = _seconds(efficiency_window, "efficiency_window")
        self.registry = CollectorRegistry()
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._timeline = None            # the timeline read last, its next sequence number, the regions open
        self._seq = 0
        self._open: list = []
        self._efficient: set[str] = set()  # devices with an efficiency sample
        self._recent: collections.deque = collections.deque(maxlen=MAX_RECENT_REGIONS)   # (device, start, end)
        self._node_series: set = set()    # (gauge, labels) of the cluster's nodes, set at the last observe
        self._lost_at: dict[str, float] = {}   # node -> when first seen lost or failed (time.monotonic())
        self.lost_node_series_seconds = LOST_NODE_SERIES_SECONDS
        self._job_metrics()
        self._gauges()
        self._cluster_gauges()

    def _job_metrics(self) -> None:
        r = self.registry
        self.completed = Counter("porep_prover_proofs_completed", "Jobs whose every partition was proved and "
                                 "verified", ["kind"], registry=r)
        self.failed = Counter("porep_prover_proofs_failed", "Jobs that failed", ["kind"], registry=r)
        self.cancelled = Counter("porep_prover_proofs_cancelled", "Jobs cancelled", ["kind"], registry=r)
        self.partitions = Counter("porep_prover_partitions_proved", "Partitions proved and verified", ["kind"],
                                  registry=r)
        self.duration = Histogram("porep_prover_proof_duration_seconds", "Completed jobs: accepted to finished",
                                  ["kind"], buckets=BUCKETS, registry=r)
        self.stage = Histogram("porep_prover_stage_duration_seconds", "Completed jobs: seconds in each stage, "
                               "summed over the job's partitions", ["kind", "stage"], buckets=BUCKETS, registry=r)
        self.busy = Counter("porep_prover_device_busy_seconds", "Seconds in kernel regions (the device's lock "
                            "held)", ["device"], registry=r)
        self.missed = Counter("porep_prover_timeline_events_missed", "Timeline events that left the engine's "
                              "ring before a scrape read them", registry=r)

    def _gauges(self) -> None:
        r = self.registry
        self.uptime = Gauge("porep_prover_uptime_seconds", "Seconds since the daemon started", registry=r)
        self.accepting = Gauge("porep_prover_accepting", "1 while jobs are accepted, 0 while draining",
                               registry=r)
        self.queue_depth = Gauge("porep_prover_queue_depth", "Jobs accepted with none of their partitions "
                                 "started", ["priority"], registry=r)
        self.running = Gauge("porep_prover_running_jobs", "Jobs with partitions started, not finished",
                             registry=r)
        self.device_workers = Gauge("porep_prover_device_workers", "Device workers on the devices the engine proves on",
                                 registry=r)
        self.waiting = Gauge("porep_prover_partitions_waiting", "Partitions waiting for a synthesis worker",
                             registry=r)
        self.ready = Gauge("porep_prover_partitions_ready", "Partitions synthesized, waiting for a device worker",
                           registry=r)
        self.partitions_in_flight = Gauge("porep_prover_partitions_in_flight", "Partitions handed to a worker, "
                                          "not yet proved or failed", registry=r)
        self.efficiency = Gauge("porep_prover_device_efficiency", "Union of the kernel regions over first start to "
                                "last end, of the regions ended in the last window", ["device"], registry=r)
        self.srs_bytes = Gauge("porep_prover_srs_resident_bytes", "Host bytes of the parameter sets loaded",
                               registry=r)
        self.in_flight = Gauge("porep_prover_memory_in_flight_bytes", "Host bytes of the partitions from their "
                               "synthesis's start to their finalization's end", registry=r)
        self.budget = Gauge("porep_prover_memory_budget_bytes", "Host bytes the process may hold (the memory "
                            "plans' budget)", registry=r)
        self.held = Gauge("porep_prover_memory_held_bytes", "Host bytes the process's base and the loaded "
                          "parameter sets hold by their memory plans", registry=r)
        self.device_free = Gauge("porep_prover_device_memory_free_bytes", "A device's free memory", ["device"],
                                 registry=r)
        self.device_total = Gauge("porep_prover_device_memory_total_bytes", "A device's memory", ["device"],
                                  registry=r)
        self.device_budget = Gauge("porep_prover_device_memory_budget_bytes", "Device memory the process may hold "
                                   "(engine.device_memory_gib)", ["device"], registry=r)
        self.device_planned = Gauge("porep_prover_device_memory_planned_bytes", "The device-memory plan's peak "
                                    "for the parameters in use", ["device"], registry=r)
        self.device_allocated = Gauge("porep_prover_device_memory_allocated_bytes", "Device memory the process "
                                      "holds now", ["device"], registry=r)
        self.device_peak = Gauge("porep_prover_device_memory_peak_bytes", "The most device memory the process "
                                 "held since the plan was made", ["device"], registry=r)
        self.device_dropped = Gauge("porep_prover_device_resident_dropped_bytes", "Resident bytes a device gave "
                                    "up for want of memory so far (its plan did not hold)", ["device"], registry=r)
        self.device_streamed = Gauge("porep_prover_device_streamed_bytes", "Parameter bytes streamed to the "
                                     "device from host memory so far", ["device"], registry=r)
        self.device_copy_wait = Gauge("porep_prover_device_copy_wait_seconds", "Seconds the device's kernels "
                                      "stood waiting for streamed parameter chunks so far (as of its last kernel "
                                      "region)", ["device"], registry=r)

    def _cluster_gauges(self) -> None:
        r = self.registry
        self.nodes_ready = Gauge("porep_prover_cluster_nodes_ready", "Cluster nodes whose engine is ready",
                                 registry=r)
        self.node_efficiency = Gauge("porep_prover_cluster_node_device_efficiency", "A cluster node's device: union "
                                     "of its kernel regions over first start to last end, over the node's last "
                                     "window", ["node", "device"], registry=r)
        self.node_busy = Gauge("porep_prover_cluster_node_device_busy_seconds", "A cluster node's device: seconds "
                               "in kernel regions over the node's last window", ["node", "device"], registry=r)
        self.node_regions = Gauge("porep_prover_cluster_node_kernel_regions", "A cluster node's device: kernel "
                                  "regions ended in the node's last window", ["node", "device"], registry=r)
        self.node_partitions = {key: Gauge(f"porep_prover_cluster_node_partitions_{key}", f"A cluster node's "
                                           f"partitions {key} (the head's count)", ["node"], registry=r)
                                for key in ("done", "failed", "rerun")}

    # ------------------------------------------------------------ as jobs end

    def job_finished(self, kind: str, state: str, seconds: float, stages: dict[str, float]) -> None:
        """A job ended. state: "completed", "failed" or "cancelled"; seconds:
        accepted to finished; stages: seconds by stage (queue_wait, srs_load,
        synthesis, gpu_compute; a stage left out is not observed). Durations
        are observed for completed jobs only. InvalidInputError for another
        state or stage, or a time that is not a finite number >= 0."""
        if not isinstance(kind, str) or not kind:
            raise InvalidInputError(f"kind must be a non-empty string, got {kind!r}")
        if state not in STATES:
            raise InvalidInputError(f"state must be one of {', '.join(STATES)}, got {state!r}")
        total = _seconds(seconds, "seconds")
        if not isinstance(stages, dict):
            raise InvalidInputError(f"stages must be a dict of seconds by stage, got {type(stages).__name__}")
        unknown = sorted(set(stages) - set(STAGES), key=str)
        if unknown:
            raise InvalidInputError(f"unknown stages {unknown}: the stages are {', '.join(STAGES)}")
        checked = {name: _seconds(value, f"stage {name}") for name, value in stages.items()}
        {"completed": self.completed, "failed": self.failed, "cancelled": self.cancelled}[state].labels(kind).inc()
        if state == "completed":
            self.duration.labels(kind).observe(total)
            for name, value in checked.items():
                self.stage.labels(kind, name).observe(value)

    def partition_proved(self, kind: str) -> None:
        """A partition of a job of this kind was proved and verified."""
        if not isinstance(kind, str) or not kind:
            raise InvalidInputError(f"kind must be a non-empty string, got {kind!r}")
        self.partitions.labels(kind).inc()

    # ------------------------------------------------------------ at scrape time

    def observe(self, status: dict, engine=None) -> None:
        """Set the gauges from the daemon's status dict (keys it lacks leave
        their gauges as they were) and, with an engine, read its timeline's
        events since the last observe."""
        if not isinstance(status, dict):
            raise InvalidInputError(f"status must be a dict, got {type(status).__name__}")
        with self._lock:
            self._set_gauges(status)
            self._set_cluster(status.get("cluster"))
            if engine is not None:
                labels = {d.get("identity"): d.get("label") for d in status.get("devices") or []
                          if isinstance(d, dict)}
                self._read_timeline(engine.timeline, labels)

    def _set_gauges(self, status: dict) -> None:
        uptime = _number(status, "uptime_seconds")
        self.uptime.set(uptime if uptime is not None else time.monotonic() - self._started)
        queue = status.get("queue")
        if not isinstance(queue, dict):
            queue = {}
        for priority in dict.fromkeys(PRIORITIES + tuple(queue)):
            self.queue_depth.labels(str(priority)).set(_number(queue, priority) or 0)
        for gauge, path in ((self.accepting, ("accepting",)), (self.running, ("jobs", "counts", "running")),
                            (self.device_workers, ("workers", "device")), (self.waiting, ("partitions", "waiting")),
                            (self.ready, ("partitions", "ready")),
                            (self.partitions_in_flight, ("partitions", "in_flight")),
                            (self.srs_bytes, ("srs", "resident_bytes")),
                            (self.in_flight, ("memory", "host", "in_flight_bytes")),
                            (self.budget, ("memory", "host", "budget_bytes")),
                            (self.held, ("memory", "host", "held_bytes"))):
            value = _number(status, *path)
            if value is not None:
                gauge.set(value)
        for device in status.get("devices") or []:
            waited = _number(device, "copy_wait_seconds") if isinstance(device, dict) else None
            if waited is not None:
                self.device_copy_wait.labels(str(device.get("label"))).set(waited)
            memory = device.get("memory") if isinstance(device, dict) else None
            if isinstance(memory, dict):
                for gauge, key in ((self.device_free, "free_bytes"), (self.device_total, "total_bytes"),
                                   (self.device_budget, "budget_bytes"), (self.device_planned, "planned_bytes"),
                                   (self.device_allocated, "allocated_bytes"), (self.device_peak, "peak_bytes"),
                                   (self.device_streamed, "streamed_bytes"), (self.device_dropped, "dropped_bytes")):
                    value = _number(memory, key)
                    if value is not None:
                        gauge.labels(str(device.get("label"))).set(value)

    def _set_cluster(self, cluster) -> None:
        """Each node's gauges from the cluster's status (engine.Cluster.status):
        a live node's all, a lost one's partition counts for
        lost_node_series_seconds; the series of nodes no longer there removed."""
        series: dict[tuple[Gauge, tuple[str, ...]], float | None] = {}     # (gauge, labels) -> its sample
        lost_at: dict[str, float] = {}
        now = time.monotonic()
        nodes = cluster.get("nodes") if isinstance(cluster, dict) else None
        for n in nodes if isinstance(nodes, list) else []:
            if not isinstance(n, dict):
                continue
            node, live = str(n.get("label") or n.get("node_id")), n.get("state") in LIVE_NODE_STATES
            if not live:
                lost_at[node] = self._lost_at.get(node, now)
                if now - lost_at[node] >= self.lost_node_series_seconds:
                    continue
            for key, gauge in self.node_partitions.items():
                series[(gauge, (node,))] = _number(n, f"partitions_{key}")
            for f in (n.get("device_figures") or []) if live else []:      # a lost node's figures: stale
                if isinstance(f, dict):
                    device = (node, str(f.get("label")))
                    series[(self.node_efficiency, device)] = _number(f, "efficiency")
                    series[(self.node_busy, device)] = _number(f, "busy_seconds")
                    series[(self.node_regions, device)] = _number(f, "regions")
        samples = {k: v for k, v in series.items() if v is not None}   # no figure: no sample (not a stale one)
        for gauge, labels in self._node_series - set(samples):
            gauge.remove(*labels)
        for (gauge, labels), value in samples.items():
            gauge.labels(*labels).set(value)
        self._node_series, self._lost_at = set(samples), lost_at
        ready = _number(cluster, "nodes_ready") if isinstance(cluster, dict) else None
        if ready is not None:
            self.nodes_ready.set(ready)

    def _read_timeline(self, timeline, labels: dict) -> None:
        """Count the kernel regions ended since the last read, per device
        (labelled by its status label, else by its identity); then the
        efficiency of each device over the regions ended in the window."""
        if timeline is not self._timeline:           # another engine: its numbers start afresh
            self._timeline, self._seq, self._open = timeline, 0, []
            self._recent.clear()
        events, self._seq, missed = timeline.since(self._seq)
        if missed:
            self.missed.inc(missed)
        pairs, still_open = kernel_regions(self._open + events)
        self._open = still_open[-MAX_OPEN_REGIONS:]
        for start, end in pairs:
            device = labels.get(start.device) or start.device
            self.busy.labels(device).inc(max(0.0, end.t - start.t))
            self._recent.append((device, start.t, end.t))
        cutoff = time.time() - self.efficiency_window
        while self._recent and self._recent[0][2] < cutoff:
            self._recent.popleft()
        spans = collections.defaultdict(list)
        for device, a, b in self._recent:
            if b >= cutoff:                           # a region that ended out of order stays until it is first
                spans[device].append((a, b))
        for device in self._efficient - set(spans):      # no region in the window: no sample (not a stale one)
            self.efficiency.remove(device)
        for device, regions in spans.items():
            self.efficiency.labels(device).set(busy_over_span(regions)[0])
        self._efficient = set(spans)

    def text(self) -> str:
        """The Prometheus exposition text (what GET /metrics serves)."""
        return generate_latest(self.registry).decode("utf-8")
