#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""supraseal-c2 (the CUDA Groth16 prover of Filecoin's C2, the cuzk fork
by default) beside porep_prover on one porep-shaped partition, on one card,
in one process, with the same r and s: both proofs compared byte for byte
and verified.

Usage:
    sh benchmarks/peers/build.sh c2          # once: into benchmarks/peers/build/ (VARIANT=upstream for the other)
    python3 benchmarks/bench_c2_peer.py [--scale 1] [--seed 0] [--params-dir DIR] [--shrink-to-disk]
                                        [--device-memory-gib 0,16] [--reps 3] [--matvec device|host]
                                        [--threads N] [--blinding-seed 1] [--variant cuzk-fork|upstream]
                                        [--lib PATH] [--json out.json]
    # on a device host, after the package's install: the same, as benchmarks/device_run.py's step c2
    PEERS=.peers sh benchmarks/peers/build.sh c2 && \\
        python3 benchmarks/bench_c2_peer.py --scale 1 --shrink-to-disk --reps 2 --device-memory-gib 0,16 \\
        --json c2.json

The partition: the porep-shaped provider's circuit at --scale, partition 0
of one job, its INSECURE parameters read from DIR/porep-shaped-<scale>-<seed>.params
(DIR: --params-dir, default the provider's cache) or made and written there
once (a bellperson .params file, what supraseal-c2 reads; ~47 GB and a
minute or two at scale 1, reused by every later run; kept in anonymous
memory here, never mirrored as a .pmap). Where the file is not there and
DIR's free space would not hold it, the run stops before making anything,
or with --shrink-to-disk takes the largest of scale / 2, scale / 4, ...
whose file fits (a device host's 64 GiB disk may not hold scale 1's).

Rows, in this order, each printed and written to --json as it is measured:
  ours, under each --device-memory-gib budget (0: the card's memory), by the
  budget's device plan as bench_partition's under_budget runs it (B's G2
  MSM on the device; A w, B w, C w there with --matvec device where the
  plan holds the matrices): the kernel region (prove_device) and the whole
  partition (synthesize, prepare, region, finish with the fixed r, s), and
  each of the four; then our parameters and device memory are let go.
  supraseal-c2: its SRS loaded from the same file (create_SRS: decoded into
  one pinned host block; the load timed apart), then its prove call (host
  clock: its CPU preparation, H, the MSMs, B's G2 MSM on the host's cores,
  the assembly; a, b, c evaluated before it, as bellperson hands them over),
  and the fork's CUZK_TIMING phases parsed from its stderr (their medians;
  mutex_held_ms is its kernel region). It has no device budget: it runs as
  it is on the card, which the row notes.
Times are medians of --reps after one warm-up. Every row holds the host's
memory: the process's RSS now and at its peak, and the host's memory in use
(every process; supraseal-c2 pins its whole SRS). Every proof of every rep
must be the same 192 bytes and verify; else the exit status is 1. A missing
library, bad arguments or parameters of another circuit end it with one
line and status 2. Needs a CUDA device.
"""
from __future__ import annotations

import argparse
import gc
import logging
import os
import pathlib
import random
import resource
import statistics
import sys
import time

from bench_partition import fresh, host_used_gib
from porep_prover.backend import get_backend
from porep_prover.bench import ReportFile
from porep_prover.engine import Job
from porep_prover.errors import InvalidInputError, PorepProverError
from porep_prover.field.constants import R
from porep_prover.groth16 import Proof, verify
from porep_prover.groth16.prover import Stopwatch, finish, prove_device
from porep_prover.memory.sizes import GIB
from porep_prover.memory.workload import Workload
from porep_prover_porep_shaped.circuit import counts
from porep_prover_porep_shaped.plugin import PorepShapedProvider, cache_dir
from supraseal_c2 import LIBRARIES, PeerError, SupraSealC2, c2_inputs, parse_timing

NAME = "bench_c2_peer"
PARAMS_BYTES_AT_SCALE_1 = 47_400_000_000     # the .params file: h 2^27, l and a ~130 M, b_g1 and b_g2 ~33 M points
ROOM = 1.05                                   # the estimate's margin, where a folder's free space is weighed


class Arguments(argparse.ArgumentParser):
    """argparse with its errors as one line: the program's name and the message."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message}\n")


def budgets(spec: str) -> list[float]:
    """'0,16' as GiB budgets (0: the card's memory), in the order given."""
    try:
        out = [float(v) for v in spec.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"budgets are GiB, comma-separated (0: the card's), not {spec!r}") from None
    if not out or any(v < 0 for v in out):
        raise argparse.ArgumentTypeError(f"budgets are GiB >= 0, comma-separated, not {spec!r}")
    return out


def positive(text: str) -> int:
    return _at_least(text, 1, "a count of at least 1")


def seed(text: str) -> int:
    return _at_least(text, 0, "a seed from 0 to 2^64 - 1", (1 << 64) - 1)


def _at_least(text: str, least: int, what: str, most: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least or (most is not None and value > most):
        raise argparse.ArgumentTypeError(f"{what}, not {text!r}")
    return value


def scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"a fraction of a 32 GiB partition above 0 and at most 1, not {text!r}")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = Arguments(prog=NAME, description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=scale, default=1.0)
    ap.add_argument("--seed", type=seed, default=0, help="the circuit's seed (the provider's)")
    ap.add_argument("--params-dir", type=pathlib.Path, help="where the .params file is read or written "
                                                             "(default: the provider's cache)")
    ap.add_argument("--shrink-to-disk", action="store_true",
                    help="halve the scale until its .params file fits the folder's free space (an existing file "
                         "is taken as it is)")
    ap.add_argument("--device-memory-gib", type=budgets, default="0,16", metavar="G1,G2,...")
    ap.add_argument("--reps", type=positive, default=3, help="timed runs of each row, after one warm-up")
    ap.add_argument("--matvec", choices=("device", "host"), default="device")
    ap.add_argument("--threads", type=positive, default=None)
    ap.add_argument("--blinding-seed", type=seed, default=1, help="seed of the r and s both provers are given")
    ap.add_argument("--variant", choices=tuple(LIBRARIES), default="cuzk-fork")
    ap.add_argument("--lib", type=pathlib.Path, help="the library (default: the variant's in benchmarks/peers/build)")
    ap.add_argument("--json", type=pathlib.Path)
    return ap.parse_args(argv)


def blinding_of(seed: int) -> tuple[int, int]:
    """(r, s) drawn from seed, neither zero."""
    rng = random.Random(seed)
    return rng.randrange(1, R), rng.randrange(1, R)


def host_memory() -> dict[str, float]:
    """GiB: the process's RSS now (/proc/self/statm) and at its peak, the host's memory in use."""
    try:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * resource.getpagesize() / GIB
    except (OSError, ValueError, IndexError):
        rss = float("nan")
    return {"rss_gib": rss, "rss_peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
            "host_used_gib": host_used_gib()}


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs if k in r) for k in runs[0]} if runs else {}


