# SPDX-License-Identifier: Apache-2.0
"""Arrays kept resident on a device: the resident store of its memory
(cuda.device_memory.DeviceMemory.resident).

Point arrays given to an MSM or a batch sum are kept resident on the device
(keyed by their limbs array, dropped when it is collected), so a parameter
set is uploaded once and reused by every proof; they must not be modified in
place while resident. Resident points may take the budget
(POREP_PROVER_GPU_RESIDENT_BYTES, given as GpuEnvironment.resident_bytes;
default what was free at start less a reserve, or what a device-memory plan
keeps); past it the least recently used arrays are dropped. An array larger
than the budget, or one the plan streams (stream_arrays), is streamed from
host memory through the chunk ring (cuda/chunk_ring.py); an MSM runs over
points in passes of at most pass_points. Derived buffers (an MSM's window
table) are kept beside their array and dropped with it.
"""
from __future__ import annotations

import collections
import contextlib
import weakref
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

from ..errors import DeviceMemoryError
from .chunk_ring import ChunkRing

if TYPE_CHECKING:
    import threading

    import numpy as np
    import numpy.typing as npt

    from . import Driver, _driver
    from .pinned import HostPins

STREAM_CHUNK = 256 << 20   # bytes of a chunk ring's slot when no plan says

# a resident entry's key: id(limbs) of an array, or (id(limbs), tag) of a buffer derived from it
ResidentKey: TypeAlias = int | tuple[int, Hashable]


class Points(Protocol):
    """A point array as the resident store sees it: its limbs (a row a
    point; the array its device copy is kept under) and its length."""

    @property
    def limbs(self) -> npt.NDArray[np.uint64]: ...

    def __len__(self) -> int: ...


class DeviceSide(Protocol):
    """A device's driver and context (what streams and events are made
    with), its lock, and its kernel region's stream."""

    @property
    def drv(self) -> Driver: ...

    @property
    def ctx(self) -> _driver.Context: ...

    @property
    def lock(self) -> threading.RLock: ...

    @property
    def stream(self) -> _driver.Stream: ...


class StoreMemory(DeviceSide, Protocol):
    """What a resident store takes memory through (cuda.device_memory.DeviceMemory):
    a DeviceSide (its chunk ring's stream and events are made with its
    driver and context), allocations, frees, uploads, and the host pins
    streamed arrays are page-locked by."""

    @property
    def pins(self) -> HostPins: ...

    def alloc(self, nbytes: int) -> _driver.DeviceBuffer: ...

    def try_alloc(self, nbytes: int) -> _driver.DeviceBuffer | None: ...

    def free(self, *bufs: _driver.DeviceBuffer | None) -> None: ...

    def upload(self, data: npt.NDArray[np.generic]) -> _driver.DeviceBuffer: ...


