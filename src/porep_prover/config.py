# SPDX-License-Identifier: Apache-2.0
"""Process-wide settings. The only module that reads the environment.

POREP_PROVER_THREADS   CPU threads for native kernels (default: all cores)
POREP_PROVER_SIMD      0 turns off the AVX-512 IFMA MSM path (default: on where the CPU has it)
POREP_PROVER_CACHE_DIR where compiled GPU kernels are kept
POREP_PROVER_GPU_RESIDENT_BYTES  cap on device memory for resident parameter points
POREP_PROVER_GPU_MSM_TABLES      1: window tables for GPU MSMs of resident points (default 0)
POREP_PROVER_GPU_MSM_TABLE_COPIES  at most this many shifted copies of the points in a table (default: a window's each)
"""
from __future__ import annotations

import os

from .errors import InvalidInputError


def default_threads() -> int:
    """Threads a native kernel uses when the caller passes threads=None."""
    n = _env_int("POREP_PROVER_THREADS", 1)
    if n is not None:
        return n
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def resolve_threads(threads: int | None) -> int:
    """threads, validated, or the default when None."""
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidInputError(f"threads must be a positive integer or None, got {threads!r}")
    return threads


def simd_wanted() -> bool:
    """Whether the AVX-512 IFMA kernels may be used (POREP_PROVER_SIMD, default yes)."""
    value = os.environ.get("POREP_PROVER_SIMD", "1").strip().lower()
    if value not in ("0", "1", "false", "true", "no", "yes", "off", "on"):
        raise InvalidInputError(f"POREP_PROVER_SIMD={value!r}: use 1 or 0")
    return value in ("1", "true", "yes", "on")


def kernel_cache_dir() -> str:
    """Where compiled GPU kernels are cached (POREP_PROVER_CACHE_DIR, default
    $XDG_CACHE_HOME/porep_prover/kernels or ~/.cache/porep_prover/kernels)."""
    value = os.environ.get("POREP_PROVER_CACHE_DIR")
    if value:
        return value
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "porep_prover", "kernels")


def gpu_resident_bytes() -> int | None:
    """Device bytes that resident parameter points may take (POREP_PROVER_GPU_RESIDENT_BYTES;
    default None: what the device has free, less a reserve for the kernels' work buffers)."""
    return _env_int("POREP_PROVER_GPU_RESIDENT_BYTES", 0)


def gpu_msm_tables() -> bool:
    """Window tables for the GPU MSMs of resident points (POREP_PROVER_GPU_MSM_TABLES=1;
    default off: the table of a point array takes 11 to 13 times its memory, a copy a window)."""
    return bool(_env_int("POREP_PROVER_GPU_MSM_TABLES", 0))


def gpu_msm_table_copies() -> int | None:
    """The most shifted copies of the points a window table holds
    (POREP_PROVER_GPU_MSM_TABLE_COPIES; None: one for every window but the
    first, one set of buckets). Fewer copies cost less memory: the windows
    then share several sets of buckets."""
    return _env_int("POREP_PROVER_GPU_MSM_TABLE_COPIES", 0)


def _env_int(name: str, minimum: int) -> int | None:
    """An integer environment variable (None when unset or empty), or InvalidInputError."""
    value = os.environ.get(name)
    if not value:
        return None
    try:
        n = int(value)
    except ValueError:
        raise InvalidInputError(f"{name}={value!r} is not an integer") from None
    if n < minimum:
        raise InvalidInputError(f"{name}={value!r} must be at least {minimum}")
    return n