def ours_row(be, params, r1cs, witness, threads, gib, reps, blinding, on_device):
    """Our partition under a device budget of gib GiB (see the module's
    docstring): the row and the proofs of its reps."""
    plan = be.device_plan(Workload.of(params, r1cs, on_device), be.device_budget(int(gib * GIB)), workers=1,
                          g2=True)
    dev = on_device and plan.matrices
    for line in plan.describe():
        print(f"  ours {gib:g} GiB: {line}", flush=True)
    host, runs, proofs = get_backend("cpu"), [], []
    for rep in range(reps + 1):                   # the first a warm-up: the plan's resident arrays made resident
        t0 = time.perf_counter()
        synth = fresh(params, r1cs, witness, threads, dev)
        t1 = time.perf_counter()
        staged = be.prepare(synth)
        try:
            be.device.ctx.reset_peak()
            t2 = time.perf_counter()
            sums = prove_device(be, params, staged.assignment, threads, b_g2=True, host=host, plan=plan)
            t3 = time.perf_counter()
        finally:
            be.release_prepared(staged)
        proofs.append(finish(be, params, synth, sums, threads, blinding=blinding).to_bytes())
        t4 = time.perf_counter()
        if rep:
            runs.append({"synthesize_ms": (t1 - t0) * 1e3, "prepare_ms": (t2 - t1) * 1e3,
                         "region_ms": (t3 - t2) * 1e3, "finish_ms": (t4 - t3) * 1e3, "whole_ms": (t4 - t0) * 1e3})
    status = be.memory_status()
    row = {"prover": "ours", "gib": gib, "budget": f"{gib:g} GiB" if gib else "the card's",
           "matvec": "device" if dev else "host", **medians(runs), "device_peak_gib": status["peak"] / GIB,
           "pinned_gib": status["pinned"] / GIB, **host_memory()}
    return row, proofs


