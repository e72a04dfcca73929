# SPDX-License-Identifier: Apache-2.0
"""porep_prover.client.AsyncClient against the in-process fake daemon
(tests/helpers/fake_proving_engine.py): the same answers as Client, as coroutines."""
import asyncio
import time

import pytest

from fake_proving_engine import FakeEngine, FakeServer
from porep_prover.client import AsyncClient, JobState, ProofStatus
from porep_prover.errors import (DaemonAuthenticationError, DaemonLimitError, DaemonPermissionError,
                                 DaemonUnavailableError, InvalidInputError, JobNotFoundError)

MATERIAL_PROOFS = 2          # proofs the fake daemon serves (conftest.material)


def run(coroutine, limit: float = 30.0):
    return asyncio.run(asyncio.wait_for(coroutine, limit))


def test_submit_await_and_prove(fake, material, rng):
    partitions = rng.choice([3, 5])

    async def main():
        async with AsyncClient(fake.address, timeout=10) as c:
            sub = await c.submit("instant", {"seed": 1}, partitions=partitions, priority="high", request_id="a")
            again = await c.submit("instant", {}, request_id="a")
            result = await c.await_proof(sub.job_id, timeout=10)
            proved = await c.prove("instant", {}, partitions=2, timeout=10)
            return sub, again, result, proved
    sub, again, result, proved = run(main())
    assert again.existing and again.job_id == sub.job_id and not sub.existing
    assert result.ok and len(result.proofs) == partitions and result.verify(material.vk)
    assert result.public_inputs == [material.public] * partitions
    assert proved.verify(material.vk) and fake.engine.calls[-1][0] == "Prove"


@pytest.mark.parametrize("coroutine_progress", [False, True])
def test_progress_plain_or_coroutine(fake, material, coroutine_progress):
    seen = []

    async def report(job):
        await asyncio.sleep(0)
        seen.append(job)

    async def main():
        async with AsyncClient(fake.address, timeout=10) as c:
            job_id = (await c.submit("steps", {}, partitions=3)).job_id
            return await c.await_proof(job_id, timeout=20, progress=report if coroutine_progress else seen.append,
                                       interval=0.02)
    result = run(main())
    assert result.verify(material.vk)
    assert [j.proved for j in seen] == [0, 1, 2, 3] and seen[-1].state is JobState.COMPLETED


def test_timeout_cancel_and_the_rest(fake):
    async def main():
        async with AsyncClient(fake.address, timeout=10) as c:
            job_id = (await c.submit("stuck", {})).job_id
            started = time.monotonic()
            waited = await c.await_proof(job_id, timeout=0.3, progress=lambda job: None, interval=0.05)
            elapsed = time.monotonic() - started
            outcome = await c.cancel(job_id)
            cancelled = await c.await_proof(job_id, timeout=5)
            jobs = await c.list_jobs(states=["cancelled"])
            status, metrics = await c.status(), await c.metrics()
            preload = await c.preload("demo", {"constraints": 5})
            evicted = await c.evict(preload.srs_key)
            failed = await c.await_proof((await c.submit("broken", {})).job_id, timeout=5)
            return waited, elapsed, outcome, cancelled, jobs, status, metrics, preload, evicted, failed
    waited, elapsed, outcome, cancelled, jobs, status, metrics, preload, evicted, failed = run(main())
    assert waited.status is ProofStatus.TIMEOUT and 0.25 <= elapsed < 5
    assert outcome.cancelled and cancelled.status is ProofStatus.CANCELLED
    assert [j.state for j in jobs] == [JobState.CANCELLED]
    assert status["version"] == "fake" and "porep_prover_proofs_completed_total" in metrics
    assert preload.srs_key == "demo:5" and evicted.evicted
    assert failed.status is ProofStatus.FAILED and failed.error_message


def test_errors_are_named(fake, material):
    async def expect(error, coroutine_fn, **client_options):
        async with AsyncClient(client_options.pop("address", fake.address), timeout=5, **client_options) as c:
            with pytest.raises(error) as info:
                await coroutine_fn(c)
            return info.value

    async def main():
        limit = await expect(DaemonLimitError, lambda c: c.submit("status:RESOURCE_EXHAUSTED", {}))
        assert limit.code == "RESOURCE_EXHAUSTED" and "fake RESOURCE_EXHAUSTED" in str(limit)
        await expect(DaemonPermissionError, lambda c: c.submit("status:PERMISSION_DENIED", {}))
        await expect(JobNotFoundError, lambda c: c.job("job-0404"))
        await expect(InvalidInputError, lambda c: c.submit("instant", {}, priority="whenever"))
        await expect(InvalidInputError, lambda c: c.await_proof("", timeout=1))
        await expect(DaemonUnavailableError, lambda c: c.status(), address="unix:/nonexistent/porep-prover.sock")
    run(main())
    token_server = FakeServer(FakeEngine(material, token="s3cret"))
    try:
        async def with_token():
            error = await expect(DaemonAuthenticationError, lambda c: c.status(), address=token_server.address)
            async with AsyncClient(token_server.address, token="s3cret", timeout=5) as c:
                return error, await c.status()
        error, status = run(with_token())
        assert error.code == "UNAUTHENTICATED" and status["version"] == "fake"
    finally:
        token_server.stop()


def test_many_concurrent_awaits(fake, material):
    """Many awaits share one channel: each gets its own job's result."""
    async def main():
        async with AsyncClient(fake.address, timeout=10) as c:
            subs = await asyncio.gather(*(c.submit("instant", {}, partitions=1 + i % 3) for i in range(12)))
            results = await asyncio.gather(*(c.await_proof(s.job_id, timeout=10) for s in subs))
            return subs, results
    subs, results = run(main())
    assert [r.job_id for r in results] == [s.job_id for s in subs] and len({s.job_id for s in subs}) == 12
    assert [len(r.proofs) for r in results] == [1 + i % 3 for i in range(12)]
    assert all(r.verify(material.vk) for r in results)
