# SPDX-License-Identifier: Apache-2.0
"""A device seen from its second stream: what the MSMs that do not depend on
H run on while H's transforms run on the kernel region's stream (the
prover's overlap mode: the side lane of backend.gpu.GpuRegion).

The kernels' host code (msm/gpu/msm.py, r1cs/gpu.py) reads its stream and
launches from the device object it was made with (a KernelHost), its work
buffers, uploads, downloads and frees from that object's memory, and its
resident arrays from the memory's resident store; handed a SecondStream
instead (its streams; its memory, SideBuffers: the buffers it made in the
second stream's order and those it keeps for the join; their resident
arrays, SideResidents), all of them keep to the second stream and never
wait for the first: a wait there (DeviceMemory.free and the staging
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
  copy stream, which this one waits for chunk by chunk; a window table is
  used only where one was made before (it is made in the first stream's
  order), else the MSM runs without it.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import DeviceMemoryError

if TYPE_CHECKING:
    import numpy.typing as npt

    from . import _driver
    from .device import Device
    from .resident import Points

THREADS = 256


class SecondStream:
    """device (a cuda.device.Device) seen from its second stream (aux_stream)
    as the stream, with a third (Device.side_fill_stream) beside it for the
    MSM's sort: a KernelHost (cuda.kernel_host) of its own, whose memory is
    SideBuffers. It owns the two streams it launches on; what it takes as
    the device's own (its description, driver, context, lock and kernels)
    it holds as they are."""

    def __init__(self, device: Device) -> None:
        self.info, self.drv, self.ctx, self.lock = device.info, device.drv, device.ctx, device.lock
        self.kernel = device.kernel
        self.stream = device.aux_stream
        self.aux_stream = device.side_fill_stream()
        self.memory = SideBuffers(device, self.stream)
        self._launch = device.launch

    def launch(self, module: str, name: str, n: int, args: Sequence[_driver.DeviceBuffer | int], block: int = THREADS,
               stream: _driver.Stream | None = None) -> None:
        self._launch(module, name, n, args, block, stream or self.stream)

    def synchronize(self) -> None:
        self.stream.synchronize()
        self.aux_stream.synchronize()


class SideBuffers:
    """The buffers of a device's second stream (stream): those made from the
    pool in its order (freed in it, without a wait), and the others given
    back here, kept until the streams are joined (free_later); its uploads
    and downloads on it; the device's resident arrays as it reads them
    (resident: SideResidents)."""

    def __init__(self, device: Device, stream: _driver.Stream) -> None:
        self.device, self.stream = device, stream
        self.try_alloc = device.memory.try_alloc      # nothing evicted, nothing waited for: the device's own
        self.resident = SideResidents(device, stream)
        self._ours: set[int] = set()     # addresses of the pool buffers made here (freed in this stream's order)
        self.later: list[_driver.DeviceBuffer] = []   # the other buffers given back here: freed by free_later

    def work_alloc(self, nbytes: int) -> _driver.DeviceBuffer:
        """A buffer from the pool in this stream's order (as DeviceMemory.alloc where there is no pool or it
        cannot grow)."""
        memory = self.device.memory
        if memory.pooled:
            try:
                buf = memory.drv.DeviceBuffer(memory.ctx, nbytes, self.stream)
                self._ours.add(buf.ptr)
                return buf
            except DeviceMemoryError:
                self.free_later()        # memory is short: what waits for the join goes now
        return memory.alloc(nbytes)

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
        """The buffers free kept, freed the device's way (DeviceMemory.free: once every stream is done)."""
        later, self.later = self.later, []
        if later:
            self.device.memory.free(*later)

    def upload(self, data: npt.NDArray[np.generic]) -> _driver.DeviceBuffer:
        """A new device buffer holding data: the copy prepare made ahead, or one queued on this stream."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        ahead = self.device.memory.take_ahead(raw)
        if ahead is not None:
            return ahead
        buf = self.work_alloc(len(raw))
        buf.upload(raw, 0, self.stream)      # pageable memory is staged by the driver before the call returns
        return buf

    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...],
                       dtype: type[np.generic] = np.uint64) -> npt.NDArray[Any]:
        """The first prod(shape) items of buf once this stream's work is done (DeviceMemory.download_array's)."""
        return self.device.memory.download_array(buf, shape, dtype, self.stream)


class SideResidents:
    """A device's resident arrays (cuda.resident.ResidentStore) as its
    second stream (stream) reads them: a copy not resident yet is made the
    device's way and the first stream waited for once; a derived buffer
    only where one was made; a streamed array's chunks waited for on this
    stream. Its budget, pass size and holdings are the store's."""

    def __init__(self, device: Device, stream: _driver.Stream) -> None:
        self.device, self.stream, self.store = device, stream, device.memory.resident
        self.holding: Callable[..., AbstractContextManager[None]] = self.store.holding
        self.in_one_pass: Callable[[Points], bool] = self.store.in_one_pass

    @property
    def budget(self) -> int:
        return self.store.budget

    @property
    def pass_points(self) -> int:
        return self.store.pass_points

    def resident_array(self, limbs: npt.NDArray[np.generic]) -> _driver.DeviceBuffer:
        made = self.store.is_resident(limbs)
        buf = self.store.resident_array(limbs)
        if not made:
            self.device.stream.synchronize()     # uploaded on the first stream: wait for it once
        return buf

    def resident(self, points: Points) -> _driver.DeviceBuffer:
        return self.resident_array(points.limbs)

    def resident_derived(self, limbs: npt.NDArray[np.generic], tag: Hashable, nbytes: int,
                         make: Callable[[_driver.DeviceBuffer], object]) -> _driver.DeviceBuffer | None:
        """Only a derived buffer made before (a window table is made in the first stream's order)."""
        return self.store.derived(limbs, tag)

    def point_chunks(self, points: Points) -> Iterator[tuple[int, int, _driver.DeviceBuffer | int]]:
        """ResidentStore.point_chunks on this stream, the resident copy made
        here (see resident_array); a streamed array's chunks come through the
        chunk ring, this stream waiting for each (no host wait)."""
        if not self.store.is_streamed(points):
            self.resident(points)
        return self.store.point_chunks(points, self.stream)
