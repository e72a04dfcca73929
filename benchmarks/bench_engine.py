#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Engine benchmark: one workload, several engine settings, side by side.

Usage:
    python benchmarks/bench_engine.py [--constraints N] [--partitions 10] [--count 2]
        [--workers 1,2] [--sweep engine.partition_workers=2,4,8] [--set KEY=VALUE ...]
        [--out DIR]

The workload (the porep-like demo circuit, INSECURE test parameters, the
witnesses) is made once. Each setting runs in a fresh engine: a warm-up job
(kernels compiled, parameters resident), then --count jobs of --partitions
partitions, --concurrency of them in flight (as an operator keeps the queue
full). For each run: seconds per proof, GPU efficiency (union of lock-held
intervals over the span of GPU activity; the lowest device's where there are
several, each device's in results.json), GPU time per partition (busy time
over partitions), per-partition stage means; every proof is verified by the engine (prover.verify). --out keeps
each run's timeline log (for `porep-prover timeline LOG --gantt`) and a JSON
of the table.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import time

from porep_prover.engine import Engine, load_config
from porep_prover.bench import DemoWorkload, run_batch, warm_up
from porep_prover.engine.config import parse_override, parse_sweep
from porep_prover.engine.logs import configure_logging, remove_handlers


def run_point(work, overrides: dict, count: int, concurrency: int, out: pathlib.Path | None, tag: str) -> dict:
    cfg = load_config(overrides=overrides)
    if out is not None:
        log = out / f"timeline_{tag.replace('=', '-')}.log"
        cfg = cfg.replace(**{"logging.timeline": str(log), "logging.level": "WARNING"})
    handlers = configure_logging(cfg)
    try:
        engine = Engine(cfg)
        try:
            warm_up(engine, work)
            report = run_batch(engine, work.job, count, concurrency)
        finally:
            engine.shutdown(wait=True)
    finally:
        remove_handlers(handlers)
    stages = {k: v.get("mean", 0.0) for k, v in report.stages.items()}
    devices = report.devices.values()
    busy = sum(d["busy"] for d in devices)
    return {"tag": tag, "settings": overrides, "seconds_per_proof": report.seconds_per_proof,
            "efficiency": report.efficiency, "devices": len(report.devices),
            "per_device": {k: d["efficiency"] for k, d in report.devices.items()},
            "busy": busy, "span": max((d["span"] for d in devices), default=0.0),
            "gpu_ms": busy / max(1, count * work.partitions) * 1e3, "prepare_ms": stages.get("prepare", 0) * 1e3,
            "synthesis_ms": stages.get("synthesis", 0) * 1e3, "finalize_ms": stages.get("finalize", 0) * 1e3,
            "failed": report.failed, "lines": report.lines()}


def table(rows: list[dict]) -> str:
    head = (f"{'run':>28} | devs | s/proof | GPU eff | GPU ms/part | prep ms | synth ms | final ms | failed")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['tag']:>28} | {r['devices']:4d} | {r['seconds_per_proof']:7.3f} | {r['efficiency']:7.2%} | "
                     f"{r['gpu_ms']:11.1f} | {r['prepare_ms']:7.1f} | {r['synthesis_ms']:8.1f} | "
                     f"{r['finalize_ms']:8.1f} | {r['failed']}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--constraints", type=int, default=(1 << 16) - 8)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--witnesses", type=int, default=None, help="distinct witnesses (default one per partition)")
    ap.add_argument("--count", type=int, default=2, help="jobs per setting")
    ap.add_argument("-j", "--concurrency", type=int, default=2, help="jobs in flight at once")
    ap.add_argument("--workers", default="1,2", help="gpu_workers_per_device values to compare")
    ap.add_argument("--sweep", action="append", default=[], metavar="KEY=V1,V2",
                    help="also sweep a setting (with the default workers)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="base settings")
    ap.add_argument("--out", help="folder for timeline logs and results.json")
    args = ap.parse_args()
    out = pathlib.Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    base = dict(parse_override(s) for s in args.set)
    work = DemoWorkload("porep-like", args.constraints, args.partitions, args.witnesses)
    rows = []
    points = [("engine.gpu_workers_per_device", int(w)) for w in args.workers.split(",") if w]
    for spec in args.sweep:
        key, values = parse_sweep(spec)
        points += [(key, v) for v in values]
    for key, value in points:
        t = time.perf_counter()
        tag = f"{key.split('.')[-1]}={value}"
        row = run_point(work, {**base, key: value}, args.count, args.concurrency, out, tag)
        rows.append(row)
        print(f"[{row['tag']}: {time.perf_counter() - t:.1f} s]", *row["lines"], sep="\n  ", flush=True)
    print(table(rows))
    by_workers = {r["settings"].get("engine.gpu_workers_per_device"): r for r in rows}
    if 1 in by_workers and 2 in by_workers:
        gain = by_workers[1]["seconds_per_proof"] / by_workers[2]["seconds_per_proof"] - 1
        print(f"throughput of 2 workers over 1: {gain:+.1%}")
    if out is not None:
        (out / "results.json").write_text(json.dumps(rows, indent=1))
    return 1 if any(r["failed"] for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
