# SPDX-License-Identifier: Apache-2.0
import pytest

porep_prover_schedulers = pytest.importorskip("porep_prover_schedulers.plugin")

from porep_prover.engine import Job, PartitionTask  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402


def drain(s):
    out = []
    while (t := s.pop()) is not None:
        out.append((t.job.id, t.index))
    return out


def test_found_through_the_entry_point():
    registry = collect_registry(plugin_manager())
    assert {"fifo", "priority"} <= set(registry.schedulers)
    assert type(registry.scheduler("priority")).__name__ == "PriorityScheduler"


def test_priority_then_submission_then_partition_order():
    low, high, high2 = Job("inline", 2, priority=0), Job("inline", 2, priority=5), Job("inline", 1, priority=5)
    s = porep_prover_schedulers.PriorityScheduler()
    for job in (low, high, high2):
        for i in reversed(range(job.partitions)):
            s.push(PartitionTask(job, i))
    assert len(s) == 5
    assert drain(s) == [(high.id, 0), (high.id, 1), (high2.id, 0), (low.id, 0), (low.id, 1)]
    assert len(s) == 0


def test_fifo_keeps_push_order():
    a, b = Job("inline", 2, priority=0), Job("inline", 1, priority=9)
    s = porep_prover_schedulers.FifoScheduler()
    for task in (PartitionTask(a, 1), PartitionTask(b, 0), PartitionTask(a, 0)):
        s.push(task)
    assert drain(s) == [(a.id, 1), (b.id, 0), (a.id, 0)]
