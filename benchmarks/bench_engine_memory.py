#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The engine at a porep-shaped scale under several device budgets, in one
process: the circuit and its INSECURE parameters made once, then for each
budget an engine of its own (its memory plan made as the parameters load)
proving --count jobs of --partitions partitions, --concurrency in flight,
every proof verified by the engine. Each budget's row gives seconds a proof
(and the devices' steady pace), GPU ms a partition, GPU efficiency, and the
host's and each device's memory, planned beside measured (bench.MemoryWatch:
the host's memory in use at its highest, the process's peak and its
page-locked peak); rows are written to --json as each is measured.

Usage:
    python3 benchmarks/bench_engine_memory.py [--scale 1] [--device-memory-gib 16,0] [--host-memory-gib 100]
        [--partitions 10] [--count 2] [--concurrency 2] [--set KEY=VALUE ...] [--json out.json]

A budget of 0 is the card's. The parameters are made on the GPU where one
is (backend auto) and kept in this process's memory (anonymous: the
streamed arrays are page-locked in place); the provider here hands every
engine the same circuit and parameters (kind porep-shaped-made, its circuit
and the witness program counted by its plan), each partition's witness
evaluated from its seed by the porep-shaped plugin's witness program.
"""
from __future__ import annotations

import argparse
import time

from porep_prover.bench import ReportFile, run_batch, warm_up
from porep_prover.bench.memory_watch import MemoryWatch
from porep_prover.engine import Engine, Job, Registry, load_config
from porep_prover.engine.config import parse_override
from porep_prover.groth16 import insecure_setup
from porep_prover_porep_shaped.circuit import shape_bytes, witness
from porep_prover_porep_shaped.plugin import shared_circuit

KIND = "porep-shaped-made"


class MadeOnce:
    """A provider of one circuit and its parameters, made before the engines (every engine's set the same)."""

    kinds = (KIND,)

    def __init__(self, shape, params):
        self.shape, self.params = shape, params

    def srs_key(self, job: Job) -> str:
        return f"{KIND}:{self.shape.scale:g}"

    def load_srs(self, job: Job):
        return self.params

    def circuit(self, job: Job):
        return self.shape.r1cs

    def circuit_bytes(self, job: Job) -> int:
        return shape_bytes(self.shape)

    def synthesize(self, job: Job, partition: int, threads: int):
        return self.shape.r1cs, witness(self.shape, hash((job.id, partition)) & 0xFFFFFFFF, threads)


class Work:
    """Jobs of the made circuit: what bench.run_batch and warm_up ask of a workload."""

    def __init__(self, partitions: int):
        self.partitions = partitions

    def job(self, i: int, partitions: int | None = None) -> Job:
        return Job(KIND, partitions or self.partitions, payload=None)


def run_budget(provider: MadeOnce, gib: float, args, overrides: dict) -> dict:
    """One engine under a device budget of gib GiB: its row."""
    registry = Registry()
    registry.add_provider(provider)
    cfg = load_config(overrides={**overrides, "engine.device_memory_gib": gib})
    work = Work(args.partitions)
    engine = Engine(cfg, registry=registry)
    try:
        with MemoryWatch(engine) as memory:
            t = time.perf_counter()
            warm_up(engine, work)
            warm = time.perf_counter() - t
            report = run_batch(engine, work.job, args.count, args.concurrency)
            figures = memory.figures()
        for line in report.lines():
            print(f"  {gib:g} GiB: {line}", flush=True)
        plan = next(p for p in (engine.plans.get(s["key"]) for s in engine.srs.status()) if p is not None)
        plan_lines = plan.describe()
    finally:
        engine.shutdown(wait=True)
    devices = report.devices.values()
    busy = sum(d["busy"] for d in devices)
    return {"device_gib": gib, "seconds_per_proof": report.seconds_per_proof,
            "steady_seconds_per_proof": report.steady_seconds_per_proof, "efficiency": report.efficiency,
            "gpu_ms": busy / max(1, args.count * args.partitions) * 1e3, "warm_up_s": warm,
            "failed": report.failed, "memory": figures, "plan": plan_lines,
            "stages_ms": {k: v.get("mean", 0.0) * 1e3 for k, v in report.stages.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--device-memory-gib", default="16,0", help="device budgets, GiB (0: the card's)")
    ap.add_argument("--host-memory-gib", type=float, default=0.0, help="the host budget (0: the default)")
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--count", type=int, default=2, help="jobs a budget")
    ap.add_argument("--concurrency", type=int, default=2, help="jobs in flight at once")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="engine settings")
    ap.add_argument("--json", help="the report, rewritten as each row is measured")
    args = ap.parse_args()
    overrides = {"prover.b_g2": "device", "prover.matvec": "device", "engine.memory_budget_gib": args.host_memory_gib}
    overrides.update(dict(parse_override(s) for s in args.set))
    report = ReportFile(args.json, "budgets", scale=args.scale, settings=overrides, done=False)
    t = time.perf_counter()
    shape = shared_circuit(args.scale, 0)
    built = time.perf_counter() - t
    params = insecure_setup(shape.r1cs, backend="auto", warn=False)
    made = time.perf_counter() - t - built
    report.set(circuit_s=built, params_s=made)
    print(f"scale {args.scale:g}: circuit {built:.1f} s, parameters {made:.1f} s", flush=True)
    provider = MadeOnce(shape, params)
    for gib in (float(g) for g in args.device_memory_gib.split(",") if g):
        try:
            row = run_budget(provider, gib, args, overrides)
        except Exception as exc:  # noqa: BLE001 - a budget that fails is a row of its own; the next one runs
            report.add({"device_gib": gib, "failed": True, "error": f"{type(exc).__name__}: {exc}"[:2000]})
            print(f"{gib:g} GiB: FAILED: {type(exc).__name__}: {exc}", flush=True)
            continue
        report.add(row)
        m = row["memory"]
        dev = next(iter(m["devices"].values()), {})
        print(f"{gib:g} GiB: {row['seconds_per_proof']:.2f} s a proof (steady "
              f"{row['steady_seconds_per_proof'] or 0:.2f}), GPU {row['gpu_ms']:.0f} ms a partition, efficiency "
              f"{row['efficiency']:.1%}; host planned {m['host_planned_peak_gib']:.1f} / measured "
              f"{m['host_peak_gib']:.1f} GiB (pinned {m['pinned_peak_gib']:.1f}); device planned "
              f"{dev.get('planned') or 0:.1f} / measured {dev.get('peak') or 0:.1f} GiB, dropped "
              f"{dev.get('dropped') or 0:.2f} GiB", flush=True)
    report.set(done=True)
    return 1 if any(r.get("failed") for r in report.rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
