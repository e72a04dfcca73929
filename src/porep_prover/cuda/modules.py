# SPDX-License-Identifier: Apache-2.0
"""The GPU backend's kernel modules: each logical module's CUDA source and
defines, the benchmarks' extra builds, and the build of them all (what
`porep-prover gpu warm` and the NVRTC lane of the tests compile)."""
from __future__ import annotations

import pathlib

from .._version import __version__
from ..cuda.cache import KernelCache
from ..cuda.compiler import compile_cubin
from ..errors import InvalidInputError

PKG = pathlib.Path(__file__).resolve().parents[1]
INCLUDE = [PKG / "cuda" / "include", PKG / "native"]
MODULES = {  # logical name -> (source, defines)
    "ntt": (PKG / "ntt" / "kernels" / "ntt.cu", ()),
    # the Fq product as a call: 1.6x faster MSMs on an H200 than inlined (fewer registers, smaller code)
    "msm_g1": (PKG / "msm" / "kernels" / "msm.cu", ("FQ_MUL_CALL",)),
    "msm_g2": (PKG / "msm" / "kernels" / "msm.cu", ("MSM_G2", "FQ_MUL_CALL")),
    "r1cs": (PKG / "groth16" / "kernels" / "r1cs.cu", ()),
    "fixed_base_g1": (PKG / "msm" / "kernels" / "fixed_base.cu", ("FQ_MUL_CALL",)),
    "fixed_base_g2": (PKG / "msm" / "kernels" / "fixed_base.cu", ("MSM_G2", "FQ_MUL_CALL")),
}
# Modules beyond MODULES that a benchmark compiles for its comparisons (benchmarks/gpu_builds.py): these
# sources built another way, or kernels of its own, by logical name -> (source, defines), compiled with
# INCLUDE as MODULES are. Empty until a benchmark adds to it (add_variant); production launches MODULES.
VARIANTS: dict[str, tuple[pathlib.Path, tuple[str, ...]]] = {}


def add_variant(name: str, source, defines=()) -> None:
    """Let kernel(name, ...) compile source (a .cu path) with defines: a
    benchmark's build. Adding a name again with the same source and defines
    does nothing; a name of MODULES, or one added with another source or
    defines, or a source that is not a file raises InvalidInputError."""
    build = (pathlib.Path(source).resolve(), tuple(defines))
    if name in MODULES or VARIANTS.get(name, build) != build:
        raise InvalidInputError(f"GPU module {name!r} is already built from {(MODULES | VARIANTS)[name][0]}")
    if not build[0].is_file():
        raise InvalidInputError(f"GPU module {name!r}: no source file {build[0]}")
    VARIANTS[name] = build


def build_modules(arch: str, cache: KernelCache, progress=None) -> dict[str, bytes]:
    """Every kernel module compiled for arch (through the cache): what
    `porep-prover gpu warm` runs, and what CI checks for sm_80 and sm_90.
    progress, when given, is called as progress(module, modules done, modules)
    after each module."""
    out = {}
    for name, (src, defines) in MODULES.items():
        out[name] = compile_cubin(src, INCLUDE, arch, defines, cache, __version__)
        if progress:
            progress(name, len(out), len(MODULES))
    return out