def let_go(be) -> None:
    """The device's resident copies and pooled buffers given back (for the peer's turn)."""
    be.release_plan()
    be.release_resident()
    if getattr(be.memory, "pooled", False):
        be.device.synchronize()
        be.device.ctx.trim_pool()


def peer_row(c2: SupraSealC2, path: pathlib.Path, inputs, counts: dict[str, int], reps: int, blinding):
    """supraseal-c2's row (see the module's docstring) and the proofs of its reps."""
    before, t = host_memory(), time.perf_counter()
    srs = c2.load_srs(path)
    load_s = time.perf_counter() - t
    try:
        got = c2.srs_counts(srs)
        if got != counts:
            raise PeerError(f"supraseal-c2 read {got} points from {path}, our parameters have {counts}")
        inputs.check_srs(got)
        loaded = host_memory()
        print(f"  supraseal-c2: SRS loaded from {path} in {load_s:.1f} s; host in use "
              f"{before['host_used_gib']:.1f} GiB before, {loaded['host_used_gib']:.1f} GiB after", flush=True)
        runs, proofs = [], []
        for rep in range(reps + 1):
            t = time.perf_counter()
            proof, lines = c2.prove(srs, inputs, blinding)
            call_ms = (time.perf_counter() - t) * 1e3
            proofs.append(proof.to_bytes())
            if rep:
                runs.append({"call_ms": call_ms, **{f"cuzk_{k}": v for k, v in parse_timing(lines).items()}})
    finally:
        c2.free_srs(srs)
    timed = medians(runs)
    row = {"prover": f"supraseal-c2 ({c2.variant})", "budget": "none: it runs as it is", "srs_load_s": load_s,
           **timed, "region_ms": timed.get("cuzk_mutex_held_ms"), "host_before_load": before,
           "host_after_load": loaded, **host_memory()}
    return row, proofs


def print_row(row: dict) -> None:
    def ms(key: str) -> str:
        value = row.get(key)
        return f"{value:9.1f}" if isinstance(value, float) else f"{'':>9}"
    whole = "whole_ms" if row["prover"] == "ours" else "call_ms"
    print(f"| {row['prover']:<24} | {row['budget']:<22} | {ms('region_ms')} | {ms(whole)} | "
          f"{row['host_used_gib']:7.1f} | {row['rss_gib']:6.1f} | {row['rss_peak_gib']:6.1f} |", flush=True)


def params_path(folder: pathlib.Path, scale: float, seed: int) -> pathlib.Path:
    """The provider's name for the parameters of (scale, seed), in folder."""
    return folder / f"porep-shaped-{scale:.8g}-{seed}.params"


