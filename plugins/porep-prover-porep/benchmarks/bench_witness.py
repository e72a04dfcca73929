#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A real PoRep partition's witness: how long the native generator takes on
a number of threads, into a fresh array and into one already touched.

A sparse sector's commit-phase-1 output of --proof (32 GiB by default; made
in seconds, an input for benchmarks, never a sector) is read, its partition
circuit placed (its R1CS is not built: the witness needs only the placing),
and partition 0's witness generated --reps times for each of --threads,
each time into a fresh array (what a synthesis without an arena does: the
kernel faults in and zeroes every page of it, 4.2 GB at 32 GiB) and into an
array touched before (an engine's arena, page-locked once and reused). The
witness's public inputs are checked against a verifier's each time. Each row
is printed and written (--json) as it is measured.

Usage:
    python plugins/porep-prover-porep/benchmarks/bench_witness.py [--proof StackedDrg32GiBV1_1]
        [--threads 1,2] [--reps 1] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time

from porep_prover import FrArray
from porep_prover_porep import c1_json, sparse
from porep_prover_porep.circuit.partition import partition_circuit
from porep_prover_porep.payload import Payload, prover_id_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proof", default="StackedDrg32GiBV1_1", help="the registered seal proof")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--json", help="write the rows here, as each is measured")
    args = ap.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-witness-") as folder:
        path = os.path.join(folder, "c1.json")
        start = time.perf_counter()
        c1_json.write(sparse.sparse_c1(args.proof, prover_id_of(1000), 7, bytes(32), bytes([1] * 32)), path)
        made = time.perf_counter() - start
        payload = Payload.of({"c1": path})
        output = payload.output()
        start = time.perf_counter()
        circuit = partition_circuit(payload.proof)
        size = circuit.program.size
        placed = time.perf_counter() - start
        print(f"{args.proof}: output made in {made:.1f} s, circuit placed in {placed:.1f} s, "
              f"{size:,} witness values ({size * 32 / 2**30:.2f} GiB)", flush=True)
        report = {"proof": args.proof, "machine": platform.processor() or platform.machine(),
                  "cores": os.cpu_count(), "values": size, "placed_s": placed, "rows": []}
        touched = FrArray.zeros(size)
        touched.limbs.fill(1)
        for n in threads:
            for rep in range(args.reps):
                for into in ("fresh", "touched"):
                    out = touched if into == "touched" else None
                    start = time.perf_counter()
                    circuit.witness(output, 0, n, out, payload.config)
                    seconds = time.perf_counter() - start
                    row = {"threads": n, "into": into, "rep": rep, "seconds": seconds, "load": os.getloadavg()[0]}
                    report["rows"].append(row)
                    print(f"threads {n:3d}, into a {into:7s} array: {seconds:6.2f} s "
                          f"(load {row['load']:.2f})", flush=True)
                    if args.json:
                        with open(args.json, "w") as f:
                            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
