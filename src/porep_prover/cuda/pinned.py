# SPDX-License-Identifier: Apache-2.0
"""Page-locked host memory: arenas for a partition's uploads, filled before
the GPU's kernel region, and the streamed points page-locked (HostPins): in
place, or an anonymous copy where they are a file mapping (MappedCopies).

An engine worker prepares its next partition while another worker holds the
device: the arrays the kernel region uploads (a, b, c and the MSM scalars)
are copied into page-locked memory, so inside the region each upload is a
single DMA at the link's speed instead of a host copy through the staging
buffers. Arenas are reused across partitions (page-locking memory is slow)
and found again by address, so DeviceMemory.upload sends a pinned source
directly. The GPU backend's prepare (backend/gpu.py) lays a partition's
arrays out in one arena.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar, cast

import numpy as np

from ..errors import CudaError
from ..host_memory import copy_in_slices, is_mapped, mapped_origin, read_into, unmap_pages
from ..memory.sizes import GIB

if TYPE_CHECKING:
    import numpy.typing as npt

    from . import Driver, _driver

LOG = logging.getLogger(__name__)

ArrayT = TypeVar("ArrayT", bound="npt.NDArray[np.generic]")

SLICE = 8 << 20            # bytes per threaded copy slice


@dataclasses.dataclass
class Arena:
    """One page-locked block and a numpy view of it."""
    buffer: _driver.PinnedBuffer
    view: npt.NDArray[np.uint8]

    @property
    def nbytes(self) -> int:
        return len(self.view)

    @property
    def address(self) -> int:
        return self.view.ctypes.data


class _LiveArenas:
    """Every arena of the process's pools by address: an upload from any of
    them is one DMA, whichever pool (whichever device's) made it."""

    def __init__(self) -> None:
        self._by_address: dict[int, Arena] = {}
        self._lock = threading.Lock()

    def add(self, arena: Arena) -> None:
        with self._lock:
            self._by_address[arena.address] = arena

    def discard(self, arena: Arena) -> None:
        with self._lock:
            self._by_address.pop(arena.address, None)

    def contains(self, raw: npt.NDArray[np.uint8]) -> bool:
        start = raw.ctypes.data
        end = start + raw.nbytes
        with self._lock:
            return any(a.address <= start and end <= a.address + a.nbytes for a in self._by_address.values())


LIVE_ARENAS = _LiveArenas()


class PinnedPool:
    """Page-locked arenas of one context (portable: any context reads them
    at the link's speed), handed out whole and given back.

    At most `keep` idle arenas are kept; an arena too small for a request is
    closed and a larger one made (partitions of one circuit all fit the first)."""

    def __init__(self, drv: Driver, ctx: _driver.Context, keep: int = 3) -> None:
        self.drv, self.ctx, self.keep = drv, ctx, keep
        self._idle: list[Arena] = []
        self._live: dict[int, Arena] = {}    # address -> arena (handed out or idle)
        self._lock = threading.Lock()
        workers = min(8, os.cpu_count() or 1)
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="pin") if workers > 1 else None

    def acquire(self, nbytes: int) -> Arena:
        with self._lock:
            fits = [a for a in self._idle if a.nbytes >= nbytes]
            if fits:
                arena = min(fits, key=lambda a: a.nbytes)
                self._idle.remove(arena)
                return arena
            while self._idle and len(self._idle) + 1 > self.keep:
                self._close(self._idle.pop(0))
        buf = self.drv.PinnedBuffer(self.ctx, nbytes)
        # before Python 3.12 numpy's stubs take only the buffer types they name (there is no
        # collections.abc.Buffer to take), not the pinned buffer, which exports the buffer protocol
        arena = Arena(buf, np.frombuffer(buf, dtype=np.uint8))  # type: ignore[call-overload]
        with self._lock:
            self._live[arena.address] = arena
        LIVE_ARENAS.add(arena)
        return arena

    def release(self, arena: Arena) -> None:
        with self._lock:
            if len(self._idle) < self.keep:
                self._idle.append(arena)
            else:
                self._close(arena)

    def discard(self, arena: Arena) -> None:
        """Close an arena now (its memory back to the host), rather than keep it idle."""
        with self._lock:
            self._close(arena)

    def _close(self, arena: Arena) -> None:
        """The arena out of the pool and its memory back to the host: now, or,
        where arrays of a partition that was laid out in it are still alive
        (views its release does not reach), once the last of them goes
        (the buffer frees itself when collected). Never raises: a caller's
        bookkeeping around it completes either way."""
        self._live.pop(arena.address, None)
        LIVE_ARENAS.discard(arena)
        arena.view = np.zeros(0, np.uint8)
        if arena.buffer.has_views:
            LOG.debug("a page-locked arena of %d bytes is freed once the arrays viewing it go", arena.nbytes)
            return
        arena.buffer.close()

    @staticmethod
    def contains(raw: npt.NDArray[np.uint8]) -> bool:
        """Whether raw (contiguous bytes) lies inside one arena of any pool of the process."""
        return LIVE_ARENAS.contains(raw)

    def copy(self, dst: npt.NDArray[np.uint8], src: npt.NDArray[np.uint8]) -> None:
        """dst[:] = src (flat uint8) in slices on this pool's threads."""
        copy_in_slices(self._pool, dst, src, SLICE)

    def close(self) -> None:
        with self._lock:
            for arena in list(self._live.values()):
                self._close(arena)
            self._idle.clear()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None



