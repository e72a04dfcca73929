# SPDX-License-Identifier: Apache-2.0
"""Kernel compilation with NVRTC (cuda.bindings.nvrtc) to cubins for one
arch, through the on-disk cache. Needs no GPU: only the NVRTC library
(nvidia-cuda-nvrtc)."""
from __future__ import annotations

import pathlib
from types import ModuleType
from typing import Any, cast

from ..errors import BackendUnavailableError, NvrtcError
from .cache import KernelCache, cache_key

OPTIONS = ("--std=c++17", "-default-device", "--use_fast_math", "-lineinfo")


def _nvrtc() -> ModuleType:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise BackendUnavailableError(f"NVRTC is not available (pip install cuda-bindings nvidia-cuda-nvrtc): "
                                      f"{exc}") from None
    return cast(ModuleType, nvrtc)      # cuda.bindings has no types


def _check(nvrtc: ModuleType, result: object, what: str, prog: object = None) -> Any:
    """The values of an NVRTC call's (status, values...) tuple, or NvrtcError with the log."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        log = ""
        if prog is not None:
            _, size = nvrtc.nvrtcGetProgramLogSize(prog)
            buf = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, buf)
            log = buf.decode(errors="replace").rstrip("\x00 ")
        raise NvrtcError(f"{what} failed: {err}" + (f"\n{log}" if log else ""), log=log)
    return values[0] if len(values) == 1 else tuple(values)


def nvrtc_version() -> tuple[int, int]:
    nvrtc = _nvrtc()
    major, minor = _check(nvrtc, nvrtc.nvrtcVersion(), "nvrtcVersion")
    return int(major), int(minor)


def _headers(include_dirs: list[pathlib.Path]) -> dict[str, bytes]:
    """Every header a kernel could include, by relative name."""
    out: dict[str, bytes] = {}
    for d in include_dirs:
        for p in sorted(d.rglob("*")):
            if p.suffix in (".h", ".cuh") and p.is_file():
                out[str(p.relative_to(d))] = p.read_bytes()
    return out


def _compile(source: bytes, name: str, options: tuple[str, ...], include_dirs: list[pathlib.Path]) -> bytes:
    """One NVRTC run: the cubin, or NvrtcError with the compiler's log."""
    nvrtc = _nvrtc()
    prog = _check(nvrtc, nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], []), "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options] + [b"-I" + str(d).encode() for d in include_dirs]
        _check(nvrtc, nvrtc.nvrtcCompileProgram(prog, len(opts), opts), f"compiling {name}", prog)
        size: int = _check(nvrtc, nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        cubin = b" " * size
        _check(nvrtc, nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return cubin


def compile_cubin(source_path: pathlib.Path, include_dirs: list[pathlib.Path], arch: str,
                  defines: tuple[str, ...] = (), cache: KernelCache | None = None,
                  package_version: str = "") -> bytes:
    """The cubin for a .cu file, from the cache or freshly compiled.

    arch: "sm_90", "sm_80", ... Raises NvrtcError with the compiler log.
    """
    source = source_path.read_bytes()
    options = OPTIONS + tuple(f"-D{d}" for d in defines) + (f"--gpu-architecture={arch}",)
    key = None
    if cache is not None:
        key = cache_key(source=source, headers=_headers(include_dirs), options=options, arch=arch,
                        nvrtc_version=nvrtc_version(), package_version=package_version)
        hit = cache.get(key)
        if hit is not None:
            return hit
    cubin = _compile(source, source_path.name, options, include_dirs)
    if cache is not None and key is not None:     # key: made above wherever there is a cache
        cache.put(key, cubin)
    return cubin
