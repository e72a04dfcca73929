# SPDX-License-Identifier: Apache-2.0
"""The ready queue: synthesized partitions waiting for a device worker,
handed out by priority, and the turns their device workers ask the
device's lock with (interlock.RegionLock).

Order: the highest job priority first; among equals, the order they came
in (so equal priorities keep the engine's first come, first served). A mark
(the stop mark: priority None) goes after every partition.

Bound: at most `maxsize` items, and one more only for a partition of a
priority higher than every item queued (an urgent partition is never held
back by a queue full of less urgent ones; a second urgent one of the same
priority waits). So the queue never holds more than maxsize + 1, and what
it holds is in the host memory admission's count as before (each partition
reserved its bytes at its synthesis's start).

Turns: a partition taken (get, swap) counts as on its way to the device
whose worker took it until that worker asks for the device's lock
(Turn.asked) or lets it go (done). While a worker waits for the lock, it
is held back (Turn.hold_back) while a partition of a higher priority than
its own is on its way to its device, and gives up its wait (Turn.give_up)
while one sits in the queue: it then swaps its partition for that one.
So the next holder of a device's lock is the most urgent partition ready
for it, and an urgent partition waits for the region under way alone.
"""
from __future__ import annotations

import heapq
import itertools
import queue
import threading
from typing import Callable, Generic, TypeVar

from .interlock import nudge_all

T = TypeVar("T")
_LAST = 1 << 62                # a mark's place: after every partition


class ReadyQueue(Generic[T]):
    """Items by priority (see the module). priority(item): the item's job
    priority, or None for a mark (never urgent, never on its way to a device)."""

    def __init__(self, maxsize: int, priority: Callable[[T], int | None]):
        self.maxsize, self._priority = maxsize, priority
        self._cond = threading.Condition()
        self._heap: list[tuple[int, int, int, T]] = []     # (mark?, -priority, order, item)
        self._orders = itertools.count()
        # id(item) -> (order, device, priority) from get to done; device "" once its worker asked for the lock
        self._taken: dict[int, tuple[int, str, int]] = {}

    def qsize(self) -> int:
        with self._cond:
            return len(self._heap)

    def put(self, item: T, timeout: float | None = None) -> None:
        """Queue item, waiting while there is no room for it (the bound, see
        the module); queue.Full after timeout seconds (None: no limit)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._room(item), timeout):
                raise queue.Full
            self._push(item, next(self._orders))
        nudge_all()

    def get(self, device: str) -> T:
        """The most urgent item, waiting for one; a partition counts as on
        its way to device until its turn is asked or done."""
        with self._cond:
            self._cond.wait_for(lambda: bool(self._heap))
            item = self._pop(device)
        nudge_all()
        return item

    def swap(self, item: T, device: str) -> T:
        """item back in its place (its first order) for the most urgent
        partition queued, when that one's priority is higher than item's;
        else item itself. Either way the one returned is on its way to device."""
        with self._cond:
            order = self._taken.pop(id(item), (next(self._orders), "", 0))[0]
            if self._more_urgent_queued(item):
                self._push(item, order)
                item = self._pop(device)
            else:
                self._taken[id(item)] = (order, device, self._priority(item) or 0)
        nudge_all()
        return item

    def done(self, item: T) -> None:
        """item no longer on its way to a device (its worker asked for the
        lock, dropped it or failed): once; again does nothing."""
        with self._cond:
            gone = self._taken.pop(id(item), None)
        if gone is not None:
            nudge_all()

    def turn(self, item: T, device: str) -> "Turn[T]":
        """The turn item's worker asks device's lock with."""
        return Turn(self, item, device)

    # ------------------------------------------------------------ (the caller holds the condition)

    def _room(self, item: T) -> bool:
        if len(self._heap) < self.maxsize:
            return True
        priority = self._priority(item)
        return len(self._heap) == self.maxsize and priority is not None and \
            all(mark == 0 and -neg < priority for mark, neg, _, _ in self._heap)

    def _push(self, item: T, order: int) -> None:
        priority = self._priority(item)
        heapq.heappush(self._heap, (0, -priority, order, item) if priority is not None else (1, -_LAST, order, item))
        self._cond.notify_all()

    def _pop(self, device: str) -> T:
        _, _, order, item = heapq.heappop(self._heap)
        priority = self._priority(item)
        if priority is not None:
            self._taken[id(item)] = (order, device, priority)
        self._cond.notify_all()
        return item

    def _more_urgent_queued(self, item: T) -> bool:
        return bool(self._heap) and self._heap[0][0] == 0 and -self._heap[0][1] > (self._priority(item) or 0)

    def _more_urgent_coming(self, item: T, device: str) -> bool:
        mine = self._priority(item) or 0
        return any(d == device and p > mine for _, d, p in self._taken.values())


class Turn(Generic[T]):
    """A device worker's turn at its device's lock for item (interlock.Turn):
    its priority; asked() (called as it joins the lock's waiters: item is
    no longer on its way); hold_back() while a more urgent partition is on
    its way to the device; give_up() while a more urgent one is queued."""

    def __init__(self, ready: ReadyQueue[T], item: T, device: str):
        self._ready, self._item, self._device = ready, item, device
        self.priority = ready._priority(item) or 0

    def asked(self) -> None:
        with self._ready._cond:
            taken = self._ready._taken
            if id(self._item) in taken:
                order, _, priority = taken[id(self._item)]
                taken[id(self._item)] = (order, "", priority)

    def hold_back(self) -> bool:
        with self._ready._cond:
            return self._ready._more_urgent_coming(self._item, self._device)

    def give_up(self) -> bool:
        with self._ready._cond:
            return self._ready._more_urgent_queued(self._item)
