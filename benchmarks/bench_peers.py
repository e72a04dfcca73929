#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""porep_prover's GPU MSMs and NTT beside sppark's (the CUDA MSM and NTT inside
supraseal-c2), on one device, in one process, on the same inputs.

Usage:
    benchmarks/peers/build.sh        # once: sppark and blst into benchmarks/peers/build/
    python benchmarks/bench_peers.py [--sections check,msm_g1,msm_g2,ntt] [--check-logs 0,1,6,12]
                                     [--g1-logs 20-26] [--g2-logs 20-26] [--ntt-logs 20-27] [--reps 5]
                                     [--call-reps 2] [--lib PATH] [--json out.json]

check, before any timing: at the sizes 2^--check-logs, G2 then G1, every MSM
below against the CPU backend (n = 1 needs no point addition, 2 is the first
sum, 64 and 4096 put several points in a bucket), and for G2 sppark's own
mult_pippenger_fp2_inf beside them with the byte sizes of its device point
as host and device code compile them (sppark_peers.cu, affine_fp2_h: sppark's
differ, so its own G2 entry is wrong from n = 2 and is not timed). Only a
mismatch of ours or of a timed sppark entry fails the check.

Columns, medians of the reps after a warm-up, in ms:
  MSM   ours call: the backend's msm, points resident, the scalars uploaded by the
        call (host clock); ours device: the same with the scalars on the device
        (CUDA events); sppark resident: sppark's msm_t over points uploaded once,
        the scalars uploaded by the call (host clock), as supraseal-c2 runs it;
        sppark call: mult_pippenger_inf (G1) / peers_mult_pippenger_fp2 (G2:
        mult_pippenger_fp2_inf's body over a G2 point layout that sppark's
        host and device code agree on, see sppark_peers.cu), points and scalars
        uploaded at every call (host clock). ratio: sppark resident / ours call.
  NTT   forward, natural order in and out. ours device / sppark device: on device
        memory (CUDA events); ours call / sppark call (compute_ntt): host in,
        host out (host clock). ratio: sppark device / ours device.
A ratio above 1 means ours is faster. Every size's results are checked equal
(the MSMs' sums as affine points, the transforms' values); a mismatch is
printed in the row and makes the exit status 1. --json rewrites its file after
every row, so a run cut short keeps the rows it measured. Needs a CUDA device.
"""
from __future__ import annotations

import argparse
import ctypes
import pathlib
import statistics
import sys
import time

import numpy as np

# the kernel modules registered before bench_gpu's import of gpu_builds, which reads them
import porep_prover.backend.kernels  # noqa: F401
from bench_gpu import device_time, host_time, random_fr, random_points
from porep_prover import G1Array, G2Array
from porep_prover.backend import get_backend
from porep_prover.bench import ReportFile
from porep_prover.field.constants import FQ_MONT, FR_GENERATOR, P

HERE = pathlib.Path(__file__).resolve().parent
LIBRARY = HERE / "peers" / "build" / "libsppark_peers.so"
NN, FORWARD, STANDARD = 0, 0, 0            # NTT::InputOutputOrder::NN, Direction::forward, Type::standard
REPORT = ReportFile(None)     # --json's file, rewritten whole as each row is measured (main names it)


class RustError(ctypes.Structure):
    """sppark's RustError::by_value: a CUDA error code (0: success) and a message or NULL."""
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char_p)]


def load(path: pathlib.Path) -> ctypes.CDLL:
    """The peers' library (benchmarks/peers/build.sh), its entry points typed."""
    if not path.is_file():
        sys.exit(f"bench_peers: no {path}; build it first with benchmarks/peers/build.sh")
    lib = ctypes.CDLL(str(path))
    ptr, size = ctypes.c_void_p, ctypes.c_size_t
    for name, args, res in (
        ("peers_affine_bytes", [ctypes.c_int], size),
        ("peers_jacobian_bytes", [ctypes.c_int], size),
        ("peers_points_new", [ctypes.c_int, ptr, size], ptr),
        ("peers_points_free", [ctypes.c_int, ptr], None),
        ("peers_msm", [ctypes.c_int, ptr, ptr, ptr, size, ctypes.c_bool], RustError),
        ("peers_ntt_timed", [ptr, ctypes.c_uint32, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                             ctypes.POINTER(ctypes.c_float)], RustError),
        ("mult_pippenger_inf", [ptr, ptr, size, ptr, size], RustError),
        ("peers_mult_pippenger_fp2", [ptr, ptr, size, ptr, size], RustError),
        ("mult_pippenger_fp2_inf", [ptr, ptr, size, ptr, size], RustError),
        ("peers_g2_point_bytes", [ctypes.POINTER(ctypes.c_size_t)], RustError),
        ("compute_ntt", [size, ptr, ctypes.c_uint32, ctypes.c_int, ctypes.c_int, ctypes.c_int], RustError),
    ):
        if not hasattr(lib, name):
            sys.exit(f"bench_peers: {path} has no {name}; rebuild it with benchmarks/peers/build.sh")
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    return lib


