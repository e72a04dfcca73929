# SPDX-License-Identifier: Apache-2.0
"""`porep-prover gpu info`, `gpu warm` and `gpu plan` (each importing the
CUDA support it uses when it runs)."""
from __future__ import annotations

import time
from typing import TypedDict

from ..config import kernel_cache_dir
from ..errors import BackendUnavailableError, CudaError
from . import arguments


def cmd_info(args) -> int:
    """Devices, the NVRTC version and the kernel cache; exit 1 when no device is usable."""
    from .. import cuda
    from ..cuda.compiler import nvrtc_version
    try:
        major, minor = nvrtc_version()
        print(f"nvrtc: {major}.{minor}")
    except BackendUnavailableError as exc:
        print(f"nvrtc: unavailable ({exc})")
    print(f"kernel cache: {kernel_cache_dir()}")
    try:
        found = cuda.devices()
    except (BackendUnavailableError, CudaError) as exc:
        print(f"devices: none ({exc})")
        return 1
    if not found:
        print("devices: none")
        return 1
    for d in found:
        print(f"device {d.ordinal}: {d.name}, {d.arch}, {d.multiprocessors} SMs, "
              f"{d.memory_bytes / 2**30:.1f} GiB, uuid {d.uuid}")
    return 0


def _kernels_bar(step, arch: str):
    """build_modules's progress(module, done, total) drawn as arch's one bar; None without progress."""
    return step and (lambda module, done, total: step(f"{arch} kernels", done, total))


def cmd_warm(args) -> int:
    """Compile every kernel module into the cache, for the local devices' archs or those given."""
    from .. import cuda
    from ..cuda.cache import KernelCache
    from ..backend import kernels    # noqa: F401 - the packages owning kernels register them as they load
    from ..cuda.modules import MODULES, build_modules
    from . import progress
    archs = args.arch or sorted({d.arch for d in cuda.devices()})
    if not archs:
        raise BackendUnavailableError("no CUDA device here: name the targets with --arch sm_90 ...")
    for arch in archs:
        t = time.perf_counter()
        with progress.display(args) as shown:
            step = shown.callback("modules")
            if step:
                step(f"{arch} kernels", 0, len(MODULES))     # the bar from the start: a module takes ~30 s
            modules = build_modules(arch, KernelCache(kernel_cache_dir()),
                                    _kernels_bar(step, arch))
        size = sum(len(m) for m in modules.values())
        print(f"{arch}: {len(modules)} modules, {size / 2**20:.1f} MiB, {time.perf_counter() - t:.1f} s "
              f"(cache {kernel_cache_dir()})")
    return 0


class CircuitStats(TypedDict):
    """A circuit by its statistics (backend.device_plan.Workload.estimated's arguments)."""
    constraints: int
    inputs: int
    aux: int
    a_density: float
    b_density: float
    nonzeros: tuple[float, float, float]


# A 32 GiB PoRep partition's statistics (bellperson's StackedCircuit; the porep-shaped circuit mimics them):
# constraints, inputs with the constant one, aux variables, A's and B's shares of the aux, nonzeros a row
POREP_32G: CircuitStats = {"constraints": 130_278_869, "inputs": 329, "aux": 130_169_893, "a_density": 0.997,
                           "b_density": 0.254, "nonzeros": (2.4, 1.0, 2.2)}


def cmd_plan(args) -> int:
    """The device-memory plan of a workload under a budget, without a GPU."""
    from ..backend.device_plan import GIB, UPLOAD_RATE, Workload, plan
    rate = UPLOAD_RATE if args.upload_gbps is None else args.upload_gbps * 1e9
    stats = POREP_32G.copy()
    stats["constraints"] = max(1, round(stats["constraints"] * args.scale))
    stats["aux"] = max(1, round(stats["aux"] * args.scale))
    workload = Workload.estimated(**stats, on_device=args.matvec == "device", workers=args.workers,
                                  table_copies=args.table_copies, g2=args.b_g2 == "device")
    chosen = plan(workload, int(args.device_memory_gib * GIB), rate=rate, pairs=args.pairs)
    print(f"workload: {args.workload} at scale {args.scale:g}: {stats['constraints']:,} constraints, "
          f"{stats['aux']:,} aux variables")
    for line in chosen.describe(rate):
        print(line)
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("gpu", help="CUDA devices and the kernel cache").add_subparsers(dest="action", required=True)
    i = p.add_parser("info", help="devices, NVRTC and the kernel cache (exit 1 without a device)")
    i.set_defaults(func=cmd_info)
    w = p.add_parser("warm", help="compile every GPU kernel into the on-disk cache")
    w.add_argument("--arch", action="append", type=arguments.arch,
                   help="target, e.g. sm_90 (repeatable; default: the local devices')")
    arguments.progress_option(w)
    w.set_defaults(func=cmd_warm)
    pl = p.add_parser("plan", help="what a device budget keeps resident and streams (no GPU needed)")
    pl.add_argument("-t", "--workload", choices=("porep-shaped", "porep-32g"), default="porep-shaped",
                    help="a 32 GiB PoRep partition's statistics (the porep-shaped circuit's)")
    pl.add_argument("--scale", type=arguments.fraction, default=1.0, help="the partition scaled (above 0, at most 1)")
    pl.add_argument("--device-memory-gib", type=arguments.number(1, 1 << 20), default=80.0,
                    help="the device budget in GiB (1 to 2^20; default 80)")
    pl.add_argument("--matvec", choices=("device", "host"), default="device",
                    help="where A w, B w, C w are evaluated (device: the matrices resident if they fit)")
    pl.add_argument("--b-g2", choices=("device", "host"), default="device",
                    help="where B's G2 MSM runs (prover.b_g2; host: its points are no part of the plan)")
    pl.add_argument("--workers", type=arguments.integer(1, 16), default=2, help="device workers (1 to 16)")
    pl.add_argument("--table-copies", type=arguments.integer(0, 64), default=0,
                    help="H window-table copies wanted (0 to 64)")
    pl.add_argument("--upload-gbps", type=arguments.number(0.1, 1000), default=None,
                    help="pinned upload rate for the plan and its transfer floor, GB/s (default: the model's, "
                         "an H100 host's measured rate)")
    pl.add_argument("--pairs", action="store_true",
                    help="also weigh two partitions a region sharing each streamed pass (on paper: the engine "
                         "runs one partition a region)")
    pl.set_defaults(func=cmd_plan)