class MappedCopies:
    """Anonymous copies of file-mapped arrays, one an array in the process,
    shared by every device's HostPins (each registers it in place) and
    dropped when the last gives it back; a copy still read (a stream's view
    of it) lives on until that view goes.

    A copy is read from the array's file (host_memory.read_into: large
    sequential reads on threads, each range's page cache dropped once read,
    and the mapping's own pages of it unmapped), so that a streamed array
    costs its bytes in host memory once, not once more as page cache; an
    array whose file is not known is copied from its mapping."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, tuple[npt.NDArray[np.generic], int]] = {}     # id(array) -> (copy, users)

    def take(self, array: npt.NDArray[np.generic]) -> npt.NDArray[np.generic]:
        """array's copy (C-contiguous, made here on first take)."""
        key = id(array)
        with self._lock:      # one copy made at a time: a second device asking for it waits for the first's
            held = self._held.get(key)
            if held is None:
                t = time.perf_counter()
                copy = np.empty(array.shape, array.dtype)
                workers = min(8, os.cpu_count() or 1)
                origin = mapped_origin(array)
                if origin is not None:
                    read_into(copy, origin[0], origin[1], workers)
                    unmap_pages(array)
                else:       # one thread reads a mapping far below memory bandwidth: on threads
                    with ThreadPoolExecutor(workers, thread_name_prefix="pin-copy") as pool:
                        copy_in_slices(pool if workers > 1 else None, copy.reshape(-1).view(np.uint8),
                                       array.reshape(-1).view(np.uint8), SLICE)
                seconds = time.perf_counter() - t
                LOG.info("read %.2f GiB of a mapped array %s in %.1f s (%.2f GB/s)", array.nbytes / GIB,
                         "from its file, its pages dropped" if origin is not None else "from its mapping", seconds,
                         array.nbytes / max(seconds, 1e-9) / 1e9)
                held = (copy, 0)
            self._held[key] = (held[0], held[1] + 1)
            return held[0]

    def give_back(self, key: int) -> None:
        """One user of the copy of the array whose id() is key is done with it."""
        with self._lock:
            held = self._held.pop(key, None)
            if held is not None and held[1] > 1:
                self._held[key] = (held[0], held[1] - 1)

    def held_bytes(self) -> int:
        with self._lock:
            return sum(copy.nbytes for copy, _ in self._held.values())