def free_bytes(folder: pathlib.Path) -> int:
    """Bytes free to this user in folder's file system (its nearest existing folder's, before it is made)."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    got = os.statvfs(folder)
    return got.f_bavail * got.f_frsize


def fitting_scale(folder: pathlib.Path, scale: float, seed: int, shrink: bool) -> float:
    """scale, where its .params file is in folder or would fit its free
    space; with shrink, else the largest of scale / 2, scale / 4, ... that
    does (down to the provider's least circuit). InvalidInputError, one
    line, where none does."""
    free = free_bytes(folder)
    while True:
        need = PARAMS_BYTES_AT_SCALE_1 * scale * ROOM
        if params_path(folder, scale, seed).exists() or free >= need:
            return scale
        try:
            counts(scale / 2)
            smaller = shrink
        except InvalidInputError:
            smaller = False
        if not smaller:
            hint = "" if shrink else " (or --shrink-to-disk)"
            raise InvalidInputError(f"the parameters at scale {scale:g} need ~{need / 1e9:.1f} GB in {folder}, which "
                                    f"has {free / 1e9:.1f} GB free: --params-dir elsewhere or a smaller --scale{hint}")
        scale /= 2


def partition_of(args: argparse.Namespace, path: pathlib.Path, threads: int, report: ReportFile):
    """The porep-shaped circuit, its parameters (read from path, or made and
    written there) and partition 0's witness, each step's seconds reported."""
    provider = PorepShapedProvider()
    job = Job("porep-shaped", 1, {"scale": args.scale, "seed": args.seed, "job_seed": 1, "params": str(path),
                                  "save": True, "mapped": False})
    existed, seconds = path.exists(), {}
    clock = Stopwatch(seconds)
    r1cs = provider.circuit(job)
    clock.lap("circuit")
    params = provider.load_srs(job)
    clock.lap("params")
    witness = provider.synthesize(job, 0, threads)[1]
    clock.lap("witness")
    report.set(**{f"{k}_s": v for k, v in seconds.items()}, params_made=not existed,
               params_gb=path.stat().st_size / 1e9, constraints=r1cs.num_constraints, domain=r1cs.domain_size)
    print(f"scale {args.scale:g}: {r1cs.num_constraints} constraints, domain 2^{r1cs.domain_size.bit_length() - 1}; "
          f"circuit {seconds['circuit']:.1f} s, {path} {'read' if existed else 'made and written'} in "
          f"{seconds['params']:.1f} s, witness {seconds['witness']:.1f} s", flush=True)
    return params, r1cs, witness


def compared(proofs: dict[str, list[bytes]], vk, public: list[int], report: ReportFile) -> bool:
    """Whether every proof is one and the same and verifies; the verdict printed and reported."""
    distinct = {p for runs in proofs.values() for p in runs}
    verified = {p.hex()[:16]: verify(vk, public, Proof.from_bytes(p)) for p in distinct}
    same = len(distinct) == 1
    report.set(proofs="identical" if same else "DIFFER", verified=verified,
               proof=next(iter(distinct)).hex() if same else {k: [p.hex() for p in v] for k, v in proofs.items()})
    print(f"proofs: {'identical' if same else 'DIFFER'} across {sum(map(len, proofs.values()))} "
          f"({', '.join(f'{k}: {len(v)}' for k, v in proofs.items())}); "
          f"verified: {', '.join(f'{k} {v}' for k, v in verified.items())}", flush=True)
    return same and all(verified.values())


def run(args: argparse.Namespace, c2: SupraSealC2) -> int:
    """The benchmark proper (see the module's docstring); 0 when every proof is the same and verifies."""
    threads = args.threads or os.cpu_count() or 1
    folder = args.params_dir or cache_dir()
    asked = args.scale
    args.scale = fitting_scale(folder, asked, args.seed, args.shrink_to_disk)
    path = params_path(folder, args.scale, args.seed)
    blinding = blinding_of(args.blinding_seed)
    report = ReportFile(args.json, "c2", scale=args.scale, scale_asked=asked, seed=args.seed, params=str(path),
                        variant=c2.variant, library=str(c2.path), reps=args.reps, threads=threads)
    if args.scale != asked:
        print(f"scale {asked:g}'s parameters do not fit {folder}: scale {args.scale:g}", flush=True)
    be = get_backend("gpu")
    info = be.info
    print(f"device: {info.name} ({info.arch}, {info.memory_bytes / GIB:.0f} GiB); supraseal-c2 {c2.variant}",
          flush=True)
    report.set(device=info.name)
    params, r1cs, witness = partition_of(args, path, threads, report)
    print("| prover | budget | region ms | whole / call ms | host in use GiB | RSS GiB | peak RSS GiB |")
    print("|---|---|---:|---:|---:|---:|---:|", flush=True)
    on_device = args.matvec == "device" and be.capabilities.evaluates_witness
    proofs: dict[str, list[bytes]] = {}
    for gib in args.device_memory_gib:
        row, proofs[f"ours {gib:g} GiB"] = ours_row(be, params, r1cs, witness, threads, gib, args.reps, blinding,
                                                    on_device)
        report.add(row)
        print_row(row)
    let_go(be)                            # our streamed arrays unpinned, the card's memory back
    inputs = c2_inputs(params, r1cs, witness, threads)
    vk, points = params.vk, {k: len(getattr(params, k)) for k in ("h", "l", "a", "b_g1", "b_g2")}
    del params                            # 47 GB at scale 1: the peer pins as much again
    gc.collect()
    free = be.memory_status()["free"] / GIB
    row, proofs["supraseal-c2"] = peer_row(c2, path, inputs, points, args.reps, blinding)
    row.update(device_free_before_gib=free, device_free_after_gib=be.memory_status()["free"] / GIB)
    report.add(row)
    print_row(row)
    return 0 if compared(proofs, vk, witness[1:r1cs.num_inputs].to_ints(), report) else 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("porep_prover.porep_shaped").setLevel(logging.INFO)   # the parameters' progress
    try:
        c2 = SupraSealC2(args.lib or LIBRARIES[args.variant])
        return run(args, c2)
    except (PeerError, PorepProverError, OSError) as exc:       # OSError: a parameters folder it cannot write
        print(f"{NAME}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
