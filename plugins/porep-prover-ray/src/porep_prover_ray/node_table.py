# SPDX-License-Identifier: Apache-2.0
"""The node engines of one cluster, as the head starts and watches them:
one NodeEngine actor per node that joins (placed on it, named
porep-prover-node-ID in ray.namespace, found again there when it exists,
given all the node's CPUs and GPUs), ready once it answers, failed when it
cannot start, and its status read at each look."""
from __future__ import annotations

import logging
import time

from .node_engine import NodeEngine
from .node_records import FAILED, READY, STARTING, NodeRecord

LOG = logging.getLogger("porep_prover.ray")
STATUS_WAIT_SECONDS = 2.0  # a look waits this long at most for the nodes' status


class NodeTable:
    """The nodes of a cluster. settings: RaySettings; config_values: what
    each node's engine is made from; cond: the cluster's lock (records and
    their in_flight change under it)."""

    def __init__(self, settings, config_values: dict, cond):
        self.settings, self.config_values, self.cond = settings, config_values, cond
        self.records: dict[str, NodeRecord] = {}

    def look(self) -> list[tuple[NodeRecord, str]]:
        """Nodes that joined get an engine; engines that started become ready
        (or failed); every ready node's status is read. Returns the nodes to
        be taken as lost, each with why: it left the cluster, or its engine
        is gone."""
        import ray
        s = self.settings
        alive = {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}
        for node_id, info in alive.items():
            resources = info.get("Resources", {})
            if node_id not in self.records and (not s.node_resource or resources.get(s.node_resource, 0) > 0):
                self._start_engine(node_id, info["NodeManagerAddress"], resources)
        gone = []
        for node in list(self.records.values()):
            if node.state in (STARTING, READY) and node.node_id not in alive:
                gone.append((node, "the node left the cluster"))
            elif node.state == STARTING:
                self._check_started(node)
        return gone + self._read_status()

    def ready(self) -> list[NodeRecord]:
        with self.cond:
            return [n for n in self.records.values() if n.state == READY]

    def kill(self, node: NodeRecord) -> None:
        """End the node's actor (its resources go back to Ray); nothing when it is gone already."""
        import ray
        try:
            ray.kill(node.actor, no_restart=True)
        except Exception as exc:  # noqa: BLE001 - already gone
            LOG.debug("node %s: kill: %s", node.label, exc)

    def _start_engine(self, node_id: str, address: str, resources: dict) -> None:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        s = self.settings
        node = NodeRecord(node_id, address)
        node.actor = ray.remote(NodeEngine).options(
            name=f"porep-prover-node-{node_id}", namespace=s.namespace, get_if_exists=True,
            num_cpus=resources.get("CPU", 0), num_gpus=resources.get("GPU", 0), max_restarts=0,
            max_concurrency=s.partitions_per_node + 4,        # the partitions, and status / preload beside them
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
        ).remote(self.config_values, node_id)
        node.ready_ref = node.actor.status.remote()
        with self.cond:
            self.records[node_id] = node
        LOG.info("node %s joined: starting its engine", node.label)

    def _check_started(self, node: NodeRecord) -> None:
        import ray
        done, _ = ray.wait([node.ready_ref], timeout=0)
        if done:
            try:
                node.report = ray.get(node.ready_ref)
            except Exception as exc:  # noqa: BLE001 - the engine did not start there: say why
                self._fail(node, f"its engine did not start: {cause(exc)}")
                return
            with self.cond:
                node.state = READY
                self.cond.notify_all()
            LOG.info("node %s ready: %s", node.label, ", ".join(node.report.get("devices", [])))
        elif time.monotonic() - node.started > self.settings.node_start_timeout:
            self._fail(node, f"its engine did not start in {self.settings.node_start_timeout:.0f} s "
                             "(ray.node_start_timeout_seconds)")

    def _fail(self, node: NodeRecord, why: str) -> None:
        LOG.error("node %s: %s", node.label, why)
        with self.cond:
            node.state, node.why = FAILED, why
        self.kill(node)

    def _read_status(self) -> list[tuple[NodeRecord, str]]:
        """Each ready node's report, and its keys: those resident there and those of its partitions in flight."""
        import ray
        asks = {n.actor.status.remote(): n for n in self.ready()}
        if not asks:
            return []
        done, _ = ray.wait(list(asks), num_returns=len(asks), timeout=STATUS_WAIT_SECONDS)
        gone = []
        for ref in done:
            node = asks[ref]
            try:
                report = ray.get(ref)
            except Exception as exc:  # noqa: BLE001 - a dead actor: its partitions go elsewhere
                gone.append((node, f"its engine is gone: {cause(exc)}"))
                continue
            with self.cond:
                node.report = report
                node.keys = {e["key"] for e in report["srs"]} | node.keys_in_flight()
        return gone


def cause(exc: BaseException) -> str:
    """An exception in one line: its type and its message's last line (Ray's carry a traceback)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"
