# SPDX-License-Identifier: Apache-2.0
"""Schedulers for porep-prover: "fifo" (submission order; the engine's
built-in one under a name) and "priority"
(the job's priority first, larger earlier; then submission order; a job's
partitions in order). Select with the setting engine.scheduler."""
from __future__ import annotations

import heapq

from porep_prover.engine import FifoScheduler  # the engine's own: submission order
from porep_prover.hooks import hookimpl

__all__ = ["FifoScheduler", "PriorityScheduler"]


class PriorityScheduler:
    """Highest job priority first; among equals, the job submitted first, then
    its partitions in order (so one job's partitions finish together). Tasks
    are engine.PartitionTask objects."""

    def __init__(self):
        self._heap: list = []
        self._n = 0

    def push(self, task) -> None:
        self._n += 1
        heapq.heappush(self._heap, (-task.job.priority, task.job.seq, task.index, self._n, task))

    def pop(self):
        return heapq.heappop(self._heap)[-1] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)


@hookimpl
def porep_prover_register_schedulers(registry) -> None:
    registry.add_scheduler("fifo", FifoScheduler)
    registry.add_scheduler("priority", PriorityScheduler)