def checked(err: RustError, what: str) -> None:
    if err.code:
        message = err.message.decode(errors="replace") if err.message else ""
        raise RuntimeError(f"sppark {what}: CUDA error {err.code} {message}")


def address(a: np.ndarray) -> int:
    return a.ctypes.data


def sppark_points(points, affine_bytes: int) -> np.ndarray:
    """points in sppark's host layout (affine_inf_t): the coordinates as ours
    hold them (Montgomery form, the same limbs), then the infinity flag."""
    n, width = points.limbs.shape
    if affine_bytes != 8 * (width + 1):
        sys.exit(f"bench_peers: sppark's affine point is {affine_bytes} bytes, not {8 * (width + 1)}")
    out = np.zeros((n, width + 1), dtype=np.uint64)
    out[:, :width] = points.limbs
    out[:, width] = ~points.limbs.any(axis=1)
    return out


def fq2_mul(a, b):
    return ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)


def fq2_inv(a):
    norm = pow((a[0] * a[0] + a[1] * a[1]) % P, -1, P)
    return (a[0] * norm % P, -a[1] * norm % P)


def from_jacobian(raw: np.ndarray, cls):
    """sppark's jacobian_t result (X, Y, Z; Montgomery) as our affine point."""
    inv = pow(FQ_MONT, -1, P)
    vals = [int.from_bytes(raw[6 * i:6 * i + 6].tobytes(), "little") * inv % P for i in range(6 * cls.GROUP // 2)]
    if cls.GROUP == 1:
        x, y, z = vals
        if z == 0:
            return cls.POINT.identity()
        zi = pow(z, -1, P)
        return cls.POINT(cls.from_affine_ints([(x * zi * zi % P, y * zi * zi * zi % P)]).limbs)
    x, y, z = (vals[0], vals[1]), (vals[2], vals[3]), (vals[4], vals[5])
    if z == (0, 0):
        return cls.POINT.identity()
    zi = fq2_inv(z)
    zi2 = fq2_mul(zi, zi)
    return cls.POINT(cls.from_affine_ints([(fq2_mul(x, zi2), fq2_mul(y, fq2_mul(zi2, zi)))]).limbs)


def row(what: str, log_n: int, columns: dict, ratio: float, check: str, **extra) -> None:
    """One printed row (the columns' ms in their order) and its JSON record, saved at once (the larger
    sizes take minutes each, and a run stopped there keeps what it measured)."""
    REPORT.add({"what": what, "log_n": log_n, **{f"{k}_ms": v for k, v in columns.items()}, "ratio": ratio,
                "check": check, **extra})
    cells = " | ".join(f"{v:10.2f}" for v in columns.values())
    print(f"| {what:6} | 2^{log_n:<3}| {cells} | {ratio:6.2f} | {check} |", flush=True)


def check_msm(gpu, cpu, lib, rng, cls, logs) -> bool:
    """The section check (see the usage above): one line and one JSON record per size, saved at once."""
    group = cls.GROUP
    affine_bytes, jacobian_bytes = lib.peers_affine_bytes(group), lib.peers_jacobian_bytes(group)
    if group == 2:      # the cause sppark_peers.cu names, as the device compiled it
        sizes = (ctypes.c_size_t * 4)()
        checked(lib.peers_g2_point_bytes(sizes), "peers_g2_point_bytes")
        print(f"G2 point in device memory, bytes as host / device code compile it: sppark's affine_fp2_t::mem_t "
              f"{sizes[0]} / {sizes[2]}, affine_fp2_h {sizes[1]} / {sizes[3]}", flush=True)
        REPORT.add({"what": "g2_point_bytes", "sppark_host": sizes[0], "sppark_device": sizes[2],
                    "peers_host": sizes[1], "peers_device": sizes[3]})
    entries = [("sppark call", lib.mult_pippenger_inf if group == 1 else lib.peers_mult_pippenger_fp2)]
    if group == 2:
        entries.append(("sppark own", lib.mult_pippenger_fp2_inf))       # reported, not judged: see above
    ok = True
    for log_n in logs:
        n = 1 << log_n
        points, scalars = random_points(cls, n, n), random_fr(n, rng)
        reference = cpu.msm(points, scalars, None)[0]
        sums = {"ours": gpu.msm(points, scalars, 1)[0]}
        gpu.release_resident()
        peer_points = sppark_points(points, affine_bytes)
        canonical = np.frombuffer(scalars.to_bytes(), dtype=np.uint64)
        out = np.zeros(jacobian_bytes // 8, dtype=np.uint64)
        handle = lib.peers_points_new(group, address(peer_points), n)
        if not handle:
            raise RuntimeError(f"sppark msm_t of {n} G{group} points: no device memory")
        try:
            checked(lib.peers_msm(group, handle, address(out), address(canonical), n, False), "msm_t")
            sums["sppark resident"] = from_jacobian(out, cls)
        finally:
            lib.peers_points_free(group, handle)
        for name, entry in entries:
            out[:] = 0
            checked(entry(address(out), address(peer_points), n, address(canonical), affine_bytes), name)
            sums[name] = from_jacobian(out, cls)
        checks = {name: "equal" if value == reference else "MISMATCH" for name, value in sums.items()}
        ok &= all(checks[name] == "equal" for name in ("ours", "sppark resident", "sppark call"))
        print(f"check msm_g{group} n = {n}: " + ", ".join(f"{k} {v}" for k, v in checks.items()), flush=True)
        REPORT.add({"what": f"check_g{group}", "n": n, **{k.replace(" ", "_"): v for k, v in checks.items()}})
    return ok


def bench_msm(gpu, lib, args, rng, cls, logs) -> bool:
    group = cls.GROUP
    affine_bytes, jacobian_bytes = lib.peers_affine_bytes(group), lib.peers_jacobian_bytes(group)
    c_api = lib.mult_pippenger_inf if group == 1 else lib.peers_mult_pippenger_fp2
    ok = True
    print(f"| msm_g{group} | size | ours call | ours device | sppark resident | sppark call | ratio | check |")
    print("|---|---|---|---|---|---|---|---|")
    for log_n in logs:
        n = 1 << log_n
        points, scalars = random_points(cls, n, log_n), random_fr(n, rng)
        ours = gpu.msm(points, scalars, 1)[0]                      # uploads the points: resident from here
        call = host_time(lambda points=points, scalars=scalars: gpu.msm(points, scalars, 1), args.reps)
        buf = gpu.memory.upload(scalars.limbs)
        device = device_time(gpu, lambda points=points, buf=buf: gpu.msm_ops.msm_device(points, buf), args.reps)
        gpu.memory.free(buf)
        gpu.release_resident()                                     # the device's memory to sppark's copy
        if gpu.memory.pooled:                                             # and what the work buffers' pool keeps
            gpu.device.synchronize()
            gpu.device.ctx.trim_pool()
        peer_points = sppark_points(points, affine_bytes)
        canonical = np.frombuffer(scalars.to_bytes(), dtype=np.uint64)   # sppark's scalars: not Montgomery
        out = np.zeros(jacobian_bytes // 8, dtype=np.uint64)
        start = time.perf_counter()
        handle = lib.peers_points_new(group, address(peer_points), n)
        upload = (time.perf_counter() - start) * 1e3
        if not handle:
            raise RuntimeError(f"sppark msm_t of {n} G{group} points: no device memory")
        try:
            checked(lib.peers_msm(group, handle, address(out), address(canonical), n, False), "msm_t")
            resident_sum = from_jacobian(out, cls)
            resident = host_time(lambda handle=handle, out=out, canonical=canonical, n=n:
                                 checked(lib.peers_msm(group, handle, address(out), address(canonical), n, False),
                                         "msm_t"), args.reps)
        finally:
            lib.peers_points_free(group, handle)
        checked(c_api(address(out), address(peer_points), n, address(canonical), affine_bytes), "mult_pippenger")
        call_sum = from_jacobian(out, cls)
        whole = host_time(lambda out=out, peer_points=peer_points, n=n, canonical=canonical:
                          checked(c_api(address(out), address(peer_points), n, address(canonical), affine_bytes),
                                  "mult_pippenger"), args.call_reps)
        # which of sppark's two sums differs from ours, so that a mismatch points at msm_t or at the C entry
        wrong = [name for name, value in (("resident", resident_sum), ("call", call_sum)) if ours != value]
        ok &= not wrong
        row(f"msm_g{group}", log_n, {"ours_call": call, "ours_device": device, "sppark_resident": resident,
                                     "sppark_call": whole}, resident / call,
            f"MISMATCH ({', '.join(wrong)})" if wrong else "equal", sppark_upload_ms=upload)
    return ok


def bench_ntt(gpu, lib, args, rng, logs) -> bool:
    ok = True
    print("| ntt    | size | ours call | ours device | sppark device | sppark call | ratio | check |")
    print("|---|---|---|---|---|---|---|---|")
    for log_n in logs:
        n = 1 << log_n
        xs = random_fr(n, rng)
        src, dst = gpu.memory.upload(xs.limbs), gpu.memory.alloc(32 * n)
        device = device_time(gpu, lambda src=src, dst=dst, log_n=log_n:
                             gpu.ntt_ops.forward(src, dst, log_n, FR_GENERATOR, None), args.reps)
        gpu.memory.free(src, dst)
        ours = gpu.ntt(xs, False, False, 1)
        call = host_time(lambda xs=xs: gpu.ntt(xs, False, False, 1), args.call_reps)
        peer = xs.limbs.copy()                                     # sppark's fr_t: Montgomery, as ours
        ms = (ctypes.c_float * args.reps)()
        checked(lib.peers_ntt_timed(address(peer), log_n, NN, FORWARD, STANDARD, args.reps, ms), "NTT")
        peer_device = statistics.median(ms)
        same = np.array_equal(peer, ours.limbs)
        work = xs.limbs.copy()
        whole = host_time(lambda work=work, log_n=log_n:
                          checked(lib.compute_ntt(0, address(work), log_n, NN, FORWARD, STANDARD), "compute_ntt"),
                          args.call_reps)
        ok &= same
        row("ntt", log_n, {"ours_call": call, "ours_device": device, "sppark_device": peer_device,
                           "sppark_call": whole}, peer_device / device, "equal" if same else "MISMATCH")
    return ok


def logs(spec: str) -> list[int]:
    """'20-26' or '20,22,24' as log sizes."""
    if "-" in spec:
        lo, hi = spec.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(v) for v in spec.split(",") if v]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", default="check,msm_g1,msm_g2,ntt")
    ap.add_argument("--check-logs", type=logs, default="0,1,6,12")
    ap.add_argument("--g1-logs", type=logs, default="20-26")
    ap.add_argument("--g2-logs", type=logs, default="20-26")
    ap.add_argument("--ntt-logs", type=logs, default="20-27")
    ap.add_argument("--reps", type=int, default=5, help="timed runs of the resident and device columns")
    ap.add_argument("--call-reps", type=int, default=2, help="timed runs of the call columns")
    ap.add_argument("--lib", type=pathlib.Path, default=LIBRARY)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", type=pathlib.Path)
    args = ap.parse_args()
    lib = load(args.lib)
    gpu = get_backend("gpu")
    rng = np.random.default_rng(args.seed)
    info = gpu.info
    print(f"device: {info.name} ({info.arch}, {info.multiprocessors} SMs, {info.memory_bytes / 2**30:.0f} GiB)")
    REPORT.path = args.json
    REPORT.set(device=info.name)                                   # the file exists, rowless, from the start
    sections, ok = args.sections.split(","), True
    if "check" in sections:
        cpu = get_backend("cpu")
        ok &= check_msm(gpu, cpu, lib, rng, G2Array, args.check_logs)
        ok &= check_msm(gpu, cpu, lib, rng, G1Array, args.check_logs)
    if "msm_g1" in sections:
        ok &= bench_msm(gpu, lib, args, rng, G1Array, args.g1_logs)
    if "msm_g2" in sections:
        ok &= bench_msm(gpu, lib, args, rng, G2Array, args.g2_logs)
    if "ntt" in sections:
        ok &= bench_ntt(gpu, lib, args, rng, args.ntt_logs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
