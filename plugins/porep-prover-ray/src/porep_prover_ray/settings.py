# SPDX-License-Identifier: Apache-2.0
"""The [ray] settings: declared by this plugin (declare_settings, through
the hook porep_prover_register_settings), which checks their types and
ranges wherever a config is read with the plugin's sections; checked
further here: where the cluster is, its namespace, which nodes prove."""
from __future__ import annotations

import dataclasses
import re

from porep_prover.errors import ConfigError
from porep_prover.hooks import SettingsRegistry

NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
HOST_PORT = re.compile(r"^(?P<host>[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})$")
MAX_PARTITIONS_PER_NODE = 256
MAX_START_SECONDS = 86400.0
MAX_PARTITION_SECONDS = 7 * 86400.0


def declare_settings(settings: SettingsRegistry) -> None:
    """The [ray] section (each key explained at length in contrib/porep-prover.example.toml)."""
    (settings.section("ray", 'The Ray cluster that proves the partitions where engine.cluster = "ray"')
        .string("address", "auto", '"auto", "local", "HOST:PORT" (the head) or "ray://HOST:PORT"')
        .string("namespace", "porep-prover", "the Ray namespace of the node engines")
        .string("node_resource", "", 'only nodes with this Ray resource get an engine; "" = every node')
        .integer("partitions_per_node", 2, 1, MAX_PARTITIONS_PER_NODE, "partitions in flight on a node at once")
        .number("poll_seconds", 1.0, 0.05, 60, "seconds between looks at the cluster's nodes")
        .number("node_start_timeout_seconds", 300.0, 1, MAX_START_SECONDS, "seconds a node's engine may take to start")
        .number("partition_timeout_seconds", 3600.0, 1, MAX_PARTITION_SECONDS,
                "seconds a partition may take on a node before it is tried again"))


def _values(config) -> dict:
    """config's [ray] keys over their defaults: a config read without this
    plugin's sections has none of them, and so none set."""
    declared = SettingsRegistry()
    declare_settings(declared)
    return {**declared.defaults(), **{f"ray.{k}": v for k, v in config.section("ray").items()}}


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
        get = _values(config).get
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
