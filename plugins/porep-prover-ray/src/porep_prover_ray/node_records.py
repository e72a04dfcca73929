# SPDX-License-Identifier: Apache-2.0
"""The head's record of the node engines: each node's state, what it has
in flight and what it has loaded, and where a partition goes next."""
from __future__ import annotations

import dataclasses
import time

STARTING, READY, LOST, FAILED = "starting", "ready", "lost", "failed"


@dataclasses.dataclass
class Sent:
    """A partition on its way: its task, its node, its parameters' key, and
    when it left (time.time() and time.monotonic())."""
    task: object
    node: "NodeRecord"
    key: str
    at: float
    at_monotonic: float


@dataclasses.dataclass
class NodeRecord:
    """One node engine as the head knows it. state: starting (its actor is
    being made), ready, lost (its node left, or its actor died; what it had
    in flight went back to the scheduler) or failed (its engine would not
    start: why says so). dispatch_seconds: the time its proved partitions
    spent outside its engine's prove call (the way there and back), summed.
    keys: the parameter sets resident there, or on
    their way (a partition of that key sent). report: the node's last
    status (NodeEngine.status)."""
    node_id: str
    address: str
    actor: object = None
    state: str = STARTING
    why: str = ""
    started: float = dataclasses.field(default_factory=time.monotonic)
    ready_ref: object = None
    in_flight: dict = dataclasses.field(default_factory=dict)     # ObjectRef -> its parameters' key
    keys: set = dataclasses.field(default_factory=set)
    sent: int = 0
    done: int = 0
    failed: int = 0
    rerun: int = 0
    dispatch_seconds: float = 0.0
    report: dict = dataclasses.field(default_factory=dict)

    def keys_in_flight(self) -> set:
        """The parameters of the partitions it has in flight (caller holds the cluster's lock)."""
        return set(self.in_flight.values())

    @property
    def label(self) -> str:
        """The name timeline events and errors give the node: ray:ADDRESS:ID (its first 8)."""
        return f"ray:{self.address}:{self.node_id[:8]}"

    def view(self) -> dict:
        """The node's entry in the cluster's status (JSON types): label,
        its state, its devices (labels) and their figures over the node's last
        figures_seconds as its last report gave them (NodeEngine.status;
        [] before one came), its parameters, and the head's partition counts."""
        return {"node_id": self.node_id, "label": self.label, "address": self.address, "state": self.state,
                "why": self.why, "devices": list(self.report.get("devices", [])),
                "device_figures": [dict(f) for f in self.report.get("device_figures", [])],
                "figures_seconds": self.report.get("figures_seconds"), "srs": list(self.report.get("srs", [])),
                "partitions_sent": self.sent, "partitions_done": self.done, "partitions_failed": self.failed,
                "partitions_rerun": self.rerun, "in_flight": len(self.in_flight),
                "dispatch_ms": round(1e3 * self.dispatch_seconds / self.done, 3) if self.done else None}


def pick(nodes, key: str, per_node: int) -> NodeRecord | None:
    """Where a partition whose parameters are `key` goes: a ready node with
    room (fewer than per_node in flight), one with those parameters resident
    (or loading) first, then the least busy, then the one sent least (so
    that the nodes share the work); None when no node has room."""
    free = [n for n in nodes if n.state == READY and len(n.in_flight) < per_node]
    if not free:
        return None
    return min(free, key=lambda n: (key not in n.keys, len(n.in_flight), n.sent))


def has_room(nodes, per_node: int) -> bool:
    return any(n.state == READY and len(n.in_flight) < per_node for n in nodes)
