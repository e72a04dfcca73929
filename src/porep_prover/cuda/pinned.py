# SPDX-License-Identifier: Apache-2.0
"""Page-locked host memory: arenas for a partition's uploads, filled before
the GPU's kernel region, and the streamed points pinned in place (HostPins).

An engine worker prepares its next partition while another worker holds the
device: the arrays the kernel region uploads (a, b, c and the MSM scalars)
are copied into page-locked memory, so inside the region each upload is a
single DMA at the link's speed instead of a host copy through the staging
buffers. Arenas are reused across partitions (page-locking memory is slow)
and found again by address, so Device.upload sends a pinned source
directly. The GPU backend's prepare (backend/gpu.py) lays a partition's
arrays out in one arena.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from ..errors import CudaError
from .staging import copy_in_slices

if TYPE_CHECKING:
    import numpy.typing as npt

    from . import Driver, _driver

LOG = logging.getLogger(__name__)

SLICE = 8 << 20            # bytes per threaded copy slice
ALIGN = 256                # arena offsets aligned like device allocations


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


class PinnedPool:
    """Page-locked arenas of one context, handed out whole and given back.

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
        return arena

    def release(self, arena: Arena) -> None:
        with self._lock:
            if len(self._idle) < self.keep:
                self._idle.append(arena)
            else:
                self._close(arena)

    def _close(self, arena: Arena) -> None:
        self._live.pop(arena.address, None)
        arena.view = np.zeros(0, np.uint8)
        arena.buffer.close()

    def contains(self, raw: npt.NDArray[np.uint8]) -> bool:
        """Whether raw (contiguous bytes) lies inside one arena."""
        start = raw.ctypes.data
        end = start + raw.nbytes
        with self._lock:
            return any(a.address <= start and end <= a.address + a.nbytes for a in self._live.values())

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



class HostPins:
    """Host arrays page-locked in place (the driver's HostRegistration): the
    points a device streams, so that each chunk's copy is one DMA. An array
    stays pinned until it is collected, unpinned or the pins closed; one the
    driver refuses (a lock limit, a mapping it cannot pin) is streamed from
    pageable memory, as it was."""

    def __init__(self, drv: Driver, ctx: _driver.Context) -> None:
        self.drv, self.ctx = drv, ctx
        # id(array) -> (registration, finalizer)
        self._pins: dict[int, tuple[_driver.HostRegistration, weakref.finalize[[int], npt.NDArray[np.generic]]]] = {}
        self._lock = threading.Lock()

    def pin(self, array: npt.NDArray[np.generic]) -> bool:
        """Page-lock a C-contiguous array's memory (once); whether it is pinned."""
        key = id(array)
        with self._lock:
            if key in self._pins:
                return True
        if not array.flags.c_contiguous:
            return False
        try:
            registration = self.drv.HostRegistration(self.ctx, array.reshape(-1).view(np.uint8))
        except CudaError as exc:
            LOG.warning("streaming %d bytes from pageable memory: %s", array.nbytes, exc)
            return False
        with self._lock:
            self._pins[key] = (registration, weakref.finalize(array, self._unpin, key))
        return True

    def pinned_bytes(self) -> int:
        with self._lock:
            return sum(reg.nbytes for reg, _ in self._pins.values())

    def unpin(self, array: npt.NDArray[np.generic]) -> None:
        self._unpin(id(array))

    def unpin_id(self, key: int) -> None:
        """unpin of the array whose id() is key (nothing if it is not pinned)."""
        self._unpin(key)

    def _unpin(self, key: int) -> None:
        with self._lock:
            entry = self._pins.pop(key, None)
        if entry is not None:
            entry[1].detach()
            entry[0].close()

    def close(self) -> None:
        for key in list(self._pins):
            self._unpin(key)
