#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where one porep-shaped partition's device time goes (plugin
porep-prover-porep-shaped): H (from a, b, c, or from the witness with
`--matvec device`, the queries' scalars then taken from its device copy),
each G1 MSM (a, l, h, b_1) and the G2 MSM of b, timed
one by one on the backend, then the whole kernel region (prove_device with
B2) for comparison; one proof finished and verified first. --profile adds
each GPU MSM's kernel phases and H's steps from the witness (upload, MatVec
and check, the transforms, the queries' gathers). --overlap times the
kernel region a second time in each run, in overlap mode (prove_device's
overlap: the MSMs that do not depend on H on the GPU's second stream while
H's transforms run), beside the first, its sums checked equal.
--device-memory-gib G1,G2,... first times the kernel region under each
device budget in turn, in the same process (0: the card's memory): the
budget's plan made and applied (with A w, B w, C w on the host where the
matrices do not fit), its lines printed, and beside each region's time the
device peak, the bytes streamed through the chunk ring and the resident
bytes dropped.

Usage:
    python benchmarks/bench_partition.py [--scale 0.015625] [--backend auto] [--matvec host|device]
                                         [--reps 3] [--payload KEY=VALUE ...] [--profile] [--overlap]
                                         [--device-memory-gib 0,32,16] [--b-g2 device,host] [--no-phases]
                                         [--json out.json]

Parameters come from the provider (made on first use, cached under
POREP_PROVER_PARAMS_CACHE; at large scales mapped). Times are host-clock
medians of --reps runs after a warm-up that makes the parameters resident;
each run re-synthesizes outside the clock (H consumes a, b, c). The MSM rows
also give the scalars' make-up (zero / one / other), which decides what the
0 / 1 / other split leaves to the bucket method. --json is rewritten whole
as each budget's row and each phase run is measured: a run stopped by a
limit keeps every row it finished.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

import numpy as np

from porep_prover.backend import Flavor, get_backend
from porep_prover.bench import ReportFile
from porep_prover.cuda.arrays import DeviceScalars
from porep_prover.engine import Job
from porep_prover.engine.config import parse_entry
from porep_prover.field.constants import R
from porep_prover.groth16 import verify
from porep_prover.groth16.prover import (HostAssignment, Stopwatch, finish, prove_device, query_scalars,
                                         synthesize)
from porep_prover.groth16.region import Ref, Slots
from porep_prover.memory.budgets import host_available_bytes, host_memory_bytes
from porep_prover.memory.sizes import GIB
from porep_prover.memory.workload import Workload
from porep_prover_porep_shaped.plugin import PorepShapedProvider

MONT_ONE = np.array([(pow(2, 256, R) >> (64 * i)) & (2**64 - 1) for i in range(4)], dtype=np.uint64)


def make_up(scalars) -> str:
    """'zero / one / other' shares of an FrArray (Montgomery limbs)."""
    limbs = scalars.limbs
    zero = (limbs == 0).all(1).mean()
    one = (limbs == MONT_ONE).all(1).mean()
    return f"{zero:.0%} / {one:.0%} / {1 - zero - one:.0%}"


def fresh(params, r1cs, witness, threads, on_device):
    return synthesize(params, r1cs, witness, threads, check=False, abc_on_device=on_device)


def phase_scalars(be, assignment, threads, slots: Slots):
    """H's scalars and the (l, a, b) queries' scalars, each MSM apart: H from
    a, b, c (consumed) and the synthesized scalars; or all from the device's
    copy of the witness (A's taken too, where the kernel region reads them
    through msm_shared's rows)."""
    if isinstance(assignment, HostAssignment):
        slots.put("h", be.h_scalars(assignment.a, assignment.b, assignment.c, threads, Flavor.BELLMAN))
        return slots.get(Ref("h")), (assignment.l_scalars, assignment.a_scalars, assignment.b_scalars)
    r1cs = assignment.r1cs
    h, w = be.h_and_witness(r1cs, assignment.witness, threads, Flavor.BELLMAN, check=assignment.check)
    slots.put("h", h)
    slots.put("w", w)
    for q in "ab":
        slots.put(q, be.take(w, r1cs.query_index(q, np.uint32)))
    return h, (w[r1cs.num_inputs:], slots.get(Ref("a")), slots.get(Ref("b")))


def one_run(be, params, r1cs, witness, threads, on_device, phases=None, overlap=False) -> dict:
    """Seconds of each phase, one after the other, and of the whole region;
    with phases (a dict, GPU only) each MSM's kernel phases in ms go to
    phases[name]; with overlap, the region's again in overlap mode (its sums
    checked against the first's)."""
    synth = fresh(params, r1cs, witness, threads, on_device)
    times = {}
    t = time.perf_counter()
    with Slots(be) as slots:
        h_sc, (l_sc, a_sc, b_sc) = phase_scalars(be, synth, threads, slots)
        times["h (ntt)"] = time.perf_counter() - t
        for name, points, scalars in (("msm a", params.a, a_sc), ("msm l", params.l, l_sc),
                                      ("msm h", params.h, h_sc), ("msm b_g1", params.b_g1, b_sc),
                                      ("msm b_g2", params.b_g2, b_sc)):
            ops = getattr(be, "msm_ops", None)
            if phases is not None and ops is not None:
                ops.profile = phases.setdefault(name, {})
            t = time.perf_counter()
            be.msm(points, scalars, threads)
            times[name] = time.perf_counter() - t
            if ops is not None:
                ops.profile = None
    synth = fresh(params, r1cs, witness, threads, on_device)
    t = time.perf_counter()
    sums = prove_device(be, params, synth, threads, b_g2=True, host=get_backend("cpu"))
    times["kernel region"] = time.perf_counter() - t
    if overlap:
        synth = fresh(params, r1cs, witness, threads, on_device)
        t = time.perf_counter()
        beside = prove_device(be, params, synth, threads, b_g2=True, host=get_backend("cpu"), overlap=True)
        times["kernel region (overlap)"] = time.perf_counter() - t
        assert beside == sums, "the kernel region's sums differ in overlap mode"
    return times


def h_phases(be, synth) -> dict:
    """ms of H's steps from the witness (GPU), one after the other with the
    device drained between them: the witness's upload (pageable memory here;
    the engine copies it ahead), A w, B w, C w with the witness check, H
    (the transforms and their products), the a and b queries' gathers."""
    r1cs, n = synth.r1cs, synth.r1cs.domain_size
    out, held, t = {}, [], time.perf_counter()

    def lap(name):
        nonlocal t
        be.device.synchronize()
        now = time.perf_counter()
        out[name], t = (now - t) * 1e3, now

    try:
        w = DeviceScalars(be.memory, be.memory.upload(synth.witness.limbs), len(synth.witness))
        held.append(w)
        lap("upload")
        abc = be.r1cs_ops.evaluate(r1cs, w, n, synth.check)
        lap("matvec + check")
        held.append(be.ntt_ops.h_owned(abc, n, Flavor.BELLMAN))
        lap("h")
        held += [be.take(w, r1cs.query_index(q, np.uint32)) for q in ("a", "b")]
        lap("takes")
    finally:
        for x in held:
            x.close()
    return out


class DrainedClock(Stopwatch):
    """A Stopwatch whose laps wait for the device first: each step's own
    device time, where the kernel region's host clock gives only its queueing."""

    def __init__(self, be, sink) -> None:
        super().__init__(sink)
        self.be = be

    def lap(self, name: str) -> None:
        self.be.device.synchronize()
        super().lap(name)


def profiled_region(be, params, synth, threads, g2: bool, chosen) -> dict:
    """One more region by the plan, profiled: its steps' device time (the
    device drained at each step's end) and its MSMs' kernel phases summed
    over every pass (ms; "passes": the sorts run), against its own wall
    time. The phases' events drain the device at each pass, so the region
    runs slower than unprofiled: what it shows is where the device time
    goes, the unprofiled rows what it costs."""
    ops, laps, phases = be.msm_ops, {}, {}
    ops.profile = phases
    staged = be.prepare(synth)
    try:
        t = time.perf_counter()
        prove_device(be, params, staged.assignment, threads, b_g2=g2, host=get_backend("cpu"),
                     clock=DrainedClock(be, laps), plan=chosen)
        wall = time.perf_counter() - t
    finally:
        ops.profile = None
        be.release_prepared(staged)
    return {"profiled_ms": wall * 1e3, "profiled_steps_ms": {k: v * 1e3 for k, v in laps.items()},
            "msm_phases_ms": {k: v for k, v in phases.items() if k != "c"}}


def under_budget(be, params, r1cs, witness, threads, on_device, gib: float, reps: int, g2: bool = True,
                 profile: bool = False) -> dict:
    """The kernel region's median seconds under a device budget of gib GiB
    (0: the card's), after one warm-up region that makes the plan's
    resident arrays resident, and the memory figures of the last run,
    whose proof is finished and verified, and the mean milliseconds a
    region's kernels stood waiting for streamed chunks. Each timed
    partition's uploads (the witness, or a, b, c and the queries' scalars)
    are staged in pinned memory before the clock, as the engine's prepare
    stages them, and uploaded inside it (one worker: no copy ahead). g2: B's G2 MSM in the region,
    else on the host after it (as prover.b_g2 = host), timed with the
    proof's assembly ("finish ms": what the host must keep up with).
    profile: one more region after them, profiled (profiled_region)."""
    # the plan as the engine makes it when it loads the set: a value, which every region below is handed
    chosen = be.device_plan(Workload.of(params, r1cs, on_device), be.device_budget(int(gib * GIB)), workers=1,
                            g2=g2)
    dev = on_device and chosen.matrices
    for line in chosen.describe():
        print(f"  {gib:g} GiB: {line}")
    host = get_backend("cpu")
    prove_device(be, params, fresh(params, r1cs, witness, threads, dev), threads, b_g2=g2, host=host, plan=chosen)
    seconds, waited, laps = [], be.memory.resident.copy_wait_ms(), {}
    for _ in range(reps):
        synth = fresh(params, r1cs, witness, threads, dev)
        staged = be.prepare(synth)      # as the engine stages a partition: its uploads in pinned memory
        try:
            before = be.memory_status()
            be.device.ctx.reset_peak()
            t = time.perf_counter()
            sums = prove_device(be, params, staged.assignment, threads, b_g2=g2, host=host, clock=Stopwatch(laps),
                                plan=chosen)
            seconds.append(time.perf_counter() - t)
        finally:
            be.release_prepared(staged)
    after = be.memory_status()
    waited = (be.memory.resident.copy_wait_ms() - waited) / reps
    t = time.perf_counter()
    proof = finish(be if g2 else host, params, synth, sums, threads)
    finished = time.perf_counter() - t
    assert verify(params.vk, witness[1:r1cs.num_inputs].to_ints(), proof), f"no valid proof under {gib:g} GiB"
    extra = profiled_region(be, params, fresh(params, r1cs, witness, threads, dev), threads, g2, chosen) \
        if profile and hasattr(be, "msm_ops") else {}
    return {**extra, "gib": gib, "async_free": getattr(getattr(be, "memory", None), "async_free", False),
            "onto": getattr(getattr(be, "msm_ops", None), "onto", False),
            "matvec": "device" if dev else "host", "b_g2": "device" if g2 else "host",
            "ms": statistics.median(seconds) * 1e3, "finish_ms": finished * 1e3, "copy_wait_ms": waited,
            "peak_gib": after["peak"] / GIB, "streamed_gib": (after["streamed"] - before["streamed"]) / GIB,
            "dropped_gib": after["dropped"] / GIB, "planned_gib": chosen.planned_bytes / GIB,
            "pinned_gib": after["pinned"] / GIB, "host_used_gib": host_used_gib(),
            "steps_ms": {k: v * 1e3 / reps for k, v in laps.items()},
            "rss_peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}


def host_used_gib() -> float:
    """The host's memory in use now (its memory less what is available, every process), GiB; NaN where the
    platform does not say what is available."""
    available = host_available_bytes()
    return float("nan") if available is None else (host_memory_bytes() - available) / GIB


def switches(ap: argparse.ArgumentParser, name: str, spec: str) -> list[str]:
    """An off/on option's values in the order timed (off, on, or both comma-separated)."""
    values = [w.strip() for w in spec.split(",") if w.strip()]
    if not values or set(values) - {"off", "on"}:
        ap.error(f"--{name.replace('_', '-')}: off, on or both, comma-separated, not {spec!r}")
    return values


def budget_rows_of(spec: str, g2_places: list[str]) -> list[tuple[float, str]]:
    """(GiB, where B's G2 MSM runs) in the order timed: spec's budgets in
    turn, each with every one of g2_places, or with the place it names
    alone ("16:host")."""
    rows = []
    for entry in (e.strip() for e in spec.split(",") if e.strip()):
        gib, _, named = entry.partition(":")
        if named not in ("", "device", "host"):
            raise SystemExit(f"--device-memory-gib: {entry!r}: the place is device or host")
        rows += [(float(gib), place) for place in ([named] if named else g2_places)]
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1 / 64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--matvec", choices=("host", "device"), default="device")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--payload", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--profile", action="store_true",
                    help="each GPU MSM's kernel phases (last run), and H's steps from the witness")
    ap.add_argument("--overlap", action="store_true",
                    help="the kernel region timed again in overlap mode, beside the first")
    ap.add_argument("--device-memory-gib", default="", metavar="G1,G2,...",
                    help="first the kernel region under each device budget (GiB; 0: the card's memory; "
                         "G:host or G:device times that budget with B's G2 MSM there alone)")
    ap.add_argument("--b-g2", default="device", metavar="device|host[,...]",
                    help="where the budgets' B G2 MSM runs (host: after the region, as prover.b_g2 = host); "
                         "with both, every budget is timed each way, in the order given")
    ap.add_argument("--profile-budgets", action="store_true",
                    help="each budget's row with one more region profiled: its steps' device time and its MSMs' "
                         "kernel phases summed over their passes")
    for name, default, what in (
            ("--async-free", "off", "the device pool's work buffers given back without a wait (on) or after one"),
            ("--onto", "on", "an MSM's later passes start their buckets' runs from the buckets (on: "
                             "msm_accumulate_onto) or add each run as it ends")):
        ap.add_argument(name, default=default, metavar="off|on[,...]",
                        help=f"{what} (off); with both, every budget is timed each way, in the order given")
    ap.add_argument("--no-phases", action="store_true",
                    help="only the budgets' regions: not the phases one by one after them")
    ap.add_argument("--json")
    args = ap.parse_args()
    g2_places = [w.strip() for w in args.b_g2.split(",") if w.strip()]
    if not g2_places or set(g2_places) - {"device", "host"}:
        ap.error(f"--b-g2: device, host or both, comma-separated, not {args.b_g2!r}")
    rows = budget_rows_of(args.device_memory_gib, g2_places)
    frees, ontos = (switches(ap, name, getattr(args, name)) for name in ("async_free", "onto"))
    payload = {"scale": args.scale, "seed": args.seed}
    payload.update(parse_entry(kv) for kv in args.payload)
    provider, job = PorepShapedProvider(), Job("porep-shaped", 1, payload)
    be = get_backend(args.backend)
    threads = args.threads or os.cpu_count()
    # each budget's row as it is measured, the phases at the end: a run cut short keeps what it finished
    report = ReportFile(args.json, "budgets", scale=args.scale, backend=args.backend, matvec=args.matvec,
                        overlap=args.overlap)
    t = time.perf_counter()
    params = provider.load_srs(job)
    r1cs, witness = provider.synthesize(job, 0, threads)
    inputs_s = time.perf_counter() - t
    report.set(inputs_s=inputs_s)
    print(f"scale {args.scale:g}: {r1cs.num_constraints} constraints, domain 2^{r1cs.domain_size.bit_length() - 1}, "
          f"backend {args.backend}; circuit, parameters and witness in {inputs_s:.1f} s", flush=True)
    on_device = args.matvec == "device" and be.capabilities.evaluates_witness
    synth = fresh(params, r1cs, witness, threads, on_device)
    b_share = make_up(query_scalars(r1cs, witness, "b", threads))
    shares = {"msm a": make_up(query_scalars(r1cs, witness, "a", threads)), "msm l": make_up(witness[r1cs.num_inputs:]),
              "msm b_g1": b_share, "msm b_g2": b_share, "msm h": "full"}
    proof = finish(be, params, synth, prove_device(be, params, synth, threads, host=get_backend("cpu")), threads)
    assert verify(params.vk, witness[1:r1cs.num_inputs].to_ints(), proof), "the partition's proof does not verify"
    # first: the phases below hold every MSM's scalars at once, past any plan
    for (gib, place), free, onto in ((row, free, onto) for row in rows for free in frees for onto in ontos):
        if hasattr(be, "memory"):
            be.memory.async_free, be.msm_ops.onto = free == "on", onto == "on"
        row = under_budget(be, params, r1cs, witness, threads, on_device, gib, args.reps, place == "device",
                           args.profile_budgets)
        report.add(row)
        print(f"budget {gib:g} GiB (matvec {row['matvec']}, b_g2 {row['b_g2']}, async free {free}, onto {onto}): "
              f"kernel region {row['ms']:.1f} ms, waiting on copies {row['copy_wait_ms']:.1f} ms "
              f"({row['copy_wait_ms'] / row['ms']:.1%}), finish {row['finish_ms']:.1f} ms, "
              f"planned {row['planned_gib']:.1f} GiB, "
              f"peak {row['peak_gib']:.1f} GiB, streamed {row['streamed_gib']:.1f} GiB a region, "
              f"pinned {row['pinned_gib']:.1f} GiB, dropped {row['dropped_gib']:.1f} GiB; host in use "
              f"{row['host_used_gib']:.1f} GiB, peak RSS {row['rss_peak_gib']:.1f} GiB", flush=True)
        print(f"  {gib:g} GiB steps (host clock at each step's end, ms): "
              + ", ".join(f"{k} {v:.1f}" for k, v in row["steps_ms"].items()), flush=True)
        if "profiled_ms" in row:
            print(f"  {gib:g} GiB profiled (async free {free}, onto {onto}): {row['profiled_ms']:.1f} ms; "
                  "steps drained "
                  + ", ".join(f"{k} {v:.1f}" for k, v in row["profiled_steps_ms"].items()) + "; MSM phases "
                  + ", ".join(f"{k} {v:.1f}" for k, v in row["msm_phases_ms"].items()), flush=True)
    if rows:
        be.release_plan()     # unplanned again: one pass an MSM, nothing streamed
    if args.no_phases:
        return
    msm_phases = {}
    runs = []
    for i in range(args.reps):
        runs.append(one_run(be, params, r1cs, witness, threads, on_device,
                            msm_phases if args.profile and i == args.reps - 1 else None, args.overlap))
        report.set(phase_runs_ms=[{k: v * 1e3 for k, v in r.items()} for r in runs])
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    phases = sum(v for k, v in med.items() if not k.startswith("kernel region"))
    print(f"{'phase':>14} | {'ms':>9} | {'share':>6} | points | scalars zero / one / other")
    for k, v in med.items():
        share = f"{v / phases:.0%}" if not k.startswith("kernel region") else ""
        size = len(getattr(params, k.split()[1])) if k.startswith("msm") else ""
        print(f"{k:>14} | {v * 1e3:9.1f} | {share:>6} | {size} | {shares.get(k, '')}")
    print(f"{'sum of phases':>14} | {phases * 1e3:9.1f} |")
    for name, got in msm_phases.items():
        print(f"{name:>14}: " + " ".join(f"{k}={v:.1f}" for k, v in got.items()))
    h_split = {}
    if args.profile and on_device and hasattr(be, "r1cs_ops"):
        h_split = h_phases(be, fresh(params, r1cs, witness, threads, on_device))
        print(f"{'h (ntt)':>14}: " + " ".join(f"{k}={v:.1f}" for k, v in h_split.items()))
    report.set(ms={k: v * 1e3 for k, v in med.items()}, msm_phases_ms=msm_phases, h_phases_ms=h_split)


if __name__ == "__main__":
    main()
