# SPDX-License-Identifier: Apache-2.0
"""Process-wide settings. The only module that reads the environment.

POREP_PROVER_THREADS   CPU threads for native kernels (default: all cores)
"""
from __future__ import annotations

import os

from .errors import InvalidInputError


def default_threads() -> int:
    """Threads a native kernel uses when the caller passes threads=None."""
    value = os.environ.get("POREP_PROVER_THREADS")
    if value:
        try:
            n = int(value)
        except ValueError:
            raise InvalidInputError(f"POREP_PROVER_THREADS={value!r} is not an integer") from None
        if n < 1:
            raise InvalidInputError(f"POREP_PROVER_THREADS={value!r} must be at least 1")
        return n
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def resolve_threads(threads: int | None) -> int:
    """threads, validated, or the default when None."""
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InvalidInputError(f"threads must be a positive integer or None, got {threads!r}")
    return threads
