# SPDX-License-Identifier: Apache-2.0
"""One lock per physical device, held only around the kernel region.

Workers of a device (gpu_workers_per_device of them) share its lock, found
by the device's identity (a GPU's UUID, "cpu" for the host), never by
worker: two engines or two workers that name the same device get the same
lock. While one worker holds it and runs kernels, the others prepare their
next partition or finish their last one.

The lock is granted by priority: of the workers waiting, the one asking
with the highest priority (its partition's job's) gets it next, equals in
the order they asked. A waiter may bring a Turn (engine.ready): the lock
is not granted to it while the turn holds it back (a more urgent partition
is being prepared for the device), and its wait ends, RegionYielded,
when the turn gives up (a more urgent partition waits for a worker).
"""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import threading
import time
from typing import TYPE_CHECKING, Iterator, Protocol

if TYPE_CHECKING:
    from .timeline import Timeline

WAKE_SECONDS = 0.5      # a waiter reads its turn again at least this often (its changes also wake it: nudge_all)


class Turn(Protocol):
    """What a waiter asks with: its priority; asked(), called once it is
    among the waiters (under the lock's condition); hold_back() and
    give_up(), read under it whenever the waiter wakes."""
    priority: int

    def asked(self) -> None: ...

    def hold_back(self) -> bool: ...

    def give_up(self) -> bool: ...


class RegionYielded(Exception):
    """A waiter's turn gave up its wait for the device's lock (the lock was not taken)."""


class RegionLock:
    """A device's lock, granted by priority (see the module); `with lock:` waits at priority 0."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self._asking: list[tuple[int, int]] = []       # (-priority, the order asked) of each waiter
        self._order = itertools.count()

    def acquire(self, turn: Turn | None = None) -> bool:
        """Wait for the lock: True once held; False when turn gave up first."""
        with self._cond:
            me = (-(turn.priority if turn is not None else 0), next(self._order))
            self._asking.append(me)
            try:
                if turn is not None:
                    turn.asked()
                while True:
                    if not self._held and min(self._asking) == me and (turn is None or not turn.hold_back()):
                        self._held = True
                        return True
                    if turn is not None and turn.give_up():
                        return False
                    self._cond.wait(WAKE_SECONDS)
            finally:
                self._asking.remove(me)
                self._cond.notify_all()       # the next waiter may be first now

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def nudge(self) -> None:
        """Wake the waiters: what their turns read has changed."""
        with self._cond:
            self._cond.notify_all()

    def locked(self) -> bool:
        return self._held

    def __enter__(self) -> "RegionLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_LOCKS: dict[str, RegionLock] = {}
_GUARD = threading.Lock()


def device_lock(identity: str) -> RegionLock:
    """The process-wide lock of the device with this identity."""
    with _GUARD:
        lock = _LOCKS.get(identity)
        if lock is None:
            lock = _LOCKS[identity] = RegionLock()
        return lock


def nudge_all() -> None:
    """Wake every device lock's waiters (a ready queue changed: their turns read it)."""
    with _GUARD:
        locks = list(_LOCKS.values())
    for lock in locks:
        lock.nudge()


@dataclasses.dataclass
class Region:
    """A kernel region's moments (seconds since the epoch): the lock taken
    (start) and released (end; 0.0 while the block runs)."""
    start: float = 0.0
    end: float = 0.0


@contextlib.contextmanager
def kernel_region(identity: str, timeline: Timeline | None = None, job: str = "", partition: int = -1,
                  worker: str = "", turn: Turn | None = None) -> Iterator[Region]:
    """Hold the device's lock for the block, which gets a Region; with a
    timeline, LOCK_WAIT when asking, GPU_START once held, GPU_END when
    released (the Region's moments are those events'). turn: asked with it
    (see the module); RegionYielded, before the block, when it gave up
    (LOCK_YIELD on the timeline)."""
    lock = device_lock(identity)
    region = Region()
    if timeline is not None:
        timeline.emit("LOCK_WAIT", job, partition, worker, identity)
    if not lock.acquire(turn):
        if timeline is not None:
            timeline.emit("LOCK_YIELD", job, partition, worker, identity)
        raise RegionYielded(f"job {job} partition {partition}: its wait for {identity}'s lock given up")
    try:
        region.start = timeline.emit("GPU_START", job, partition, worker, identity).t if timeline is not None \
            else time.time()
        try:
            yield region
        finally:
            region.end = timeline.emit("GPU_END", job, partition, worker, identity).t if timeline is not None \
                else time.time()
    finally:
        lock.release()
