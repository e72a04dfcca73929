# SPDX-License-Identifier: Apache-2.0
"""The gRPC service porep_prover.v1.ProvingEngine (daemon/v1/proving.proto)
over a running Daemon.

Errors are statuses with a message, as the .proto lists them:
INVALID_ARGUMENT (InvalidInputError: unknown kind, malformed payload, bad
partitions or priority, a string field over its length limit; server.py: a
request that is not its method's message), PERMISSION_DENIED
(InputPathError), RESOURCE_EXHAUSTED (CapacityError: daemon.max_pending,
daemon.max_waiters; gRPC itself for a message over
daemon.max_request_bytes), NOT_FOUND (an unknown job id),
UNAVAILABLE (draining), DEADLINE_EXCEEDED (the caller's deadline passed
while it waited), FAILED_PRECONDITION (a file a preload names cannot be
read), INTERNAL (anything else; logged with its traceback). A message
longer than MAX_MESSAGE_CHARS is cut there (it travels in a trailer, which a
client bounds), and a character UTF-8 cannot carry (a lone surrogate from a
payload's JSON) is escaped.

A wait (AwaitProof, Prove) holds one of the server's threads: at most
daemon.max_waiters wait at once, and each wait ends by its timeout_ms, the
call's deadline, the caller's leaving or the daemon's drain, whichever comes
first, so the waits never take every thread.
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading

import grpc

from ..engine.jobs import KIND_PRIORITIES
from ..errors import CapacityError, EngineError, InputPathError, InvalidInputError, PorepProverError
from . import jobs as daemon_jobs
from .v1 import proving_pb2 as pb
from .v1 import proving_pb2_grpc

LOG = logging.getLogger("porep_prover.daemon")
STATES = {"queued": pb.JOB_STATE_QUEUED, "running": pb.JOB_STATE_RUNNING, "completed": pb.JOB_STATE_COMPLETED,
          "failed": pb.JOB_STATE_FAILED, "cancelled": pb.JOB_STATE_CANCELLED}
JOURNAL_STATES = {pb.JOB_STATE_QUEUED: "queued", pb.JOB_STATE_RUNNING: "queued", pb.JOB_STATE_COMPLETED: "completed",
                  pb.JOB_STATE_FAILED: "failed", pb.JOB_STATE_CANCELLED: "cancelled"}
ENDINGS = {"completed": pb.AwaitProofResponse.COMPLETED, "failed": pb.AwaitProofResponse.FAILED,
           "cancelled": pb.AwaitProofResponse.CANCELLED}
PRIORITIES = {pb.PRIORITY_LOW: "low", pb.PRIORITY_NORMAL: "normal", pb.PRIORITY_HIGH: "high",
              pb.PRIORITY_CRITICAL: "critical"}
DEFAULT_LIST, MAX_LIST = 100, 10_000
MAX_ID_CHARS = 128          # request_id, kind, job_id
MAX_SRS_KEY_CHARS = 8192    # a provider's srs_key may hold a path (up to 4096 bytes) and more
MAX_MESSAGE_CHARS = 2000    # of a status's message
SHOWN_STATES = 8            # unknown job states a ListJobs refusal names


class Refusal(Exception):
    """An answer other than OK that is not an error of the project's kinds: code and message."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code


def _answers(method):
    """The method's errors as gRPC statuses with their messages (see the module's docstring)."""
    @functools.wraps(method)
    def call(self, request, context):
        try:
            return method(self, request, context)
        except Refusal as exc:
            code, message = exc.code, str(exc)
        except InputPathError as exc:
            code, message = grpc.StatusCode.PERMISSION_DENIED, str(exc)
        except CapacityError as exc:
            code, message = grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)
        except InvalidInputError as exc:
            code, message = grpc.StatusCode.INVALID_ARGUMENT, str(exc)
        except EngineError as exc:
            code, message = grpc.StatusCode.UNAVAILABLE, str(exc)
        except (OSError, PorepProverError) as exc:
            code, message = grpc.StatusCode.FAILED_PRECONDITION, f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - one call fails, the daemon goes on
            LOG.exception("%s failed", method.__name__)
            code, message = grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}"
        context.abort(code, _carried(message))
    return call


def _carried(message: str) -> str:
    """message as a status carries it: valid UTF-8, at most MAX_MESSAGE_CHARS."""
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(message) > MAX_MESSAGE_CHARS:
        message = f"{message[:MAX_MESSAGE_CHARS - 40]}... ({len(message)} characters in all)"
    return message


