# SPDX-License-Identifier: Apache-2.0
"""A scheduler behind a guard (the job table's, engine/job_table.py).

A scheduler is a plugin: its push, pop and len are calls into code the
engine does not own. The guard keeps its own record of every partition
given to the scheduler and not taken back, in the order given, so that
when the scheduler fails (raises, hands out a partition it was never given,
or reports none while some wait) nothing is lost and no worker dies: the
failure is logged once, the scheduler is no longer called, and the
partitions it held are handed out first come, first served from the guard's
record, with every one pushed after. A call that does not return within
CALL_SECONDS is a failure too: its thread is left to it (the table's lock,
held by the caller, is waited on that long once, never again).

pop_if(wanted) takes the scheduler's next partition only when wanted: one
not wanted is kept aside as the next, and the next pop hands it out first
(the order the scheduler gave stands; one pushed meanwhile comes after it).
"""
from __future__ import annotations

import concurrent.futures
import logging
from typing import TYPE_CHECKING, Callable, TypeVar, TypeVarTuple

from .plugin_calls import PluginLane

if TYPE_CHECKING:
    from .jobs import PartitionTask
    from .registry import Scheduler

_R = TypeVar("_R")
_Ts = TypeVarTuple("_Ts")

LOG = logging.getLogger("porep_prover.engine")
CALL_SECONDS = 5.0       # a scheduler's push or pop is a queue's operation: microseconds, not seconds
_NEVER: concurrent.futures.Future[None] = concurrent.futures.Future()    # a scheduler's calls are not stopped early


def _key(task: PartitionTask) -> tuple[str, int, int]:
    return task.job.id, task.index, task.attempt


class GuardedScheduler:
    """scheduler's push / pop / len until it fails, then the guard's own
    order (see the module); name: the one it is registered by, for the log."""

    def __init__(self, scheduler: Scheduler, name: str = ""):
        self._inner, self._name = scheduler, name
        # the partitions given and not taken back, in the order given
        self._held: dict[tuple[str, int, int], PartitionTask] = {}
        self.failed: str | None = None          # what went wrong with the scheduler, once it did
        self._next: PartitionTask | None = None   # popped by pop_if and not wanted: handed out first
        self._lane = PluginLane(f"scheduler.{self.name}", CALL_SECONDS, setting="a scheduler's limit")

    @property
    def name(self) -> str:
        return self._name or getattr(self._inner, "name", type(self._inner).__name__)

    def push(self, task: PartitionTask) -> None:
        self.push_all([task])

    def push_all(self, tasks: list[PartitionTask]) -> None:
        """The tasks to the scheduler, in order, in one call of its lane."""
        for task in tasks:
            self._held[_key(task)] = task
        if self.failed is None and tasks:
            try:
                self._call("push", _push_each, self._inner, tasks)
            except Exception as exc:  # noqa: BLE001 - a plugin's failure is the plugin's
                self._fail(f"push raised {type(exc).__name__}: {exc}")

    def pop(self) -> PartitionTask | None:
        """The next partition, or None when none waits."""
        if self._next is not None:
            kept, self._next = self._next, None
            return kept
        if not self._held:
            return None
        if self.failed is None:
            try:
                task = self._call("pop", self._inner.pop)
            except Exception as exc:  # noqa: BLE001
                self._fail(f"pop raised {type(exc).__name__}: {exc}")
            else:
                key = None if task is None else _key(task) if hasattr(task, "job") else None
                if key is not None and self._held.get(key) is task:
                    del self._held[key]
                    return task
                self._fail(f"pop returned {'nothing' if task is None else repr(task)[:200]} while "
                           f"{len(self._held)} partitions it was given wait")
        if not self._held:
            return None
        return self._held.pop(next(iter(self._held)))

    def pop_if(self, wanted: Callable[[PartitionTask], bool]) -> PartitionTask | None:
        """The next partition (as pop) when wanted(it); else None, and it stays the next (see the module)."""
        if self._next is None:
            self._next = self.pop()
        task = self._next
        if task is None or not wanted(task):
            return None
        self._next = None
        return task

    def top_priority(self) -> int | None:
        """The highest job priority of the partitions waiting (None: none waits)."""
        waiting = [t.job.priority for t in self._held.values()]
        if self._next is not None:
            waiting.append(self._next.job.priority)
        return max(waiting, default=None)

    def __len__(self) -> int:
        return len(self._held) + (self._next is not None)

    def close(self) -> None:
        """No more calls to the scheduler (what it held is handed out from the
        guard's record); the lane's thread ends."""
        self.failed = self.failed or "closed"
        self._lane.close()

    def _call(self, what: str, fn: Callable[[*_Ts], _R], *args: *_Ts) -> _R:
        return self._lane.call(f"scheduler {self.name}'s {what}", _NEVER, fn, *args)

    def _fail(self, what: str) -> None:
        self.failed = what
        self._lane.close()
        LOG.error("scheduler %s failed (%s): no longer called; its %d partitions and every later one are "
                  "handed out first come, first served", self.name, what, len(self._held))


def _push_each(scheduler: Scheduler, tasks: list[PartitionTask]) -> None:
    for task in tasks:
        scheduler.push(task)