MAPPED_COPIES = MappedCopies()


@dataclasses.dataclass
class Pin:
    """How one streamed array is page-locked: its pages registered in place
    (copy None), or the pages of its anonymous copy (MAPPED_COPIES'; what to
    stream from)."""
    registration: _driver.HostRegistration
    copy: npt.NDArray[np.generic] | None
    finalizer: weakref.finalize[[int], npt.NDArray[np.generic]]


class HostPins:
    """Host arrays page-locked for a device to stream from, so that each
    chunk's copy is one DMA. Anonymous memory is pinned in place (the
    driver's HostRegistration, portable: a second device's registration of
    the same pages finds them pinned). A file mapping (mapped parameters) is
    never registered: its anonymous copy (MAPPED_COPIES, one for every
    device) is, and streamed from. Registering a mapping makes the kernel pin
    page-cache pages under the process's memory-map lock, and on the H100
    host a 47 GB mapped SRS's registration had not returned after 10
    minutes, every reader of the process's map (ps, /proc) waiting behind
    it. An array stays pinned until it is collected, unpinned or the pins
    closed; one the driver refuses (a lock limit) is streamed from pageable
    memory, as it was (a mapped one from its copy)."""

    def __init__(self, drv: Driver, ctx: _driver.Context) -> None:
        self.drv, self.ctx = drv, ctx
        self._pins: dict[int, Pin] = {}       # id(array) -> its pin
        self._lock = threading.Lock()

    def pin(self, array: npt.NDArray[np.generic]) -> bool:
        """Page-lock a C-contiguous array's memory, or its copy's (once);
        whether it is pinned. source(array) is then what to stream from."""
        key = id(array)
        with self._lock:
            if key in self._pins:
                return True
        if not array.flags.c_contiguous:
            return False
        t = time.perf_counter()
        copy = MAPPED_COPIES.take(array) if is_mapped(array) else None
        source = array if copy is None else copy
        try:
            registration = self.drv.HostRegistration(self.ctx, source.reshape(-1).view(np.uint8))
        except CudaError as exc:
            LOG.warning("streaming %d bytes from pageable memory: %s", array.nbytes, exc)
            if copy is not None:
                MAPPED_COPIES.give_back(key)
            return False
        LOG.info("page-locked %.2f GiB for streaming%s in %.1f s", array.nbytes / GIB,
                 "" if copy is None else " (a copy of a file mapping)", time.perf_counter() - t)
        with self._lock:
            if key not in self._pins:
                self._pins[key] = Pin(registration, copy, weakref.finalize(array, self._unpin, key))
                return True
        registration.close()            # another thread pinned it meanwhile: its pin stands
        if copy is not None:
            MAPPED_COPIES.give_back(key)
        return True

    def source(self, array: ArrayT) -> ArrayT:
        """What to stream array from: its page-locked copy, if pin made one, else array itself."""
        with self._lock:
            pinned = self._pins.get(id(array))
        return cast(ArrayT, pinned.copy) if pinned is not None and pinned.copy is not None else array

    def pinned_bytes(self) -> int:
        with self._lock:
            return sum(pin.registration.nbytes for pin in self._pins.values())

    def unpin(self, array: npt.NDArray[np.generic]) -> None:
        self._unpin(id(array))

    def unpin_id(self, key: int) -> None:
        """unpin of the array whose id() is key (nothing if it is not pinned)."""
        self._unpin(key)

    def _unpin(self, key: int) -> None:
        with self._lock:
            pin = self._pins.pop(key, None)
        if pin is not None:
            pin.finalizer.detach()
            pin.registration.close()          # before the copy can go: the pages must stay mapped while pinned
            if pin.copy is not None:
                pin.copy = None
                MAPPED_COPIES.give_back(key)

    def close(self) -> None:
        for key in list(self._pins):
            self._unpin(key)
