# SPDX-License-Identifier: Apache-2.0
"""Build the Cython extensions over the native C core.

Environment:
  POREP_PROVER_PORTABLE=1   build without the x86-64 MULX/ADX assembly
  POREP_PROVER_BUILD_JOBS   parallel compile jobs (default: CPU count)
  POREP_PROVER_NO_GPU=1     skip the CUDA driver extension
  CUDA_HOME / CUDA_PATH     where cuda.h is (default /usr/local/cuda)
"""
import os
import platform

from Cython.Build import cythonize
from setuptools import Extension, setup

NATIVE = "src/porep_prover/native"


def cpu_flags() -> list[str]:
    """-mbmi2 -madx when this machine has both (the assembly needs them)."""
    if os.environ.get("POREP_PROVER_PORTABLE"):
        return ["-DPOREP_PORTABLE"]
    if platform.machine() not in ("x86_64", "AMD64"):
        return []
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []
    return ["-mbmi2", "-madx"] if {"bmi2", "adx"} <= set(flags) else []


def extension(name: str, pyx: str, *c_sources: str) -> Extension:
    return Extension(
        name,
        [pyx, *(f"{NATIVE}/{c}" for c in c_sources)],
        include_dirs=[NATIVE],
        extra_compile_args=["-O3", "-fopenmp", "-std=gnu11", "-Wno-unused-function", *cpu_flags()],
        extra_link_args=["-fopenmp"],
    )


def cuda_include() -> list[str] | None:
    """Include folders for cuda.h and cudaProfiler.h, which cimporting
    cuda.bindings.cydriver needs: NVIDIA's wheels (nvidia-cuda-runtime and
    nvidia-cuda-profiler-api, build requirements) or a toolkit's. None skips
    the GPU extension."""
    roots = []
    try:
        import nvidia  # namespace package of NVIDIA's wheels
        roots += [os.path.join(p, sub) for p in nvidia.__path__ for sub in ("cu13", "cuda_runtime")]
    except ImportError:
        pass
    roots += [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    dirs = [os.path.join(r, "include") for r in roots if r]
    found = []
    for header in ("cuda.h", "cudaProfiler.h"):
        where = next((d for d in dirs if os.path.exists(os.path.join(d, header))), None)
        if where is None:
            return None
        if where not in found:
            found.append(where)
    return found


def gpu_extensions() -> list[Extension]:
    """The driver-API layer, when cuda.h and cuda-bindings are both here.
    Without them the package builds CPU-only and backend "gpu" reports
    itself unavailable."""
    include = cuda_include()
    try:
        import cuda.bindings  # noqa: F401  (its .pxd files)
    except ImportError:
        return []
    if include is None or os.environ.get("POREP_PROVER_NO_GPU"):
        return []
    # C++: newer cuda-bindings declare the driver API with C++ headers (type_traits)
    return [Extension("porep_prover.cuda._driver", ["src/porep_prover/cuda/_driver.pyx"], include_dirs=include,
                      language="c++", extra_compile_args=["-O2", "-std=c++17", "-Wno-unused-function"])]


EXTENSIONS = [
    extension("porep_prover.field._field", "src/porep_prover/field/_field.pyx", "encoding.c"),
    extension("porep_prover.curve._curve", "src/porep_prover/curve/_curve.pyx", "encoding.c"),
    extension("porep_prover.msm._cpu", "src/porep_prover/msm/_cpu.pyx", "msm.c"),
    extension("porep_prover.ntt._cpu", "src/porep_prover/ntt/_cpu.pyx", "ntt.c", "ntt_f52.c"),
    extension("porep_prover.r1cs._r1cs", "src/porep_prover/r1cs/_r1cs.pyx", "r1cs.c", "qap.c", "ntt.c", "ntt_f52.c"),
]

MODULES = cythonize(
    EXTENSIONS + gpu_extensions(),
    language_level=3,
    compiler_directives={"embedsignature": True},
    nthreads=int(os.environ.get("POREP_PROVER_BUILD_JOBS", os.cpu_count() or 1)),
)
for module in MODULES:  # a driver layer that fails to compile leaves a working CPU-only package
    module.optional = module.name == "porep_prover.cuda._driver"

setup(
    ext_modules=MODULES,
    options={"build_ext": {"parallel": int(os.environ.get("POREP_PROVER_BUILD_JOBS", os.cpu_count() or 1))}},
)
