#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Commit-phase-1 outputs of sparse sectors (python -m porep_prover_porep
synth-c1: inputs for benchmarks and tests, never sectors), on this host's CPU.

Rows, each printed and written to the JSON file as it is measured:
  synth-c1   per registered size, the command in a process of its own: its
             seconds and peak RSS, the output's bytes; then the output read
             back and every vanilla proof verified (seconds)
  witness    with --witness: a partition's witness (public inputs checked
             against a verifier's), seconds and this process's peak RSS
  satisfied  with --satisfy: that witness checked against every constraint of
             the partition circuit, laid out a run of instances at a time
             (PartitionCircuit.check; a 32 GiB R1CS is not built whole)

Usage:
    python plugins/porep-prover-porep/benchmarks/bench_sparse.py [--sizes 2KiB,8MiB,512MiB,32GiB,64GiB]
        [--witness 32GiB] [--satisfy 32GiB] [--json out.json]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

from porep_prover_porep import c1_json, vanilla
from porep_prover_porep.circuit.partition import partition_circuit
from porep_prover_porep.payload import prover_id_of
from porep_prover_porep.registered import seal_proof

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_seal import record  # noqa: E402 - the rows' printing and file, as the seal benchmark's

MINER, SECTOR = 1000, 7
MIB = 1 << 20


def synth_c1(out: str, size: str, folder: pathlib.Path) -> pathlib.Path:
    """The command run for one size in a child process, timed, its own peak RSS read (wait4)."""
    name = f"StackedDrg{size}V1_1"
    path = folder / f"c1-{size}.json"
    argv = [sys.executable, "-m", "porep_prover_porep", "synth-c1", str(path), "--proof", name,
            "--miner-id", str(MINER), "--sector-number", str(SECTOR)]
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)}: exit {child.returncode}")
    start = time.perf_counter()
    vanilla.verify(c1_json.read(path), prover_id_of(MINER), SECTOR)
    record(out, {"row": "synth-c1", "sector": size, "seconds": seconds, "peak_rss_mib": usage.ru_maxrss / 1024,
                 "json_mib": path.stat().st_size / MIB, "read_verify_s": time.perf_counter() - start})
    return path


def witness(out: str, size: str, path: pathlib.Path, satisfy: bool) -> None:
    """Partition 0's witness of the output at path; with satisfy, checked against the circuit."""
    circuit = partition_circuit(seal_proof(f"StackedDrg{size}V1_1"))
    c1 = c1_json.read(path)
    circuit.program                         # noqa: B018 - made once, before the witness is timed
    start = time.perf_counter()
    w = circuit.witness(c1, 0, os.cpu_count())
    record(out, {"row": "witness", "sector": size, "variables": len(w), "seconds": time.perf_counter() - start,
                 "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    if satisfy:
        start = time.perf_counter()
        circuit.check(w, threads=os.cpu_count())
        record(out, {"row": "satisfied", "sector": size, "constraints": circuit.shape.n_constraints,
                     "seconds": time.perf_counter() - start,
                     "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2KiB,8MiB,512MiB,32GiB,64GiB", help="sector sizes, 2KiB to 64GiB")
    ap.add_argument("--witness", default="", help="sizes whose partition 0's witness is generated")
    ap.add_argument("--satisfy", default="", help="sizes whose witness is also checked against the circuit")
    ap.add_argument("--json", default=str(HERE / "results" / "bench_sparse.json"))
    args = ap.parse_args()
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    sizes = [s for s in args.sizes.split(",") if s]
    satisfy = {s for s in args.satisfy.split(",") if s}
    wanted = {s for s in args.witness.split(",") if s} | satisfy
    print(f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as folder:
        # every command first: a child forked from this process once it holds a witness would count that
        # witness's pages in its own peak RSS until it execs
        paths = {size: synth_c1(args.json, size, pathlib.Path(folder)) for size in sizes + sorted(wanted - set(sizes))}
        for size in sorted(wanted, key=lambda s: sizes.index(s) if s in sizes else len(sizes)):
            witness(args.json, size, paths[size], size in satisfy)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
