# SPDX-License-Identifier: Apache-2.0
"""Every call of the client, each defined once: what it checks, the requests
it sends, the deadline of each, and what it makes of the replies. Client runs
these plans blocking and AsyncClient awaits them (see plans)."""
from __future__ import annotations

import inspect
import time
from typing import Any, Callable

from ..daemon.v1 import proving_pb2 as pb
from ..daemon.v1.proving_pb2_grpc import ProvingEngineStub
from . import channel as ch
from .messages import (Cancellation, Eviction, JobInfo, Preload, ProofResult, ProofStatus, Submission,
                       list_request, payload_bytes, status_dict, submit_request, text_argument, timeout_ms)
from .plans import Call, Invoke, Plan, Report, Sleep, call, wait_deadline
from .waiting import Wait

Progress = Callable[[JobInfo], object]
# the service's methods, in proving.proto's order
RPCS = tuple(m.name for m in pb.DESCRIPTOR.services_by_name["ProvingEngine"].methods)


class Calls:
    """What Client and AsyncClient share: the channel, and the calls.

    Not made itself: a front end (front_end) sets `_channels` (grpc or
    grpc.aio) and runs the plans; see Client for the arguments."""
    _channels: Any

    def __init__(self, address: str, *, token: str | None = None, tls=None, tls_server_name: str | None = None,
                 timeout: float = 30.0, max_message_bytes: int = ch.DEFAULT_MAX_MESSAGE_BYTES):
        self.address = address
        self.timeout = ch.seconds("timeout", timeout)
        self._channel, self._metadata = ch.open_channel(self._channels, address, token=token, tls=tls,
                                                        tls_server_name=tls_server_name,
                                                        max_message_bytes=max_message_bytes)
        stub = ProvingEngineStub(self._channel)
        self._rpcs = {name: getattr(stub, name) for name in RPCS}     # once here, not at each call

    # ------------------------------------------------------------------ jobs

    @call("SubmitProof")
    def submit(self, kind: str, payload: dict, partitions: int = 1, priority: str = "normal",
               request_id: str | None = None) -> Plan[Submission]:
        """Submit a job of a provider's kind (payload: its JSON object); returns
        at once with the job's id. With request_id, a second submit of that id
        returns the first job (.existing True) and accepts nothing new."""
        reply = yield Invoke("SubmitProof", submit_request(kind, payload, partitions, priority, request_id))
        return Submission(reply.job_id, reply.existing, reply.queue_position)

    @call("AwaitProof")
    def await_proof(self, job_id: str, timeout: float | None = None, progress: Progress | None = None,
                    interval: float = 1.0) -> Plan[ProofResult]:
        """Wait for the job's end, at most timeout seconds (None: until it
        ends); the result's status says how it ended (TIMEOUT: not yet).
        progress(JobInfo) is called with the job's state when it changes,
        polled every interval seconds; without it the wait is one call."""
        text_argument("job_id", job_id)
        wait = Wait(timeout, interval)
        if progress is None:
            return (yield from _await(job_id, wait.whole_ms()))
        last = None
        while True:                    # rounds of at least interval seconds, ended by the job or by wait
            started = time.monotonic()
            job = yield from _job(job_id)
            if job != last:
                yield Report(progress, job)
                last = job
            result = yield from _await(job_id, wait.round_ms())
            if result.status is not ProofStatus.TIMEOUT or wait.expired():
                if result.job is not None and result.job != last:
                    yield Report(progress, result.job)
                return result
            yield Sleep(wait.pause(started))

    @call("Prove")
    def prove(self, kind: str, payload: dict, partitions: int = 1, priority: str = "normal",
              request_id: str | None = None, timeout: float | None = None, progress: Progress | None = None,
              interval: float = 1.0) -> Plan[ProofResult]:
        """Submit and await (see both). Without progress, one Prove call."""
        request = submit_request(kind, payload, partitions, priority, request_id)
        if progress is not None:
            wait = Wait(timeout, interval)
            job_id = (yield Invoke("SubmitProof", request)).job_id
            # the await's plan itself: self.await_proof is a front end's method, which would run it apart
            return (yield from Calls.await_proof.plan(self, job_id, wait.left(), progress, interval))
        ms = timeout_ms(ch.seconds("timeout", timeout, allow_none=True))
        reply = yield Invoke("Prove", pb.ProveRequest(submit=request, timeout_ms=ms), wait_deadline(ms))
        return ProofResult.from_message(reply)

    @call("CancelProof")
    def cancel(self, job_id: str) -> Plan[Cancellation]:
        """Cancel a queued or running job (.cancelled False: it had already ended)."""
        reply = yield Invoke("CancelProof", pb.CancelProofRequest(job_id=text_argument("job_id", job_id)))
        return Cancellation(reply.cancelled, reply.was_running)

    @call("GetJob")
    def job(self, job_id: str) -> Plan[JobInfo]:
        """A job's state and progress (JobNotFoundError for an unknown id)."""
        return (yield from _job(job_id))

    @call("ListJobs")
    def list_jobs(self, states=None, limit: int = 100) -> Plan[list[JobInfo]]:
        """Jobs newest first, at most limit, only in the given states (None: any)."""
        reply = yield Invoke("ListJobs", list_request(states, limit))
        return [JobInfo.from_message(j) for j in reply.jobs]

    # ------------------------------------------------------------------ the daemon

    @call("GetStatus")
    def status(self) -> Plan[dict]:
        """The daemon's status as plain data (see messages.status_dict)."""
        return status_dict((yield Invoke("GetStatus", pb.GetStatusRequest())))

    @call("GetMetrics")
    def metrics(self) -> Plan[str]:
        """The Prometheus exposition text."""
        return (yield Invoke("GetMetrics", pb.GetMetricsRequest())).text

    @call("PreloadSRS")
    def preload(self, kind: str, payload: dict, timeout: float | None = None) -> Plan[Preload]:
        """Load the parameters a job of kind with payload needs, and keep them
        resident; the call's deadline is timeout seconds (None: none, as
        loading a large parameter file takes minutes)."""
        request = pb.PreloadSRSRequest(kind=text_argument("kind", kind), payload=payload_bytes(payload))
        reply = yield Invoke("PreloadSRS", request, ch.seconds("timeout", timeout, allow_none=True))
        return Preload(reply.srs_key, reply.load_ms, reply.bytes, reply.already_loaded)

    @call("EvictSRS")
    def evict(self, srs_key: str) -> Plan[Eviction]:
        """Drop a parameter set no job uses (.evicted False: unknown or in use)."""
        reply = yield Invoke("EvictSRS", pb.EvictSRSRequest(srs_key=text_argument("srs_key", srs_key)))
        return Eviction(reply.evicted, reply.bytes_freed)


