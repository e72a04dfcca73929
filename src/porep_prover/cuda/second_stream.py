# SPDX-License-Identifier: Apache-2.0
"""A device seen from its second stream: what the MSMs that do not depend on
H run on while H's transforms run on the kernel region's stream (the
prover's overlap mode: the side lane of backend.gpu.GpuRegion).

The kernels' host code (msm/gpu/msm.py, r1cs/gpu.py) reads its stream, launches,
work buffers, uploads, downloads and frees from the device object it was
made with; handed this view instead, all of them keep to the second stream
and never wait for the first: a wait there (Device.free and the staging
buffers synchronize the kernel region's stream) would hold the host until
H's transforms end, and nothing would run beside them.

Why each step is safe without waiting for the first stream:
- work buffers come from the device's pool in the second stream's order and
  go back in it (cuMemFreeAsync): work queued on this stream before the free
  still sees them, and the pool hands their memory to another stream only
  once the free has run there (its reuse follows the streams' order);
  the sort's fill on the third stream is joined into this one (an event) before
  the accumulation that follows it, so before any free; any other buffer
  (a copy prepare made ahead, one the pool could not give, every one on a
  device without pools) is freed only once the streams are joined (later;
  cuMemFree waits for the whole device, H's transforms included), or at
  once where the pool has run out;
- uploads are queued on this stream (or are the copies prepare made ahead,
  already on the device), so the kernels after them on it see them;
- a point array not yet resident is uploaded the device's way (on the first
  stream, behind H's transforms) and the first stream is waited for once:
  correct, slow, and only on first use (the engine makes its parameters
  resident ahead); a streamed array's chunks arrive on the chunk ring's own
  copy stream, which this one waits for chunk by chunk; a window table is used only where one was made before (it
  is made in the first stream's order), else the MSM runs without it.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, overload

import numpy as np

from ..errors import DeviceMemoryError

if TYPE_CHECKING:
    import threading

    import numpy.typing as npt

    from . import DeviceInfo, Driver, _driver
    from .device import Device
    from .device_memory import Item
    from .resident import Points

THREADS = 256


class SecondStream:
    """device (a cuda.device.Device) seen from its second stream (aux_stream)
    as the stream, with a third (Device.side_fill_stream) beside it for the
    MSM's sort: a KernelHost (cuda.kernel_host) of its own. What it takes
    as the device's own (the device, its driver and context, the lock, the
    kernels, the resident store's bounds) is named below one by one; the
    rest keeps to the second stream."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.stream = device.aux_stream
        self.aux_stream = device.side_fill_stream()
        self._ours: set[int] = set()     # addresses of the pool buffers made here (freed in this stream's order)
        self.later: list[_driver.DeviceBuffer] = []   # the other buffers given back here: freed by free_later

    # ------------------------------------------------------------ the device's own

    @property
    def info(self) -> DeviceInfo:
        return self.device.info

    @property
    def drv(self) -> Driver:
        return self.device.drv

    @property
    def ctx(self) -> _driver.Context:
        return self.device.ctx

    @property
    def lock(self) -> threading.RLock:
        return self.device.lock

    @property
    def resident_budget(self) -> int:
        return self.device.resident_budget

    @property
    def pass_points(self) -> int:
        return self.device.pass_points

    def kernel(self, module: str, name: str) -> _driver.Kernel:
        return self.device.kernel(module, name)

    def try_alloc(self, nbytes: int) -> _driver.DeviceBuffer | None:
        return self.device.try_alloc(nbytes)

    def holding(self, *arrays: npt.NDArray[np.generic] | None) -> AbstractContextManager[None]:
        return self.device.holding(*arrays)

    def in_one_pass(self, points: Points) -> bool:
        return self.device.in_one_pass(points)

    # ------------------------------------------------------------ the second stream's

    def launch(self, module: str, name: str, n: int, args: Sequence[_driver.DeviceBuffer | int], block: int = THREADS,
               stream: _driver.Stream | None = None) -> None:
        self.device.launch(module, name, n, args, block, stream or self.stream)

    def synchronize(self) -> None:
        self.stream.synchronize()
        self.aux_stream.synchronize()

    def work_alloc(self, nbytes: int) -> _driver.DeviceBuffer:
        """A buffer from the pool in this stream's order (as Device.alloc where there is no pool or it cannot grow)."""
        if self.device.memory.pooled:
            try:
                buf = self.device.drv.DeviceBuffer(self.device.ctx, nbytes, self.stream)
                self._ours.add(buf.ptr)
                return buf
            except DeviceMemoryError:
                self.free_later()        # memory is short: what waits for the join goes now
        return self.device.alloc(nbytes)

    alloc = work_alloc      # what the gathers here return (DeviceScalars) goes back in this stream's order too

    def free(self, *bufs: _driver.DeviceBuffer | None) -> None:
        """Pool buffers made here back in this stream's order, without waiting;
        any other buffer kept for free_later."""
        for buf in bufs:
            if buf is None:
                continue
            if buf.ptr in self._ours:
                self._ours.discard(buf.ptr)
                buf.close()
            else:
                self.later.append(buf)

    def free_later(self) -> None:
        """The buffers free kept, freed the device's way (Device.free: once every stream is done)."""
        later, self.later = self.later, []
        if later:
            self.device.free(*later)

    def upload(self, data: npt.NDArray[np.generic]) -> _driver.DeviceBuffer:
        """A new device buffer holding data: the copy prepare made ahead, or one queued on this stream."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        ahead = self.device.memory.take_ahead(raw)
        if ahead is not None:
            return ahead
        buf = self.work_alloc(len(raw))
        buf.upload(raw, 0, self.stream)      # pageable memory is staged by the driver before the call returns
        return buf

    @overload
    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...], dtype: type[Item],
                       stream: _driver.Stream | None = None) -> npt.NDArray[Item]: ...

    @overload
    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...], *,
                       stream: _driver.Stream | None = None) -> npt.NDArray[np.uint64]: ...

    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...],
                       dtype: type[np.generic] = np.uint64, stream: _driver.Stream | None = None
                       ) -> npt.NDArray[np.generic]:
        """The first prod(shape) items of buf once this stream's work is done."""
        return self.device.download_array(buf, shape, dtype, stream or self.stream)

    def resident_array(self, limbs: npt.NDArray[np.generic]) -> _driver.DeviceBuffer:
        made = self.device.memory.resident.is_resident(limbs)
        buf = self.device.resident_array(limbs)
        if not made:
            self.device.stream.synchronize()     # uploaded on the first stream: wait for it once
        return buf

    def resident(self, points: Points) -> _driver.DeviceBuffer:
        return self.resident_array(points.limbs)

    def resident_derived(self, limbs: npt.NDArray[np.generic], tag: Hashable, nbytes: int,
                         make: Callable[[_driver.DeviceBuffer], object]) -> _driver.DeviceBuffer | None:
        """Only a derived buffer made before (a window table is made in the first stream's order)."""
        return self.device.memory.resident.derived(limbs, tag)

    def point_chunks(self, points: Points) -> Iterator[tuple[int, int, _driver.DeviceBuffer | int]]:
        """Device.point_chunks on this stream, the resident copy made here
        (see resident_array); a streamed array's chunks come through the
        chunk ring, this stream waiting for each (no host wait)."""
        if not self.device.memory.resident.is_streamed(points):
            self.resident(points)
        return self.device.point_chunks(points, self.stream)
