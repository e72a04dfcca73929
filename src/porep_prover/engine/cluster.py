# SPDX-License-Identifier: Apache-2.0
"""Partitions proved past this host: the contract between an engine and a
cluster plugin (engine.cluster names one a plugin registered).

    Engine(config)            engine.cluster = "NAME": registry.cluster(NAME)(config, registry) -> a Cluster
      cluster.start(work)     its own threads take partitions from work (the job table, in the
                              scheduler's order: priorities hold across the cluster), prove each
                              on a node, and hand back its proof or its failure

The engine keeps what it keeps for this host: the job table (retries,
cancellation, each job's on_partition, progress), the result sinks and
hooks, the handles. The cluster keeps the nodes: where each partition goes,
and which come back because their node was lost. The engine layer knows
no cluster library; a plugin brings one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .jobs import Job, PartitionTask, PartitionTimings

if TYPE_CHECKING:
    from ..groth16.proof import Proof
    from .timeline import Timeline


@runtime_checkable
class Cluster(Protocol):
    """What a cluster factory makes (registry.add_cluster(name, factory);
    factory(config, registry): config the EngineConfig, registry the
    engine's; it raises ConfigError for bad settings of its own and connects
    nothing yet).

    start(work): connect, find or start the node engines, and prove what
        work hands out (a ClusterWork) until work.stopping or stop().
    stop(deadline): end its threads by deadline (time.monotonic(); None: no
        limit) and release what it started.
    status(): JSON types: {"name", "address", "nodes": [{"node_id",
        "address", "state", "devices", "srs", "partitions_done",
        "partitions_failed", "partitions_rerun", "in_flight", ...}]}; a node
        may add "label" (its name in the metrics) and "device_figures"
        ([{"label", "efficiency", "busy_seconds", "regions", ...}]: its
        devices' own, from its timeline), which the daemon's metrics export.
    preload(job): the job's parameters loaded on every node; a dict as
        Engine.preload's, with "nodes" (how many loaded them).
    evict_srs(key): the parameter set dropped on every node: bytes freed
        (None when no node had it loaded, or it is in use)."""

    def start(self, work: "ClusterWork") -> None: ...

    def stop(self, deadline: float | None) -> None: ...

    def status(self) -> dict[str, Any]: ...

    def preload(self, job: Job) -> dict[str, Any]: ...

    def evict_srs(self, key: str) -> int | None: ...


class WorkTable(Protocol):
    """What ClusterWork reads and tells of the engine's job table (a
    job_table.JobTable; named by its parts here, as job_table's own imports
    reach this module through the registry)."""
    stopping: bool

    def next_task(self, timeout: float) -> PartitionTask | None: ...

    def is_active(self, job_id: str) -> bool: ...

    def partition_proved(self, task: PartitionTask, proof: Proof, public: list[int], timings: PartitionTimings,
                         worker: str) -> None: ...

    def failed(self, task: PartitionTask, exc: BaseException, worker: str) -> None: ...

    def returned(self, task: PartitionTask) -> None: ...


class ClusterWork:
    """An engine's partitions, as a cluster takes and returns them. Every
    partition next_task hands out must come back once: proved, failed or
    returned. table: the engine's JobTable; timeline: its Timeline."""

    def __init__(self, table: WorkTable, timeline: Timeline):
        self._table, self._timeline = table, timeline

    @property
    def stopping(self) -> bool:
        """The engine stops: hand out nothing more, end the threads."""
        return self._table.stopping

    def next_task(self, timeout: float) -> PartitionTask | None:
        """The scheduler's next partition (a PartitionTask), in flight from
        now; None after timeout seconds without one, or once stopping."""
        return self._table.next_task(timeout)

    def is_active(self, job_id: str) -> bool:
        """Whether the job is still in the engine (not finished or cancelled)."""
        return self._table.is_active(job_id)

    def sent(self, task: PartitionTask, node: str) -> None:
        """The partition left for node (a timeline event, PARTITION_SENT)."""
        self._timeline.emit("PARTITION_SENT", task.job.id, task.index, node)

    def proved(self, task: PartitionTask, proof: Proof, public: list[int], timings: PartitionTimings,
               node: str) -> None:
        """The partition's proof, verified on node: the job's on_partition,
        then its place in the job's result (the job concludes with its last)."""
        self._timeline.emit("PARTITION_PROVED", task.job.id, task.index, node)
        self._table.partition_proved(task, proof, public, timings, node)

    def failed(self, task: PartitionTask, exc: BaseException, node: str) -> None:
        """The partition failed with exc: tried again while its retries last
        and a retry may pass (prover.max_retries), else its job fails."""
        self._table.failed(task, exc, node)

    def returned(self, task: PartitionTask, node: str) -> None:
        """The partition comes back unproved through no fault of its own (its
        node was lost): to the scheduler again, its attempt not counted."""
        self._timeline.emit("PARTITION_RETURNED", task.job.id, task.index, node)
        self._table.returned(task)
