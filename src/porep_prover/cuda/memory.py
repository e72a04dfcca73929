# SPDX-License-Identifier: Apache-2.0
"""A device's memory, one object (DeviceMemory, a cuda.device.Device's
`memory`): the budget the process may hold there, work buffers from the
device's pool, uploads through the staging buffers or from pinned arenas,
copies made ahead of a kernel region, the page-locked host memory streamed
arrays are read from, and the resident store (cuda.resident.ResidentStore:
resident arrays, the chunk ring, the MSM pass size).

The budget bounds everything: every device buffer is counted by the driver
layer against the context's limit, and one that would pass the budget
less MARGIN (the context, the kernel modules) fails as the card running
out would (after the work buffers' pool gave back what it kept, and then
the resident arrays not in use were dropped: DeviceMemoryError). So a
large card stands in for a small one.

How the memory is laid out for a kernel region (what is streamed, in what
chunks, the pass size, the resident arrays' budget) is a Layout a caller
hands follow() (the GPU backend, from the region's plan): this object
lays itself out by it, once for each new layout, between regions.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

import numpy as np

from ..errors import DeviceMemoryError, InvalidInputError
from .pinned import HostPins, PinnedPool
from .resident import STREAM_CHUNK, DeviceSide, ResidentStore
from .staging import Staging

if TYPE_CHECKING:
    from collections.abc import Hashable

    import numpy.typing as npt

    from . import DeviceInfo, Driver, _driver

LOG = logging.getLogger(__name__)
GIB = 1 << 30
MARGIN = 3 << 29           # 1.5 GiB of a budget: the context, the kernel modules and the pool's slack
RESERVE = 8 << 30          # device bytes left for work buffers when the resident budget is automatic

Item = TypeVar("Item", bound=np.generic)     # the item type of a downloaded array


def host_key(raw: npt.NDArray[np.generic]) -> tuple[int, int]:
    """(address, bytes) of contiguous host bytes: how a copy made ahead is found again."""
    return raw.ctypes.data, raw.nbytes


@dataclasses.dataclass(frozen=True)
class Layout:
    """How a device's memory is laid out for the kernel regions of one
    parameter set: the limbs arrays streamed through the chunk ring (all
    others resident), the ring's slot bytes, the most points an MSM pass
    sorts (0: no limit) and the bytes resident arrays may take."""
    streamed: tuple[npt.NDArray[np.generic], ...]
    chunk_bytes: int
    pass_points: int
    resident_budget: int


class MemoryOwner(DeviceSide, Protocol):
    """The device a DeviceMemory belongs to (a cuda.device.Device): a
    DeviceSide, its description, and a wait for every stream of its kernel
    regions."""

    @property
    def info(self) -> DeviceInfo: ...

    def synchronize(self) -> None: ...


class DeviceMemory:
    """The memory of one device (see the module). device: its owner (a
    cuda.device.Device: its driver, context, lock and streams);
    resident_bytes: the resident arrays' own budget when no layout says
    (None: what is free at start less RESERVE); async_free: free gives the
    pool's buffers back in their stream's order without waiting for the
    device (config.gpu_async_free)."""

    def __init__(self, device: MemoryOwner, resident_bytes: int | None, async_free: bool = False) -> None:
        self.device = device
        self.drv: Driver = device.drv
        self.ctx: _driver.Context = device.ctx
        self.lock: threading.RLock = device.lock
        self.stream: _driver.Stream = device.stream
        # an operation's work buffers come from the device's pool in the stream's order (work_alloc): no
        # cuMemAlloc / cuMemFree (which waits for the device and unmaps) on the clock
        self.pooled = self.ctx.keep_pool()
        self.staging = Staging(self.drv, self.ctx, self.stream)
        self.pinned = PinnedPool(self.drv, self.ctx)
        self.pins = HostPins(self.drv, self.ctx)
        self.default_resident_budget = resident_bytes if resident_bytes is not None \
            else max(0, self.ctx.mem_info()[0] - RESERVE)
        self.resident = ResidentStore(self, self.default_resident_budget)
        self.budget = 0              # bytes the process may hold on the device (set_budget; 0: not set yet)
        self.layout: Layout | None = None
        self._layout_key: Hashable | None = None
        self._ahead: dict[tuple[int, int], _driver.DeviceBuffer] = {}   # (host address, bytes) -> its copy
        self.copy_wait_seen_ms = 0.0          # the ring's waits when the last kernel region ended
        self.async_free = async_free

    # ------------------------------------------------------------ the budget and the layout

    def set_budget(self, nbytes: int = 0) -> None:
        """Bound what this process holds on the device to nbytes (0: the
        card's memory) and drop the layout in use: until the next follow(),
        MSMs run in one pass, nothing is streamed and the resident store
        keeps its own budget. InvalidInputError for a budget at or below
        the margin."""
        total = self.ctx.mem_info()[1]
        if nbytes < 0 or 0 < nbytes <= MARGIN:
            raise InvalidInputError(f"a device-memory budget of {nbytes / GIB:.2f} GiB: more than "
                                    f"{MARGIN / GIB:.1f} GiB (the context's margin), or 0 for the card's")
        if nbytes > total:
            LOG.warning("a device-memory budget of %.1f GiB on a card of %.1f GiB: the card's", nbytes / GIB,
                        total / GIB)
        with self.lock:
            self.budget = min(nbytes, total) if nbytes else total
            self.ctx.limit = self.budget - MARGIN
            if self.ctx.allocated > self.ctx.limit:
                # a smaller budget than what is held: what it no longer has room for goes now, by choice,
                # rather than at the next region's first allocation, counted there as a plan that did not hold
                self.device.synchronize()
                if self.pooled:
                    self.ctx.trim_pool()
                self.resident.release_resident()
            self.follow(None, None, again=True)

    def follow(self, key: Hashable | None, layout: Layout | None, again: bool = False) -> bool:
        """Lay the memory out by layout (None: unplanned: one pass an MSM,
        nothing streamed, the resident store under its own budget), unless
        the layout of key is the one in use (again: even so, whatever the
        store was set to since); whether it changed. Waits for the device
        first (a new layout re-places what kernels read): call it between
        kernel regions."""
        with self.lock:
            if not again and self._layout_key == key and (key is not None or self.layout is None):
                return False
            self.device.synchronize()
            store = self.resident
            if layout is None:
                store.pass_points, store.budget = 0, self.default_resident_budget
                store.stream_arrays([])
            else:
                store.pass_points, store.budget = layout.pass_points, layout.resident_budget
                store.stream_arrays(list(layout.streamed), layout.chunk_bytes or STREAM_CHUNK)
            # what the last layout kept resident past this one's budget goes now (least recently used
            # first), not at a region's allocation; the peak and the dropped bytes count from here
            store.fit_budget()
            store.dropped = 0
            self.layout, self._layout_key = layout, key
            self.ctx.reset_peak()
            return True

    def status(self, planned: int | None) -> dict[str, int | None]:
        """Bytes: budget, planned (the plan's peak, as the caller knows it),
        allocated now, peak (since the last layout), resident, streamed
        (through the chunk ring so far), pinned (host bytes page-locked for
        streaming) and dropped (resident bytes given up for want of memory
        since the last layout: a plan that does not hold)."""
        ring = self.resident.ring
        return {"budget": self.budget, "planned": planned, "allocated": self.ctx.allocated, "peak": self.ctx.peak,
                "resident": self.resident.resident_bytes(), "streamed": ring.uploaded if ring is not None else 0,
                "pinned": self.pins.pinned_bytes(), "dropped": self.resident.dropped}

    # ------------------------------------------------------------ buffers

    def alloc(self, nbytes: int) -> _driver.DeviceBuffer:
        """Device memory; on exhaustion wait for the streams (work buffers
        freed in their order reach the pool only then, and the pool gives
        them back), then drop the resident arrays not in use and retry once."""
        buf = self.try_alloc(nbytes)
        if buf is not None:
            return buf
        self.device.synchronize()
        if self.pooled:
            buf = self.try_alloc(nbytes)
            if buf is not None:
                return buf
        store = self.resident
        held = store.resident_bytes()
        store.release_resident()
        store.dropped += held - store.resident_bytes()
        LOG.warning("device %d: %d bytes asked for did not fit (%d of a budget of %s held): %d resident bytes "
                    "dropped", self.device.info.ordinal, nbytes, self.ctx.allocated, self.ctx.limit or "the card",
                    held - store.resident_bytes())
        try:
            return self.drv.DeviceBuffer(self.ctx, nbytes)
        except DeviceMemoryError as exc:
            free, total = self.ctx.mem_info()
            limit = f"; {self.ctx.allocated} of the budget's {self.ctx.limit} held" if self.ctx.limit else ""
            raise DeviceMemoryError(f"{nbytes} bytes of device memory asked for, {free} of {total} free{limit}",
                                    code=exc.code, name=exc.name) from None

    def try_alloc(self, nbytes: int) -> _driver.DeviceBuffer | None:
        """Device memory, or None when there is none: evicts nothing (for work
        that is worth doing only when memory is to spare); what the pool keeps
        unused is given back first."""
        for attempt in range(2 if self.pooled else 1):
            try:
                return self.drv.DeviceBuffer(self.ctx, nbytes)
            except DeviceMemoryError:
                if attempt == 0 and self.pooled:
                    self.ctx.trim_pool()
        return None

    def work_alloc(self, nbytes: int) -> _driver.DeviceBuffer:
        """A work buffer for the kernel region's stream, from the pool (free
        gives it back there); as alloc where the device has no pools or the
        pool cannot grow."""
        if self.pooled:
            try:
                return self.drv.DeviceBuffer(self.ctx, nbytes, self.stream)
            except DeviceMemoryError:
                pass
        return self.alloc(nbytes)

    def free(self, *bufs: _driver.DeviceBuffer | None) -> None:
        """Close buffers once the kernel region's streams no longer use them:
        with async_free, buffers of the pool alone go back in their stream's
        order (every other stream's work on them is joined into it before:
        an operation's contract, WorkBuffers'), any other after a wait for the
        device."""
        held = [buf for buf in bufs if buf is not None]
        if not (self.async_free and all(buf.pooled for buf in held)):
            self.device.synchronize()
        for buf in held:
            buf.close()

    # ------------------------------------------------------------ transfers

    def upload(self, data: npt.NDArray[np.generic]) -> _driver.DeviceBuffer:
        """A new device buffer holding data (any contiguous numpy array); the
        copy made ahead, handed over, when data is what it copied."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        ahead = self.take_ahead(raw)
        if ahead is not None:
            return ahead
        buf = self.alloc(len(raw))
        with self.lock:
            if self.pinned.contains(raw):   # prepared: one DMA, no host copy
                buf.upload(raw, 0, self.stream)
            else:
                self.staging.upload(buf, raw)
        return buf

    def copy_ahead(self, raw: npt.NDArray[np.uint8], stream: _driver.Stream) -> tuple[int, int] | None:
        """A device copy of raw (contiguous host bytes) started on stream, kept
        for the upload of the same bytes to take (upload, take_ahead): its
        key, or None where memory is short (never evicts: resident points
        could be pulled from under another region's running kernels)."""
        buf = self.try_alloc(raw.nbytes)
        if buf is None:
            return None
        key = host_key(raw)
        with self.lock:
            self._ahead[key] = buf
        buf.upload(raw, 0, stream)
        return key

    def take_ahead(self, raw: npt.NDArray[np.uint8]) -> _driver.DeviceBuffer | None:
        """The device copy made ahead of raw (contiguous bytes), handed over, or None."""
        with self.lock:
            return self._ahead.pop(host_key(raw), None)

    def drop_ahead(self, keys: list[tuple[int, int]], stream: _driver.Stream) -> None:
        """The copies made ahead under keys that no upload took, freed (once stream's copies are done)."""
        with self.lock:
            unused = [self._ahead.pop(key, None) for key in keys]
        if any(buf is not None for buf in unused):
            stream.synchronize()             # a copy cut short by an error may still be running
            self.free(*unused)

    @overload
    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...], dtype: type[Item],
                       stream: _driver.Stream | None = None) -> npt.NDArray[Item]: ...

    @overload
    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...], *,
                       stream: _driver.Stream | None = None) -> npt.NDArray[np.uint64]: ...

    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...],
                       dtype: type[np.generic] = np.uint64, stream: _driver.Stream | None = None
                       ) -> npt.NDArray[np.generic]:
        """The first prod(shape) items of buf, after the stream's work is done.
        stream: another stream, whose work alone is waited for (a direct copy,
        for results of a few kilobytes: the staging buffers wait for this one)."""
        out = np.empty(shape, dtype=dtype)
        if stream is not None:
            stream.synchronize()
            buf.download(out.reshape(-1).view(np.uint8), 0)
            return out
        with self.lock:
            self.staging.download(buf, out.reshape(-1).view(np.uint8))
        return out

    def close(self) -> None:
        """Free everything held: resident arrays, the chunk ring, staging,
        pinned arenas and pins, what the pool kept."""
        self.resident.close()
        self.pins.close()
        with self.lock:
            self.staging.close()
            self.pinned.close()
        if self.pooled:
            self.device.synchronize()
            self.ctx.trim_pool()
