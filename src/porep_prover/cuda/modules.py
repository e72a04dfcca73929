# SPDX-License-Identifier: Apache-2.0
"""The GPU kernel modules: each logical module's CUDA source and defines,
registered by the package that owns the source (msm, ntt, r1cs: each
registers as it loads, register_module), the benchmarks' extra builds, and
the build of them all (what `porep-prover gpu warm` and the NVRTC lane of
the tests compile, once backend.kernels has loaded every owner). cuda/
names no algorithm's source itself: it compiles what it is given."""
from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Iterable
from typing import TypeAlias

from .._version import __version__
from ..cuda.cache import KernelCache
from ..cuda.compiler import compile_cubin
from ..errors import InvalidInputError

PKG = pathlib.Path(__file__).resolve().parents[1]
INCLUDE = [PKG / "cuda" / "include", PKG / "native"]
Build: TypeAlias = tuple[pathlib.Path, tuple[str, ...]]    # a module's source and defines
MODULES: dict[str, Build] = {}   # logical name -> (source, defines), as registered


def register_module(name: str, source: str | os.PathLike[str], defines: Iterable[str] = ()) -> None:
    """Let kernel(name, ...) compile source (a .cu path) with defines: what
    a package owning kernels calls as it loads. Registering a name again
    with the same source and defines does nothing; with another, or a name
    of a benchmark's variant, or a source that is not a file, InvalidInputError."""
    _enter(MODULES, VARIANTS, name, source, defines)


# Modules beyond MODULES that a benchmark compiles for its comparisons (benchmarks/gpu_builds.py): these
# sources built another way, or kernels of its own, by logical name -> (source, defines), compiled with
# INCLUDE as MODULES are. Empty until a benchmark adds to it (add_variant); production launches MODULES.
VARIANTS: dict[str, Build] = {}


def add_variant(name: str, source: str | os.PathLike[str], defines: Iterable[str] = ()) -> None:
    """Let kernel(name, ...) compile source (a .cu path) with defines: a
    benchmark's build. Adding a name again with the same source and defines
    does nothing; a name of MODULES, or one added with another source or
    defines, or a source that is not a file raises InvalidInputError."""
    _enter(VARIANTS, MODULES, name, source, defines)


def _enter(table: dict[str, Build], other: dict[str, Build], name: str, source: str | os.PathLike[str],
           defines: Iterable[str]) -> None:
    """name -> (source, defines) into table, unless other has the name or table has it otherwise."""
    build = (pathlib.Path(source).resolve(), tuple(defines))
    if name in other or table.get(name, build) != build:
        raise InvalidInputError(f"GPU module {name!r} is already built from {(MODULES | VARIANTS)[name][0]}")
    if not build[0].is_file():
        raise InvalidInputError(f"GPU module {name!r}: no source file {build[0]}")
    table[name] = build


def build_modules(arch: str, cache: KernelCache, progress: Callable[[str, int, int], object] | None = None
                  ) -> dict[str, bytes]:
    """Every kernel module compiled for arch (through the cache): what
    `porep-prover gpu warm` runs, and what CI checks for sm_80 and sm_90.
    progress, when given, is called as progress(module, modules done, modules)
    after each module."""
    out: dict[str, bytes] = {}
    for name, (src, defines) in MODULES.items():
        out[name] = compile_cubin(src, INCLUDE, arch, defines, cache, __version__)
        if progress:
            progress(name, len(out), len(MODULES))
    return out
