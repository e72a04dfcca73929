#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How soon a cancelled PoRep job's work stops.

An engine (--devices, the CPU by default; one synthesis worker, --threads
threads) proves a partition of --proof (2 KiB by default: a sparse
sector's commit-phase-1 output; the cache's INSECURE parameters) twice, the second giving its synthesis and kernel
region seconds; then jobs of the same sector are cancelled at points
through each (--points fractions of the stage, after its timeline event:
SYNTH_START, GPU_START), and the time from the cancel to the process going
idle is measured (its CPU time rising by less than a quarter of a core over
0.3 s), each cancel labelled by the job's last timeline event before it
(where it landed: a stage's length varies from job to job). Each point is
run twice: with the job's stop flag read by the work (now) and with it read
by nothing (the partition's work running on to its end, as before). On a
GPU host the idleness read is the host's: a device's region (which runs to
its end unless POREP_PROVER_GPU_REGION_STOP=1) is timed by its job's
GPU_END on the timeline: the seconds from the cancel to it, printed beside
(region_end_s, None where the job's region never began).

Usage:
    python plugins/porep-prover-porep/benchmarks/bench_porep_cancel.py [--points 0.1,0.5,0.9]
        [--threads 2] [--proof StackedDrg2KiBV1_1] [--devices cpu] [--json out.json]
    POREP_PROVER_GPU_REGION_STOP=1 python plugins/porep-prover-porep/benchmarks/bench_porep_cancel.py \
        --proof StackedDrg32GiBV1_1 --devices gpu --threads 16 --points 0.5
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time

import porep_prover as pp
from porep_prover.backend.stop import StopFlag
from porep_prover.engine import Job
from porep_prover.hooks import collect_registry, plugin_manager
from porep_prover_porep import c1_json, sparse
from porep_prover_porep.payload import prover_id_of

STAGES = {"synthesis": ("SYNTH_START", "synthesis"), "region": ("GPU_START", "gpu_compute")}
IDLE_CORES, WINDOW = 0.25, 0.3


def cpu_seconds() -> float:
    with open(f"/proc/{os.getpid()}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle_after(since: float, limit: float = 60.0) -> float:
    """Seconds from since (monotonic) to the first WINDOW using less than IDLE_CORES."""
    samples = [(time.monotonic(), cpu_seconds())]
    while samples[-1][0] - since < limit:
        time.sleep(0.02)
        now, used = time.monotonic(), cpu_seconds()
        samples.append((now, used))
        earlier = [s for s in samples if now - s[0] >= WINDOW]
        if earlier and (used - earlier[-1][1]) / (now - earlier[-1][0]) < IDLE_CORES:
            return max(0.0, earlier[-1][0] - since)
    return float("inf")


class UnreadFlag(StopFlag):
    """A stop flag never set: the work for its job runs on to its end, as it did before the flag."""

    def set(self) -> None:
        pass


def region_end(engine, job_id: str, wall: float, limit: float = 600.0) -> float | None:
    """Seconds from wall to the job's GPU_END, waited for up to limit; None
    where its region never began (or never ended within limit)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        mine = [e for e in engine.timeline.events() if e.job == job_id]
        if not any(e.event == "GPU_START" for e in mine):
            return None
        ends = [e.t for e in mine if e.event == "GPU_END"]
        if ends:
            return max(0.0, ends[-1] - wall)
        time.sleep(0.01)
    return None


def cancel_at(engine, payload: dict, stage: str, after: float, read: bool = True
              ) -> tuple[float, str, float | None]:
    """(seconds to idle, the job's last timeline event at the cancel, seconds
    to its region's end: region_end) after
    cancelling a job `after` seconds past its stage's first event (read:
    False, its stop flag is never set)."""
    event = STAGES[stage][0]
    job = Job("porep", 1, dict(payload))
    if not read:
        job.stop = UnreadFlag()
    handle = engine.submit(job)
    deadline = time.monotonic() + 600
    while not any(e.event == event and e.job == job.id for e in engine.timeline.events()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"job {job.id} never reached {event}")
        time.sleep(0.002)
    time.sleep(after)
    at, wall = time.monotonic(), time.time()
    handle.cancel()
    idle = idle_after(at)
    last = [e.event for e in engine.timeline.events() if e.job == job.id and e.t <= wall]
    return idle, last[-1] if last else "none", region_end(engine, job.id, wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", default="0.1,0.5,0.9", help="fractions of each stage at which to cancel")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--proof", default="StackedDrg2KiBV1_1", help="the registered seal proof of the sparse sector")
    ap.add_argument("--devices", default="cpu", help="engine.devices: cpu, gpu or gpu:N")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    points = [float(p) for p in args.points.split(",")]
    folder = tempfile.mkdtemp(prefix="bench-cancel-")
    path = os.path.join(folder, "c1.json")
    c1_json.write(sparse.sparse_c1(args.proof, prover_id_of(1000), 7, bytes(32), bytes([1] * 32)), path)
    payload = {"c1": path, "miner_id": 1000, "sector_id": 7}
    pm = plugin_manager()
    config = pp.load_config(overrides=[f"engine.devices={args.devices}", "engine.partition_workers=1",
                                       f"engine.threads={args.threads}", f"engine.synthesis_threads={args.threads}"])
    rows = []
    with pp.Engine(config, registry=collect_registry(pm), plugins=pm) as engine:
        for _ in range(2):               # the second's stages: the first's pay for the process's first touches
            warm = engine.prove(Job("porep", 1, dict(payload)))
            assert warm.ok, warm.error
        timings = warm.timings[0]
        seconds = {stage: getattr(timings, field) for stage, (_, field) in STAGES.items()}
        print(f"a partition: synthesis {seconds['synthesis']:.2f} s, region {seconds['region']:.2f} s")
        for stage in STAGES:
            for point in points:
                now, where, end = cancel_at(engine, payload, stage, point * seconds[stage])
                before, was, end_before = cancel_at(engine, payload, stage, point * seconds[stage], read=False)
                rows.append({"stage": stage, "point": point, "idle_s": now, "last_event": where,
                             "region_end_s": end, "idle_before_s": before, "last_event_before": was,
                             "region_end_before_s": end_before})
                ends = f"; region ended {end:.2f} s after" if end is not None else ""
                print(f"{stage:9s} at {point:.0%}: idle {now:.2f} s after the cancel (last event {where}){ends}; "
                      f"flag unread: {before:.2f} s ({was})", flush=True)
    summary = {event: {"cancels": len(got), "max_s": max(got), "median_s": statistics.median(got)}
               for event in sorted({r["last_event"] for r in rows})
               for got in [[r["idle_s"] for r in rows if r["last_event"] == event]]}
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                       "proof": args.proof, "devices": args.devices,
                       "stage_seconds": seconds, "rows": rows, "summary": summary,
                       "load": os.getloadavg()}, f, indent=1)


if __name__ == "__main__":
    main()
