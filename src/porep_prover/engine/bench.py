# SPDX-License-Identifier: Apache-2.0
"""Throughput benchmarks of a running engine: a batch of jobs with a bounded
number in flight, and sweeps of one setting (a fresh engine per point).
What `porep-prover bench batch` and `bench sweep` print."""
from __future__ import annotations

import csv
import dataclasses
import threading
import time
from typing import Callable

from .inline import inline_job
from .jobs import Job
from .timeline import analyze, describe_gap, summary_stats


class DemoWorkload:
    """A demo circuit (circuits.CIRCUITS), its INSECURE test parameters and
    the witnesses its jobs' partitions cycle through, made once.

    witnesses: how many distinct witnesses to draw (default: one per
    partition); partition i proves witness i mod witnesses."""

    def __init__(self, circuit: str, constraints: int, partitions: int, witnesses: int | None = None,
                 log=print):
        import warnings

        from ..circuits import CIRCUITS
        from ..groth16 import InsecureSetupWarning, insecure_setup
        t = time.perf_counter()
        make = CIRCUITS[circuit]
        self.r1cs, _, _ = make(constraints)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureSetupWarning)
            self.params = insecure_setup(self.r1cs)
        distinct = max(1, min(partitions, witnesses or partitions))
        self.witnesses = [make(constraints, seed=i)[1] for i in range(distinct)]
        self.partitions = partitions
        log(f"workload: {circuit}, {self.r1cs.num_constraints} constraints (domain {self.r1cs.domain_size}), "
            f"{partitions} partitions per job, {distinct} distinct witnesses; setup "
            f"{time.perf_counter() - t:.1f} s")

    def job(self, i: int = 0, partitions: int | None = None) -> Job:
        """Job i (all alike): partitions (default the workload's) proofs of the circuit."""
        return inline_job(self.params, self.r1cs, lambda k: self.witnesses[k % len(self.witnesses)],
                          partitions=partitions or self.partitions)


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
                       f"max {lat['max']:.3f} s")
        if q["count"]:
            out.append(f"queue wait (submit -> first synthesis): mean {q['mean'] * 1e3:.1f} ms, "
                       f"max {q['max'] * 1e3:.1f} ms")
        for dev, d in self.devices.items():
            out.append(f"device {dev}: GPU efficiency {d['efficiency']:.2%} (busy {d['busy']:.3f} s of "
                       f"{d['span']:.3f} s, {d['gaps']['count']} gaps)")
            if d.get("longest_gap"):
                out.append("  " + describe_gap(d["longest_gap"]))
        means = {k: v["mean"] for k, v in self.stages.items() if v.get("count")}
        if means:
            out.append("per partition (mean ms): " + ", ".join(f"{k} {v * 1e3:.1f}" for k, v in means.items()))
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


class KindWorkload:
    """Jobs of a provider's kind (a plugin's, e.g. "porep-shaped") with one payload."""

    def __init__(self, kind: str, partitions: int, payload: dict):
        self.kind, self.partitions, self.payload = kind, partitions, payload

    def job(self, i: int = 0, partitions: int | None = None) -> Job:
        return Job(self.kind, partitions or self.partitions, dict(self.payload))


def run_batch(engine, make_job: Callable[[int], Job], count: int, concurrency: int,
              timeout: float | None = None) -> BatchReport:
    """Submit count jobs (make_job(i)), at most concurrency unfinished at once;
    wait for all; report from the engine's timeline over this batch only."""
    start_events = len(engine.timeline.events())
    slots = threading.Semaphore(max(1, concurrency))
    handles = []
    t0 = time.time()
    for i in range(count):
        slots.acquire()
        h = engine.submit(make_job(i))
        h.future.add_done_callback(lambda _f: slots.release())
        handles.append(h)
    results = []
    for h in handles:
        try:
            results.append(h.result(timeout))
        except Exception:  # noqa: BLE001 - counted as failed
            results.append(None)
    wall = time.time() - t0
    events = engine.timeline.events()[start_events:]
    first_synth = {}
    for e in events:
        if e.event == "SYNTH_START" and e.job not in first_synth:
            first_synth[e.job] = e.t
    waits = [first_synth[e.job] - e.t for e in events if e.event == "JOB_SUBMIT" and e.job in first_synth]
    ok = [r for r in results if r is not None]
    stats = analyze(events)
    return BatchReport(count, concurrency, handles[0].job.partitions if handles else 0, wall,
                       summary_stats([r.seconds for r in ok]), summary_stats(waits), stats["devices"],
                       len(results) - len(ok), stats["stages"], engine.config.partition_workers())


def warm_up(engine, work) -> None:
    """One short job of work (at most 2 partitions) first: kernels compiled,
    parameters loaded (or made) and resident."""
    run_batch(engine, lambda i: work.job(i, partitions=min(2, work.partitions)), 1, 1)


def sweep(key: str, values: list, make_engine: Callable[[dict], object], make_job: Callable[[int], Job],
          count: int, concurrency: int) -> list[tuple[object, BatchReport]]:
    """One batch per value of a setting, each on a fresh engine (make_engine({key: value}))."""
    rows = []
    for value in values:
        engine = make_engine({key: value})
        try:
            rows.append((value, run_batch(engine, make_job, count, concurrency)))
        finally:
            engine.shutdown(wait=True)
    return rows


def write_csv(key: str, rows, path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([key, "seconds_per_proof", "wall_s", "latency_mean_s", "queue_wait_mean_s", "gpu_efficiency",
                    "failed"])
        for value, r in rows:
            w.writerow([value, f"{r.seconds_per_proof:.4f}", f"{r.wall:.4f}", f"{r.latency.get('mean', 0):.4f}",
                        f"{r.queue_wait.get('mean', 0):.4f}", f"{r.efficiency:.4f}", r.failed])


def plot(key: str, rows, path) -> None:
    """Seconds per proof and GPU efficiency against the swept value (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [str(v) for v, _ in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(xs, [r.seconds_per_proof for _, r in rows], "o-", color="tab:blue")
    ax.set_xlabel(key)
    ax.set_ylabel("seconds per proof", color="tab:blue")
    ax2 = ax.twinx()
    ax2.plot(xs, [100 * r.efficiency for _, r in rows], "s--", color="tab:red")
    ax2.set_ylabel("GPU efficiency %", color="tab:red")
    ax.set_title(f"porep-prover sweep of {key}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
