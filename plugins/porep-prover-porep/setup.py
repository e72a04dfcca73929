# SPDX-License-Identifier: Apache-2.0
"""Build the plugin's native kernels (Cython over C, -O3 -fopenmp).

The Fr arithmetic is the core's (porep_prover/native/field.h): the headers are
taken from POREP_PROVER_INCLUDE, else from the installed porep_prover, else from
the repository this plugin sits in (a build in an isolated environment, where
porep_prover is not importable).
"""
import os
import pathlib
import platform

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = pathlib.Path(__file__).resolve().parent
NATIVE = "src/porep_prover_porep/native"


def core_include() -> str:
    given = os.environ.get("POREP_PROVER_INCLUDE")
    candidates = [pathlib.Path(given)] if given else []
    try:
        from porep_prover.native import INCLUDE_DIR
        candidates.append(pathlib.Path(INCLUDE_DIR))
    except ImportError:
        pass
    candidates.append(HERE.parent.parent / "src" / "porep_prover" / "native")
    for folder in candidates:
        if (folder / "field.h").is_file():
            return str(folder)
    raise RuntimeError("porep_prover's native headers (field.h) not found: set POREP_PROVER_INCLUDE")


def cpu_flags() -> list[str]:
    """This machine's instruction set (field.h's MULX/ADX assembly where it has both),
    or the portable C with POREP_PROVER_PORTABLE=1, as the core builds."""
    if os.environ.get("POREP_PROVER_PORTABLE"):
        return ["-DPOREP_PORTABLE"]
    return ["-march=native"] if platform.machine() in ("x86_64", "AMD64") else []


def extension(name: str, sources: list[str]) -> Extension:
    return Extension(name, sources, include_dirs=[NATIVE, core_include()],
                     extra_compile_args=["-O3", "-fopenmp", "-std=gnu11", "-Wno-unused-function", *cpu_flags()],
                     extra_link_args=["-fopenmp", "-lm"])


EXTENSIONS = [
    extension("porep_prover_porep._native",
              ["src/porep_prover_porep/_native.pyx",
               *(f"{NATIVE}/{c}" for c in ("sha256.c", "graph.c", "labels.c", "poseidon.c"))]),
    extension("porep_prover_porep.circuit._witness",
              ["src/porep_prover_porep/circuit/_witness.pyx", f"{NATIVE}/witness.c"]),
]

setup(ext_modules=cythonize(EXTENSIONS, language_level=3, compiler_directives={"embedsignature": True}))
