# SPDX-License-Identifier: Apache-2.0
"""The [ray] settings, checked beyond their types (the engine's schema
checks those): where the cluster is, its namespace, which nodes prove."""
from __future__ import annotations

import dataclasses
import re

from porep_prover.errors import ConfigError

NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
HOST_PORT = re.compile(r"^(?P<host>[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})$")


@dataclasses.dataclass(frozen=True)
class RaySettings:
    """address: "auto" (the cluster `ray start` joined this host to), "local"
    (a Ray of this process alone: one node, for trying), "HOST:PORT" (the
    head's GCS) or "ray://HOST:PORT" (Ray Client); namespace: where the node
    engines are named actors; node_resource: only nodes with this Ray
    resource get an engine ("": every node; "GPU": nodes with GPUs);
    partitions_per_node: partitions in flight on a node at once (one
    synthesized while another is proved); poll_seconds: how often nodes
    joining and lost are looked for; node_start_timeout: seconds a node's
    engine may take to start; partition_timeout: seconds a partition may
    take on a node before it is given up and tried again."""
    address: str
    namespace: str
    node_resource: str
    partitions_per_node: int
    poll_seconds: float
    node_start_timeout: float
    partition_timeout: float

    @classmethod
    def resolve(cls, config) -> "RaySettings":
        """From an EngineConfig; ConfigError naming the key of a bad value."""
        get = config.get
        address = get("ray.address").strip()
        if not _address_ok(address):
            raise ConfigError(f"setting 'ray.address' must be \"auto\", \"local\", \"HOST:PORT\" or "
                              f"\"ray://HOST:PORT\" (port 1 to 65535), got {get('ray.address')!r}", key="ray.address")
        if not NAME.match(get("ray.namespace")):
            raise ConfigError("setting 'ray.namespace' must be 1 to 128 letters, digits or _ . : -, got "
                              f"{get('ray.namespace')!r}", key="ray.namespace")
        resource = get("ray.node_resource")
        if resource and not NAME.match(resource):
            raise ConfigError("setting 'ray.node_resource' must be \"\" (every node) or a Ray resource's name "
                              f"(letters, digits, _ . : -), got {resource!r}", key="ray.node_resource")
        return cls(address, get("ray.namespace"), resource, get("ray.partitions_per_node"),
                   float(get("ray.poll_seconds")), float(get("ray.node_start_timeout_seconds")),
                   float(get("ray.partition_timeout_seconds")))


def _address_ok(address: str) -> bool:
    if address in ("auto", "local"):
        return True
    match = HOST_PORT.match(address.removeprefix("ray://"))
    return match is not None and 1 <= int(match["port"]) <= 65535
