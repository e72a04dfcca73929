# SPDX-License-Identifier: Apache-2.0
"""The GPU builds the benchmarks compare beside the backend's own modules
(cuda.modules.MODULES): those sources built another way (VARIANTS) and
kernels of the benchmarks' own in benchmarks/kernels/ (OWN). add_builds()
hands them all to the backend's compiler and cache (cuda.modules.add_variant),
after which GpuBackend.kernel(name, ...) and MsmTuning(variant=...) find them.
Production never compiles them; the NVRTC lane (tests/cuda/test_gpu_build.py) does.

compile_all() compiles them and the backend's modules at once, one process
each, into the kernel cache the backends read: what the device lane's
session starts with, and what `python3 benchmarks/gpu_builds.py` runs on a
device host (a device run's warm step)."""
from __future__ import annotations

import argparse
import multiprocessing
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from porep_prover._version import __version__
from porep_prover.backend.kernels import kernel_modules
from porep_prover.cuda import modules as gpu
from porep_prover.cuda.cache import KernelCache
from porep_prover.cuda.compiler import compile_cubin

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels"


def built_as(module: str, add: tuple[str, ...] = (), drop: tuple[str, ...] = ()) -> tuple[pathlib.Path, tuple]:
    """The backend's module's (source, defines), with defines dropped and added."""
    source, defines = kernel_modules()[module]     # every owner's modules registered (backend.kernels)
    return source, tuple(d for d in defines if d not in drop) + add


VARIANTS = {  # the same kernels built another way
    # the Fq product inlined (the backend's calls it: FQ_MUL_CALL)
    "msm_g1.fq_inline": built_as("msm_g1", drop=("FQ_MUL_CALL",)),
    "msm_g2.fq_inline": built_as("msm_g2", drop=("FQ_MUL_CALL",)),
    # the products' earlier layout (separate chains for low and high halves)
    "ntt.lohi": built_as("ntt", add=("MONT_MUL_LOHI",)),
    "msm_g1.lohi": built_as("msm_g1", add=("MONT_MUL_LOHI",)),
    # field elements at their natural 4-byte alignment (4-byte loads and stores)
    "ntt.align4": built_as("ntt", add=("MONT_ALIGN4",)),
    "msm_g1.align4": built_as("msm_g1", add=("MONT_ALIGN4",)),
    # Fq squares as products (mont_sqr_wide's 222 multiply-adds against 288)
    "msm_g1.sqr_mul": built_as("msm_g1", add=("MONT_SQR_MUL",)),
    # Fr's reduction rows without the multiplications its low limbs (1, 2^32 - 1) make free
    "ntt.redc_generic": built_as("ntt", add=("FR_REDC_GENERIC",)),
    # G2's squares as Fq2 products (three Fq products instead of two)
    "msm_g2.fq2_sqr_mul": built_as("msm_g2", add=("FQ2_SQR_MUL",)),
    # Y3's two products each reduced (f_mul2 as two products and a sum)
    "msm_g1.mul2_off": built_as("msm_g1", add=("MONT_MUL2_OFF",)),
}
OWN = {  # kernels only the benchmarks launch
    # Fq products on the FP64 pipe, and on both pipes in different warps
    "fq_pipes": (KERNELS / "fq_pipes.cu", ("FQ_MUL_CALL",)),
    # affine additions sharing an inversion beside the accumulation's XYZZ ones
    "batch_affine": (KERNELS / "batch_affine.cu", ("FQ_MUL_CALL",)),
}
BUILDS = VARIANTS | OWN


def add_builds() -> None:
    """Every build here, added to the backend's modules (again: no change)."""
    for name, (source, defines) in BUILDS.items():
        gpu.add_variant(name, source, defines)


def compile_all(arch: str, cache_dir: str, processes: int | None = None) -> dict[str, float]:
    """Every module of the backend and every build here compiled for arch into
    the kernel cache at cache_dir, as GpuBackend.kernel would compile them
    (a later launch reads the cache), on `processes` processes at once
    (default: one a core; NVRTC holds the GIL, so threads would compile one
    at a time): {name: seconds until its cubin was cached}. NvrtcError as
    compile_cubin's."""
    builds = kernel_modules() | BUILDS
    start = time.perf_counter()
    # spawned: a process forked from one holding a CUDA context may not use it, nor NVRTC safely
    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(compile_cubin, source, gpu.INCLUDE, arch, tuple(defines),
                                     KernelCache(cache_dir), __version__)
                   for name, (source, defines) in builds.items()}
        done = {}
        for name, future in futures.items():
            future.result()
            done[name] = time.perf_counter() - start
    return done


def main() -> int:
    from porep_prover import cuda
    from porep_prover.config import gpu_environment
    ap = argparse.ArgumentParser(description="every GPU build compiled into the kernel cache, in parallel")
    ap.add_argument("--arch", action="append", help="sm_90, ... (default: the local devices')")
    ap.add_argument("--processes", type=int, default=None)
    args = ap.parse_args()
    archs = args.arch or sorted({d.arch for d in cuda.devices()})
    if not archs:
        print("gpu_builds: no CUDA device here: name the targets with --arch", file=sys.stderr)
        return 1
    for arch in archs:
        seconds = compile_all(arch, gpu_environment().kernel_cache_dir, args.processes)
        print(f"{arch}: {len(seconds)} builds cached in {max(seconds.values()):.1f} s "
              f"({', '.join(f'{k} {v:.1f}' for k, v in seconds.items())})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
