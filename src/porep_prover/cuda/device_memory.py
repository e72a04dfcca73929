# SPDX-License-Identifier: Apache-2.0
"""A device's memory, one object (DeviceMemory, a cuda.device.Device's
`memory`): work buffers from the device's pool, uploads through the
staging buffers or from pinned arenas, copies made ahead of a kernel
region, the page-locked host memory streamed arrays are read from, and
the resident store (cuda.resident.ResidentStore: resident arrays, the
chunk ring, the MSM pass size).

Each kernel region lays the memory out by its own Layout as it starts
(lay_out: memory.layout, from the region's plan, or the card's unplanned
layout): what is streamed, in what chunks, the pass size, the resident
arrays' budget, and the budget that bounds everything. Every device
buffer is counted by the driver layer against the context's limit, the
layout's budget less MARGIN, and one that would pass it fails as the card
running out would (after the work buffers' pool gave back what it kept,
and then the resident arrays not in use were dropped: DeviceMemoryError).
So a large card stands in for a small one, region by region. What a
layout leaves on the device (resident arrays, the ring) is what the next
layout finds and re-places by its own; nothing of it decides the next.
"""
from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

import numpy as np

from ..errors import DeviceMemoryError
from ..memory.layout import Layout
from .pinned import HostPins, PinnedPool
from .resident import STREAM_CHUNK, DeviceSide, ResidentStore
from .staging import Staging

if TYPE_CHECKING:
    import numpy.typing as npt

    from . import DeviceInfo, Driver, _driver

LOG = logging.getLogger(__name__)
RESERVE = 8 << 30          # device bytes left for work buffers when the resident budget is the device's own

Item = TypeVar("Item", bound=np.generic)     # the item type of a downloaded array


def host_key(raw: npt.NDArray[np.generic]) -> tuple[int, int]:
    """(address, bytes) of contiguous host bytes: how a copy made ahead is found again."""
    return raw.ctypes.data, raw.nbytes


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
    resident_bytes: the resident arrays' own budget where a layout names
    none (None: what is free at start less RESERVE); async_free: free
    gives the pool's buffers back in their stream's order without waiting
    for the device (config.gpu_async_free)."""

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
        free, self.card_bytes = self.ctx.mem_info()
        self.default_resident_budget = resident_bytes if resident_bytes is not None else max(0, free - RESERVE)
        self.resident = ResidentStore(self, self.default_resident_budget)
        self.layout: Layout | None = None     # the layout of the region running or last run (None: none yet)
        self._ahead: dict[tuple[int, int], _driver.DeviceBuffer] = {}   # (host address, bytes) -> its copy
        self.copy_wait_seen_ms = 0.0          # the ring's waits when the last kernel region ended
        self.async_free = async_free

    # ------------------------------------------------------------ the layout

    def lay_out(self, layout: Layout, again: bool = False) -> bool:
        """Lay the memory out by layout for the kernel region that starts,
        unless it is laid out so already (again: even so, whatever the
        resident store was set to since); whether it changed. The driver's
        limit becomes the layout's (a budget below what is held lets the
        pool's kept memory and the resident arrays not in use go at once);
        the resident store streams the layout's arrays in its chunks, sorts
        its passes and keeps its resident budget (what it holds past that
        budget goes now, least recently used first); the peak and the
        dropped bytes count from here. Waits for the device first (a new
        layout re-places what kernels read): call it between kernel
        regions, the device's lock held."""
        with self.lock:
            if layout == self.layout and not again:
                return False
            self.device.synchronize()
            self.ctx.limit = layout.limit
            if self.ctx.allocated > self.ctx.limit:
                # a smaller budget than what is held: what it no longer has room for goes now, by choice,
                # rather than at the region's first allocation, counted there as a plan that did not hold
                if self.pooled:
                    self.ctx.trim_pool()
                self.resident.release_resident()
            store = self.resident
            store.pass_points = layout.pass_points
            store.budget = self.default_resident_budget if layout.resident is None else layout.resident
            store.stream_arrays(list(layout.streamed), layout.chunk_bytes or STREAM_CHUNK)
            store.fit_budget()
            store.dropped = 0
            self.layout = layout
            self.ctx.reset_peak()
            return True

    def status(self) -> dict[str, int | None]:
        """Bytes: budget and planned (the layout's: the last region's plan,
        None unplanned; before any region, the card's and None), allocated
        now, peak (since the last layout), resident, streamed (through the
        chunk ring so far), pinned (host bytes page-locked for streaming)
        and dropped (resident bytes given up for want of memory since the
        last layout: a plan that does not hold)."""
        ring = self.resident.ring
        layout = self.layout
        budget, planned = (layout.budget, layout.planned) if layout is not None else (self.card_bytes, None)
        return {"budget": budget, "planned": planned, "allocated": self.ctx.allocated, "peak": self.ctx.peak,
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
