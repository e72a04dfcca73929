#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a fresh host spends making a porep-shaped partition's inputs (plugin
porep-prover-porep-shaped), step by step: the circuit built, its INSECURE
parameters made (insecure_setup's steps: the Lagrange basis, the column
evaluations, the queries' scalars, the powers for h, each query's
fixed-base products), a witness synthesized, one proof made and verified
with them; with --write and --map, the parameters written as a .params
file and as a mapped .pmap mirror (and mapped back). Each step's row is
printed and written to --json as it ends (a run stopped by a limit keeps
every row it finished); the total of the inputs (circuit, parameters,
witness) ends the table.

Usage:
    python benchmarks/bench_inputs.py [--scale 1] [--seed 0] [--backend auto] [--threads N] [--direct]
                                      [--no-prove] [--write DIR] [--map DIR] [--profile out.prof]
                                      [--json out.json]

--direct: the GPU's fixed-base products go from the device straight into
the parameters' arrays (insecure_setup(direct=True); off in the engine
until measured). --profile: cProfile over the whole run, its top functions
by own time printed at the end and the stats written to the file.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pathlib
import pstats
import random
import sys
import tempfile
import time
import warnings

from porep_prover.backend import get_backend
from porep_prover.bench import ReportFile
from porep_prover.engine import Job
from porep_prover.groth16 import (InsecureSetupWarning, insecure_setup, prove, read_mapped, verify, write_mapped,
                                  write_params)
from porep_prover_porep_shaped.plugin import PorepShapedProvider, shared_circuit

INPUTS = ("circuit", "parameters", "witness")     # what the total counts: the inputs a run needs


class Steps:
    """Each step's row printed and written to the report as the step ends."""

    def __init__(self, report: ReportFile):
        self.report, self.t = report, time.perf_counter()

    def lap(self, step: str, **extra) -> float:
        now = time.perf_counter()
        seconds, self.t = now - self.t, now
        self.row(step, seconds, **extra)
        return seconds

    def restart(self) -> None:
        """The next lap counts from now."""
        self.t = time.perf_counter()

    def row(self, step: str, seconds: float, **extra) -> None:
        self.report.add({"step": step, "s": seconds, **extra})
        note = ", ".join(f"{k} {v}" for k, v in extra.items())
        print(f"| {step:<26} | {seconds:9.3f} | {note} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--direct", action="store_true", help="GPU fixed-base products straight into the arrays")
    ap.add_argument("--no-prove", dest="prove", action="store_false", help="no proof made with the inputs")
    ap.add_argument("--write", type=pathlib.Path, metavar="DIR", help="also time writing a .params file there")
    ap.add_argument("--map", type=pathlib.Path, metavar="DIR", help="also time writing and mapping a .pmap there")
    ap.add_argument("--profile", type=pathlib.Path, metavar="OUT")
    ap.add_argument("--json", type=pathlib.Path)
    args = ap.parse_args()
    threads = args.threads or os.cpu_count() or 1
    report = ReportFile(args.json, "steps", scale=args.scale, seed=args.seed, backend=args.backend,
                        direct=args.direct, threads=threads, cpus=os.cpu_count())
    profile = cProfile.Profile() if args.profile else None
    if profile:
        profile.enable()
    print(f"scale {args.scale:g}, backend {args.backend}, {threads} threads{', direct' if args.direct else ''}")
    print("| step                       |         s | |\n|---|---:|---|")
    steps = Steps(report)
    be = get_backend(args.backend)          # the device opened before the clock: not an input's cost
    steps.lap("backend opened", backend=type(be).__name__)
    shape = shared_circuit(args.scale, args.seed)
    r1cs = shape.r1cs
    total = {"circuit": steps.lap("circuit", constraints=r1cs.num_constraints, variables=r1cs.num_variables)}
    laps: dict[str, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureSetupWarning)
        params = insecure_setup(r1cs, rng=random.Random(args.seed), backend=args.backend, threads=threads,
                                laps=laps, direct=args.direct)
    total["parameters"] = steps.lap("parameters")
    for name, seconds in laps.items():
        steps.row(f"  {name}", seconds)
    job = Job("porep-shaped", 1, {"scale": args.scale, "seed": args.seed, "job_seed": 1})
    _, witness = PorepShapedProvider().synthesize(job, 0, threads)
    total["witness"] = steps.lap("witness")
    steps.row("inputs (circuit, parameters, witness)", sum(total.values()))
    report.set(inputs_s=sum(total.values()))
    steps.restart()
    if args.prove:
        proof = prove(params, r1cs, witness, backend=args.backend, threads=threads, verify=False)
        steps.lap("proof made")
        ok = verify(params.vk, witness[1:r1cs.num_inputs].to_ints(), proof)
        steps.lap("proof verified", ok=ok)
        if not ok:
            print("the proof does not verify", file=sys.stderr)
            return 1
    for folder, write in ((args.write, "params"), (args.map, "pmap")):
        if folder is None:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            path = pathlib.Path(tmp) / f"inputs.{write}"
            (write_params if write == "params" else write_mapped)(path, params, threads)
            steps.lap(f"written .{write}", gb=round(path.stat().st_size / 1e9, 2))
            if write == "pmap":
                read_mapped(path, threads=threads)
                steps.lap("mapped .pmap (checksums checked)")
    if profile:
        profile.disable()
        profile.dump_stats(args.profile)
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