class ResidentStore:
    """The arrays a device keeps resident, those it streams, and the MSM
    pass size: part of a cuda.device_memory.DeviceMemory (memory: what it
    allocates, uploads and locks through). budget: bytes resident arrays may
    take; pass_points: the most points an MSM pass sorts (0: no limit)."""

    def __init__(self, memory: StoreMemory, budget: int) -> None:
        self.memory = memory
        self.lock = memory.lock
        # key -> (buffer, the finalizer that drops it with its array)
        self._resident: collections.OrderedDict[
            ResidentKey, tuple[_driver.DeviceBuffer, weakref.finalize[[ResidentKey], npt.NDArray[np.generic]]]] \
            = collections.OrderedDict()
        self._busy: collections.Counter[int] = collections.Counter()    # id(limbs) of resident arrays in use
        self.budget = budget
        self.pass_points = 0
        self._streamed: set[int] = set()                 # id(limbs) of the arrays streamed (stream_arrays)
        self.ring: ChunkRing | None = None               # the chunk ring of streamed arrays, made on first use
        self.ring_bytes = STREAM_CHUNK                   # its slots' size
        self.ring_waited_ms = 0.0                        # kernels' waits for chunks of rings since closed
        self.dropped = 0                                 # resident bytes dropped for want of memory (a layout's)

    def point_chunks(self, points: Points, stream: _driver.Stream | None = None
                     ) -> Iterator[tuple[int, int, _driver.DeviceBuffer | int]]:
        """(start, stop, device buffer or address) covering points in MSM
        passes of at most pass_points (0: one pass): views of the resident
        copy, or, for a streamed array (stream_arrays', or one over the
        resident budget), chunks through the chunk ring, stream (the
        device's by default) waiting for each."""
        n, per = len(points), self.pass_points or len(points)
        if self.is_streamed(points):
            if id(points.limbs) not in self._streamed:     # over the budget: chunks within it
                per = min(per, max(self.budget, 1 << 20) // (points.limbs.shape[1] * 8))
            source = self.memory.pins.source(points.limbs)
            yield from self.chunk_ring().chunks(source, per, stream or self.memory.stream)
            return
        buf = self.resident(points)      # callers hold points (see holding)
        if n <= per:
            yield 0, n, buf
            return
        width = points.limbs.shape[1] * 8
        for start in range(0, n, per):
            yield start, min(n, start + per), buf.view(width * start)

    def is_streamed(self, points: Points) -> bool:
        """Whether points are streamed through the chunk ring rather than kept resident."""
        return id(points.limbs) in self._streamed or points.limbs.nbytes > self.budget

    def in_one_pass(self, points: Points) -> bool:
        """Whether an MSM over points runs as one pass over a resident copy."""
        return not self.is_streamed(points) and (not self.pass_points or len(points) <= self.pass_points)

    def stream_arrays(self, arrays: Sequence[npt.NDArray[np.generic]], chunk_bytes: int = STREAM_CHUNK) -> None:
        """From now on these limbs arrays are streamed (their resident copies
        dropped, their host memory pinned) and no other is; the chunk ring's
        slots are chunk_bytes."""
        keep = {id(a) for a in arrays}
        with self.lock:
            old, self._streamed = self._streamed, keep
        for key in keep - old:
            self._evict(key)
        for key in old - keep:              # resident again (or gone): its pages need not stay locked
            self.memory.pins.unpin_id(key)
        for limbs in arrays:
            self.memory.pins.pin(limbs)
        if self.ring is not None and (self.ring.chunk_bytes != chunk_bytes or not arrays):
            self.ring.close()
            self.ring_waited_ms += self.ring.waited_ms()
            self.ring = None
        elif self.ring is not None:
            self.ring.forget()              # the order it learnt was of the arrays streamed before
        self.ring_bytes = chunk_bytes

    def copy_wait_ms(self) -> float:
        """Milliseconds kernels have stood waiting for streamed chunks to
        arrive, since the device was made (ChunkRing.waited_ms: call it
        after a kernel region, not inside one)."""
        with self.lock:
            ring = self.ring
        return self.ring_waited_ms + (ring.waited_ms() if ring is not None else 0.0)

    def chunk_ring(self) -> ChunkRing:
        """The device's chunk ring, made on first use."""
        with self.lock:
            if self.ring is None:
                self.ring = ChunkRing(self.memory, self.ring_bytes)
            return self.ring

    def resident(self, points: Points) -> _driver.DeviceBuffer:
        """The device copy of points, uploaded on first use."""
        return self.resident_array(points.limbs)

    def resident_array(self, limbs: npt.NDArray[np.generic]) -> _driver.DeviceBuffer:
        """The device copy of a numpy array (points' limbs, a circuit's CSR
        arrays), uploaded on first use, kept under the resident budget and
        dropped when the array is collected; it must not change meanwhile."""
        key = id(limbs)
        with self.lock:
            buf = self._touch(key)
            if buf is None:
                self._make_room(limbs.nbytes)
                buf = self._keep(key, limbs, self.memory.upload(limbs))
            return buf

    def resident_derived(self, limbs: npt.NDArray[np.generic], tag: Hashable, nbytes: int,
                         make: Callable[[_driver.DeviceBuffer], object]) -> _driver.DeviceBuffer | None:
        """A device buffer of nbytes made from a resident array by make(buffer)
        (e.g. an MSM's window table), kept beside it under the resident budget
        and dropped with it; None when it does not fit beside what is resident
        (nothing is evicted for it) or the device runs out while it is made."""
        key = (id(limbs), tag)
        with self.lock:
            buf = self._touch(key)
            if buf is not None or self.resident_bytes() + nbytes > self.budget:
                return buf
            buf = self.memory.try_alloc(nbytes)
            if buf is None:
                return None
            try:
                make(buf)
                self.memory.stream.synchronize()
            except DeviceMemoryError:
                self.memory.free(buf)
                return None
            except BaseException:
                self.memory.free(buf)
                raise
            return self._keep(key, limbs, buf)

    def is_resident(self, limbs: npt.NDArray[np.generic]) -> bool:
        """Whether limbs has a device copy now."""
        with self.lock:
            return id(limbs) in self._resident

    def derived(self, limbs: npt.NDArray[np.generic], tag: Hashable) -> _driver.DeviceBuffer | None:
        """The buffer derived from limbs under tag (resident_derived's), if one was made; makes none."""
        with self.lock:
            return self._touch((id(limbs), tag))

    def _touch(self, key: ResidentKey) -> _driver.DeviceBuffer | None:
        """A resident entry's buffer, now the most recently used, or None (lock held)."""
        entry = self._resident.get(key)
        if entry is None:
            return None
        self._resident.move_to_end(key)
        return entry[0]

    def _keep(self, key: ResidentKey, limbs: npt.NDArray[np.generic], buf: _driver.DeviceBuffer
              ) -> _driver.DeviceBuffer:
        """Record buf as resident under key, dropped when limbs is collected (lock held)."""
        self._resident[key] = (buf, weakref.finalize(limbs, self._evict, key))
        return buf

    @contextlib.contextmanager
    def holding(self, *arrays: npt.NDArray[np.generic] | None) -> Iterator[None]:
        """While inside, the device copies of these arrays (resident_array's)
        are not evicted: neither to make room nor when an allocation runs out
        (freeing them would leave the kernels that use them reading freed
        memory). None stands for no array."""
        keys = [id(a) for a in arrays if a is not None]
        with self.lock:
            self._busy.update(keys)
        try:
            yield
        finally:
            with self.lock:
                self._busy.subtract(keys)
                self._busy = +self._busy        # drop the keys no longer held

    def resident_bytes(self) -> int:
        with self.lock:
            return sum(buf.nbytes for buf, _ in self._resident.values())

    def fit_budget(self) -> None:
        """Evict the least recently used arrays not in use until what is
        resident fits the budget (a new layout's, set by the caller)."""
        with self.lock:
            self._make_room(0)

    def _make_room(self, nbytes: int) -> None:
        """Evict the least recently used arrays not in use until nbytes fit the budget (or none is left)."""
        while self.resident_bytes() + nbytes > self.budget:
            victim = next((k for k in self._resident if not self._in_use(k)), None)
            if victim is None:
                return
            self._evict(victim)

    def _in_use(self, key: ResidentKey) -> bool:
        """A resident entry is in use while its array is held (a derived entry's key is (array's key, tag))."""
        return bool(self._busy[key if isinstance(key, int) else key[0]])

    def _evict(self, key: ResidentKey) -> None:
        """Drop a resident entry; an array's derived entries go with it."""
        with self.lock:
            entries = [self._resident.pop(key, None)]
            if isinstance(key, int):
                entries += [self._resident.pop(k) for k in list(self._resident)
                            if not isinstance(k, int) and k[0] == key]
        for entry in entries:
            if entry is not None:
                entry[1].detach()
                self.memory.free(entry[0])

    def release_points(self, points: Points) -> None:
        """Drop the device copy of one point array (the SRS manager evicts with it)."""
        self._evict(id(points.limbs))

    def release_resident(self) -> None:
        """Drop every resident array not in use (see holding)."""
        with self.lock:
            for key in [k for k in self._resident if not self._in_use(k)]:
                self._evict(key)

    def close(self) -> None:
        """Drop every resident array not in use, and the chunk ring."""
        self.release_resident()
        with self.lock:
            ring, self.ring = self.ring, None
        if ring is not None:
            self.ring_waited_ms += ring.waited_ms()
            ring.close()
