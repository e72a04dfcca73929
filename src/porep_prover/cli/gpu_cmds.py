# SPDX-License-Identifier: Apache-2.0
"""`porep-prover gpu info`, `gpu warm` and `gpu plan` (cli.plan_cmds: the
memory plan, host and device) (each importing the CUDA support it uses when
it runs)."""
from __future__ import annotations

import time

from ..config import kernel_cache_dir
from ..errors import BackendUnavailableError, CudaError
from ..memory.sizes import GIB
from . import arguments, plan_cmds


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
              f"{d.memory_bytes / GIB:.1f} GiB, uuid {d.uuid}")
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


def register(sub, common) -> None:
    p = sub.add_parser("gpu", help="CUDA devices and the kernel cache").add_subparsers(dest="action", required=True)
    i = p.add_parser("info", help="devices, NVRTC and the kernel cache (exit 1 without a device)")
    i.set_defaults(func=cmd_info)
    w = p.add_parser("warm", help="compile every GPU kernel into the on-disk cache")
    w.add_argument("--arch", action="append", type=arguments.arch,
                   help="target, e.g. sm_90 (repeatable; default: the local devices')")
    arguments.progress_option(w)
    w.set_defaults(func=cmd_warm)
    pl = p.add_parser("plan", help="the memory plan of a workload, host and device (no GPU needed; as `plan`)")
    plan_cmds.add_arguments(pl)
