# SPDX-License-Identifier: Apache-2.0
"""What the kernels' host code (msm/gpu, ntt/gpu.py, r1cs/gpu.py) asks of
the device it is given, role by role, so that each caller names only the
roles it uses:

    Launches        its streams, kernels and launches (a Device, or the
                    device seen from its second stream)
    Buffers         device buffers: allocated, freed, uploaded, downloaded
                    (a DeviceMemory, or the second stream's buffers)
    ResidentArrays  arrays kept on the device between calls, or streamed
                    (a ResidentStore, or it seen from the second stream)
    BufferHost      Launches with its memory's Buffers (the NTT, fixed-base
                    products)
    KernelHost      Launches with its memory's Buffers and ResidentArrays
                    (the MSMs, A w, B w, C w)

cuda.device.Device is a KernelHost: its memory (cuda.device_memory) is the
Buffers, its resident store (cuda.resident) the ResidentArrays; so is
cuda.second_stream.SecondStream, the device seen from its second stream.
Point arrays are seen only as their limbs (cuda.resident.Points): cuda/
names no curve. The driver layer's classes the host code names
(DeviceBuffer, Stream, Event, Kernel) are named here too, for type
checking only: the layer itself loads only where CUDA is (cuda.driver).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import threading

    from . import DeviceInfo, Driver, _driver
    from .resident import Points

    Context = _driver.Context
    DeviceBuffer = _driver.DeviceBuffer
    Event = _driver.Event
    Kernel = _driver.Kernel
    Stream = _driver.Stream

Item = TypeVar("Item", bound=np.generic)


class Launches(Protocol):
    """Where kernels launch: info (multiprocessors size the grids); drv, ctx:
    the driver module and the context its objects (events) are made in;
    stream: every launch and copy goes on it unless one is given;
    aux_stream: the one beside it (the MSM's sort fills there); lock: held
    while the kernels' tables are made."""

    @property
    def info(self) -> DeviceInfo: ...

    @property
    def drv(self) -> Driver: ...

    @property
    def ctx(self) -> Context: ...

    @property
    def stream(self) -> Stream: ...

    @property
    def aux_stream(self) -> Stream: ...

    @property
    def lock(self) -> threading.RLock: ...

    def kernel(self, module: str, name: str) -> Kernel:
        """The kernel called name in module (cuda.modules), compiled on first use."""

    def launch(self, module: str, name: str, n: int, args: Sequence[DeviceBuffer | int], block: int = ...,
               stream: Stream | None = ...) -> None:
        """A grid-stride launch over n items (args: buffers, addresses and integers)."""


class Frees(Protocol):
    """What takes device buffers back (cuda.arrays.DeviceScalars' owner)."""

    def free(self, *bufs: DeviceBuffer | None) -> None:
        """The buffers given back (None: no buffer)."""


class Buffers(Frees, Protocol):
    """Device buffers for the launches' stream."""

    def alloc(self, nbytes: int) -> DeviceBuffer:
        """Device memory (resident arrays dropped to make room); DeviceMemoryError when none is left."""

    def try_alloc(self, nbytes: int) -> DeviceBuffer | None:
        """Device memory, or None where there is none to spare (nothing dropped for it)."""

    def work_alloc(self, nbytes: int) -> DeviceBuffer:
        """A work buffer of the stream's operation (cuda.arrays.WorkBuffers)."""

    def upload(self, data: NDArray[np.generic]) -> DeviceBuffer:
        """A new device buffer holding data (a contiguous copy of it)."""

    @overload
    def download_array(self, buf: DeviceBuffer, shape: tuple[int, ...], dtype: type[Item]) -> NDArray[Item]:
        """The first prod(shape) items of buf once the stream's work is done (uint64 when no dtype is given)."""

    @overload
    def download_array(self, buf: DeviceBuffer, shape: tuple[int, ...]) -> NDArray[np.uint64]: ...


class ResidentArrays(Protocol):
    """Arrays kept on the device between calls (cuda.resident): budget, the
    bytes they may take; pass_points, the most points an MSM pass sorts (0:
    no limit)."""

    @property
    def budget(self) -> int: ...

    @property
    def pass_points(self) -> int: ...

    def holding(self, *arrays: NDArray[np.generic] | None) -> AbstractContextManager[None]:
        """While inside, the resident copies of arrays stay (None: no array)."""

    def resident(self, points: Points) -> DeviceBuffer:
        """The resident copy of points' limbs."""

    def resident_array(self, limbs: NDArray[np.generic]) -> DeviceBuffer:
        """The resident copy of an array, uploaded on first use."""

    def resident_derived(self, limbs: NDArray[np.generic], tag: Hashable, nbytes: int,
                         make: Callable[[DeviceBuffer], object]) -> DeviceBuffer | None:
        """A buffer of nbytes made from a resident array by make, kept beside it
        under tag; None where it does not fit."""

    def in_one_pass(self, points: Points) -> bool:
        """Whether an MSM over points runs as one pass over their resident copy."""

    def point_chunks(self, points: Points) -> Iterator[tuple[int, int, DeviceBuffer | int]]:
        """(start, stop, the rows' buffer or address) covering points in MSM passes."""


class KernelMemory(Buffers, Protocol):
    """Buffers, and the arrays resident beside them."""

    @property
    def resident(self) -> ResidentArrays: ...


class BufferHost(Launches, Protocol):
    """Launches, and the buffers they read and write."""

    @property
    def memory(self) -> Buffers: ...


class KernelHost(Launches, Protocol):
    """Launches, their buffers, and the arrays resident beside them."""

    @property
    def memory(self) -> KernelMemory: ...
