#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU benchmark: NTT, the H pipeline, G1 / G2 MSM and Groth16 proofs on one device.

Usage:
    python benchmarks/bench_gpu.py [--sections ntt,h,msm_g1,msm_g2,groth16] [--max-log 24]
                                   [--check] [--json out.json]

Sections: field (product rates), xfer (host <-> device), ntt, ntt_tune (the
pass kernel's builds and block shapes), h, msm_g1, msm_g2, msm_variants (the
MSM's build variants side by side), msm_sort (the counting sort's atomics on
random, repeated and small scalars), msm_fill (the sort's fill a window or a
part of one at a time), msm_shape (the accumulating threads' chunk length, the sort's atomics grouped or not,
the window width of mostly-bit scalars), msm_overlap (the fill beside the
accumulation on two streams, and on one), msm_tables / msm_tables_g2 (window tables beside the
plain MSM, and the tables' making), batch_affine (affine additions sharing
an inversion against the accumulation's XYZZ ones), groth16 (whole proofs).

Times are medians of --reps runs after a warm-up, measured with CUDA events
around device-resident work ("device" column: inputs already on the device)
and with the host clock around the public call ("call": uploads and
downloads included; "xfer" is the share of the call spent on them). The
floor is the IMAD-bound estimate of ../shared/research/perf_anchors.md §5
(100% of 64 IMAD/clk/SM at 1.98 GHz on 132 SMs), scaled to this device.
--check compares one result per size with the CPU backend (slow at large sizes).
--json is rewritten whole as each row is measured: a run stopped by a limit
keeps every row it finished.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time

import numpy as np

import gpu_builds
import porep_prover as pp
from porep_prover import FrArray, G1Array, G2Array
from porep_prover.backend import get_backend
from porep_prover.bench import ReportFile
from porep_prover.circuits import fr_small
from porep_prover.field.constants import FR_GENERATOR, R
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.plan import MAX_CHUNK, MsmTuning, table_copies, window_bits
from porep_prover.msm.gpu.table import window_table
from porep_prover.ntt.gpu import GpuNtt, NttTuning

REPORT = ReportFile(None)     # --json's file, rewritten whole as each row is measured (main names it)
IMAD_PER_S = 132 * 64 * 1.98e9
FR_MUL, FQ_MUL = 272, 600           # IMADs per Montgomery product (perf_anchors §5)


def ntt_floor_ms(log_n: int) -> float:
    return (1 << (log_n - 1)) * log_n * FR_MUL / IMAD_PER_S * 1e3


def msm_floor_ms(log_n: int, group: int) -> float:
    n = 1 << log_n
    c = min(range(8, 24), key=lambda c: math.ceil(255 / c) * (n + (1 << c)))
    muls = math.ceil(255 / c) * (n * 10 + (1 << c) * 14)
    return muls * FQ_MUL * (3 if group == 2 else 1) / IMAD_PER_S * 1e3


def random_fr(n: int, rng: np.random.Generator) -> FrArray:
    limbs = rng.integers(0, 1 << 64, size=(n, 4), dtype=np.uint64)
    limbs[:, 3] &= np.uint64((1 << 62) - 1)
    return FrArray(limbs)


def random_points(cls, n: int, seed: int, distinct: int = 1 << 14):
    """n points from `distinct` random ones, tiled (an MSM's cost does not depend on repeats)."""
    import random
    rnd = random.Random(seed)
    base = cls.generator().scale([rnd.randrange(1, R) for _ in range(min(n, distinct))])
    reps = -(-n // len(base))
    return cls(np.ascontiguousarray(np.tile(base.limbs, (reps, 1))[:n]))


def device_time(gpu, fn, reps: int) -> float:
    """Median ms of fn() between two events on the backend's stream."""
    fn()
    gpu.device.stream.synchronize()
    times = []
    for _ in range(reps):
        start, stop = gpu.device.drv.Event(gpu.device.ctx), gpu.device.drv.Event(gpu.device.ctx)
        start.record(gpu.device.stream)
        fn()
        stop.record(gpu.device.stream)
        stop.synchronize()
        times.append(stop.elapsed_ms(start))
    return statistics.median(times)


def host_time(fn, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def row(section, size, device_ms, call_ms, floor_ms, **extra):
    r = {"section": section, "log_n": size, "device_ms": device_ms, "call_ms": call_ms, "floor_ms": floor_ms}
    r.update(extra)
    REPORT.add(r)
    xfer = "" if call_ms is None else f"{max(0.0, 1 - device_ms / call_ms):6.0%}"
    call = "" if call_ms is None else f"{call_ms:10.2f}"
    print(f"| {section:8} | 2^{size:<3}| {device_ms:10.3f} | {call:>10} | {xfer:>6} | {floor_ms:9.3f} | "
          f"{device_ms / floor_ms:6.2f} | {extra.get('note', '')}", flush=True)


def bench_field(gpu, args, rng):
    """Montgomery products per second, chains in registers (DESIGN.md's naive bars: Fr 38 G/s, Fq 17 G/s)."""
    n, iters = gpu.info.multiprocessors * 2048 * 4, 256
    for name, words, module, kernel in (("fr_mul", 4, "ntt", "fr_mul_chain"),
                                        ("fr_mul", 4, "ntt.redc_generic", "fr_mul_chain"),
                                        ("fr_mul", 4, "ntt.lohi", "fr_mul_chain"),
                                        ("fq_mul", 6, "msm_g1", "g1_fq_mul_chain"),
                                        ("fq_mul", 6, "msm_g1.lohi", "g1_fq_mul_chain"),
                                        ("fq_mul", 6, "msm_g1.fq_inline", "g1_fq_mul_chain"),
                                        ("fq_sqr", 6, "msm_g1", "g1_fq_sqr_chain"),
                                        ("fq_sqr", 6, "msm_g1.sqr_mul", "g1_fq_sqr_chain"),
                                        ("fq_sqr", 6, "msm_g1.fq_inline", "g1_fq_sqr_chain")):
        x = rng.integers(0, 1 << 62, size=(n, words), dtype=np.uint64)
        bx, by = gpu.memory.upload(x), gpu.memory.upload(x[::-1].copy())
        k = gpu.device.kernel(module, kernel)
        kargs = [bx, n, iters] if "sqr" in kernel else [bx, by, n, iters]
        ms = device_time(gpu, lambda k=k, kargs=kargs: k.launch((n // 256,), (256,), kargs, gpu.device.stream), 5)
        gpu.memory.free(bx, by)
        rate = n * iters / ms / 1e6
        row(name, 0, ms, None, n * iters * (FR_MUL if words == 4 else FQ_MUL) / IMAD_PER_S * 1e3,
            note=f"{rate:.1f} G products/s ({module})")


def bench_transfers(gpu, args, rng):
    """Host <-> device GB/s through the pinned staging, with and without copy
    threads, and up straight from page-locked pages (the streamed SRS's path)."""
    data = rng.integers(0, 255, size=1 << 30, dtype=np.uint8)
    pool = gpu.memory.staging._pool
    for label, use in (("threads", pool), ("1 thread", None)):
        gpu.memory.staging._pool = use
        buf = gpu.memory.upload(data)
        up = host_time(lambda: gpu.memory.free(gpu.memory.upload(data)), 3)
        down = host_time(lambda buf=buf: gpu.memory.download_array(buf, (len(data),), np.uint8), 3)
        gpu.memory.free(buf)
        row("xfer", 30, up, None, len(data) / 4.2e12 * 2e3, note=f"{label}: up {len(data) / up / 1e6:.1f} GB/s, "
            f"down {len(data) / down / 1e6:.1f} GB/s")
    gpu.memory.staging._pool = pool
    # straight from page-locked pages, one DMA a copy (what a streamed chunk's upload is): a pinned
    # arena, and the array itself registered in place
    dst = gpu.memory.alloc(len(data))
    arena = gpu.memory.pinned.acquire(len(data))
    arena.view[:] = data
    for label, src in (("from a pinned arena", arena.view), ("registered in place", data)):
        if src is data and not gpu.memory.pins.pin(data):
            continue

        def up_once(src=src):
            dst.upload(src, 0, gpu.device.stream)
            gpu.device.stream.synchronize()
        up = host_time(up_once, 5)
        row("xfer", 30, up, None, len(data) / 4.2e12 * 2e3, note=f"{label}: up {len(data) / up / 1e6:.1f} GB/s")
    gpu.memory.pins.unpin(data)
    gpu.memory.pinned.release(arena)
    gpu.memory.free(dst)


def bench_ntt(gpu, args, rng):
    for log_n in range(args.min_log, min(args.max_log, 27) + 1, args.ntt_step):
        n = 1 << log_n
        xs = random_fr(n, rng)
        src, dst = gpu.memory.upload(xs.limbs), gpu.memory.alloc(32 * n)
        dev = device_time(gpu, lambda src=src, dst=dst, log_n=log_n:
                          gpu.ntt_ops.forward(src, dst, log_n, FR_GENERATOR, None), args.reps)
        call = host_time(lambda xs=xs: gpu.ntt(xs, False, False, 1), max(1, args.reps // 2)) if log_n <= 26 else None
        gpu.memory.free(src, dst)
        note = ""
        if args.check and log_n <= 22:
            note = "= cpu" if pp.ntt(xs, backend="gpu") == pp.ntt(xs, backend="cpu") else "MISMATCH"
        row("ntt", log_n, dev, call, ntt_floor_ms(log_n), note=note)


def bench_ntt_tune(gpu, args, rng):
    """The NTT pass's build and shape side by side: module x elements a block x threads a block
    (a GpuNtt of each NttTuning)."""
    for log_n in sorted({min(args.max_log, 24), min(args.max_log, 27)}):
        xs = random_fr(1 << log_n, rng)
        src, dst = gpu.memory.upload(xs.limbs), gpu.memory.alloc(32 << log_n)
        for module in args.ntt_modules.split(","):
            for block_log in (int(b) for b in args.block_logs.split(",")):
                for threads in (int(t) for t in args.thread_counts.split(",")):
                    ops = GpuNtt(gpu.device, NttTuning(module, block_log, threads))
                    try:
                        dev = device_time(gpu, lambda ops=ops, src=src, dst=dst, log_n=log_n:
                                          ops.forward(src, dst, log_n, FR_GENERATOR, None), args.reps)
                    finally:
                        ops.close()
                    row("ntt", log_n, dev, None, ntt_floor_ms(log_n),
                        note=f"{module} block 2^{block_log} x {threads} threads")
        gpu.memory.free(src, dst)


def bench_h(gpu, args, rng):
    for log_n in sorted({min(args.max_log, 24), min(args.max_log, 27), min(args.max_log, 20)}):
        n = 1 << log_n
        for flavor in ("bellman", "snarkjs"):
            host = [random_fr(n, rng) for _ in range(3)]
            bufs = [gpu.memory.upload(x.limbs) for x in host]

            def run(bufs=bufs, log_n=log_n, flavor=flavor):
                gpu.ntt_ops.h_device(*bufs, log_n, flavor)
            dev = device_time(gpu, run, max(1, args.reps // 2))
            call = host_time(lambda host=host, flavor=flavor: gpu.h_poly(*(x.copy() for x in host), 1, flavor), 1) \
                if log_n <= 25 else None
            gpu.memory.free(*bufs)
            shape = "6 NTTs + product, finish" if flavor == "bellman" else "6 NTTs + combine"
            row(f"h_{flavor[:4]}", log_n, dev, call, 7 * ntt_floor_ms(log_n), note=f"{shape} (floor: 7 NTTs)")


def tuned_msm(gpu, args, **choices) -> GpuMsm:
    """A GpuMsm of the benchmark's own on gpu: --msm-variant's build, and
    these of the plan's choices fixed (MsmTuning's fields)."""
    return GpuMsm(gpu.device, dataclasses.replace(MsmTuning(variant=args.msm_variant), **choices))


def msm_device_time(ops, pts, buf, reps: int) -> tuple[float, str]:
    """Median device ms of ops' MSM of pts by the scalars in buf, and one more run's phases (ms)."""
    dev = device_time(ops.gpu, lambda: ops.msm_device(pts, buf), reps)
    ops.profile = {}
    ops.msm_device(pts, buf)
    phases = " ".join(f"{k}={v:.1f}" for k, v in ops.profile.items())
    ops.profile = None
    return dev, phases


def bench_msm(gpu, ops, args, rng, cls, group):
    """ops' MSM (a GpuMsm of gpu): device-resident, and the whole call (uploads included)."""
    top = min(args.max_log, 26 if group == 1 else 24)
    for log_n in range(max(args.min_log, 16), top + 1, args.step):
        n = 1 << log_n
        pts = random_points(cls, n, log_n)
        sc = random_fr(n, rng)
        buf = gpu.memory.upload(sc.limbs)
        dev, phases = msm_device_time(ops, pts, buf, args.reps if log_n < 24 else 3)
        call = host_time(lambda pts=pts, sc=sc: ops.msm(pts, sc), 2 if log_n < 24 else 1)
        note = phases
        if args.check and log_n <= 18:
            note += " = cpu" if ops.msm(pts, sc)[0] == pp.msm(pts, sc, backend="cpu") else " MISMATCH"
        gpu.memory.free(buf)
        gpu.release_resident()
        row(f"msm_g{group}", log_n, dev, call, msm_floor_ms(log_n, group), note=note)


def bench_msm_tables(gpu, args, rng, cls, group):
    """The MSM with window tables (GpuMsm.tables) beside the same points without:
    each window width of --table-bits with each bound of --table-copies, and
    the table's one-time making (host clock, on first use)."""
    top = min(args.max_log, 27 if group == 1 else 24)
    for log_n in range(max(args.min_log, 16), top + 1, args.step):
        n = (1 << log_n) - (log_n == 27)        # 2^27 - 1: the H query of a 2^27 domain
        pts = random_points(cls, n, log_n)
        buf = gpu.memory.upload(random_fr(n, rng).limbs)
        dev, phases = msm_device_time(tuned_msm(gpu, args), pts, buf, 3)
        row(f"msm_g{group}", log_n, dev, None, msm_floor_ms(log_n, group), note=phases)
        for copies in [int(k) if k else None for k in args.table_copies.split(",")]:
            for bits in [int(b) if b else None for b in args.table_bits.split(",")]:
                ops = tuned_msm(gpu, args, table_bits=bits)
                ops.tables, ops.table_copies = True, copies
                t = time.perf_counter()
                with gpu.memory.resident.holding(pts.limbs):
                    table = window_table(ops, pts)
                made_s = time.perf_counter() - t
                if table is None:
                    row(f"msm_g{group}", log_n, float("nan"), None, float("nan"),
                        note=f"table bits={bits} copies={copies}: no room")
                    continue
                dev, phases = msm_device_time(ops, pts, buf, 3)
                row(f"msm_g{group}", log_n, dev, None, msm_floor_ms(log_n, group),
                    note=f"table c={table.c} sets={table.sets} copies={table_copies(table.c, table.sets)} "
                         f"made in {made_s:.2f}s {phases}")
                gpu.release_points(pts)
        gpu.memory.free(buf)
        gpu.release_resident()


def bench_msm_sort(gpu, args, rng):
    """G1 at the largest size on random, repeated and small (0..3) scalars: the
    counting sort's grouped atomics keep repeated buckets from serialising."""
    log_n = min(args.max_log, 26)
    n = 1 << log_n
    pts = random_points(G1Array, n, log_n)
    kinds = {"random": random_fr(n, rng),
             "repeated": FrArray(np.tile(random_fr(1, rng).limbs, (n, 1))),
             "small": FrArray(np.take(FrArray.from_ints([0, 1, 2, 3]).limbs, rng.integers(0, 4, size=n), axis=0))}
    ops = tuned_msm(gpu, args)
    for kind, sc in kinds.items():
        buf = gpu.memory.upload(sc.limbs)
        dev, phases = msm_device_time(ops, pts, buf, 3)
        row("msm_g1", log_n, dev, None, msm_floor_ms(log_n, 1), note=f"{kind} {phases}")
        gpu.memory.free(buf)
    gpu.release_resident()


def bench_msm_fill(gpu, args, rng):
    """G1 on random scalars with a window's buckets filled in 1 to 16 parts
    (MsmTuning.fill_parts), without and with window tables (where a part spans
    every window's entries)."""
    for log_n in sorted({min(args.max_log, 24), min(args.max_log, 26)}):
        pts = random_points(G1Array, 1 << log_n, log_n)
        buf = gpu.memory.upload(random_fr(1 << log_n, rng).limbs)
        for tables in (False, True):
            for parts in (1, 2, 4, 8, 16):
                ops = tuned_msm(gpu, args, fill_parts=parts)
                ops.tables = tables
                dev, phases = msm_device_time(ops, pts, buf, args.reps)
                row("msm_g1", log_n, dev, None, msm_floor_ms(log_n, 1),
                    note=f"{'table' if tables else 'plain'} fill in {parts} parts {phases}")
        gpu.memory.free(buf)
        gpu.release_resident()


def porep_scalars(n: int, rng: np.random.Generator) -> FrArray:
    """A porep-shaped L query's make-up: 42 % zero, 35 % one, 18 % words
    below 2^11, 5 % full (Montgomery form, shuffled)."""
    kinds = rng.choice(4, size=n, p=[0.42, 0.35, 0.18, 0.05])
    small = np.where(kinds == 1, 1, np.where(kinds == 2, rng.integers(2, 1 << 11, size=n), 0))
    full = random_fr(n, rng)
    out = fr_small(small)
    out.limbs[kinds == 3] = full.limbs[kinds == 3]
    return out


def bench_msm_shape(gpu, args, rng):
    """G1 at 2^24 and 2^26: on random scalars the accumulating threads' longest
    chunk (MsmTuning.max_chunk) and the sort's atomics one a key (the default
    for distinct full scalars) against grouped by key a warp at a time; on
    porep-shaped ones (mostly bits and small words) the window width from
    their bit lengths against the width for full scalars of the same count,
    each with keys above window 0 for the wide scalars only and for every
    point."""
    for log_n in sorted({min(args.max_log, 24), min(args.max_log, 26)}):
        n = 1 << log_n
        pts = random_points(G1Array, n, log_n)
        random_sc = random_fr(n, rng)
        shapes = [("random", random_sc, dict(max_chunk=most)) for most in (64, 256)]
        shapes += [("random, atomics grouped", random_sc, dict(grouped=True))]
        narrow = porep_scalars(n, rng)
        shapes += [("porep auto width, wide keys listed", narrow, {}),
                   ("porep auto width, every key", narrow, dict(compact_share=0.0)),
                   ("porep full width, wide keys listed", narrow, dict(window_bits=window_bits(n)))]
        for kind, sc, choices in shapes:
            buf = gpu.memory.upload(sc.limbs)
            ops = tuned_msm(gpu, args, **choices)
            dev, phases = msm_device_time(ops, pts, buf, args.reps)
            most = choices.get("max_chunk", MAX_CHUNK)
            row("msm_g1", log_n, dev, None, msm_floor_ms(log_n, 1), note=f"{kind} chunk<={most} {phases}")
            gpu.memory.free(buf)
        gpu.release_resident()


def bench_msm_overlap(gpu, args, rng):
    """G1 (and G2 at 2^24) with the sort's fill of the next stretch of buckets
    beside the accumulation of the last (two streams), and all of it on one;
    plain and with window tables; the plain MSM's windows in 4 or 2
    stretches. Then the host clock of a work buffer's cuMemAlloc and cuMemFree
    at the sizes these MSMs take."""
    shapes = [("one stream", dict(overlap=False)), ("fill beside", dict(overlap=True)),
              ("fill beside, 2 window stretches", dict(overlap=True, groups=2))]
    cases = [(G1Array, 1, log_n) for log_n in (22, 24, 26) if args.min_log <= log_n <= args.max_log]
    cases += [(G2Array, 2, 24)] if args.min_log <= 24 <= args.max_log else []
    for cls, group, log_n in cases:
        pts = random_points(cls, 1 << log_n, log_n)
        buf = gpu.memory.upload(random_fr(1 << log_n, rng).limbs)
        for tables in (False, True) if group == 1 else (False,):
            for name, shape in shapes:
                ops = tuned_msm(gpu, args, **shape)
                ops.tables = tables
                dev, phases = msm_device_time(ops, pts, buf, args.reps)
                row(f"msm_g{group}", log_n, dev, None, msm_floor_ms(log_n, group),
                    note=f"{'table' if tables else 'plain'} {name} {phases}")
        gpu.memory.free(buf)
        gpu.release_resident()
    for nbytes in (256 << 20, 1 << 30, 3 << 30, 6 << 30):
        times = []
        for _ in range(5):
            gpu.device.synchronize()
            t = time.perf_counter()
            work = gpu.memory.alloc(nbytes)
            t1 = time.perf_counter()
            gpu.memory.free(work)
            times.append(((t1 - t) * 1e3, (time.perf_counter() - t1) * 1e3))
        alloc_ms, free_ms = (statistics.median(x) for x in zip(*times))
        print(f"alloc {nbytes >> 20} MiB: cuMemAlloc {alloc_ms:.3f} ms, cuMemFree {free_ms:.3f} ms", flush=True)


class TransferClock:
    """Host seconds spent in a device's uploads and downloads (each waits for
    its copies), while installed: the proofs' transfer share."""

    def __init__(self, gpu):
        self.gpu, self.seconds = gpu, 0.0
        self._orig = {name: getattr(gpu, name) for name in ("upload", "download_array")}

    def __enter__(self):
        for name, fn in self._orig.items():
            setattr(self.gpu, name, self._timed(fn))
        return self

    def __exit__(self, *exc):
        for name, fn in self._orig.items():
            setattr(self.gpu, name, fn)    # the device's own again

    def _timed(self, fn):
        def timed(*a, **kw):
            self.gpu.stream.synchronize()     # the kernels queued before it are not the copy's time
            t = time.perf_counter()
            try:
                out = fn(*a, **kw)
                self.gpu.stream.synchronize()
                return out
            finally:
                self.seconds += time.perf_counter() - t
        return timed


def bench_batch_affine(gpu, args, rng):
    """Additions a second: one round of affine pair sums (a thread's run of
    `per` pairs sharing one inversion, prefix products through memory)
    against XYZZ mixed additions summing runs of points (the accumulation's
    way), on the same points; the floor is 9 products an addition."""
    for log_n in range(max(args.min_log, 16), min(args.max_log, 26) + 1, args.step):
        n = 1 << log_n
        pts = gpu.memory.upload(random_points(G1Array, n, log_n).limbs)
        pairs = n // 2
        pref, out = gpu.memory.alloc(48 * pairs), gpu.memory.alloc(96 * pairs)   # affine pair sums: the larger output
        floor = lambda adds: adds * 9 * FQ_MUL / IMAD_PER_S * 1e3  # noqa: E731
        k = gpu.device.kernel("batch_affine", "g1_affine_pair_sums")
        for per in (16, 64, 256, 1024):
            grid = (-(-pairs // (per * 64)),)
            ms = device_time(gpu, lambda k=k, grid=grid, pts=pts, pairs=pairs, per=per, pref=pref, out=out:
                             k.launch(grid, (64,), [pts, pairs, per, pref, out], gpu.device.stream), args.reps)
            row("affine", log_n, ms, None, floor(pairs),
                note=f"pairs, {per} an inversion: {pairs / ms / 1e6:.2f} G additions/s, {ms * 1e6 / pairs:.3f} ns each")
        k = gpu.device.kernel("batch_affine", "g1_xyzz_run_sums")
        for per in (16, 64, 256):
            grid = (-(-n // (per * 64)),)
            adds = n - n // per
            ms = device_time(gpu, lambda k=k, grid=grid, pts=pts, n=n, per=per, out=out:
                             k.launch(grid, (64,), [pts, n, per, out], gpu.device.stream), args.reps)
            row("xyzz", log_n, ms, None, floor(adds),
                note=f"runs of {per}: {adds / ms / 1e6:.2f} G additions/s, {ms * 1e6 / adds:.3f} ns each")
        gpu.memory.free(pts, pref, out)


def bench_groth16(gpu, args, rng):
    from porep_prover.circuits import porep_like, square_chain
    from porep_prover.groth16 import insecure_setup, prove, verify
    for log_n in (16, 18, 20, 22, 24):
        if log_n > args.max_log_proof:
            break
        if log_n < args.min_log_proof:
            continue
        for name, make in (("porep", porep_like), ("chain", square_chain)):
            if log_n >= 24 and name == "chain":
                continue                                     # its CPU-side setup alone takes minutes
            r1cs, witness, public = make((1 << log_n) - 8)
            t = time.perf_counter()
            params = insecure_setup(r1cs, backend="cpu")
            setup_s = time.perf_counter() - t
            for matvec in args.matvec.split(","):
                timings: dict = {}

                def one(params=params, r1cs=r1cs, witness=witness, timings=timings, matvec=matvec):
                    timings.clear()                              # the phases of the last proof
                    prove(params, r1cs, witness, backend="gpu", timings=timings, matvec=matvec)
                ms = host_time(one, 2)                           # the warm-up uploads the parameters
                with TransferClock(gpu.device) as xfer:                 # one more, its transfers timed
                    t = time.perf_counter()
                    proof = prove(params, r1cs, witness, backend="gpu", matvec=matvec)
                    share = xfer.seconds / (time.perf_counter() - t)
                ok = verify(params.vk, public, proof)
                parts = " ".join(f"{k}={v * 1e3:.0f}" for k, v in timings.items())
                row(f"proof_{name}", log_n, ms, None, float("nan"),
                    note=f"verified={ok} matvec={matvec} setup={setup_s:.0f}s xfer={share:.0%} {parts}")
            gpu.release_resident()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", default="ntt,h,msm_g1,msm_g2,groth16")
    ap.add_argument("--min-log", type=int, default=16)
    ap.add_argument("--max-log", type=int, default=24)
    ap.add_argument("--min-log-proof", type=int, default=16)
    ap.add_argument("--max-log-proof", type=int, default=20)
    ap.add_argument("--step", type=int, default=2, help="log-size step of the MSM rows")
    ap.add_argument("--ntt-step", type=int, default=1)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--ntt-modules", default="ntt,ntt.align4",
                    help="ntt_tune: the pass kernel's builds compared, comma-separated")
    ap.add_argument("--block-logs", default="10,11,12", help="ntt_tune: log2 elements a block, comma-separated")
    ap.add_argument("--thread-counts", default="64,128,256", help="ntt_tune: threads a block, comma-separated")
    ap.add_argument("--variants", default=",align4,lohi,fq_inline,fq2_sqr_mul",
                    help="msm_variants: the builds compared, comma-separated ('' = the default build)")
    ap.add_argument("--table-bits", default="", help="msm_tables: the window bits compared, comma-separated "
                                                     "('' = table_plan's)")
    ap.add_argument("--table-copies", default="", help="msm_tables: the bounds on a table's copies compared, "
                                                       "comma-separated ('' = a copy for every window)")
    ap.add_argument("--matvec", default="host", help="groth16: where A w, B w, C w are evaluated: host, device "
                                                     "or both (host,device)")
    ap.add_argument("--msm-variant", default="", help="the MSM sections' build of the MSM kernels (a variant in "
                                                      "benchmarks/gpu_builds.py; groth16's proofs use the backend's)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json")
    args = ap.parse_args()
    gpu = get_backend("gpu")
    gpu_builds.add_builds()
    rng = np.random.default_rng(args.seed)
    info = gpu.info
    print(f"device: {info.name} ({info.arch}, {info.multiprocessors} SMs, {info.memory_bytes / 2**30:.0f} GiB)")
    REPORT.path = args.json
    REPORT.set(device=info.name)
    print("| what     | size | device ms  |   call ms  |  xfer  |  floor ms | ×floor | note")
    print("|---|---|---|---|---|---|---|---|")
    sections = args.sections.split(",")
    if "field" in sections:
        bench_field(gpu, args, rng)
    if "xfer" in sections:
        bench_transfers(gpu, args, rng)
    if "ntt" in sections:
        bench_ntt(gpu, args, rng)
    if "ntt_tune" in sections:
        bench_ntt_tune(gpu, args, rng)
    if "h" in sections:
        bench_h(gpu, args, rng)
    if "msm_g1" in sections:
        bench_msm(gpu, tuned_msm(gpu, args), args, rng, G1Array, 1)
    if "msm_g2" in sections:
        bench_msm(gpu, tuned_msm(gpu, args), args, rng, G2Array, 2)
    if "msm_variants" in sections:
        for cls, group in ((G1Array, 1), (G2Array, 2)):
            for variant in (v for v in args.variants.split(",")
                            if v == "" or f"msm_g{group}.{v}" in gpu_builds.BUILDS):
                print(f"(G{group} MSM variant {variant or 'default'})")
                bench_msm(gpu, GpuMsm(gpu.device, MsmTuning(variant=variant)), args, rng, cls, group)
    if "msm_sort" in sections:
        bench_msm_sort(gpu, args, rng)
    if "msm_fill" in sections:
        bench_msm_fill(gpu, args, rng)
    if "msm_shape" in sections:
        bench_msm_shape(gpu, args, rng)
    if "msm_overlap" in sections:
        bench_msm_overlap(gpu, args, rng)
    if "msm_tables" in sections:
        bench_msm_tables(gpu, args, rng, G1Array, 1)
    if "msm_tables_g2" in sections:
        bench_msm_tables(gpu, args, rng, G2Array, 2)
    if "batch_affine" in sections:
        bench_batch_affine(gpu, args, rng)
    if "groth16" in sections:
        bench_groth16(gpu, args, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
