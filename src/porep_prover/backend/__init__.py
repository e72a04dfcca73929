# SPDX-License-Identifier: Apache-2.0
"""Compute backends and the public kernel functions that dispatch to them.

backend="cpu" runs the native CPU kernels; "gpu" the CUDA ones (a
BackendUnavailableError where there is no usable device); "auto" picks the GPU
when one is usable, else the CPU. Anything else is an UnknownBackendError.
There is no silent fallback: a backend asked for by name either runs or raises.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .. import cuda
from ..config import gpu_environment
from ..errors import BackendUnavailableError, UnknownBackendError
from ..ntt.flavor import Flavor
from .base import Backend, Capabilities, MsmOptions, Prepared
from .cpu import CpuBackend

if TYPE_CHECKING:
    from .gpu import GpuBackend

BACKENDS = ("cpu", "gpu", "auto")
_CPU = CpuBackend()
_GPU: dict[int, GpuBackend] = {}       # ordinal -> its backend
_GPU_LOCK = threading.Lock()


def gpu_available() -> bool:
    """True when a CUDA device and the GPU backend are usable here."""
    return cuda.available()


def gpu_backend(ordinal: int = 0) -> GpuBackend:
    """The process's backend for GPU `ordinal`, made on first use with the
    environment's settings (config.gpu_environment); the reason as
    BackendUnavailableError / CudaError when there is none."""
    with _GPU_LOCK:
        if ordinal not in _GPU:
            found = cuda.devices()
            if not found:
                raise BackendUnavailableError("backend 'gpu' asked for, but no CUDA device is visible")
            if not 0 <= ordinal < len(found):
                raise BackendUnavailableError(f"no CUDA device {ordinal} (there are {len(found)})")
            from .gpu import GpuBackend
            _GPU[ordinal] = GpuBackend(ordinal, gpu_environment())
        return _GPU[ordinal]


def get_backend(name: str = "auto") -> Backend:
    """The backend object for a name in BACKENDS."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise UnknownBackendError(f"unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "gpu":
        try:
            return gpu_backend()
        except BackendUnavailableError:
            raise
        except Exception as exc:  # CudaError and the like: say that the GPU was asked for
            raise BackendUnavailableError(f"backend 'gpu' asked for, but it cannot start: {exc}") from exc
    if name == "auto" and gpu_available():
        return gpu_backend()
    return _CPU


__all__ = ["BACKENDS", "Backend", "Capabilities", "CpuBackend", "Flavor", "MsmOptions", "Prepared", "get_backend",
           "gpu_available", "gpu_backend"]
