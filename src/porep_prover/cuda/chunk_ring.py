# SPDX-License-Identifier: Apache-2.0
"""The chunk ring: how a point array that is not resident on a device is
streamed through it from host memory, a chunk at a time.

A ring of `slots` device buffers, made once and reused by every streamed
array: chunk i is uploaded into slot i mod slots on the ring's own copy
stream, after the kernels that read the slot's last chunk (an event their
stream recorded when its consumer was done), and the kernels' stream waits
for the upload (an event) before reading it. So while the kernels read one
chunk the next ones are on their way, and no host thread waits between a
copy and a kernel. From pinned host memory (a HostRegistration, cuda.pinned)
the copies are DMA at the bus's speed; from pageable memory the driver stages
each copy before the call returns (correct, slower).

A kernel region reads its streamed arrays in the same order every time: the
ring learns which array followed which, and when an array's last chunk has
been asked for it starts uploading the first chunks of the one that came
next last time, into the slots that drain first, so that array's kernels
need not wait for a whole chunk at their start. A guess that misses costs
those uploads' bus time, never a wrong chunk (a preload is used only by
the array it was made of, read in the same chunks).

The timeline of a partition shows the copies as the ring's stream's work;
`uploaded` counts the bytes streamed, for the device's status, and
`waited_ms` the time the kernels stood waiting for a chunk (events either
side of each wait), the share of a region the copies did not hide.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from ..memory.device_plan import RING

if TYPE_CHECKING:
    import numpy.typing as npt

    from . import Driver, _driver

MAX_STALLS = 4096            # chunk reads whose wait events are kept before the older half is added up


class RingDevice(Protocol):
    """What a chunk ring uses of its device (a cuda.device.Device): the
    driver and context its stream and events are made with, and how it
    takes and gives back memory."""

    @property
    def drv(self) -> Driver: ...

    @property
    def ctx(self) -> _driver.Context: ...

    def alloc(self, nbytes: int) -> _driver.DeviceBuffer: ...

    def free(self, *bufs: _driver.DeviceBuffer | None) -> None: ...


class Preload(NamedTuple):
    """The first chunks of an array uploaded ahead of its reading: the array
    (weakly), the rows a chunk, the slot of its first chunk, and each
    uploaded chunk's arrival (an event on the ring's stream)."""
    limbs: weakref.ref[npt.NDArray[np.uint64]]
    per: int
    base: int
    ready: list[_driver.Event]


class ChunkRing:
    """slots device buffers of chunk_bytes on device (a cuda.device.Device:
    its drv, ctx and alloc), and a copy stream of the ring's own."""

    def __init__(self, device: RingDevice, chunk_bytes: int, slots: int = RING) -> None:
        if chunk_bytes <= 0 or slots < 2:
            raise ValueError(f"a chunk ring of {slots} slots of {chunk_bytes} bytes")
        self.device, self.chunk_bytes, self.slots = device, chunk_bytes, slots
        self.stream = device.drv.Stream(device.ctx)
        self.bufs: list[_driver.DeviceBuffer] = []
        try:
            for _ in range(slots):
                self.bufs.append(device.alloc(chunk_bytes))
        except BaseException:
            self.close()
            raise
        # per slot: its last chunk's kernels are done (an event)
        self._drained: list[_driver.Event | None] = [None] * slots
        self._lock = threading.Lock()           # one streamed array at a time
        self.uploaded = 0                       # bytes streamed through the ring so far
        # per chunk read: events on the kernels' stream just before and just after its wait for the chunk
        self._stalls: list[tuple[_driver.Event, _driver.Event]] = []
        self._waited_ms = 0.0
        self._stall_lock = threading.Lock()
        # the order arrays were read in: id of an array -> (the next one, weakly, and its rows a chunk)
        self._after: dict[int, tuple[weakref.ref[npt.NDArray[np.uint64]], int]] = {}
        self._last: int | None = None           # id of the array read last
        self._next_slot = 0                     # the slot the next array's first chunk goes to
        self._preload: Preload | None = None

    @property
    def nbytes(self) -> int:
        return self.chunk_bytes * self.slots

    def chunks(self, limbs: npt.NDArray[np.uint64], per: int, stream: _driver.Stream) -> Iterator[tuple[int, int, int]]:
        """(start, stop, device address) for each chunk of at most per rows of
        limbs (2-D, C-contiguous, rows of 8-byte limbs) that fits a slot,
        in order. stream: the kernels' stream, which waits for each chunk's
        upload; the caller queues every kernel that reads a chunk on it (or
        orders them before it) before asking for the next."""
        per = self._rows(limbs, per)
        spans = self._spans(limbs, per)
        with self._lock:
            if self._last is not None:
                self._after[self._last] = (weakref.ref(limbs), per)
            self._last = id(limbs)
            base, ready = self._first_chunks(limbs, per, spans)
            self._next_slot = (base + len(spans)) % self.slots
            for i, (start, stop) in enumerate(spans):
                slot = (base + i) % self.slots
                before = self._event(stream)
                stream.wait(ready[slot])
                with self._stall_lock:
                    self._stalls.append((before, self._event(stream)))
                if len(self._stalls) > MAX_STALLS:      # a bounded record: the oldest reads are long done
                    self._fold(MAX_STALLS // 2)
                try:
                    yield start, stop, self.bufs[slot].ptr
                finally:
                    self._drained[slot] = self._event(stream)
                if i + self.slots < len(spans):
                    ready[slot] = self._upload(limbs, spans[i + self.slots], slot)
            self._preload_next(limbs)

    def _rows(self, limbs: npt.NDArray[np.uint64], per: int) -> int:
        """Rows of limbs a chunk: at most per, and what a slot holds."""
        return max(1, min(per, self.chunk_bytes // (int(limbs.shape[1]) * 8)))

    @staticmethod
    def _spans(limbs: npt.NDArray[np.uint64], per: int) -> list[tuple[int, int]]:
        return [(s, min(s + per, len(limbs))) for s in range(0, len(limbs), per)]

    def _first_chunks(self, limbs: npt.NDArray[np.uint64], per: int, spans: list[tuple[int, int]]
                      ) -> tuple[int, list[_driver.Event]]:
        """(the slot of limbs' first chunk, each slot's next arrival): the
        preload made for limbs in these chunks where there is one, else the
        first chunks uploaded now, one a slot from the slot that drains first."""
        preload, self._preload = self._preload, None
        base = self._next_slot
        if preload is not None and preload.limbs() is limbs and preload.per == per:
            ready = list(preload.ready)
            base = preload.base
        else:
            ready = []
        ready += self._upload_first(limbs, spans, base, len(ready))
        if not ready:                           # no rows: nothing to read
            return base, []
        # indexed by slot, as chunks() reads them
        by_slot: list[_driver.Event] = [ready[0]] * self.slots
        for i, event in enumerate(ready):
            by_slot[(base + i) % self.slots] = event
        return base, by_slot

    def _preload_next(self, limbs: npt.NDArray[np.uint64]) -> None:
        """Upload the first chunks of the array read after limbs last time,
        each once its slot's last chunk is read (a Preload for its chunks())."""
        follows = self._after.get(id(limbs))
        nxt = follows[0]() if follows is not None else None
        if follows is None or nxt is None:
            return
        per, base = follows[1], self._next_slot
        self._preload = Preload(weakref.ref(nxt), per, base, self._upload_first(nxt, self._spans(nxt, per), base))

    def _upload_first(self, limbs: npt.NDArray[np.uint64], spans: list[tuple[int, int]], base: int, done: int = 0
                      ) -> list[_driver.Event]:
        """Chunks done up to one a slot of limbs (its spans) into the slots from base on; their arrivals."""
        count = min(self.slots, len(spans))
        return [self._upload(limbs, spans[i], (base + i) % self.slots) for i in range(done, count)]

    def forget(self) -> None:
        """Drop the learned order and any preload (the streamed arrays changed)."""
        with self._lock:
            self._after.clear()
            self._last, self._preload = None, None

    def _upload(self, limbs: npt.NDArray[np.uint64], span: tuple[int, int], slot: int) -> _driver.Event:
        """Rows span of limbs into slot once its last reader is done; the event of its arrival."""
        drained = self._drained[slot]
        if drained is not None:
            self.stream.wait(drained)
        raw = limbs[span[0]:span[1]].reshape(-1).view(np.uint8)
        self.bufs[slot].upload(raw, 0, self.stream)
        self.uploaded += raw.nbytes
        return self._event(self.stream)

    def _event(self, stream: _driver.Stream) -> _driver.Event:
        event = self.device.drv.Event(self.device.ctx)
        event.record(stream)
        return event

    def waited_ms(self) -> float:
        """Milliseconds the kernels' streams have waited for chunks to
        arrive, over every chunk read so far (from the events either side
        of each wait: the stall, not the copy). Waits for the chunks read
        last to be reached: call it once their kernels are done (after a
        kernel region), not between."""
        self._fold(0)
        return self._waited_ms

    def _fold(self, keep: int) -> None:
        """Add all but the last keep stalls' times into the total."""
        with self._stall_lock:
            cut = max(0, len(self._stalls) - keep)
            stalls, self._stalls = self._stalls[:cut], self._stalls[cut:]
            for before, after in stalls:
                after.synchronize()
                self._waited_ms += after.elapsed_ms(before)

    def close(self) -> None:
        """Free the slots once every copy and every reader is done."""
        self.stream.synchronize()
        for event in self._drained:
            if event is not None:
                event.synchronize()
        self.device.free(*self.bufs)
        self.bufs = []
        self.stream.close()
