# SPDX-License-Identifier: Apache-2.0
"""GetStatus and GetMetrics in the reference engine's terms, from the
daemon's status dict (status_http.StatusServer documents it) and its
DaemonMetrics.

    status_response(status, kinds, circuit_names)   cuzk.v1 GetStatusResponse
    metrics_text(status, metrics)                    the reference engine's cuzk_* series, then the daemon's

The series, as the reference engine names them (proof_kind: porep_c2,
snap_update, window_post, winning_post, or another job kind with "_" for
"-"): cuzk_proofs_completed_total, cuzk_proofs_failed_total (jobs since the
daemon started), cuzk_proofs_completed{proof_kind}, cuzk_proofs_failed
{proof_kind}, cuzk_proof_duration_seconds_count and _sum{proof_kind}
(completed jobs, accepted to finished), cuzk_uptime_seconds,
cuzk_queue_depth (jobs accepted, no partition started), cuzk_running_jobs,
cuzk_gpu_workers (device workers on every device).
"""
from __future__ import annotations

import collections
import re

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily

from . import proving_pb2 as pb
from .requests import QUEUE_NAMES

GPU_LABEL = re.compile(r"gpu(\d+)")


def queue_name(kind: str) -> str:
    """The reference engine's name of a job kind ("porep-c2" for porep)."""
    return QUEUE_NAMES.get(kind, kind)


def status_response(status: dict, kinds: list[str], circuit_names: dict[str, str]) -> pb.GetStatusResponse:
    """status as a GetStatusResponse: the GPUs, the parameter sets resident
    (named by circuit_names: srs key -> circuit id, else by their key), a
    queue per job kind of kinds and per kind with active jobs, the totals
    since the start, the host memory held against its budget."""
    gpus = []
    for i, device in enumerate(d for d in status["devices"] if d["kind"] == "gpu"):
        number = GPU_LABEL.fullmatch(device["label"])
        memory = device.get("memory") or {}
        gpus.append(pb.GPUStatus(ordinal=int(number[1]) if number else i, name=device.get("name") or "",
                                 vram_total_bytes=memory.get("total_bytes") or 0,
                                 vram_free_bytes=memory.get("free_bytes") or 0))
    srs = [pb.SRSStatus(circuit_id=circuit_names.get(e["key"], e["key"]),
                        tier=pb.SRSStatus.COLD if e.get("loading") else pb.SRSStatus.HOT,
                        size_bytes=e["bytes"], ref_count=e["leases"]) for e in status["srs"]["sets"]]
    counts: collections.Counter[tuple[str, str]] = collections.Counter(
        (job["kind"], job["state"]) for job in status["jobs"]["active"])
    listed = list(dict.fromkeys([*kinds, *(kind for kind, _ in counts)]))
    queues = [pb.QueueStatus(proof_kind=queue_name(kind), pending=counts[(kind, "queued")],
                             in_progress=counts[(kind, "running")]) for kind in listed]
    jobs, host = status["jobs"]["counts"], status["memory"]["host"]
    return pb.GetStatusResponse(
        gpus=gpus, loaded_srs=srs, queues=queues, total_proofs_completed=jobs["completed"],
        total_proofs_failed=jobs["failed"], uptime_seconds=int(status["uptime_seconds"]),
        pinned_memory_bytes=status["srs"]["resident_bytes"] + host["in_flight_bytes"],
        pinned_memory_limit_bytes=host["budget_bytes"])


class _Families:
    """A collector of metric families made beforehand."""

    def __init__(self, families: list):
        self.families = families

    def collect(self):
        return iter(self.families)


def _by_kind(metrics) -> dict[str, dict[str, float]]:
    """{sample name: {kind: value}} of the daemon's job counters and its proof duration's count and sum."""
    wanted = {"porep_prover_proofs_completed_total", "porep_prover_proofs_failed_total",
              "porep_prover_proof_duration_seconds_count", "porep_prover_proof_duration_seconds_sum"}
    out: dict[str, dict[str, float]] = {name: {} for name in wanted}
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name in wanted:
                out[sample.name][sample.labels["kind"]] = sample.value
    return out


def metrics_text(status: dict, metrics) -> str:
    """The reference engine's series (the module's docstring) from status
    and metrics (the daemon's, observed just before), then metrics.text()."""
    seen = _by_kind(metrics)
    jobs = status["jobs"]["counts"]
    label = {kind: queue_name(kind).replace("-", "_") for values in seen.values() for kind in values}
    families: list = [CounterMetricFamily(f"cuzk_proofs_{what}", f"Jobs {what} since the daemon started",
                                          value=jobs[what]) for what in ("completed", "failed")]
    for what in ("completed", "failed"):
        family = GaugeMetricFamily(f"cuzk_proofs_{what}", f"Jobs {what}, by proof kind", labels=["proof_kind"])
        for kind, value in sorted(seen[f"porep_prover_proofs_{what}_total"].items()):
            family.add_metric([label[kind]], value)
        families.append(family)
    duration = SummaryMetricFamily("cuzk_proof_duration_seconds", "Completed jobs: seconds from accepted to "
                                   "finished", labels=["proof_kind"])
    sums = seen["porep_prover_proof_duration_seconds_sum"]
    for kind, count in sorted(seen["porep_prover_proof_duration_seconds_count"].items()):
        if count:
            duration.add_metric([label[kind]], count_value=int(count), sum_value=sums.get(kind, 0.0))
    families.append(duration)
    gauges = (("uptime_seconds", "Seconds since the daemon started", int(status["uptime_seconds"])),
              ("queue_depth", "Jobs accepted, none of their partitions started", sum(status["queue"].values())),
              ("running_jobs", "Jobs with partitions started, not finished", jobs["running"]),
              ("gpu_workers", "Device workers, on every device the engine proves on", status["workers"]["device"]))
    families += [GaugeMetricFamily(f"cuzk_{name}", text, value=value) for name, text, value in gauges]
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    return generate_latest(registry).decode("utf-8") + metrics.text()
