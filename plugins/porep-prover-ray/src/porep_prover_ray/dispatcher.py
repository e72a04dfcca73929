# SPDX-License-Identifier: Apache-2.0
"""RayCluster: an engine's partitions spread over the node engines of a
Ray cluster (engine.cluster = "ray").

    watcher     every ray.poll_seconds: nodes that joined get an engine (a NodeEngine actor
                placed on the node, named porep-prover-node-ID in ray.namespace, found again
                when it is there); nodes that left are lost; each node's status is read
    dispatcher  while a ready node has room: the job table's next partition (the scheduler's
                order: priorities hold across the cluster) to the node that has its
                parameters resident, else the least busy
    collector   each partition's answer: its proof (verified on the node) to the job table,
                its failure (tried again there, on any node), or, when its node or actor is
                gone, the partition back to the scheduler without counting an attempt

Only a job's payload travels (put in Ray's object store once, fetched once
per node) and, for a kind no plugin on the node serves, the head's
provider; synthesis happens on the node.
"""
from __future__ import annotations

import logging
import queue
import socket
import threading
import time

from porep_prover.engine import PartitionTimings
from porep_prover.errors import EngineError, InvalidInputError
from porep_prover.groth16 import Proof

from .node_records import LOST, READY, STARTING, NodeRecord, Sent, has_room, pick
from .node_table import STATUS_WAIT_SECONDS, NodeTable, cause
from .settings import RaySettings

LOG = logging.getLogger("porep_prover.ray")
MAX_RETURNS = 8            # a partition given back this often (its nodes lost) fails instead
IDLE_SECONDS = 0.5
CONNECT_SECONDS = 10.0     # the head's address must accept a connection within this


def _ray():
    try:
        import ray
    except ImportError:
        raise EngineError("engine.cluster = \"ray\" needs Ray: python3 -m pip install \"porep-prover[ray]\"") from None
    return ray


