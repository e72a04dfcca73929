#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fq Montgomery products on the integer multiply-add pipe, on the FP64 pipe
(8 x 48-bit limbs in doubles, fq64.cuh) and on both at once (a share of the
warps on each), chains in registers: do the two pipes add up?

Usage:
    python benchmarks/bench_fq_pipes.py [--reps 5] [--iters 256] [--blocks-per-sm 8]

Every configuration multiplies the same canonical inputs, and its outputs
are checked equal to the integer pipe's before its rate is printed.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import gpu_builds
from bench_gpu import device_time
from porep_prover.backend import get_backend

FQ_TOP_MASK = (1 << 60) - 1  # top 64-bit limb below p's (0x1a01...): every input below p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--iters", type=int, default=256, help="products in each thread's chain")
    ap.add_argument("--blocks-per-sm", type=int, default=8, help="256-thread blocks a multiprocessor, per grid pass")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    gpu = get_backend("gpu")
    gpu_builds.add_builds()                 # fq_pipes: benchmarks/kernels/fq_pipes.cu
    rng = np.random.default_rng(args.seed)
    n = gpu.info.multiprocessors * 256 * args.blocks_per_sm
    x = rng.integers(0, 1 << 64, size=(n, 6), dtype=np.uint64)
    x[:, 5] &= np.uint64(FQ_TOP_MASK)
    y = np.ascontiguousarray(x[::-1])
    configs = [("integer (msm_g1)", "msm_g1", "g1_fq_mul_chain", [])]
    configs.append(("fp64 (fq64_mul_chain)", "fq_pipes", "fq64_mul_chain", []))
    configs += [(f"mixed, {k}/8 warps fp64", "fq_pipes", "fq_mul_chain_mixed", [k]) for k in range(9)]
    print(f"device: {gpu.info.name}, {n} threads, {args.iters} products each")
    print("| kernel | device ms | G products/s | x integer |")
    print("| --- | ---: | ---: | ---: |")
    want, base = None, None
    for label, module, kernel, extra in configs:
        k = gpu.device.kernel(module, kernel)
        bx, by = gpu.memory.upload(x), gpu.memory.upload(y)

        def launch(k=k, bx=bx, by=by, extra=extra):
            k.launch((n // 256,), (256,), [bx, by, n, args.iters] + extra, gpu.device.stream)
        launch()
        got = gpu.memory.download_array(bx, (n, 6))
        if want is None:
            want = got
        elif not np.array_equal(got, want):
            print(f"MISMATCH: {label}", file=sys.stderr)
            return 1
        ms = device_time(gpu, launch, args.reps)
        gpu.memory.free(bx, by)
        rate = n * args.iters / ms / 1e6
        base = base or rate
        print(f"| {label} | {ms:.3f} | {rate:.1f} | {rate / base:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
