#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One streamed pass for two partitions' scalar sets against a pass each
(two partitions a region: memory.device_plan's pairs): a point
array streamed from pinned host memory through the chunk ring, its MSM
for two scalar sets as GpuMsm.msm_sets (each chunk uploaded once, both
sets' MSMs on it) beside two GpuMsm.msm calls (each chunk uploaded twice),
interleaved rep by rep on one device. Both ways' sums are compared, and
with --check against the CPU backend at the smallest size.

Usage:
    python benchmarks/bench_streamed_pairs.py [--logs 24,26] [--g2-logs 24] [--chunk-mib 256]
                                              [--scalars full,porep] [--reps 3] [--check] [--json out.json]

Rows: the array (group, 2^log points, GiB), the scalars' kind (full: H's;
porep: the witness-fed queries' make-up), ms of the pair one way and the
other (host clock, device drained; medians), GiB through the ring each
way, and the pair's ms against the two calls'.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from bench_gpu import porep_scalars, random_fr, random_points

from porep_prover import G1Array, G2Array
from porep_prover.backend import get_backend
from porep_prover.memory.sizes import GIB


def timed(gpu, fn):
    """(ms of fn() with the device drained before and after, its result)."""
    gpu.device.synchronize()
    t = time.perf_counter()
    out = fn()
    gpu.device.synchronize()
    return (time.perf_counter() - t) * 1e3, out


def bench_one(gpu, cls, log_n: int, kind: str, args, rng, rows: list) -> None:
    n = 1 << log_n
    pts = random_points(cls, n, log_n)
    sets = [(random_fr if kind == "full" else porep_scalars)(n, rng) for _ in range(2)]
    gpu.memory.resident.stream_arrays([pts.limbs], args.chunk_mib << 20)
    try:
        ops = gpu.msm_ops
        paired, apart, moved = [], [], {"pair": 0, "apart": 0}
        want = None
        ops.msm_sets(pts, sets)                     # the ring made, the kernels loaded
        for _ in range(args.reps):
            before = gpu.memory.resident.ring.uploaded
            ms, got = timed(gpu, lambda: ops.msm_sets(pts, sets))
            paired.append(ms)
            moved["pair"] = gpu.memory.resident.ring.uploaded - before
            before = gpu.memory.resident.ring.uploaded
            ms, alone = timed(gpu, lambda: [ops.msm(pts, sc) for sc in sets])
            apart.append(ms)
            moved["apart"] = gpu.memory.resident.ring.uploaded - before
            sums = [total for total, _ in got]
            assert sums == [total for total, _ in alone], "one pass and two passes differ"
            want = want or sums
        if args.check and log_n == min(args.logs + args.g2_logs):
            cpu = get_backend("cpu")
            assert want == [cpu.msm(pts, sc, args.threads)[0] for sc in sets], "the GPU's sums differ from the CPU's"
    finally:
        gpu.memory.resident.stream_arrays([])
    pair, two = statistics.median(paired), statistics.median(apart)
    r = {"group": cls.GROUP, "log_n": log_n, "gib": pts.limbs.nbytes / GIB, "scalars": kind, "pair_ms": pair,
         "two_calls_ms": two, "pair_gib_moved": moved["pair"] / GIB, "two_calls_gib_moved": moved["apart"] / GIB,
         "ratio": pair / two}
    rows.append(r)
    print(f"| G{cls.GROUP} 2^{log_n} ({r['gib']:.2f} GiB) | {kind:5} | {pair:9.1f} | {two:9.1f} | "
          f"{r['pair_gib_moved']:.2f} / {r['two_calls_gib_moved']:.2f} | {r['ratio']:.2f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": gpu.info.name, "chunk_mib": args.chunk_mib, "rows": rows}, f, indent=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--logs", default="24,26", help="G1 sizes, log2, comma-separated")
    ap.add_argument("--g2-logs", default="24", help="G2 sizes, log2, comma-separated ('' for none)")
    ap.add_argument("--chunk-mib", type=int, default=256, help="the chunk ring's slot size")
    ap.add_argument("--scalars", default="full,porep")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="the smallest size's sums against the CPU backend")
    ap.add_argument("--threads", type=int, default=8, help="--check's CPU threads")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json")
    args = ap.parse_args()
    args.logs = [int(x) for x in args.logs.split(",") if x]
    args.g2_logs = [int(x) for x in args.g2_logs.split(",") if x]
    gpu, rng, rows = get_backend("gpu"), np.random.default_rng(args.seed), []
    print(f"device: {gpu.info.name}; the ring's chunks {args.chunk_mib} MiB")
    print("| array | scalars | one pass, ms | two passes, ms | GiB moved (one / two) | one / two |")
    print("|---|---|---:|---:|---:|---:|")
    for cls, logs in ((G1Array, args.logs), (G2Array, args.g2_logs)):
        for log_n in logs:
            for kind in args.scalars.split(","):
                bench_one(gpu, cls, log_n, kind, args, rng, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
