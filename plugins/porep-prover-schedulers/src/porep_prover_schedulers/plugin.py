# SPDX-License-Identifier: Apache-2.0
"""Schedulers for porep-prover: "fifo" (submission order) and "priority"
(the job's priority first, larger earlier; then submission order; a job's
partitions in order): the engine's own, registered under these names for
configurations written for this plugin. Select with engine.scheduler."""
from __future__ import annotations

from porep_prover.engine import FifoScheduler, PriorityScheduler  # the engine's own, under these names
from porep_prover.hooks import hookimpl

__all__ = ["FifoScheduler", "PriorityScheduler"]


@hookimpl
def porep_prover_register_schedulers(registry) -> None:
    registry.add_scheduler("fifo", FifoScheduler)
    registry.add_scheduler("priority", PriorityScheduler)
