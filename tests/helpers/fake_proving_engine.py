# SPDX-License-Identifier: Apache-2.0
"""An in-process ProvingEngine with canned behaviour, for the client's tests:
a grpc.server on 127.0.0.1 (port picked free) or a Unix socket.

The job's kind says what it does:
    instant     completes at submit
    steps       one partition proved per GetJob (QUEUED, RUNNING, ..., COMPLETED)
    stuck       never ends (until cancelled)
    broken      fails at submit, with an error message
    bad-proof   completes, partition 1's public inputs altered (its proof does not verify)
    status:NAME every call with it aborts with gRPC status NAME
    anything else: INVALID_ARGUMENT "unknown kind"
Completed jobs carry real Groth16 proofs (Material) of a small circuit made
with fresh random inputs. Every wait is bounded (AWAIT_LIMIT seconds).
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import random
import threading
import time
import warnings

import grpc

from porep_prover.circuits import porep_like
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.daemon.v1 import proving_pb2_grpc as pb_grpc
from porep_prover.groth16 import InsecureSetupWarning, insecure_setup, prove

AWAIT_LIMIT = 20.0
FINISHED = (pb.JOB_STATE_COMPLETED, pb.JOB_STATE_FAILED, pb.JOB_STATE_CANCELLED)
STATUS_OF_STATE = {pb.JOB_STATE_COMPLETED: pb.AwaitProofResponse.COMPLETED,
                   pb.JOB_STATE_FAILED: pb.AwaitProofResponse.FAILED,
                   pb.JOB_STATE_CANCELLED: pb.AwaitProofResponse.CANCELLED}


@dataclasses.dataclass
class Material:
    """Proofs of one circuit (fresh random size and seed): vk, public inputs, proofs (distinct: fresh r, s)."""
    vk: object
    public: list
    proofs: list

    @classmethod
    def make(cls, count: int, rng: random.Random, num_public: int | None = None) -> "Material":
        num_public = rng.randrange(1, 5) if num_public is None else num_public
        r1cs, witness, public = porep_like(rng.randrange(20, 60), num_public=num_public, seed=rng.randrange(1 << 32))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureSetupWarning)
            params = insecure_setup(r1cs, backend="cpu")
        return cls(params.vk, public, [prove(params, r1cs, witness, backend="cpu") for _ in range(count)])


@dataclasses.dataclass
class FakeJob:
    status: pb.JobStatus
    payload: dict


class FakeEngine(pb_grpc.ProvingEngineServicer):
    def __init__(self, material: Material, token: str | None = None, max_pending: int = 1000):
        self.material, self.token, self.max_pending = material, token, max_pending
        self.jobs: dict[str, FakeJob] = {}
        self.by_request: dict[str, str] = {}
        self.calls: list[tuple[str, object, tuple]] = []      # (method, request, metadata)
        self.preloaded: set[str] = set()
        self.changed = threading.Condition()

    # ------------------------------------------------------------------ plumbing

    def _enter(self, method: str, request, context, kind: str = "") -> None:
        metadata = tuple(context.invocation_metadata())
        with self.changed:
            self.calls.append((method, request, metadata))
        if self.token is not None and dict(metadata).get("authorization") != f"Bearer {self.token}":
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        if kind.startswith("status:"):
            name = kind.split(":", 1)[1]
            context.abort(getattr(grpc.StatusCode, name), f"fake {name} for {method}")

    def _job(self, job_id: str, context) -> FakeJob:
        job = self.jobs.get(job_id)
        if job is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no job {job_id!r}")
        return job

    def _finish(self, job: FakeJob, state: int, error: str = "") -> None:
        s = job.status
        s.state, s.error_message, s.finished_unix_ms = state, error, int(time.time() * 1000)
        if state == pb.JOB_STATE_COMPLETED:
            s.queued, s.in_flight, s.proved = 0, 0, s.partitions
        elif state == pb.JOB_STATE_FAILED:
            s.failed, s.queued, s.in_flight = 1, 0, 0
        self.changed.notify_all()

    def _result(self, job: FakeJob) -> pb.AwaitProofResponse:
        s = job.status
        status = STATUS_OF_STATE.get(s.state, pb.AwaitProofResponse.TIMEOUT)
        reply = pb.AwaitProofResponse(job_id=s.job_id, status=status,
                                      error_message=s.error_message, queue_wait_ms=3, srs_load_ms=5, synthesis_ms=7,
                                      gpu_compute_ms=11, total_ms=29)
        reply.job.CopyFrom(s)
        if s.state == pb.JOB_STATE_COMPLETED:
            proofs = [self.material.proofs[i % len(self.material.proofs)] for i in range(s.partitions)]
            reply.proof = b"".join(p.to_bytes() for p in proofs)
            for i in range(s.partitions):
                values = list(self.material.public)
                if s.kind == "bad-proof" and i == 1:
                    values[0] = (values[0] + 1) % (1 << 250)
                reply.public_inputs.add(values=[str(v) for v in values])
        return reply

    # ------------------------------------------------------------------ the service

    def SubmitProof(self, request, context):
        self._enter("SubmitProof", request, context, request.kind)
        return self._submit(request, context)

    def _submit(self, request, context) -> pb.SubmitProofResponse:
        if request.kind not in ("instant", "steps", "stuck", "broken", "bad-proof"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown kind {request.kind!r}")
        try:
            payload = json.loads(request.payload)
        except ValueError:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the payload is not JSON")
        with self.changed:
            if request.request_id and request.request_id in self.by_request:
                return pb.SubmitProofResponse(job_id=self.by_request[request.request_id], existing=True)
            pending = sum(j.status.state not in FINISHED for j in self.jobs.values())
            if pending >= self.max_pending:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"{pending} jobs pending (max_pending)")
            job_id = f"job-{len(self.jobs) + 1:04d}"
            status = pb.JobStatus(job_id=job_id, request_id=request.request_id, kind=request.kind,
                                  priority=request.priority, state=pb.JOB_STATE_QUEUED, partitions=request.partitions,
                                  queued=request.partitions, submitted_unix_ms=int(time.time() * 1000))
            job = self.jobs[job_id] = FakeJob(status, payload)
            if request.request_id:
                self.by_request[request.request_id] = job_id
            if request.kind in ("instant", "bad-proof"):
                self._finish(job, pb.JOB_STATE_COMPLETED)
            elif request.kind == "broken":
                self._finish(job, pb.JOB_STATE_FAILED, "partition 0: synthesis failed")
            return pb.SubmitProofResponse(job_id=job_id, queue_position=pending)

    def GetJob(self, request, context):
        self._enter("GetJob", request, context)
        with self.changed:
            job = self._job(request.job_id, context)
            s = job.status
            if s.kind == "steps" and s.state not in FINISHED:
                if s.state == pb.JOB_STATE_QUEUED:
                    s.state, s.queued, s.in_flight = pb.JOB_STATE_RUNNING, s.partitions - 1, 1
                else:
                    s.proved += 1
                    s.in_flight = min(1, s.partitions - s.proved)
                    s.queued = s.partitions - s.proved - s.in_flight
                    if s.proved == s.partitions:
                        self._finish(job, pb.JOB_STATE_COMPLETED)
            return pb.JobStatus.FromString(s.SerializeToString())

    def AwaitProof(self, request, context):
        self._enter("AwaitProof", request, context)
        return self._await(request.job_id, request.timeout_ms, context)

    def _await(self, job_id: str, timeout_ms: int, context) -> pb.AwaitProofResponse:
        limit = AWAIT_LIMIT if timeout_ms == 0 else min(AWAIT_LIMIT, timeout_ms / 1000)
        with self.changed:
            job = self._job(job_id, context)
            self.changed.wait_for(lambda: job.status.state in FINISHED, timeout=limit)
            return self._result(job)

    def Prove(self, request, context):
        self._enter("Prove", request, context, request.submit.kind)
        submitted = self._submit(request.submit, context)
        return self._await(submitted.job_id, request.timeout_ms, context)

    def CancelProof(self, request, context):
        self._enter("CancelProof", request, context)
        with self.changed:
            job = self._job(request.job_id, context)
            if job.status.state in FINISHED:
                return pb.CancelProofResponse(cancelled=False)
            running = job.status.state == pb.JOB_STATE_RUNNING
            self._finish(job, pb.JOB_STATE_CANCELLED)
            return pb.CancelProofResponse(cancelled=True, was_running=running)

    def ListJobs(self, request, context):
        self._enter("ListJobs", request, context)
        with self.changed:
            jobs = [j.status for j in reversed(self.jobs.values())
                    if not request.states or j.status.state in request.states]
            return pb.ListJobsResponse(jobs=jobs[:request.limit or 100])

    def GetStatus(self, request, context):
        self._enter("GetStatus", request, context)
        with self.changed:
            running = sum(j.status.state == pb.JOB_STATE_RUNNING for j in self.jobs.values())
        return pb.GetStatusResponse(
            version="fake", uptime_seconds=42, jobs_running=running, accepting=True,
            devices=[pb.DeviceStatus(label="cpu", kind="cpu", name="fake", workers=2)],
            queues=[pb.QueueStatus(priority=pb.PRIORITY_HIGH, jobs=1)],
            json=json.dumps({"devices": [{"label": "cpu"}], "jobs": {"running": running}}))

    def GetMetrics(self, request, context):
        self._enter("GetMetrics", request, context)
        return pb.GetMetricsResponse(text="# TYPE porep_prover_proofs_completed_total counter\n"
                                          f"porep_prover_proofs_completed_total {len(self.jobs)}\n")

    def PreloadSRS(self, request, context):
        self._enter("PreloadSRS", request, context, request.kind)
        key = f"{request.kind}:{json.loads(request.payload).get('constraints', 0)}"
        already = key in self.preloaded
        self.preloaded.add(key)
        return pb.PreloadSRSResponse(srs_key=key, load_ms=0 if already else 17, bytes=4096, already_loaded=already)

    def EvictSRS(self, request, context):
        self._enter("EvictSRS", request, context)
        if request.srs_key in self.preloaded:
            self.preloaded.discard(request.srs_key)
            return pb.EvictSRSResponse(evicted=True, bytes_freed=4096)
        return pb.EvictSRSResponse(evicted=False)


class FakeServer:
    """FakeEngine served on 127.0.0.1 at a free port (or at a Unix socket
    path, or with TLS from (key, certificate) PEM bytes); stop() ends it."""

    def __init__(self, engine: FakeEngine, unix_path: str | None = None, tls: tuple[bytes, bytes] | None = None):
        self.engine = engine
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=8))
        pb_grpc.add_ProvingEngineServicer_to_server(engine, self.server)
        where = f"unix:{unix_path}" if unix_path else "127.0.0.1:0"
        if tls is not None:
            port = self.server.add_secure_port(where, grpc.ssl_server_credentials([tls]))
        else:
            port = self.server.add_insecure_port(where)
        self.address = where if unix_path else f"127.0.0.1:{port}"
        self.port = port
        self.server.start()

    def stop(self) -> None:
        self.server.stop(grace=0).wait(timeout=10)
