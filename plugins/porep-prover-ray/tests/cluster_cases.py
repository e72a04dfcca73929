# SPDX-License-Identifier: Apache-2.0
"""The cluster on a local multi-node Ray cluster (ray.cluster_utils.Cluster,
one-CPU nodes, the CPU backend), run by test_cluster.py inside a private
network namespace: nothing listens beyond loopback. One cluster and one
engine serve every test, in order: nodes join and leave as the tests go."""
import os
import pathlib
import random
import re
import sys
import time

import pytest

if os.environ.get("POREP_PROVER_NETNS") != "1":
    pytest.skip("run by test_cluster.py inside a private network namespace", allow_module_level=True)

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from porep_prover import Engine, load_config  # noqa: E402
from porep_prover.circuits import square_chain  # noqa: E402
from porep_prover.engine import Job  # noqa: E402
from porep_prover.groth16 import insecure_setup, verify, write_params  # noqa: E402
from porep_prover.hooks import collect_registry, collect_settings, plugin_manager  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import chain_provider  # noqa: E402
from chain_provider import ChainProvider, expected_public  # noqa: E402

ray.cloudpickle.register_pickle_by_value(chain_provider)     # the nodes get the provider's code with it
ROOT = pathlib.Path(__file__).resolve().parents[3]
WAIT = 120.0           # every wait's bound, seconds
N = 300                # constraints: a proof in well under a second on one core


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1)
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def params_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("params") / "chain.params"
    params = insecure_setup(square_chain(N)[0], warn=False)
    write_params(str(path), params)
    return str(path), params


class ListSink:
    """A result sink of the head alone (no node has it): the jobs delivered, once each."""

    def __init__(self):
        self.results = []

    def deliver(self, result):
        self.results.append(result)


SINK = ListSink()


@pytest.fixture(scope="module")
def engine(cluster, params_file):
    pm = plugin_manager()
    sections = collect_settings(pm)
    registry = collect_registry(pm)
    registry.add_provider(ChainProvider(params_file[0]))
    registry.add_sink("list", SINK)
    config = load_config(sections=sections, overrides={
        "engine.cluster": "ray", "ray.address": cluster.address, "ray.poll_seconds": 0.2,
        "engine.result_sinks": ["list"], "ray.partitions_per_node": 1, "engine.scheduler": "priority",
        "engine.devices": ["cpu"], "engine.threads": 1, "engine.partition_workers": 1})
    with Engine(config, registry=registry, plugins=pm) as eng:
        wait_for(lambda: ready(eng) == 2, "two node engines ready")
        yield eng


def wait_for(condition, what: str, seconds: float = WAIT):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds} s: {what}"
        time.sleep(0.05)


def nodes(eng) -> list[dict]:
    return eng.status()["cluster"]["nodes"]


def ready(eng) -> int:
    return eng.status()["cluster"]["nodes_ready"]


def chain_job(partitions: int, sleep: float = 0.0, priority: int = 0, **kw) -> Job:
    seed = random.randrange(1 << 40)
    return Job("chain", partitions, {"constraints": N, "seed": seed, "sleep": sleep}, priority=priority, **kw)


def check(result, params) -> None:
    """Every partition's proof verifies (the independent verifier) for the public inputs of its own witness."""
    job = result.job
    assert len(result.proofs) == job.partitions
    for i, proof in enumerate(result.proofs):
        public = expected_public(job.payload, i)
        assert result.public_inputs[i] == public
        assert verify(params.vk, public, proof), f"partition {i}"


def test_a_job_spreads_over_the_nodes_and_every_proof_verifies(engine, params_file):
    before = {n["node_id"]: n["partitions_done"] for n in nodes(engine)}
    seen = []
    result = engine.prove(chain_job(7, sleep=0.2, on_partition=lambda p: seen.append(p.index)), timeout=WAIT)
    check(result, params_file[1])
    assert sorted(seen) == list(range(7))
    done = {n["node_id"]: n["partitions_done"] - before[n["node_id"]] for n in nodes(engine)}
    assert sum(done.values()) == 7 and all(d > 0 for d in done.values()), done
    assert all(0 <= n["dispatch_ms"] < 5000 and n["devices"] == ["cpu"] for n in nodes(engine))

    def figures():       # each node's own kernel regions of the last minute, as the head's status carries them
        return {n["node_id"]: [f for f in n["device_figures"] if f["label"] == "cpu"] for n in nodes(engine)}
    wait_for(lambda: all(f and f[0]["regions"] > 0 for f in figures().values()), "every node's device figures read")
    assert all(0 <= f[0]["efficiency"] <= 1 and f[0]["busy_seconds"] > 0 for f in figures().values()), figures()
    assert [r.job.id for r in SINK.results if r.job.id == result.job.id] == [result.job.id]
    assert SINK.results[-1].ok and SINK.results[-1].proofs == result.proofs
    assert all(t.total >= t.synthesis >= 0.2 for t in result.timings)


