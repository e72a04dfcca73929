# SPDX-License-Identifier: Apache-2.0
"""The engine's contract with a cluster (engine.cluster, engine.Cluster,
engine.ClusterWork), with an in-process cluster: partitions handed out in
the scheduler's order, given back proved, failed or returned (a lost node:
no attempt counted), every proof checked here; the front door unchanged."""
import random
import threading
import time

import pytest

from porep_prover.circuits import square_chain
from porep_prover.engine import Cluster, ClusterWork, Engine, PartitionTimings, inline_job, load_config
from porep_prover.engine.inline import default_registry
from porep_prover.errors import EngineError, JobFailedError, UnsatisfiedError
from porep_prover.groth16 import insecure_setup, prove, verify


class ThreadCluster:
    """A cluster of `nodes` threads in this process. lose: (job id, partition)
    pairs whose first hand-out comes back returned (its node lost)."""

    def __init__(self, config, registry, nodes=2, lose=(), deferred=False):
        self.registry, self.nodes, self.lose, self.deferred = registry, nodes, set(lose), deferred
        self.order, self.returned, self.threads = [], [], []
        self.halt = threading.Event()
        self.preloaded, self.evicted = [], []

    def start(self, work: ClusterWork) -> None:
        self.work = work
        if not self.deferred:
            self.spawn()

    def spawn(self) -> None:
        """The nodes start taking partitions."""
        for n in range(self.nodes):
            thread = threading.Thread(target=self.node, args=(f"node{n}",), daemon=True)
            thread.start()
            self.threads.append(thread)

    def node(self, name):
        while not self.halt.is_set() and not self.work.stopping:
            task = self.work.next_task(0.1)
            if task is None:
                continue
            self.order.append((task.job.id, task.index))
            self.work.sent(task, name)
            if (task.job.id, task.index) in self.lose:
                self.lose.discard((task.job.id, task.index))
                self.returned.append((task.job.id, task.index))
                self.work.returned(task, name)
                continue
            try:
                provider = self.registry.provider(task.job.kind)
                r1cs, witness = provider.synthesize(task.job, task.index, 1)
                proof = prove(provider.load_srs(task.job), r1cs, witness, threads=1)
            except Exception as exc:  # noqa: BLE001 - the partition's failure
                self.work.failed(task, exc, name)
                continue
            timings = PartitionTimings(0.0, 0.0, 0.0, 0.0, time.time() - task.job.submitted, time.time())
            self.work.proved(task, proof, witness[1:r1cs.num_inputs].to_ints(), timings, name)

    def stop(self, deadline):
        self.halt.set()
        for thread in self.threads:
            thread.join(5)

    def status(self):
        return {"name": "threads", "address": "", "nodes": [{"node_id": f"node{n}"} for n in range(self.nodes)]}

    def preload(self, job):
        self.preloaded.append(job.id)
        return {"key": "k", "seconds": 0.0, "bytes": 1, "already_loaded": False, "nodes": self.nodes}

    def evict_srs(self, key):
        self.evicted.append(key)
        return 7


def engine_on(made: list, retries=0, **kw):
    registry = default_registry()

    def factory(config, reg):
        made.append(ThreadCluster(config, reg, **kw))
        return made[-1]
    registry.add_cluster("threads", factory)
    config = load_config(overrides={"engine.cluster": "threads", "prover.max_retries": retries,
                                    "engine.scheduler": "priority"})
    return Engine(config, registry=registry)


@pytest.fixture(scope="module")
def circuit():
    n = 150 + random.randrange(100)
    r1cs, _, _ = square_chain(n)
    return n, r1cs, insecure_setup(r1cs, warn=False)


def witnesses(n, count):
    seeds = [random.randrange(1 << 40) for _ in range(count)]
    return [square_chain(n, seed=s)[1] for s in seeds], [square_chain(n, seed=s)[2] for s in seeds]


def test_the_cluster_proves_and_a_returned_partition_costs_no_attempt(circuit):
    n, r1cs, params = circuit
    made = []
    ws, publics = witnesses(n, 5)
    with engine_on(made, retries=0) as engine:
        cluster = made[0]
        assert isinstance(cluster, Cluster) and engine.cluster is cluster and engine.devices == []
        job = inline_job(params, r1cs, ws)
        cluster.lose = {(job.id, 1), (job.id, 3)}
        seen = []
        job.on_partition = lambda p: seen.append(p.index)
        result = engine.prove(job, timeout=120)
        assert engine.status()["cluster"]["name"] == "threads"
    assert sorted(cluster.returned) == [(job.id, 1), (job.id, 3)]       # back, and proved again: no retry needed
    assert sorted(seen) == list(range(5))
    for proof, public, expected in zip(result.proofs, result.public_inputs, publics):
        assert public == expected and verify(params.vk, public, proof)


def test_a_failed_partition_fails_its_job_with_the_cause(circuit):
    n, r1cs, params = circuit
    ws, _ = witnesses(n, 3)
    bad = ws[2].to_ints()
    bad[-1] = (bad[-1] + 1) % (1 << 250)
    ws[2] = type(ws[2]).from_ints(bad)
    made = []
    with engine_on(made, retries=2) as engine:
        job = inline_job(params, r1cs, ws)
        with pytest.raises(JobFailedError, match="partition 2") as info:
            engine.prove(job, timeout=120)
    assert isinstance(info.value.__cause__, UnsatisfiedError)
    assert made[0].order.count((job.id, 2)) == 1                     # not retried: it would fail the same way


def test_priorities_hold_in_the_order_partitions_are_handed_out(circuit):
    n, r1cs, params = circuit
    made = []
    ws, _ = witnesses(n, 3)
    with engine_on(made, nodes=1, deferred=True) as engine:
        low = engine.submit(inline_job(params, r1cs, ws))
        high = engine.submit(inline_job(params, r1cs, ws[:2], priority=5))
        made[0].spawn()                      # a node joins once both jobs wait
        low.result(120), high.result(120)
    assert made[0].order == [(high.job.id, 0), (high.job.id, 1)] + [(low.job.id, i) for i in range(3)]


def test_preload_evict_and_an_unknown_cluster(circuit):
    n, r1cs, params = circuit
    made = []
    with engine_on(made) as engine:
        job = inline_job(params, r1cs, witnesses(n, 1)[0])
        assert engine.preload(job)["nodes"] == 2 and made[0].preloaded == [job.id]
        assert engine.evict_srs("k") == 7 and made[0].evicted == ["k"]
    with pytest.raises(EngineError, match="engine.cluster names 'nowhere', not registered"):
        Engine(load_config(overrides={"engine.cluster": "nowhere"}), registry=default_registry(), start=False)
