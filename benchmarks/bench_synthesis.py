#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Host-side synthesis throughput of porep-shaped partitions (plugin
porep-prover-porep-shaped): witness evaluation, then the engine's
`synthesize` (A/B/C MatVec, the satisfaction check, the query gathers),
with W synthesis workers of T native threads each, as the engine runs them.

Usage:
    python benchmarks/bench_synthesis.py [--scale 0.015625] [--partitions 8] [--splits 1x1,1x2,2x1,2x2]
"""
from __future__ import annotations

import argparse
import threading
import time

from porep_prover.groth16 import insecure_setup
from porep_prover.groth16.prover import synthesize
from porep_prover_porep_shaped.circuit import build, witness


def run(shape, params, workers: int, threads: int, count: int) -> tuple[float, float, float]:
    """(ms per partition of wall time, mean witness ms, mean synthesize ms)."""
    todo, lock, spent = list(range(count)), threading.Lock(), {"witness": 0.0, "synthesize": 0.0}

    def loop():
        while True:
            with lock:
                if not todo:
                    return
                i = todo.pop()
            t0 = time.perf_counter()
            w = witness(shape, 1000 + i, threads)
            t1 = time.perf_counter()
            synthesize(params, shape.r1cs, w, threads)
            t2 = time.perf_counter()
            with lock:
                spent["witness"] += t1 - t0
                spent["synthesize"] += t2 - t1

    t = time.perf_counter()
    pool = [threading.Thread(target=loop) for _ in range(workers)]
    for p in pool:
        p.start()
    for p in pool:
        p.join()
    wall = (time.perf_counter() - t) / count
    return wall * 1e3, spent["witness"] / count * 1e3, spent["synthesize"] / count * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1 / 64)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--splits", default="1x1,1x2,2x1,2x2", help="WORKERSxTHREADS, comma-separated")
    args = ap.parse_args()
    t = time.perf_counter()
    shape = build(args.scale, 1)
    params = insecure_setup(shape.r1cs, warn=False)
    print(f"scale {args.scale:g}: {shape.r1cs.num_constraints} constraints; circuit and setup "
          f"{time.perf_counter() - t:.1f} s")
    run(shape, params, 1, 1, 1)                                    # warm-up
    print(f"{'workers x threads':>18} | ms per partition | witness ms | synthesize ms")
    for split in args.splits.split(","):
        workers, threads = (int(x) for x in split.split("x"))
        wall, wit, syn = run(shape, params, workers, threads, args.partitions)
        print(f"{split:>18} | {wall:16.0f} | {wit:10.0f} | {syn:13.0f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
