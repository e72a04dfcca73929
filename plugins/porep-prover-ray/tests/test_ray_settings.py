# SPDX-License-Identifier: Apache-2.0
"""engine.cluster and the [ray] settings: bad values are named errors, before anything connects."""
import pytest

pytest.importorskip("porep_prover_ray.plugin")

from porep_prover import Engine, load_config  # noqa: E402
from porep_prover.errors import ConfigError, EngineError  # noqa: E402
from porep_prover.hooks import collect_registry, collect_settings, plugin_manager  # noqa: E402

from porep_prover_ray import RayCluster, RaySettings  # noqa: E402


def engine_with(**values):
    pm = plugin_manager()
    config = load_config(overrides={"engine.devices": ["cpu"], **values}, sections=collect_settings(pm))
    return Engine(config, registry=collect_registry(pm), plugins=pm, start=False)


def test_the_plugin_registers_the_cluster():
    registry = collect_registry(plugin_manager())
    assert registry.clusters["ray"] is RayCluster
    loaded = {p["name"]: p["registered"] for p in registry.plugin_report()["loaded"]}
    assert "cluster ray" in loaded["ray"]


def test_an_unknown_cluster_is_named():
    with pytest.raises(EngineError, match="engine.cluster names 'slurm', not registered .*ray"):
        engine_with(**{"engine.cluster": "slurm"})


@pytest.mark.parametrize("key, value", [
    ("ray.address", "nowhere"), ("ray.address", "10.0.0.1:99999"), ("ray.address", "ray://:10001"),
    ("ray.address", ""), ("ray.namespace", ""), ("ray.namespace", "a b"), ("ray.node_resource", "GPU x"),
])
def test_bad_ray_settings_name_their_key(key, value):
    with pytest.raises(ConfigError, match=f"setting '{key}'") as info:
        engine_with(**{"engine.cluster": "ray", key: value})
    assert info.value.key == key


@pytest.mark.parametrize("key, value", [("ray.partitions_per_node", 0), ("ray.poll_seconds", 0.0),
                                        ("ray.partition_timeout_seconds", float("nan")), ("ray.address", 6379)])
def test_out_of_range_ray_settings_are_refused_by_the_schema(key, value):
    with pytest.raises(ConfigError, match=f"setting '{key}' must be") as info:
        load_config(overrides={key: value}, sections=collect_settings(plugin_manager()))
    assert info.value.key == key


def test_the_plugin_owns_the_ray_section():
    sections = collect_settings(plugin_manager())
    ray = {s.name: s for s in sections.sections}["ray"]
    assert ray.owner == "porep-prover-ray"
    assert sections.defaults()["ray.partitions_per_node"] == 2 and sections.defaults()["ray.address"] == "auto"
    with pytest.raises(ConfigError, match="unknown setting 'ray.address'.*no section \\[ray\\]"):
        load_config(overrides=["ray.address=local"])           # the built-ins alone do not know it
    with pytest.raises(ConfigError, match="'ray.nope'.*partitions_per_node"):
        load_config(overrides=["ray.nope=1"], sections=sections)


def test_a_config_without_the_ray_section_takes_its_defaults():
    settings = RaySettings.resolve(load_config(overrides={"engine.cluster": "ray"}))
    assert (settings.address, settings.partitions_per_node, settings.poll_seconds) == ("auto", 2, 1.0)


@pytest.mark.parametrize("address", ["auto", "local", "127.0.0.1:6379", "head.example:6379", "ray://10.1.2.3:10001",
                                     "[::1]:6379"])
def test_good_addresses_pass(address):
    engine = engine_with(**{"engine.cluster": "ray", "ray.address": address})
    assert isinstance(engine.cluster, RayCluster) and engine.cluster.settings.address == address
    assert engine.devices == []


def test_an_address_where_nothing_answers_is_named_at_once():
    pytest.importorskip("ray")           # without Ray the engine names the missing extra instead
    import socket
    import time
    with socket.socket() as s:            # a loopback port free a moment ago: nothing listens there now
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(EngineError, match=f"ray.address '{address}': nothing answers there"):
            engine_with(**{"engine.cluster": "ray", "ray.address": address}).start()
    assert time.monotonic() - start < 30
