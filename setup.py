# SPDX-License-Identifier: Apache-2.0
"""Build the Cython extensions over the native C core.

Environment:
  POREP_PROVER_PORTABLE=1   build without the x86-64 MULX/ADX assembly
  POREP_PROVER_BUILD_JOBS   parallel compile jobs (default: CPU count)
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


EXTENSIONS = [
    extension("porep_prover.field._field", "src/porep_prover/field/_field.pyx", "encoding.c"),
    extension("porep_prover.curve._curve", "src/porep_prover/curve/_curve.pyx", "encoding.c"),
    extension("porep_prover.msm._cpu", "src/porep_prover/msm/_cpu.pyx", "msm.c"),
    extension("porep_prover.ntt._cpu", "src/porep_prover/ntt/_cpu.pyx", "ntt.c", "ntt_f52.c"),
    extension("porep_prover.groth16._r1cs", "src/porep_prover/groth16/_r1cs.pyx", "r1cs.c", "ntt.c", "ntt_f52.c"),
]

setup(
    ext_modules=cythonize(
        EXTENSIONS,
        language_level=3,
        compiler_directives={"embedsignature": True},
        nthreads=int(os.environ.get("POREP_PROVER_BUILD_JOBS", os.cpu_count() or 1)),
    ),
    options={"build_ext": {"parallel": int(os.environ.get("POREP_PROVER_BUILD_JOBS", os.cpu_count() or 1))}},
)
