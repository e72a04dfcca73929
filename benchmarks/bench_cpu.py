#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU benchmark: MSM (ours, blst, arkworks on the same inputs), NTT, Groth16.

Usage:
    python benchmarks/bench_cpu.py [--quick] [--sections msm,ntt,groth16] [--json out.json]

Needs the package installed, plus `ckzg` (for blst) for the peer columns:
    python -m pip install ckzg==2.1.8
Prints one table per section; every MSM result is compared across libraries.
Times are medians; ratios are ours / blst at the same thread count (< 1: ours faster).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import porep_prover as pp
from porep_prover.backend import get_backend
from porep_prover.bench.machine import cpu_busy
from porep_prover.circuits import porep_like, square_chain
from porep_prover.groth16 import PreparedVerifyingKey, insecure_setup, prove, verify

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

ROWS: list[dict] = []


def median_time(fn, reps: int) -> float:
    fn()  # warm up (thread pools, caches)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench_msm(args, pool):
    print("\n## MSM (ms, median of runs; random 255-bit scalars; ratio = ours / blst)")
    print("| group | n | ours 1T | blst 1T | ark 1T | ours 2T | blst 2T | ark 2T | ratio 1T | ratio 2T |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpu = get_backend("cpu")
    rng = random.Random(args.seed)
    sizes = {"G1": range(12, args.max_g1 + 1, 2), "G2": range(12, args.max_g2 + 1, 2)}
    for group, cls, g in (("G1", pp.G1Array, "p1"), ("G2", pp.G2Array, "p2")):
        for log_n in sizes[group]:
            n = 1 << log_n
            points = cpu.fixed_base(cls.generator(), pp.FrArray.random(n, rng), 2)
            scalars = pp.FrArray.random(n, rng)
            ints = scalars.to_ints()
            want = None
            row = {"section": "msm", "group": group, "n": n}
            reps = 3 if n >= 1 << 16 else 5
            for threads in (1, 2):
                res = {}
                row[f"ours_{threads}T"] = median_time(
                    lambda res=res, points=points, scalars=scalars, threads=threads:
                    res.__setitem__("v", pp.msm(points, scalars, threads=threads)), reps)
                want = res["v"].to_bytes()
                if peers.BLST is not None:
                    if threads == 1:
                        blst_in = peers.BlstInput(g, points.to_bytes(compressed=False), scalars.to_bytes(), n)
                    row[f"blst_{threads}T"] = median_time(
                        lambda res=res, blst_in=blst_in, threads=threads:
                        res.__setitem__("b", blst_in.msm(threads, pool)), reps)
                    assert res["b"] == want, f"blst and ours disagree at {group} n={n}"
                if log_n <= args.max_ark:
                    if threads == 1:
                        ark_in = peers.ArkInput(g, points.to_bytes(), ints)
                    row[f"ark_{threads}T"] = median_time(
                        lambda res=res, ark_in=ark_in, threads=threads:
                        res.__setitem__("a", ark_in.msm(threads, pool)), reps)
                    assert res["a"] == want, f"arkworks and ours disagree at {group} n={n}"
            ROWS.append(row)
            cell = lambda k, row=row: f"{row[k] * 1e3:.1f}" if k in row else "-"  # noqa: E731
            ratio = lambda t, row=row: \
                f"{row[f'ours_{t}T'] / row[f'blst_{t}T']:.2f}" if f"blst_{t}T" in row else "-"  # noqa: E731
            print(f"| {group} | 2^{log_n} | {cell('ours_1T')} | {cell('blst_1T')} | {cell('ark_1T')} | "
                  f"{cell('ours_2T')} | {cell('blst_2T')} | {cell('ark_2T')} | {ratio(1)} | {ratio(2)} |", flush=True)


def bench_ntt(args):
    print("\n## NTT over Fr (ms, median; forward natural order)")
    print("| n | 1T | 2T | inverse coset 2T |")
    print("| ---: | ---: | ---: | ---: |")
    rng = random.Random(args.seed)
    for log_n in range(16, args.max_ntt + 1, 2):
        xs = pp.FrArray.random(1 << log_n, rng)
        row = {"section": "ntt", "n": 1 << log_n}
        reps = 3 if log_n >= 20 else 5
        row["1T"] = median_time(lambda xs=xs: pp.ntt(xs, threads=1), reps)
        row["2T"] = median_time(lambda xs=xs: pp.ntt(xs, threads=2), reps)
        row["icoset_2T"] = median_time(lambda xs=xs: pp.ntt(xs, inverse=True, coset=True, threads=2), reps)
        ROWS.append(row)
        print(f"| 2^{log_n} | {row['1T'] * 1e3:.1f} | {row['2T'] * 1e3:.1f} | {row['icoset_2T'] * 1e3:.1f} |",
              flush=True)


def bench_groth16(args):
    print("\n## Groth16 prove / verify (ms, median; all threads; domain = 2^k: constraints + inputs)")
    print("| circuit | domain | constraints | aux | prove | h_poly | msm_g1 | msm_g2 | verify |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, make, k in (("porep-like", porep_like, 5), ("square-chain", square_chain, 2)):
        for log_n in range(12, args.max_groth16 + 1, 2):
            r1cs, w, public = make((1 << log_n) - k, seed=log_n)
            params = insecure_setup(r1cs, rng=random.Random(log_n), warn=False)
            stages: dict = {}
            reps = 3
            t_prove = median_time(lambda params=params, r1cs=r1cs, w=w, stages=stages:
                                  prove(params, r1cs, w, timings=stages), reps)
            proof = prove(params, r1cs, w)
            pvk = PreparedVerifyingKey(params.vk)
            t_verify = median_time(lambda pvk=pvk, public=public, proof=proof: verify(pvk, public, proof), 5)
            assert verify(pvk, public, proof)
            per = {k_: v / (reps + 1) for k_, v in stages.items()}
            ROWS.append({"section": "groth16", "circuit": name, "domain": 1 << log_n, "prove": t_prove,
                         "verify": t_verify, **{f"stage_{k_}": v for k_, v in per.items()}})
            print(f"| {name} | 2^{log_n} | {r1cs.num_constraints} | {r1cs.num_aux} | {t_prove * 1e3:.1f} | "
                  f"{per['h_poly'] * 1e3:.1f} | {per['msm_g1'] * 1e3:.1f} | {per['msm_g2'] * 1e3:.1f} | "
                  f"{t_verify * 1e3:.2f} |", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", default="msm,ntt,groth16")
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", help="write all rows here")
    args = ap.parse_args()
    args.max_g1, args.max_g2, args.max_ark = (14, 12, 14) if args.quick else (18, 16, 16)
    args.max_ntt, args.max_groth16 = (18, 14) if args.quick else (22, 16)
    busy = cpu_busy()
    print(f"# porep_prover {pp.__version__} CPU benchmark, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}")
    print(f"# other load before: {busy:.2f} CPUs; blst: {'ckzg' if peers.BLST else 'not installed'}")
    sections = args.sections.split(",")
    with ThreadPoolExecutor(max_workers=2) as pool:
        if "msm" in sections:
            bench_msm(args, pool)
    if "ntt" in sections:
        bench_ntt(args)
    if "groth16" in sections:
        bench_groth16(args)
    print(f"\n# other load after: {cpu_busy():.2f} CPUs")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": ROWS, "date": time.strftime("%Y-%m-%d")}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
