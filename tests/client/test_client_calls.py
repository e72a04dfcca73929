# SPDX-License-Identifier: Apache-2.0
"""porep_prover.client.calls: every call of the service defined once, as a
plan, and run by both front ends (Client blocking, AsyncClient awaited)."""
import asyncio
import collections
import inspect
import time

import pytest

from porep_prover.client import AsyncClient, Client, JobState
from porep_prover.client.calls import CALLS, RPCS
from porep_prover.client.channel import DEADLINE_GRACE
from porep_prover.client.plans import DEFAULT, Invoke, Report, Sleep
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.errors import InvalidInputError

SERVICE = pb.DESCRIPTOR.services_by_name["ProvingEngine"]
# arguments each call is tried with below
ARGUMENTS = {"submit": ("demo", {}), "await_proof": ("job-1",), "prove": ("demo", {}), "cancel": ("job-1",),
             "job": ("job-1",), "list_jobs": (), "status": (), "metrics": (), "preload": ("demo", {}),
             "evict": ("demo:5",)}


def steps(call, *args, **kwargs) -> list:
    """The steps call's plan takes with args, each Invoke answered with its reply message's defaults."""
    plan, taken, reply = call.plan(None, *args, **kwargs), [], None
    while True:
        try:
            step = plan.send(reply)
        except StopIteration:
            return taken
        taken.append(step)
        reply = getattr(pb, SERVICE.methods_by_name[step.rpc].output_type.name)() if type(step) is Invoke else None


def test_every_rpc_of_the_service_has_exactly_one_call():
    assert collections.Counter(c.rpc for c in CALLS) == collections.Counter(m.name for m in SERVICE.methods)
    assert RPCS == tuple(m.name for m in SERVICE.methods)
    assert sorted(c.name for c in CALLS) == sorted(ARGUMENTS)


@pytest.mark.parametrize("front", [Client, AsyncClient])
def test_both_front_ends_expose_every_call(front):
    public = {name for name in dir(front) if not name.startswith("_")}
    assert public == {c.name for c in CALLS} | {"close"}
    for c in CALLS:
        method = vars(front)[c.name]
        assert method.__doc__ == c.plan.__doc__ and method.__doc__
        assert inspect.iscoroutinefunction(method) is (front is AsyncClient)
        signature = inspect.signature(method)
        assert signature.parameters == inspect.signature(c.plan).parameters
        assert str(signature) == str(inspect.signature(getattr(Client, c.name)))
        assert "Plan" not in str(signature.return_annotation)


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.name)
def test_each_plan_invokes_its_rpc(call):
    taken = steps(call, *ARGUMENTS[call.name])
    assert all(type(s) is Invoke and s.rpc in RPCS for s in taken)
    assert call.rpc in [s.rpc for s in taken]


def test_deadlines():
    """The waits' deadline is their own timeout plus DEADLINE_GRACE (none
    without a timeout), preload's is its timeout, every other call's the client's."""
    by_name = {c.name: c for c in CALLS}
    [wait] = steps(by_name["await_proof"], "job-1", timeout=2)
    assert (wait.request.timeout_ms, wait.timeout) == (2000, 2 + DEADLINE_GRACE)
    [wait] = steps(by_name["prove"], "demo", {})
    assert (wait.request.timeout_ms, wait.timeout) == (0, None)
    assert [s.timeout for s in steps(by_name["preload"], "demo", {})] == [None]
    assert [s.timeout for s in steps(by_name["preload"], "demo", {}, timeout=7)] == [7.0]
    for name in ("submit", "cancel", "job", "list_jobs", "status", "metrics", "evict"):
        assert [s.timeout for s in steps(by_name[name], *ARGUMENTS[name])] == [DEFAULT], name


def test_progress_rounds_are_steps():
    """With progress, an await is rounds of GetJob, a report when the job changed, a short AwaitProof, a pause."""
    by_name = {c.name: c for c in CALLS}
    plan = by_name["await_proof"].plan(None, "job-1", timeout=5, progress=print, interval=0.01)
    job = pb.JobStatus(job_id="job-1", state=pb.JOB_STATE_RUNNING, partitions=1)
    timeout = pb.AwaitProofResponse(job_id="job-1", status=pb.AwaitProofResponse.TIMEOUT)
    taken = [next(plan)]
    for reply in (job, None, timeout, None, job, timeout):
        taken.append(plan.send(reply))
    assert [type(s).__name__ for s in taken] == ["Invoke", "Report", "Invoke", "Sleep", "Invoke", "Invoke", "Sleep"]
    assert [s.rpc for s in taken if type(s) is Invoke] == ["GetJob", "AwaitProof", "GetJob", "AwaitProof"]
    assert type(taken[1]) is Report and taken[1].job.state is JobState.RUNNING
    assert type(taken[-1]) is Sleep and 0 <= taken[-1].seconds <= 0.01


def test_arguments_are_checked_before_any_step():
    by_name = {c.name: c for c in CALLS}
    for name, args in [("submit", ("demo", [])), ("await_proof", ("",)), ("prove", ("demo", {}, 0)),
                       ("list_jobs", (None, 0)), ("preload", ("demo", {}, -1)), ("evict", (3,))]:
        with pytest.raises(InvalidInputError):
            next(by_name[name].plan(None, *args))


def test_a_cancelled_await_ends_at_once_and_the_client_goes_on(fake):
    async def main():
        async with AsyncClient(fake.address, timeout=10) as c:
            job_id = (await c.submit("stuck", {})).job_id
            for progress in (None, lambda job: None):
                started = time.monotonic()
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(c.await_proof(job_id, timeout=30, progress=progress, interval=0.05), 0.3)
                assert time.monotonic() - started < 5
            info = await c.job(job_id)
            return info, await c.cancel(job_id)
    info, cancelled = asyncio.run(asyncio.wait_for(main(), 30))
    assert info.state is JobState.QUEUED and cancelled.cancelled
