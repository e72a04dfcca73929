# SPDX-License-Identifier: Apache-2.0
"""Device arrays the GPU backend's parts hand each other: scalars left on the
device (H's, the witness's copy and its slices, a query's gathered scalars)
and an operation's work buffers from the device's pool."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..errors import InvalidInputError

if TYPE_CHECKING:
    from typing import Self

    from . import _driver


class FreesBuffers(Protocol):
    """A device's memory (cuda.device_memory.DeviceMemory, or the second stream's buffers) that takes buffers
    back."""

    def free(self, *bufs: _driver.DeviceBuffer | None) -> None: ...


class WorkDevice(FreesBuffers, Protocol):
    """A device's memory that hands out an operation's work buffers (DeviceMemory.work_alloc) and takes them back."""

    def work_alloc(self, nbytes: int) -> _driver.DeviceBuffer: ...


class WorkBuffers:
    """The device work buffers of one operation on the backend's stream (its
    pool's, DeviceMemory.work_alloc), given back together when it ends (or one
    early)."""

    def __init__(self, gpu: WorkDevice) -> None:
        self.gpu = gpu
        self.bufs: list[_driver.DeviceBuffer] = []

    def alloc(self, nbytes: int) -> _driver.DeviceBuffer:
        self.bufs.append(self.gpu.work_alloc(nbytes))
        return self.bufs[-1]

    def free(self, buf: _driver.DeviceBuffer) -> None:
        self.bufs.remove(buf)
        self.gpu.free(buf)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.gpu.free(*self.bufs)
        self.bufs = []


class DeviceScalars:
    """Scalars already on the device (Montgomery form, 32 bytes each):
    GpuMsm.msm takes them in place of an FrArray without a copy. The owner
    of the buffer frees it with close(); a slice (scalars[start:stop]) is a
    view that frees nothing and must not outlive its owner."""

    def __init__(self, gpu: FreesBuffers, buffer: _driver.DeviceBuffer | None, length: int, first: int = 0,
                 owned: bool = True) -> None:
        self.gpu, self.buffer, self.length = gpu, buffer, length
        self.first, self.owned = first, owned     # first: the buffer's row this array starts at

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, rows: slice) -> "DeviceScalars":
        if not isinstance(rows, slice) or rows.step not in (None, 1):
            raise InvalidInputError("DeviceScalars take contiguous slices only")
        start, stop, _ = rows.indices(self.length)
        return DeviceScalars(self.gpu, self.buffer, max(0, stop - start), self.first + start, owned=False)

    def address(self, row: int = 0) -> int:
        """The device address of row (for kernel arguments); refused once the
        buffer is freed (a kernel reading freed memory would end the context)."""
        if self.buffer is None or not self.buffer.ptr:
            raise InvalidInputError("these device scalars were closed")
        if not 0 <= row <= self.length:
            raise InvalidInputError(f"row {row} of {self.length} device scalars")
        return self.buffer.view(32 * (self.first + row))

    def close(self) -> None:
        if self.owned and self.buffer is not None:
            self.gpu.free(self.buffer)
        self.buffer = None