def test_parameters_load_once_per_node(engine, params_file):
    for _ in range(2):
        check(engine.prove(chain_job(4), timeout=WAIT), params_file[1])
    wait_for(lambda: all(n["srs"] for n in nodes(engine)), "every node's status read")
    for node in nodes(engine):
        assert [(e["key"], e["loads"]) for e in node["srs"]] == [(f"chain:{N}", 1)], node


def test_priorities_hold_across_the_cluster(engine, params_file):
    finished = {}
    low = engine.submit(chain_job(8, sleep=0.15, priority=0))
    wait_for(lambda: engine.job_progress(low.job.id)["in_flight"] > 0, "the low job started")
    high = engine.submit(chain_job(2, sleep=0.15, priority=10))
    for name, handle in (("low", low), ("high", high)):
        handle.future.add_done_callback(lambda _, name=name: finished.setdefault(name, time.monotonic()))
    check(high.result(WAIT), params_file[1])
    check(low.result(WAIT), params_file[1])
    assert finished["high"] < finished["low"]


def test_a_node_joining_mid_job_takes_partitions(engine, cluster, params_file):
    handle = engine.submit(chain_job(10, sleep=0.3))
    wait_for(lambda: engine.job_progress(handle.job.id)["proved"] >= 1, "a first partition proved")
    cluster.add_node(num_cpus=1)
    check(handle.result(WAIT), params_file[1])
    wait_for(lambda: ready(engine) == 3, "the third node's engine ready")
    check(engine.prove(chain_job(6, sleep=0.2), timeout=WAIT), params_file[1])
    joined = [n for n in nodes(engine) if n["state"] == "ready"]
    assert len(joined) == 3 and all(n["partitions_done"] > 0 for n in joined)


def test_a_node_lost_mid_job_its_partitions_run_elsewhere(engine, cluster, params_file):
    handle = engine.submit(chain_job(8, sleep=0.5))
    worker_nodes = {n.node_id: n for n in cluster.worker_nodes}

    def busy_worker():
        return next((n for n in nodes(engine) if n["node_id"] in worker_nodes and n["in_flight"]), None)

    wait_for(lambda: busy_worker() is not None, "a worker node proving")
    victim = busy_worker()
    cluster.remove_node(worker_nodes[victim["node_id"]], allow_graceful=False)
    check(handle.result(WAIT), params_file[1])
    lost = next(n for n in nodes(engine) if n["node_id"] == victim["node_id"])
    assert lost["state"] == "lost" and lost["partitions_rerun"] >= 1, lost
    assert ready(engine) == 2
    check(engine.prove(chain_job(3), timeout=WAIT), params_file[1])


def test_preload_and_evict_reach_every_node(engine):
    job = chain_job(1)
    answer = engine.preload(job)
    assert answer["nodes"] == ready(engine) and answer["already_loaded"] and answer["key"] == f"chain:{N}"
    assert engine.evict_srs(answer["key"]) > 0
    wait_for(lambda: all(not n["srs"] for n in nodes(engine) if n["state"] == "ready"), "the parameters dropped")


def test_the_daemon_drives_the_cluster_and_its_clients_are_unchanged(engine, cluster, tmp_path):
    """`porep-prover daemon` with engine.cluster = "ray": a client's demo job proved on the nodes (each
    makes the demo key itself), every proof verified here, every node in the daemon's status."""
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from daemon_process import DaemonProcess

    from porep_prover.circuits import porep_like
    from porep_prover.client import Client
    from porep_prover.daemon.demo import partition_seed

    engine.shutdown()            # the nodes' CPUs go to the daemon's node engines
    n, seed = 40 + random.randrange(20), random.randrange(1 << 40)
    settings = {"engine.cluster": "ray", "ray.address": cluster.address, "ray.poll_seconds": 0.2,
                "ray.namespace": "daemon-test"}
    with DaemonProcess(tmp_path / "state", settings) as daemon, Client(daemon.address, timeout=30) as client:
        wait_for(lambda: client.status()["detail"]["cluster"]["nodes_ready"] == 2, "the daemon's node engines ready")
        result = client.prove("demo", {"constraints": n, "seed": seed}, partitions=5, timeout=WAIT)
        assert result.ok, result.error_message
        status = client.status()["detail"]
        metrics = client.metrics()
    params = insecure_setup(porep_like(n)[0], rng=random.Random(f"porep-like-{n}"), warn=False)
    for i, (proof, public) in enumerate(zip(result.proofs, result.public_inputs)):
        assert public == porep_like(n, seed=partition_seed(seed, i))[2]
        assert verify(params.vk, public, proof), f"partition {i}"
    ready_nodes = [node for node in status["cluster"]["nodes"] if node["state"] == "ready"]
    assert len(ready_nodes) == 2 and sum(node["partitions_done"] for node in ready_nodes) == 5
    done = re.findall(r'^porep_prover_cluster_node_partitions_done\{node="ray:127\.0\.0\.1:[0-9a-f]{8}"\} (\S+)$',
                      metrics, re.M)                   # each node's own series on the head's /metrics
    assert len(done) >= 2 and sum(float(d) for d in done) == 5, metrics
    assert all(node["devices"] == ["cpu"] and node["address"] == "127.0.0.1" for node in ready_nodes)
    assert status["devices"] == []