def _job(job_id: str) -> Plan[JobInfo]:
    reply = yield Invoke("GetJob", pb.GetJobRequest(job_id=text_argument("job_id", job_id)))
    return JobInfo.from_message(reply)


def _await(job_id: str, ms: int) -> Plan[ProofResult]:
    reply = yield Invoke("AwaitProof", pb.AwaitProofRequest(job_id=job_id, timeout_ms=ms), wait_deadline(ms))
    return ProofResult.from_message(reply)


CALLS: tuple[Call, ...] = tuple(v for v in vars(Calls).values() if isinstance(v, Call))


def front_end(cls):
    """The class decorator of a front end: cls gets a method for every call,
    cls._method(plan) made (a function of the client and the call's
    arguments that runs the plan), named, documented and signed as the call."""
    for c in CALLS:
        method = cls._method(c.plan)
        method.__name__, method.__qualname__ = c.name, f"{cls.__qualname__}.{c.name}"
        method.__module__, method.__doc__, method.__wrapped__ = cls.__module__, c.plan.__doc__, c.plan
        returns = _result_annotation(c.plan)
        method.__annotations__ = {**c.plan.__annotations__, "return": returns}
        method.__signature__ = inspect.signature(c.plan).replace(return_annotation=returns)
        setattr(cls, c.name, method)
    return cls


def _result_annotation(plan) -> str:
    """A plan's result type, as the annotation (a string) of the method that runs it: T of its Plan[T]."""
    annotation = plan.__annotations__["return"]
    if not (isinstance(annotation, str) and annotation.startswith("Plan[") and annotation.endswith("]")):
        raise TypeError(f"the plan {plan.__qualname__} returns {annotation!r}, not Plan[...]")
    return annotation[len("Plan["):-1]