class RayCluster:
    """The cluster "ray" (see engine.Cluster). config: the EngineConfig
    (its [ray] section: RaySettings; the rest is each node engine's);
    registry: the engine's (its providers name the jobs' parameters here and
    travel to nodes that lack them). ConfigError for bad [ray] settings."""

    def __init__(self, config, registry):
        self.settings = RaySettings.resolve(config)
        self.config_values = dict(config.values)
        self.registry = registry
        self.address = ""
        self._pending: dict = {}                    # ObjectRef -> Sent
        self._returns: dict = {}                    # (job id, partition) -> times given back
        self._refs: dict = {}                       # job id / "provider KIND" -> [ObjectRef]
        self._refs_lock = threading.Lock()          # _refs and _returns (the put of a payload may take a while)
        self._answers: queue.SimpleQueue = queue.SimpleQueue()
        self._cond = threading.Condition()
        self.nodes = NodeTable(self.settings, self.config_values, self._cond)
        self._halt = threading.Event()
        self._threads: list[threading.Thread] = []
        self._connected_here = False
        self._work = None

    # ------------------------------------------------------------ start and stop

    def start(self, work) -> None:
        """Connect to ray.address (unless this process is connected already),
        start an engine on every node there, and prove what work hands out.
        EngineError when Ray is missing or no cluster answers there."""
        ray, s = _ray(), self.settings
        if not ray.is_initialized():
            _answers_at(s.address)
            try:
                ray.init(address=None if s.address == "local" else s.address, namespace=s.namespace,
                         log_to_driver=False, include_dashboard=False if s.address == "local" else None)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise EngineError(f"ray.address {s.address!r}: no Ray cluster answers ({exc}); start one with "
                                  "`ray start --head` and join the hosts with `ray start --address HEAD:6379`") \
                    from None
            self._connected_here = True
        self.address = ray.get_runtime_context().gcs_address
        self._work = work
        self._watch()
        for name, loop in (("ray-watcher", self._watch_loop), ("ray-dispatcher", self._dispatch_loop),
                           ("ray-collector", self._collect_loop)):
            thread = threading.Thread(target=loop, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, deadline: float | None) -> None:
        ray = _ray()
        self._halt.set()
        self._answers.put(None)
        with self._cond:
            self._cond.notify_all()
            nodes = list(self.nodes.records.values())
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        for node in nodes:
            if node.state in (STARTING, READY):
                self.nodes.kill(node)
        if self._connected_here:
            ray.shutdown()

    # ------------------------------------------------------------ nodes

    def _watch_loop(self) -> None:
        while not self._halt.wait(self.settings.poll_seconds):
            try:
                self._watch()
            except Exception:  # noqa: BLE001 - the next look tries again
                LOG.exception("looking at the cluster's nodes failed")

    def _watch(self) -> None:
        """Nodes joined, started and lost (NodeTable.look); a partition past
        twice ray.partition_timeout_seconds without an answer loses its node."""
        for node, why in self.nodes.look():
            self._lose(node, why)
        limit = 2 * self.settings.partition_timeout
        with self._cond:
            late = [sent for sent in self._pending.values() if time.monotonic() - sent.at_monotonic > limit]
        for sent in late:
            self._lose(sent.node, f"no answer for partition {sent.task.index} of job {sent.task.job.id} "
                                  f"in {limit:.0f} s")

    def _lose(self, node: NodeRecord, why: str) -> None:
        """The node's partitions in flight back to the scheduler, uncounted."""
        with self._cond:
            if node.state not in (STARTING, READY):
                return
            node.state, node.why = LOST, why
            gone = [self._pending.pop(ref) for ref in list(node.in_flight) if ref in self._pending]
            node.in_flight.clear()
            node.rerun += len(gone)
            self._cond.notify_all()
        LOG.warning("node %s lost (%s): %d partitions in flight go to other nodes", node.label, why, len(gone))
        for sent in gone:
            self._give_back(sent)
        self.nodes.kill(node)

    def _give_back(self, sent: Sent) -> None:
        task = sent.task
        where = (task.job.id, task.index)
        with self._refs_lock:
            self._returns[where] = returns = self._returns.get(where, 0) + 1
        if returns > MAX_RETURNS:
            self._work.failed(task, EngineError(f"partition {task.index} of job {task.job.id}: its node was lost "
                                                f"{MAX_RETURNS} times"), sent.node.label)
        else:
            self._work.returned(task, sent.node.label)

    # ------------------------------------------------------------ partitions

    def _dispatch_loop(self) -> None:
        work, per_node = self._work, self.settings.partitions_per_node
        while not self._halt.is_set() and not work.stopping:
            with self._cond:
                if not has_room(self.nodes.records.values(), per_node):
                    self._cond.wait(IDLE_SECONDS)
                    continue
            task = work.next_task(IDLE_SECONDS)
            if task is not None:
                self._send(task)

    def _send(self, task) -> None:
        """The partition to a node (or back to the scheduler when its node vanished just now)."""
        job = task.job
        try:
            key = self.registry.provider(job.kind).srs_key(job)
            spec = self._spec(job)
        except Exception as exc:  # noqa: BLE001 - the job's own failure
            self._work.failed(task, exc, "ray")
            return
        with self._cond:
            node = pick(self.nodes.records.values(), key, self.settings.partitions_per_node)
            if node is not None:
                ref = node.actor.prove.remote(spec, task.index, self.settings.partition_timeout)
                self._pending[ref] = Sent(task, node, key, time.time(), time.monotonic())
                node.in_flight[ref] = key
                node.keys.add(key)
                node.sent += 1
        if node is None:
            self._work.returned(task, "ray")
            return
        self._work.sent(task, node.label)
        ref.future().add_done_callback(lambda future, ref=ref: self._answers.put((ref, future)))

    def _spec(self, job) -> dict:
        """What travels for a job: its payload and its kind's provider, each put
        in the object store once (by the dispatcher's thread, or a preload's).
        InvalidInputError when one cannot be sent."""
        ray = _ray()
        with self._refs_lock:
            if job.id not in self._refs:             # a new job: the payloads of jobs that ended go
                self._refs = {k: v for k, v in self._refs.items() if k.startswith("provider ") or
                              self._work.is_active(k)}
                self._returns = {k: v for k, v in self._returns.items() if self._work.is_active(k[0])}
            for name, value in ((job.id, job.payload), (f"provider {job.kind}", self.registry.provider(job.kind))):
                if name not in self._refs:
                    try:
                        self._refs[name] = [ray.put(value)]
                    except Exception as exc:  # noqa: BLE001 - pickling: not retried, it would fail the same way
                        what = "payload" if name == job.id else name
                        raise InvalidInputError(f"the {what} of job {job.id} cannot be sent to the cluster's "
                                                f"nodes: {type(exc).__name__}: {exc}") from None
            return {"kind": job.kind, "partitions": job.partitions, "priority": job.priority, "job_id": job.id,
                    "payload": self._refs[job.id], "provider": self._refs[f"provider {job.kind}"]}

    def _collect_loop(self) -> None:
        while (answer := self._answers.get()) is not None:
            try:
                self._collect(*answer)
            except Exception:  # noqa: BLE001 - one answer's trouble is logged; the loop goes on
                LOG.exception("collecting a partition's answer failed")

    def _collect(self, ref, future) -> None:
        ray = _ray()
        with self._cond:
            sent = self._pending.pop(ref, None)
            if sent is None:
                return                     # its node was lost: the partition went elsewhere
            sent.node.in_flight.pop(ref, None)
            self._cond.notify_all()
        task, node = sent.task, sent.node
        try:
            answer = future.result()
        except ray.exceptions.RayTaskError as exc:       # the node's method raised: the partition failed
            self._count_failure(node)
            self._work.failed(task, EngineError(f"node {node.label}: {cause(exc)}"), node.label)
            return
        except Exception as exc:  # noqa: BLE001 - the actor or its node is gone
            with self._cond:
                self._pending[ref] = sent
                node.in_flight[ref] = sent.key
            self._lose(node, f"its engine is gone: {cause(exc)}")
            return
        if "error" in answer:
            self._count_failure(node)
            self._work.failed(task, answer["error"], node.label)
            return
        try:
            proof = Proof.from_bytes(answer["proof"])
        except Exception as exc:  # noqa: BLE001 - a damaged answer fails the partition
            self._count_failure(node)
            self._work.failed(task, exc, node.label)
            return
        with self._cond:
            node.done += 1
            node.dispatch_seconds += max(0.0, time.monotonic() - sent.at_monotonic - answer["seconds"])
        self._work.proved(task, proof, answer["public"], _timings(task.job, sent, answer["timings"]), node.label)

    def _count_failure(self, node: NodeRecord) -> None:
        with self._cond:
            node.failed += 1

    # ------------------------------------------------------------ asking

    def status(self) -> dict:
        with self._cond:
            nodes = [n.view() for n in self.nodes.records.values()]
        return {"name": "ray", "address": self.address, "namespace": self.settings.namespace,
                "nodes_ready": sum(1 for n in nodes if n["state"] == READY), "nodes": nodes}

    def preload(self, job) -> dict:
        """The job's parameters loaded on every ready node, each for itself."""
        spec = self._spec(job)
        with self._cond:
            actors = [n.actor for n in self.nodes.records.values() if n.state == READY]
        answers = _gather([a.preload.remote(spec) for a in actors], self.settings.node_start_timeout, "preload")
        key = self.registry.provider(job.kind).srs_key(job)
        return {"key": key, "seconds": max((a["seconds"] for a in answers), default=0.0),
                "bytes": sum(a["bytes"] for a in answers),
                "already_loaded": bool(answers) and all(a["already_loaded"] for a in answers), "nodes": len(answers)}

    def evict_srs(self, key: str) -> int | None:
        with self._cond:
            actors = [n.actor for n in self.nodes.records.values() if n.state == READY]
        freed = [b for b in _gather([a.evict.remote(key) for a in actors], STATUS_WAIT_SECONDS * 5, "evict")
                 if b is not None]
        return sum(freed) if freed else None