def _within(request, **limits: int) -> None:
    """InvalidInputError naming the first of request's string fields longer than its limit."""
    for name, limit in limits.items():
        value = getattr(request, name)
        if len(value) > limit:
            raise InvalidInputError(f"{name} of {len(value)} characters: at most {limit}")


def _priority(value: int, kind: str) -> int:
    """A request's priority; unspecified: the kind's (engine.jobs.KIND_PRIORITIES), else NORMAL."""
    if value == pb.PRIORITY_UNSPECIFIED:
        return KIND_PRIORITIES.get(kind, pb.PRIORITY_NORMAL)
    if value not in PRIORITIES:
        raise InvalidInputError(f"priority {value} is not one of LOW, NORMAL, HIGH, CRITICAL")
    return value


def _id(job_id: str) -> str:
    if not job_id or len(job_id) > MAX_ID_CHARS:
        raise Refusal(grpc.StatusCode.NOT_FOUND, f"no job {job_id[:MAX_ID_CHARS]!r}")
    return job_id


class ProvingService(proving_pb2_grpc.ProvingEngineServicer):
    """The service's methods over daemon (a started core.Daemon)."""

    def __init__(self, daemon):
        self.daemon = daemon
        self._waits = threading.BoundedSemaphore(daemon.settings.max_waiters)

    # ------------------------------------------------------------ jobs

    def _submit(self, request: pb.SubmitProofRequest):
        _within(request, request_id=MAX_ID_CHARS, kind=MAX_ID_CHARS)
        return self.daemon.jobs.submit(request.kind, request.partitions,
                                       _priority(request.priority, request.kind), request.payload, request.request_id)

    @_answers
    def SubmitProof(self, request, context):
        record, existing, position = self._submit(request)
        return pb.SubmitProofResponse(job_id=record.id, queue_position=position, existing=existing)

    @_answers
    def AwaitProof(self, request, context):
        with self._wait_slot():
            return self._await(_id(request.job_id), request.timeout_ms, context)

    @_answers
    def Prove(self, request, context):
        with self._wait_slot():              # taken first: a job is accepted only when it can be waited for
            record, _, _ = self._submit(request.submit)
            return self._await(record.id, request.timeout_ms, context)

    @contextlib.contextmanager
    def _wait_slot(self):
        """One of the daemon.max_waiters waits, held for the block; CapacityError when none is free."""
        if not self._waits.acquire(blocking=False):
            raise CapacityError(f"{self.daemon.settings.max_waiters} calls are waiting already "
                                "(daemon.max_waiters); retry, or wait with a shorter timeout")
        try:
            yield
        finally:
            self._waits.release()

    def _await(self, job_id: str, timeout_ms: int, context) -> pb.AwaitProofResponse:
        """Wait for the job's end, within timeout_ms (0: none) and the call's deadline."""
        timeout = timeout_ms / 1000 if timeout_ms else None
        remaining = context.time_remaining()
        if remaining is not None:
            timeout = remaining if timeout is None else min(timeout, remaining)
        record = self.daemon.jobs.wait(job_id, timeout, context.is_active)
        if record is None:
            raise self._not_found(job_id)
        if record.state in ENDINGS:
            return self._ending(record)
        if not self.daemon.jobs.accepting:          # draining: the job ends here, or resumes after the restart
            raise Refusal(grpc.StatusCode.UNAVAILABLE, f"the daemon is shutting down; job {job_id} is journaled "
                                                       "and resumes when it starts again")
        left = context.time_remaining()
        if left is not None and left <= 0:
            raise Refusal(grpc.StatusCode.DEADLINE_EXCEEDED, f"job {job_id} is still running at the call's deadline")
        return pb.AwaitProofResponse(status=pb.AwaitProofResponse.TIMEOUT, job_id=job_id, job=self._job(record),
                                     error_message=f"job {job_id} is still running after {timeout_ms} ms")

    def _ending(self, record) -> pb.AwaitProofResponse:
        """A finished job's answer: its proofs (read from disk) when it completed, its timings."""
        journal = self.daemon.journal
        completed = record.state == "completed"
        partitions = journal.partitions(record.id, with_proofs=completed)
        times = daemon_jobs.timings(record, partitions)
        answer = pb.AwaitProofResponse(
            status=ENDINGS[record.state], job_id=record.id, error_message=record.error,
            queue_wait_ms=_ms(times["queue_wait"]), srs_load_ms=_ms(times["srs_load"]),
            synthesis_ms=_ms(times["synthesis"]), gpu_compute_ms=_ms(times["gpu_compute"]),
            total_ms=_ms(times["total"]), job=self._job(record))
        if completed:
            answer.proof = b"".join(p.proof for p in partitions)
            answer.public_inputs.extend(pb.PublicInputs(values=[str(x) for x in p.public]) for p in partitions)
            journal.mark_fetched(record.id)
        return answer

    @_answers
    def CancelProof(self, request, context):
        outcome = self.daemon.jobs.cancel(_id(request.job_id))
        if outcome is None:
            raise self._not_found(request.job_id)
        return pb.CancelProofResponse(cancelled=outcome[0], was_running=outcome[1])

    def _job(self, record) -> pb.JobStatus:
        progress = self.daemon.jobs.progress(record)
        return pb.JobStatus(job_id=record.id, request_id=record.request_id or "", kind=record.kind,
                            priority=record.priority, state=STATES[progress["state"]], partitions=record.partitions,
                            queued=progress["queued"], in_flight=progress["in_flight"], proved=progress["proved"],
                            failed=progress["failed"], submitted_unix_ms=int(record.submitted * 1000),
                            finished_unix_ms=int((record.finished or 0) * 1000), error_message=record.error)

    @_answers
    def GetJob(self, request, context):
        record = self.daemon.journal.get(_id(request.job_id))
        if record is None:
            raise self._not_found(request.job_id)
        return self._job(record)

    def _not_found(self, job_id: str) -> Refusal:
        """NOT_FOUND for a job id: when and why the job was removed, or that none had it."""
        removal = self.daemon.journal.removal(job_id)
        return Refusal(grpc.StatusCode.NOT_FOUND, f"job {job_id!r} was {removal}" if removal
                       else f"no job {job_id!r} in this daemon's journal")

    @_answers
    def ListJobs(self, request, context):
        wanted = set(request.states)
        unknown = wanted - set(JOURNAL_STATES)
        if unknown:
            shown = ", ".join(map(str, sorted(unknown)[:SHOWN_STATES]))
            raise InvalidInputError(f"{len(unknown)} unknown job states: {shown}"
                                    f"{', ...' if len(unknown) > SHOWN_STATES else ''}")
        limit = min(request.limit or DEFAULT_LIST, MAX_LIST)
        states = tuple(sorted({JOURNAL_STATES[s] for s in wanted}))
        out = []
        for record in self.daemon.journal.newest(states, limit):
            job = self._job(record)
            if not wanted or job.state in wanted:
                out.append(job)
        return pb.ListJobsResponse(jobs=out)

    # ------------------------------------------------------------ the daemon

    @_answers
    def GetStatus(self, request, context):
        status = self.daemon.status()
        host = status.get("memory", {}).get("host", {})
        devices = [pb.DeviceStatus(label=d["label"], kind=d["kind"], name=d.get("name") or "",
                                   memory_total_bytes=(d.get("memory") or {}).get("total_bytes", 0),
                                   memory_free_bytes=(d.get("memory") or {}).get("free_bytes", 0),
                                   workers=d.get("workers", 0)) for d in status["devices"]]
        srs = [pb.SrsStatus(key=e["key"], bytes=e["bytes"], leases=e["leases"], loads=e["loads"])
               for e in status["srs"]["sets"]]
        queues = [pb.QueueStatus(priority=number, jobs=status["queue"][name]) for number, name in PRIORITIES.items()]
        counts = status["jobs"]["counts"]
        return pb.GetStatusResponse(
            version=status["version"], uptime_seconds=int(status["uptime_seconds"]), devices=devices, srs=srs,
            queues=queues, jobs_running=counts["running"], proofs_completed=counts["completed"],
            proofs_failed=counts["failed"], memory_in_flight_bytes=host.get("in_flight_bytes", 0),
            memory_budget_bytes=host.get("budget_bytes", 0), accepting=status["accepting"],
            json=json.dumps(status, allow_nan=False))

    @_answers
    def GetMetrics(self, request, context):
        metrics = self.daemon.metrics
        metrics.observe(self.daemon.status(), self.daemon.engine)
        return pb.GetMetricsResponse(text=metrics.text())

    @_answers
    def PreloadSRS(self, request, context):
        _within(request, kind=MAX_ID_CHARS)
        loaded = self.daemon.preload(request.kind, request.payload)
        return pb.PreloadSRSResponse(srs_key=loaded["key"], load_ms=_ms(loaded["seconds"]), bytes=loaded["bytes"],
                                     already_loaded=loaded["already_loaded"])

    @_answers
    def EvictSRS(self, request, context):
        _within(request, srs_key=MAX_SRS_KEY_CHARS)
        freed = self.daemon.evict(request.srs_key)
        return pb.EvictSRSResponse(evicted=freed is not None, bytes_freed=freed or 0)


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))
