# SPDX-License-Identifier: Apache-2.0
"""The blocking client of the proving daemon (porep_prover.v1.ProvingEngine)."""
from __future__ import annotations

import time
from typing import Callable

import grpc

from ..daemon.v1 import proving_pb2 as pb
from ..daemon.v1.proving_pb2_grpc import ProvingEngineStub
from . import channel as ch
from .messages import (Cancellation, Eviction, JobInfo, Preload, ProofResult, ProofStatus, Submission,
                       list_request, payload_bytes, status_dict, submit_request, text_argument, timeout_ms)
from .waiting import Wait

Progress = Callable[[JobInfo], object]


class Client:
    """A connection to a daemon, used from one thread or several (gRPC channels are thread-safe).

    address "HOST:PORT" or "unix:/path"; token: sent as `authorization: Bearer
    TOKEN` with every call; tls: None (plain), True (gRPC's default roots) or
    a root certificate file (PEM); tls_server_name: the name the daemon's
    certificate carries when it is not the address's host; timeout: the
    deadline, in seconds, of every call but the waits (await_proof, prove),
    whose deadline is their own timeout plus DEADLINE_GRACE.

    Arguments are checked before anything is sent (InvalidInputError); a call
    the daemon fails raises the DaemonError subclass of its status
    (DaemonUnavailableError, DaemonLimitError, DaemonRequestError,
    DaemonPermissionError, DaemonAuthenticationError, DaemonDeadlineError,
    JobNotFoundError), its message the daemon's. Connecting is lazy: a daemon
    that is not there shows at the first call. A wait cut short by the
    daemon's restart raises DaemonUnavailableError; the job itself was
    journaled when accepted: await it again once the daemon is back.
    """

    def __init__(self, address: str, *, token: str | None = None, tls=None, tls_server_name: str | None = None,
                 timeout: float = 30.0, max_message_bytes: int = ch.DEFAULT_MAX_MESSAGE_BYTES):
        self.address = address
        self.timeout = ch.seconds("timeout", timeout)
        self._channel, self._metadata = ch.open_channel(grpc, address, token=token, tls=tls,
                                                        tls_server_name=tls_server_name,
                                                        max_message_bytes=max_message_bytes)
        self._stub = ProvingEngineStub(self._channel)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel (calls in flight end with DaemonError CANCELLED)."""
        self._channel.close()

    def _call(self, method: str, request, timeout: float | None = ...):
        try:
            return getattr(self._stub, method)(request, timeout=self.timeout if timeout is ... else timeout,
                                               metadata=self._metadata)
        except grpc.RpcError as exc:
            raise ch.daemon_error(exc, self.address) from exc

    @staticmethod
    def _wait_deadline(ms: int) -> float | None:
        return None if ms == 0 else ms / 1000 + ch.DEADLINE_GRACE

    # ------------------------------------------------------------------ jobs

    def submit(self, kind: str, payload: dict, partitions: int = 1, priority: str = "normal",
               request_id: str | None = None) -> Submission:
        """Submit a job of a provider's kind (payload: its JSON object); returns
        at once with the job's id. With request_id, a second submit of that id
        returns the first job (.existing True) and accepts nothing new."""
        reply = self._call("SubmitProof", submit_request(kind, payload, partitions, priority, request_id))
        return Submission(reply.job_id, reply.existing, reply.queue_position)

    def await_proof(self, job_id: str, timeout: float | None = None, progress: Progress | None = None,
                    interval: float = 1.0) -> ProofResult:
        """Wait for the job's end, at most timeout seconds (None: until it
        ends); the result's status says how it ended (TIMEOUT: not yet).
        progress(JobInfo) is called with the job's state when it changes,
        polled every interval seconds; without it the wait is one call."""
        text_argument("job_id", job_id)
        wait = Wait(timeout, interval)
        if progress is None:
            return self._await(job_id, wait.whole_ms())
        last = None
        while True:                    # rounds of at least interval seconds, ended by the job or by wait
            started = time.monotonic()
            job = self.job(job_id)
            if job != last:
                progress(job)
                last = job
            result = self._await(job_id, wait.round_ms())
            if result.status is not ProofStatus.TIMEOUT or wait.expired():
                if result.job is not None and result.job != last:
                    progress(result.job)
                return result
            time.sleep(wait.pause(started))

    def _await(self, job_id: str, ms: int) -> ProofResult:
        reply = self._call("AwaitProof", pb.AwaitProofRequest(job_id=job_id, timeout_ms=ms), self._wait_deadline(ms))
        return ProofResult.from_message(reply)

    def prove(self, kind: str, payload: dict, partitions: int = 1, priority: str = "normal",
              request_id: str | None = None, timeout: float | None = None, progress: Progress | None = None,
              interval: float = 1.0) -> ProofResult:
        """Submit and await (see both). Without progress, one Prove call."""
        request = submit_request(kind, payload, partitions, priority, request_id)
        if progress is not None:
            wait = Wait(timeout, interval)
            job_id = self._call("SubmitProof", request).job_id
            return self.await_proof(job_id, wait.left(), progress, interval)
        ms = timeout_ms(ch.seconds("timeout", timeout, allow_none=True))
        reply = self._call("Prove", pb.ProveRequest(submit=request, timeout_ms=ms), self._wait_deadline(ms))
        return ProofResult.from_message(reply)

    def cancel(self, job_id: str) -> Cancellation:
        """Cancel a queued or running job (.cancelled False: it had already ended)."""
        reply = self._call("CancelProof", pb.CancelProofRequest(job_id=text_argument("job_id", job_id)))
        return Cancellation(reply.cancelled, reply.was_running)

    def job(self, job_id: str) -> JobInfo:
        """A job's state and progress (JobNotFoundError for an unknown id)."""
        return JobInfo.from_message(self._call("GetJob", pb.GetJobRequest(job_id=text_argument("job_id", job_id))))

    def list_jobs(self, states=None, limit: int = 100) -> list[JobInfo]:
        """Jobs newest first, at most limit, only in the given states (None: any)."""
        return [JobInfo.from_message(j) for j in self._call("ListJobs", list_request(states, limit)).jobs]

    # ------------------------------------------------------------------ the daemon

    def status(self) -> dict:
        """The daemon's status as plain data (see messages.status_dict)."""
        return status_dict(self._call("GetStatus", pb.GetStatusRequest()))

    def metrics(self) -> str:
        """The Prometheus exposition text."""
        return self._call("GetMetrics", pb.GetMetricsRequest()).text

    def preload(self, kind: str, payload: dict, timeout: float | None = None) -> Preload:
        """Load the parameters a job of kind with payload needs, and keep them
        resident; the call's deadline is timeout seconds (None: none, as
        loading a large parameter file takes minutes)."""
        request = pb.PreloadSRSRequest(kind=text_argument("kind", kind), payload=payload_bytes(payload))
        reply = self._call("PreloadSRS", request, ch.seconds("timeout", timeout, allow_none=True))
        return Preload(reply.srs_key, reply.load_ms, reply.bytes, reply.already_loaded)

    def evict(self, srs_key: str) -> Eviction:
        """Drop a parameter set no job uses (.evicted False: unknown or in use)."""
        reply = self._call("EvictSRS", pb.EvictSRSRequest(srs_key=text_argument("srs_key", srs_key)))
        return Eviction(reply.evicted, reply.bytes_freed)