def _gather(refs: list, timeout: float, what: str) -> list:
    """The nodes' answers to a call on each; what a node's engine raised
    (its own exception), or EngineError when one does not answer in time."""
    ray = _ray()
    try:
        return ray.get(refs, timeout=timeout)
    except ray.exceptions.GetTimeoutError:
        raise EngineError(f"{what}: a node did not answer within {timeout:.0f} s") from None
    except ray.exceptions.RayTaskError as exc:
        raise exc.cause if isinstance(exc.cause, Exception) else EngineError(f"{what}: {cause(exc)}") from None
    except ray.exceptions.RayError as exc:
        raise EngineError(f"{what}: a node's engine is gone: {cause(exc)}") from None


def _answers_at(address: str) -> None:
    """EngineError unless something accepts a connection at a HOST:PORT
    address within CONNECT_SECONDS (Ray's own connect would retry for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if address in ("auto", "local"):
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise EngineError(f"ray.address {address!r}: nothing answers there ({exc}); start the cluster with "
                          "`ray start --head` on that host") from None


def _timings(job, sent: Sent, node_timings: dict) -> PartitionTimings:
    """The node's timings of a partition, seen from the head: its wait
    before it left counts in queue_wait, and total runs from the job's
    submission here to its answer's arrival."""
    before = max(0.0, sent.at - job.submitted)
    return PartitionTimings(queue_wait=before + node_timings["queue_wait"], srs_load=node_timings["srs_load"],
                            synthesis=node_timings["synthesis"], gpu_compute=node_timings["gpu_compute"],
                            total=max(0.0, time.time() - job.submitted), started=node_timings["started"])
