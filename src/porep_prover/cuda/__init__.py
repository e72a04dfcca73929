# SPDX-License-Identifier: Apache-2.0
"""CUDA device plumbing: devices, NVRTC compilation (compiler), the kernel
cache (cache), the kernel modules' table and build (modules), the
driver-API objects (_driver), and one device as the kernels' host code uses
it (device: context, streams, launches, memory; resident: resident arrays;
pinned, staging: page-locked uploads; arrays: device arrays the parts hand
each other). It launches what it is given and does no arithmetic of its
own: the kernels' host code (msm/gpu*.py, ntt/gpu.py, r1cs/gpu.py) sits
above it. Importing
this package needs no CUDA; every function that does need it raises
BackendUnavailableError (no bindings / NVRTC) or CudaError (no driver, no
device) with the reason."""
from __future__ import annotations

import ctypes
import dataclasses
import sys
from typing import TYPE_CHECKING, Protocol

from ..errors import BackendUnavailableError, CudaError

if TYPE_CHECKING:
    from . import _driver


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    ordinal: int
    name: str
    uuid: str
    compute_capability: tuple[int, int]
    memory_bytes: int
    multiprocessors: int

    @property
    def arch(self) -> str:
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"


class Driver(Protocol):
    """The driver layer (the module _driver) as driver() hands it out: its
    classes and functions (cuda/_driver.pyi)."""

    Context: type[_driver.Context]
    Module: type[_driver.Module]
    Kernel: type[_driver.Kernel]
    Event: type[_driver.Event]
    Stream: type[_driver.Stream]
    DeviceBuffer: type[_driver.DeviceBuffer]
    PinnedBuffer: type[_driver.PinnedBuffer]
    HostRegistration: type[_driver.HostRegistration]

    def init(self) -> None: ...

    def device_count(self) -> int: ...

    def device_info(self, ordinal: int) -> tuple[str, str, tuple[int, int], int, int]: ...


def driver() -> Driver:
    """The compiled driver-API module, or BackendUnavailableError."""
    try:
        from . import _driver
    except ImportError as exc:
        raise BackendUnavailableError(f"the CUDA driver layer is not built in this install ({exc})") from None
    return _driver


def devices() -> list[DeviceInfo]:
    """Every CUDA device, or CudaError / BackendUnavailableError."""
    drv = driver()
    return [DeviceInfo(i, *drv.device_info(i)) for i in range(drv.device_count())]


_AVAILABLE: bool | None = None


def available() -> bool:
    """True when at least one CUDA device can be used here (probed once per process)."""
    global _AVAILABLE
    if _AVAILABLE is None:
        try:
            _AVAILABLE = driver_library_loads() and bool(devices())
        except (BackendUnavailableError, CudaError):
            _AVAILABLE = False
    return _AVAILABLE


def driver_library_loads() -> bool:
    """Whether the NVIDIA driver's library opens here. The bindings find it by
    the same system search; without it no device can be used, and asking
    first (a few ms) spares "auto" on a machine without a GPU the bindings'
    import (85-285 ms on a 2-core host), which a command pays at every start."""
    name = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True
