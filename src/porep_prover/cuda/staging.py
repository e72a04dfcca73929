# SPDX-License-Identifier: Apache-2.0
"""Host <-> device copies through two pinned staging buffers.

Copies from pageable (ordinary numpy) memory run at a few GB/s; from pinned
memory the DMA engine runs at the link's speed. Large transfers therefore go
through two page-locked buffers in turn: while the device copies one, the
host fills (or empties) the other, so the host copy and the DMA overlap.
Small ones are copied directly. Not thread-safe by itself: callers hold a lock.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from ..host_memory import copy_in_slices

if TYPE_CHECKING:
    import numpy.typing as npt

    from . import Driver, _driver

CHUNK = 64 << 20          # bytes per staging buffer
DIRECT = 1 << 20          # transfers up to this size skip the staging


class Staging:
    """Two pinned buffers and their events, on one context and stream."""

    def __init__(self, drv: Driver, ctx: _driver.Context, stream: _driver.Stream, chunk: int = CHUNK) -> None:
        self.drv, self.ctx, self.stream, self.chunk = drv, ctx, stream, chunk
        self._pinned: list[_driver.PinnedBuffer] = []
        self._views: list[npt.NDArray[np.uint8]] = []
        self._events: list[_driver.Event] = []
        self._pending = [False, False]
        workers = min(8, os.cpu_count() or 1)
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="staging") if workers > 1 else None

    def _ensure(self) -> None:
        if not self._pinned:
            for _ in range(2):
                buf = self.drv.PinnedBuffer(self.ctx, self.chunk)
                self._pinned.append(buf)
                # before Python 3.12 numpy's stubs take only the buffer types they name (there is no
                # collections.abc.Buffer to take), not the pinned buffer, which exports the buffer protocol
                self._views.append(np.frombuffer(buf, dtype=np.uint8))  # type: ignore[call-overload]
                self._events.append(self.drv.Event(self.ctx))

    def _wait(self, slot: int) -> None:
        if self._pending[slot]:
            self._events[slot].synchronize()
            self._pending[slot] = False

    def upload(self, dst: _driver.DeviceBuffer, raw: npt.NDArray[np.uint8], offset: int = 0) -> None:
        """raw (contiguous uint8) into the device buffer dst at offset, ordered on the stream."""
        n = len(raw)
        if n <= DIRECT:
            dst.upload(raw, offset, self.stream)
            return
        self._ensure()
        for k, start in enumerate(range(0, n, self.chunk)):
            slot = k % 2
            self._wait(slot)
            piece = raw[start:start + self.chunk]
            view = self._views[slot][:len(piece)]
            copy_in_slices(self._pool, view, piece)
            dst.upload(view, offset + start, self.stream)
            self._events[slot].record(self.stream)
            self._pending[slot] = True

    def download(self, src: _driver.DeviceBuffer, out: npt.NDArray[np.uint8], offset: int = 0) -> None:
        """out (contiguous uint8) from the device buffer src at offset, after the stream's work."""
        n = len(out)
        if n <= DIRECT:
            self.stream.synchronize()
            src.download(out, offset)
            return
        self._ensure()
        starts = list(range(0, n, self.chunk))

        def issue(k: int) -> None:
            slot, start = k % 2, starts[k]
            size = min(self.chunk, n - start)
            self._wait(slot)
            src.download(self._views[slot][:size], offset + start, self.stream)
            self._events[slot].record(self.stream)
            self._pending[slot] = True

        issue(0)
        for k, start in enumerate(starts):
            if k + 1 < len(starts):
                issue(k + 1)
            slot = k % 2
            self._wait(slot)
            size = min(self.chunk, n - start)
            copy_in_slices(self._pool, out[start:start + size], self._views[slot][:size])

    def close(self) -> None:
        for slot in range(len(self._pinned)):
            self._wait(slot)
        self._views.clear()
        for buf in self._pinned:
            buf.close()
        for ev in self._events:
            ev.close()
        self._pinned.clear()
        self._events.clear()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
