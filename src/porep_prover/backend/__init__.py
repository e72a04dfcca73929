# SPDX-License-Identifier: Apache-2.0
"""Compute backends and the public kernel functions that dispatch to them.

backend="cpu" runs the native CPU kernels; "gpu" the CUDA ones (a
BackendUnavailableError where there is no usable device); "auto" picks the GPU
when one is usable, else the CPU. Anything else is an UnknownBackendError.
There is no silent fallback: a backend asked for by name either runs or raises.
"""
from __future__ import annotations

from ..errors import BackendUnavailableError, UnknownBackendError
from .base import Backend
from .cpu import CpuBackend

BACKENDS = ("cpu", "gpu", "auto")
_CPU = CpuBackend()


def gpu_available() -> bool:
    """True when a CUDA device and the GPU backend are usable here."""
    return False


def get_backend(name: str = "auto") -> Backend:
    """The backend object for a name in BACKENDS."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise UnknownBackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "gpu" or (name == "auto" and gpu_available()):
        if not gpu_available():
            raise BackendUnavailableError("backend 'gpu' asked for, but no usable CUDA device or GPU backend here")
    return _CPU


__all__ = ["BACKENDS", "Backend", "CpuBackend", "get_backend", "gpu_available"]
