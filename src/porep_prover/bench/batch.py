# SPDX-License-Identifier: Apache-2.0
"""A batch of jobs on a running engine, at most a given number in flight, and
its report from the engine's timeline: seconds per proof, latency, queue
wait, each device's GPU efficiency, whether synthesis keeps the devices fed."""
from __future__ import annotations

import concurrent.futures
import dataclasses
import threading
import time
from typing import Callable

import numpy as np

from ..engine import Job
from ..engine.timeline import analyze, describe_gap, summary_stats

WARMUP_PREFIX = "warm-up-"      # the id of a warm-up job starts with it (plots leave such jobs out)
PERCENTILES = (50, 95, 99)


def latency_stats(seconds: list[float]) -> dict:
    """summary_stats (count, mean, min, max, median) of seconds, and their
    p50, p95 and p99 (numpy's percentiles, linear between the closest
    ranks); only count, 0, without values."""
    out = summary_stats(seconds)
    if seconds:
        out.update(zip((f"p{q}" for q in PERCENTILES), np.percentile(np.asarray(seconds, float), PERCENTILES).tolist()))
    return out


@dataclasses.dataclass
class BatchReport:
    count: int
    concurrency: int
    partitions: int
    wall: float
    latency: dict
    queue_wait: dict
    devices: dict
    failed: int
    stages: dict = dataclasses.field(default_factory=dict)
    synthesis_workers: int = 1
    events_lost: int = 0        # events of the batch's time the engine's timeline no longer held

    @property
    def seconds_per_proof(self) -> float:
        """Wall time over the jobs (a job is one proof of all its partitions)."""
        return self.wall / max(1, self.count)

    @property
    def steady_seconds_per_proof(self) -> float | None:
        """Seconds per proof at the devices' own pace, from each one's first
        kernel region to its last (gaps included, the pipeline's filling and
        draining not): what a long run settles to. None without device data."""
        rate = sum(d["partitions"] / d["span"] for d in self.devices.values() if d["span"] > 0)
        return self.partitions / rate if rate > 0 else None

    @property
    def efficiency(self) -> float:
        """The lowest GPU efficiency over the devices."""
        return min((d["efficiency"] for d in self.devices.values()), default=0.0)

    def lines(self) -> list[str]:
        lat, q = self.latency, self.queue_wait
        out = [f"jobs {self.count} x {self.partitions} partitions, {self.concurrency} in flight: "
               f"{self.wall:.3f} s, {self.seconds_per_proof:.3f} s per proof"
               + (f", {self.failed} FAILED" if self.failed else "")]
        steady = self.steady_seconds_per_proof
        if steady is not None:
            out.append(f"steady state (the devices' pace, first kernel region to last): {steady:.3f} s per proof")
        if lat["count"]:
            out.append(f"latency per proof: mean {lat['mean']:.3f} s, median {lat['median']:.3f} s, "
                       + "".join(f"p{pct} {lat[f'p{pct}']:.3f} s, " for pct in PERCENTILES if f"p{pct}" in lat)
                       + f"max {lat['max']:.3f} s")
        if q["count"]:
            out.append(f"queue wait (submit -> first synthesis): mean {q['mean'] * 1e3:.1f} ms, "
                       f"max {q['max'] * 1e3:.1f} ms")
        for device, d in self.devices.items():
            out.append(f"device {device}: GPU efficiency {d['efficiency']:.2%} (busy {d['busy']:.3f} s of "
                       f"{d['span']:.3f} s, {d['gaps']['count']} gaps)")
            if d.get("longest_gap"):
                out.append("  " + describe_gap(d["longest_gap"]))
        means = {k: v["mean"] for k, v in self.stages.items() if v.get("count")}
        if means:
            out.append("per partition (mean ms): " + ", ".join(f"{k} {v * 1e3:.1f}" for k, v in means.items()))
        if self.events_lost:
            out.append(f"timeline: {self.events_lost} events of this batch's time were no longer kept "
                       "(engine.timeline_events): the figures above cover its end")
        supply = self.supply()
        if supply is not None:
            host, device = supply
            verdict = (f"host-bound: {host / device:.2f}x short of the devices" if host > device
                       else f"the host keeps up ({device / host:.2f}x headroom)")
            out.append(f"supply: synthesis delivers a partition every {host * 1e3:.1f} ms, the devices take one "
                       f"every {device * 1e3:.1f} ms: {verdict}")
        return out

    def supply(self) -> tuple[float, float] | None:
        """(seconds between partitions the synthesis workers can deliver, seconds
        between partitions the devices can take): mean synthesis time over the
        workers, against the devices' busy time per partition over the devices."""
        synth = self.stages.get("synthesis", {})
        parts = sum(d["partitions"] for d in self.devices.values())
        busy = sum(d["busy"] for d in self.devices.values())
        if not synth.get("count") or not parts or busy <= 0:
            return None
        return synth["mean"] / max(1, self.synthesis_workers), busy / parts / len(self.devices)


