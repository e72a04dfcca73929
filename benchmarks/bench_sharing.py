#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Proving on shared cores, each case against its ideal split of the cores,
with the OpenMP threads sleeping between regions (the package's default)
and spinning (the runtime's own default: POREP_PROVER_OMP_WAIT=runtime),
every run a fresh process, both policies in one run:

  alone         one prover, every core (the idle speed: the policies should agree)
  two provers   two processes at once, every core each; ideal: one alone on
                half the cores (what each gets from a perfect split)
  busy core     one prover, every core, beside a busy load of short processes
                (one at a time, back to back); ideal: one alone on the cores
                less one
  engine        the engine on the CPU backend (partition_workers synthesis
                workers, 2 device workers, its finalizers) over jobs of
                partitions; ideal: the same partitions proved one after
                another, each on every core, in the same process

Usage:
    python benchmarks/bench_sharing.py [--constraints 65531] [--small 16379] [--proofs 5] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

POLICIES = {"sleep": {}, "spin": {"POREP_PROVER_OMP_WAIT": "runtime"}}


def policy_env(name: str) -> dict:
    """sleep (the package's default), spin (the runtime's own), or spin=N
    (libgomp's GOMP_SPINCOUNT=N: N rounds of spinning, then sleep)."""
    if name.startswith("spin="):
        return {"GOMP_SPINCOUNT": name[5:]}
    return POLICIES[name]


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


# ------------------------------------------------------------------ children


def load(folder: str, n: int):
    from porep_prover.groth16 import R1CS, load_witness, read_params
    return (read_params(f"{folder}/p{n}.params"), R1CS.load(f"{folder}/c{n}.npz"),
            load_witness(f"{folder}/w{n}.bin"))


def child_prove(folder: str, n: int, threads: int, proofs: int) -> dict:
    """Seconds of each proof after a warm-up (the check off: the prover alone)."""
    from porep_prover.groth16 import prove
    params, r1cs, witness = load(folder, n)
    prove(params, r1cs, witness, threads=threads, verify=False)
    times = []
    for _ in range(proofs):
        t = time.perf_counter()
        prove(params, r1cs, witness, threads=threads, verify=False)
        times.append(time.perf_counter() - t)
    return {"median": statistics.median(times), "times": times}


def child_engine(folder: str, n: int, partitions: int, jobs: int, workers: int) -> dict:
    """Seconds a partition: one after another on every core (the ideal), then the engine."""
    from porep_prover.engine import Engine, inline_job, load_config
    from porep_prover.groth16 import prove
    params, r1cs, witness = load(folder, n)
    prove(params, r1cs, witness, verify=False)
    count = partitions * jobs
    t = time.perf_counter()
    for _ in range(count):
        prove(params, r1cs, witness, verify=False)
    alone = (time.perf_counter() - t) / count
    config = load_config(None, {"engine.devices": ["cpu"], "engine.partition_workers": workers,
                                "engine.gpu_workers_per_device": 2, "prover.verify": False})
    with Engine(config) as engine:
        engine.prove(inline_job(params, r1cs, [witness]), timeout=600)      # warm-up
        t = time.perf_counter()
        handles = [engine.submit(inline_job(params, r1cs, [witness] * partitions)) for _ in range(jobs)]
        for h in handles:
            h.result(timeout=600)
        together = (time.perf_counter() - t) / count
    return {"median": together, "ideal": alone}


# ------------------------------------------------------------------ parent


def spawn(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, *args], env={**os.environ, **env},
                            stdout=subprocess.PIPE, text=True)


def collect(procs: list[subprocess.Popen]) -> list[dict]:
    out = []
    for p in procs:
        text, _ = p.communicate(timeout=1800)
        if p.returncode:
            raise SystemExit(f"a child failed (exit {p.returncode})")
        out.append(json.loads(text.strip().splitlines()[-1]))
    return out


def busy_load() -> subprocess.Popen:
    """Short processes one after another until killed: about one core busy."""
    loop = "while :; do sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done'; done"
    return subprocess.Popen(["sh", "-c", loop], start_new_session=True)


def prove_args(folder: str, n: int, threads: int, proofs: int) -> list[str]:
    return ["--child", "prove", "--dir", folder, "--n", str(n), "--threads", str(threads), "--proofs", str(proofs)]


def case_alone(folder: str, args, env: dict) -> tuple[float, float]:
    """(every core alone, the same): the idle speed, compared across policies in the report."""
    t = collect([spawn(prove_args(folder, args.constraints, cores(), args.proofs), env)])[0]["median"]
    return t, t


def case_two(folder: str, args, env: dict) -> tuple[float, float]:
    half = collect([spawn(prove_args(folder, args.constraints, max(1, cores() // 2), args.proofs), env)])[0]
    pair = collect([spawn(prove_args(folder, args.constraints, cores(), args.proofs), env) for _ in range(2)])
    return statistics.mean(p["median"] for p in pair), half["median"]


def case_busy(folder: str, args, env: dict) -> tuple[float, float]:
    less = collect([spawn(prove_args(folder, args.small, max(1, cores() - 1), args.proofs * 2), env)])[0]
    busy = busy_load()
    try:
        beside = collect([spawn(prove_args(folder, args.small, cores(), args.proofs * 2), env)])[0]
    finally:
        os.killpg(busy.pid, 15)
        busy.wait()
    return beside["median"], less["median"]


def case_engine(folder: str, args, env: dict) -> tuple[float, float]:
    out = collect([spawn(["--child", "engine", "--dir", folder, "--n", str(args.small), "--partitions",
                          str(args.partitions), "--jobs", str(args.jobs), "--workers", str(args.workers)], env)])[0]
    return out["median"], out["ideal"]


CASES = {"alone": case_alone, "two provers": case_two, "busy core": case_busy, "engine": case_engine}


def prepare(folder: str, sizes) -> None:
    from porep_prover import circuits
    from porep_prover.groth16 import insecure_setup, save_witness, write_params
    for n in sizes:
        r1cs, witness, _ = circuits.CIRCUITS["porep-like"](n, seed=1)
        r1cs.save(f"{folder}/c{n}.npz")
        save_witness(f"{folder}/w{n}.bin", witness)
        write_params(f"{folder}/p{n}.params", insecure_setup(r1cs, warn=False))


def report(rounds: list[dict]) -> dict:
    """Print the table (medians over the rounds; a ratio is the median of the
    rounds' ratios; alone's ideal is the first policy's time in that round)
    and return its rows."""
    first = next(iter(rounds[0]))
    rows = []
    print(f"{cores()} cores, {len(rounds)} round(s); ms a proof (engine: a partition), medians; "
          "ratio = measured / ideal")
    print(f"{'case':<12} | {'policy':<11} | {'measured':>9} | {'ideal':>9} | {'ratio':>6}")
    for case in rounds[0][first]:
        for policy in rounds[0]:
            pairs = [(r[policy][case][0], r[first][case][1] if case == "alone" else r[policy][case][1])
                     for r in rounds]
            got, ideal = (statistics.median(p[i] for p in pairs) for i in (0, 1))
            ratio = statistics.median(a / b for a, b in pairs)
            rows.append({"case": case, "policy": policy, "measured": got, "ideal": ideal, "ratio": ratio})
            print(f"{case:<12} | {policy:<11} | {got * 1e3:9.1f} | {ideal * 1e3:9.1f} | {ratio:6.3f}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--constraints", type=int, default=65531, help="constraints of a proof (two provers, alone)")
    ap.add_argument("--small", type=int, default=16379, help="constraints beside a busy core and in the engine")
    ap.add_argument("--proofs", type=int, default=5)
    ap.add_argument("--partitions", type=int, default=4, help="engine: partitions a job")
    ap.add_argument("--jobs", type=int, default=3, help="engine: jobs at once")
    ap.add_argument("--workers", type=int, default=2, help="engine: synthesis workers")
    ap.add_argument("--rounds", type=int, default=1, help="every case this many times, the policies alternating")
    ap.add_argument("--policies", default="sleep,spin", help="sleep, spin, spin=N (GOMP_SPINCOUNT), comma-separated")
    ap.add_argument("--cases", default="alone,two provers,busy core,engine", help="which cases, comma-separated")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--child", choices=("prove", "engine"), help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "prove":
        print(json.dumps(child_prove(args.dir, args.n, args.threads, args.proofs)))
        return 0
    if args.child == "engine":
        print(json.dumps(child_engine(args.dir, args.n, args.partitions, args.jobs, args.workers)))
        return 0
    policies = args.policies.split(",")
    cases = [c.strip() for c in args.cases.split(",")]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}: {', '.join(CASES)}")
    envs = {p: policy_env(p) for p in policies}
    with tempfile.TemporaryDirectory(prefix="bench-sharing-") as folder:
        prepare(folder, sorted({args.constraints, args.small}))
        rounds = []
        for _ in range(args.rounds):      # the policies alternate within a round: drift hits both
            rounds.append({p: {c: CASES[c](folder, args, envs[p]) for c in cases} for p in policies})
    rows = report(rounds)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": cores(), "args": vars(args), "rows": rows, "rounds": rounds}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
