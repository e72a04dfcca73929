# SPDX-License-Identifier: Apache-2.0
"""A scheduler plugin that fails stops nothing: one whose pop or push
raises, or whose pop hands out a partition it was never given or none while
some wait, is logged once and set aside; every partition is still proved,
first come first served from then on, and the engine leaves cleanly."""
import logging
import random

import pytest

from porep_prover.circuits import porep_like
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.inline import default_registry
from porep_prover.engine.jobs import PartitionTask
from porep_prover.engine.registry import FifoScheduler
from porep_prover.engine.scheduler_guard import GuardedScheduler
from porep_prover.groth16 import insecure_setup, verify


class Failing(FifoScheduler):
    """FIFO until its `after`-th call of `where`, then: raise, lose, or hand out a stranger."""

    def __init__(self, where, how, after):
        super().__init__()
        self.where, self.how, self.after, self.calls = where, how, after, 0

    def _turn(self, name):
        if name != self.where:
            return False
        self.calls += 1
        return self.calls > self.after

    def push(self, task):
        if self._turn("push"):
            raise RuntimeError("push broke")
        super().push(task)

    def pop(self):
        if self._turn("pop"):
            if self.how == "raise":
                raise RuntimeError("pop broke")
            if self.how == "lose":
                self._q.clear()
                return None
            return PartitionTask(self._q[0].job, 10_000) if self._q else None
        return super().pop()


CASES = [("push", "raise"), ("pop", "raise"), ("pop", "lose"), ("pop", "stranger")]


@pytest.fixture(scope="module")
def circuit():
    n = random.randrange(150, 260)
    r1cs, _, _ = porep_like(n)
    params = insecure_setup(r1cs, warn=False)
    return params, r1cs, [porep_like(n, seed=s)[1] for s in random.sample(range(1 << 30), 5)]


@pytest.mark.parametrize("where,how", CASES)
def test_a_failing_scheduler_stops_nothing(circuit, where, how, caplog):
    params, r1cs, ws = circuit
    registry = default_registry()
    made = []
    registry.add_scheduler("failing", lambda: made.append(Failing(where, how, random.randrange(1, 4))) or made[-1])
    cfg = load_config(overrides={"engine.partition_workers": 2, "engine.threads": 1, "engine.devices": ["cpu"],
                                 "engine.scheduler": "failing"})
    with caplog.at_level(logging.ERROR, logger="porep_prover.engine"):
        with Engine(cfg, registry=registry) as engine:
            handles = [engine.submit(inline_job(params, r1cs, ws)) for _ in range(2)]
            results = [h.result(120) for h in handles]
    assert all(r.ok for r in results)
    public = [w[1:r1cs.num_inputs].to_ints() for w in ws]
    assert all(verify(params.vk, q, p) for r in results for p, q in zip(r.proofs, public))
    failures = [r for r in caplog.records if "scheduler" in r.getMessage() and "failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].getMessage().startswith("scheduler failing failed")


def test_the_guard_keeps_the_order_of_what_the_scheduler_held():
    class Task:
        def __init__(self, job, index):
            self.job, self.index, self.attempt = type("J", (), {"id": job})(), index, 0

    guard = GuardedScheduler(Failing("pop", "raise", 1))
    tasks = [Task("a", i) for i in range(5)]
    for t in tasks:
        guard.push(t)
    assert guard.pop() is tasks[0] and guard.failed is None
    assert [guard.pop() for _ in range(4)] == tasks[1:] and "pop broke" in guard.failed
    assert guard.pop() is None and len(guard) == 0
