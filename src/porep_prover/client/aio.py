# SPDX-License-Identifier: Apache-2.0
"""The asyncio client of the proving daemon (grpc.aio): Client's methods as coroutines."""
from __future__ import annotations

import asyncio
import inspect
import time

import grpc
import grpc.aio

from ..daemon.v1 import proving_pb2 as pb
from ..daemon.v1.proving_pb2_grpc import ProvingEngineStub
from . import channel as ch
from .messages import (Cancellation, Eviction, JobInfo, Preload, ProofResult, ProofStatus, Submission,
                       list_request, payload_bytes, status_dict, submit_request, text_argument, timeout_ms)
from .waiting import Wait


class AsyncClient:
    """Client (see it for the arguments, the results and the errors) for
    asyncio: make it, use it and close it on one event loop. progress may be
    a function or a coroutine function."""

    def __init__(self, address: str, *, token: str | None = None, tls=None, tls_server_name: str | None = None,
                 timeout: float = 30.0, max_message_bytes: int = ch.DEFAULT_MAX_MESSAGE_BYTES):
        self.address = address
        self.timeout = ch.seconds("timeout", timeout)
        self._channel, self._metadata = ch.open_channel(grpc.aio, address, token=token, tls=tls,
                                                        tls_server_name=tls_server_name,
                                                        max_message_bytes=max_message_bytes)
        self._stub = ProvingEngineStub(self._channel)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def _call(self, method: str, request, timeout: float | None = ...):
        try:
            return await getattr(self._stub, method)(request, timeout=self.timeout if timeout is ... else timeout,
                                                     metadata=self._metadata)
        except grpc.RpcError as exc:
            raise ch.daemon_error(exc, self.address) from exc

    @staticmethod
    def _wait_deadline(ms: int) -> float | None:
        return None if ms == 0 else ms / 1000 + ch.DEADLINE_GRACE

    async def submit(self, kind: str, payload: dict, partitions: int = 1, priority: str = "normal",
                     request_id: str | None = None) -> Submission:
        reply = await self._call("SubmitProof", submit_request(kind, payload, partitions, priority, request_id))
        return Submission(reply.job_id, reply.existing, reply.queue_position)

    async def await_proof(self, job_id: str, timeout: float | None = None, progress=None,
                          interval: float = 1.0) -> ProofResult:
        text_argument("job_id", job_id)
        wait = Wait(timeout, interval)
        if progress is None:
            return await self._await(job_id, wait.whole_ms())
        last = None
        while True:                    # rounds of at least interval seconds, ended by the job or by wait
            started = time.monotonic()
            job = await self.job(job_id)
            if job != last:
                await _report(progress, job)
                last = job
            result = await self._await(job_id, wait.round_ms())
            if result.status is not ProofStatus.TIMEOUT or wait.expired():
                if result.job is not None and result.job != last:
                    await _report(progress, result.job)
                return result
            await asyncio.sleep(wait.pause(started))

    async def _await(self, job_id: str, ms: int) -> ProofResult:
        request = pb.AwaitProofRequest(job_id=job_id, timeout_ms=ms)
        return ProofResult.from_message(await self._call("AwaitProof", request, self._wait_deadline(ms)))

    async def prove(self, kind: str, payload: dict, partitions: int = 1, priority: str = "normal",
                    request_id: str | None = None, timeout: float | None = None, progress=None,
                    interval: float = 1.0) -> ProofResult:
        request = submit_request(kind, payload, partitions, priority, request_id)
        if progress is not None:
            wait = Wait(timeout, interval)
            job_id = (await self._call("SubmitProof", request)).job_id
            return await self.await_proof(job_id, wait.left(), progress, interval)
        ms = timeout_ms(ch.seconds("timeout", timeout, allow_none=True))
        reply = await self._call("Prove", pb.ProveRequest(submit=request, timeout_ms=ms), self._wait_deadline(ms))
        return ProofResult.from_message(reply)

    async def cancel(self, job_id: str) -> Cancellation:
        reply = await self._call("CancelProof", pb.CancelProofRequest(job_id=text_argument("job_id", job_id)))
        return Cancellation(reply.cancelled, reply.was_running)

    async def job(self, job_id: str) -> JobInfo:
        reply = await self._call("GetJob", pb.GetJobRequest(job_id=text_argument("job_id", job_id)))
        return JobInfo.from_message(reply)

    async def list_jobs(self, states=None, limit: int = 100) -> list[JobInfo]:
        return [JobInfo.from_message(j) for j in (await self._call("ListJobs", list_request(states, limit))).jobs]

    async def status(self) -> dict:
        return status_dict(await self._call("GetStatus", pb.GetStatusRequest()))

    async def metrics(self) -> str:
        return (await self._call("GetMetrics", pb.GetMetricsRequest())).text

    async def preload(self, kind: str, payload: dict, timeout: float | None = None) -> Preload:
        request = pb.PreloadSRSRequest(kind=text_argument("kind", kind), payload=payload_bytes(payload))
        reply = await self._call("PreloadSRS", request, ch.seconds("timeout", timeout, allow_none=True))
        return Preload(reply.srs_key, reply.load_ms, reply.bytes, reply.already_loaded)

    async def evict(self, srs_key: str) -> Eviction:
        reply = await self._call("EvictSRS", pb.EvictSRSRequest(srs_key=text_argument("srs_key", srs_key)))
        return Eviction(reply.evicted, reply.bytes_freed)


async def _report(progress, job: JobInfo) -> None:
    outcome = progress(job)
    if inspect.isawaitable(outcome):
        await outcome