def run_batch(engine, make_job: Callable[[int], Job], count: int, concurrency: int,
              timeout: float | None = None, progress: Callable[[str, int, int], None] | None = None,
              on_job: Callable[[dict], None] | None = None) -> BatchReport:
    """Submit count jobs (make_job(i)), at most concurrency unfinished at once;
    wait for all; report from the engine's timeline over this batch's jobs'
    events (the timeline keeps the last engine.timeline_events: a batch with
    more covers its end, and its report says so). progress, when given, is
    called as progress("jobs", jobs ended, count) as each job ends (on an
    engine thread); on_job, when given, with the job's row (job_row) as each
    ends, before progress, one job at a time in the order they end: what a
    run stopped before the batch's end keeps."""
    emitted = engine.timeline.emitted
    slots = threading.Semaphore(max(1, concurrency))
    handles = []
    ended, ended_lock = [0], threading.Lock()
    t0 = time.time()

    def job_ended(index: int, handle, future) -> None:
        slots.release()
        with ended_lock:
            ended[0] += 1
            if on_job:
                on_job(job_row(index, handle.job, future, time.time() - t0))
            if progress:
                progress("jobs", ended[0], count)

    for i in range(count):
        slots.acquire()
        h = engine.submit(make_job(i))
        h.future.add_done_callback(lambda future, i=i, h=h: job_ended(i, h, future))
        handles.append(h)
    results = []
    for h in handles:
        try:
            results.append(h.result(timeout))
        except Exception:  # noqa: BLE001 - counted as failed
            results.append(None)
    wall = time.time() - t0
    ids = {h.job.id for h in handles}
    kept = engine.timeline.events()
    events = [e for e in kept if e.job in ids]
    lost = max(0, engine.timeline.emitted - emitted - len(kept))     # emitted since the start, no longer kept
    first_synth = {}
    for e in events:
        if e.event == "SYNTH_START" and e.job not in first_synth:
            first_synth[e.job] = e.t
    waits = [first_synth[e.job] - e.t for e in events if e.event == "JOB_SUBMIT" and e.job in first_synth]
    ok = [r for r in results if r is not None]
    stats = analyze(events)
    return BatchReport(count, concurrency, handles[0].job.partitions if handles else 0, wall,
                       latency_stats([r.seconds for r in ok]), summary_stats(waits), stats["devices"],
                       len(results) - len(ok), stats["stages"], engine.settings.partition_workers, lost)


def job_row(index: int, job: Job, future, ended_s: float) -> dict:
    """One ended job as a row: its index in the batch, id, partitions, ok,
    seconds (submission to result), the mean seconds per partition of its
    stages (srs_load, synthesis, gpu_compute), when it ended (seconds from
    the batch's start) and, for a failure, the error."""
    row: dict = {"index": index, "job": job.id, "partitions": job.partitions, "ended_s": round(ended_s, 4)}
    error = future.exception() if not future.cancelled() else concurrent.futures.CancelledError("cancelled")
    if error is not None:
        return row | {"ok": False, "error": f"{type(error).__name__}: {error}"[:500]}
    result = future.result()
    timed = [t for t in result.timings if t is not None]
    row |= {"ok": True, "seconds": result.seconds}
    for stage in ("srs_load", "synthesis", "gpu_compute"):
        if timed:
            row[f"{stage}_s"] = sum(getattr(t, stage) for t in timed) / len(timed)
    return row


def describe_row(row: dict, count: int) -> str:
    """A job's row as one line: "job 3/8 (f1e2d3c4, 10 partitions): 16.204 s, gpu 1.367 s a partition"."""
    head = f"job {row['index'] + 1}/{count} ({row['job']}, {row['partitions']} partitions)"
    if not row["ok"]:
        return f"{head}: FAILED after {row['ended_s']:.1f} s: {row['error']}"
    stages = ", ".join(f"{k[:-2].replace('_', ' ')} {row[k]:.3f} s" for k in ("synthesis_s", "gpu_compute_s")
                       if k in row)
    return f"{head}: {row['seconds']:.3f} s" + (f" ({stages} a partition)" if stages else "")


def warm_up(engine, work, progress: Callable[[str, int, int], None] | None = None,
            on_job: Callable[[dict], None] | None = None) -> None:
    """One short job of work (at most 2 partitions) first: kernels compiled,
    parameters loaded (or made) and resident. Its id starts with
    WARMUP_PREFIX. progress, on_job: as run_batch's."""
    run_batch(engine, lambda i: warmup_job(work.job(i, partitions=min(2, work.partitions))), 1, 1, progress=progress,
              on_job=on_job)


def warmup_job(job: Job) -> Job:
    """job, its id marked as a warm-up's (WARMUP_PREFIX)."""
    return dataclasses.replace(job, id=WARMUP_PREFIX + job.id)
