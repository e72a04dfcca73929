# SPDX-License-Identifier: Apache-2.0
"""The gRPC service cuzk.v1.ProvingEngine (proving.proto here) over a
running Daemon, beside its own service: CuzkService(own) answers through
own (a service.ProvingService on the same server), so both fronts share the
daemon's job book and journal, its limits (daemon.max_waiters counts the
waits of both), its statuses and their messages (service.py's docstring
lists them), and UNIMPLEMENTED for a proof kind no provider serves.

A job is known by the id SubmitProofResponse gives (the daemon's, which its
own service knows too) or by the request_id it was submitted with, as the
reference engine takes it for the job's id.
"""
from __future__ import annotations

import json
import logging

from ...engine import Job
from ...errors import InvalidInputError
from ..service import ProvingService, _answers, _id, _ms
from ..v1 import proving_pb2 as own_pb
from . import proving_pb2 as pb
from . import proving_pb2_grpc
from .requests import Inbox, circuit, circuit_ids, proof_kind_name, served, wire_job
from .status import metrics_text, status_response

LOG = logging.getLogger("porep_prover.daemon")
SERVICE = pb.DESCRIPTOR.services_by_name["ProvingEngine"].full_name
ENDINGS = {own_pb.AwaitProofResponse.COMPLETED: pb.AwaitProofResponse.COMPLETED,
           own_pb.AwaitProofResponse.FAILED: pb.AwaitProofResponse.FAILED,
           own_pb.AwaitProofResponse.CANCELLED: pb.AwaitProofResponse.CANCELLED,
           own_pb.AwaitProofResponse.TIMEOUT: pb.AwaitProofResponse.TIMEOUT}


def _answer(own: own_pb.AwaitProofResponse) -> pb.AwaitProofResponse:
    """The own service's answer of a wait in the reference engine's message."""
    return pb.AwaitProofResponse(job_id=own.job_id, status=ENDINGS.get(own.status, pb.AwaitProofResponse.UNKNOWN),
                                 proof=own.proof, error_message=own.error_message, queue_wait_ms=own.queue_wait_ms,
                                 srs_load_ms=own.srs_load_ms, synthesis_ms=own.synthesis_ms,
                                 gpu_compute_ms=own.gpu_compute_ms, total_ms=own.total_ms)


class CuzkService(proving_pb2_grpc.ProvingEngineServicer):
    """The reference engine's methods over own.daemon (a started core.Daemon
    whose settings.cuzk_inbox is set), answering waits through own."""

    def __init__(self, own: ProvingService):
        self.own, self.daemon = own, own.daemon
        self.inbox = Inbox(self.daemon.settings.cuzk_inbox, self.daemon.journal)
        self.inbox.sweep()                      # files of jobs that ended while the daemon was down
        self._circuit_names: dict[str, str] | None = None

    # ------------------------------------------------------------ proofs

    def _submit(self, request: pb.SubmitProofRequest):
        """(record, queue position) of the job request becomes (raises as JobBook.submit and wire_job)."""
        job = wire_job(request)
        served(job.kind, f"proof kind {proof_kind_name(request.proof_kind)}", self.daemon.jobs)
        with self.inbox.holding(job.data) as path:
            record, _, position = self.daemon.jobs.submit(job.kind, job.partitions, job.priority,
                                                          job.payload_json(path), request.request_id)
        return record, position

    @_answers
    def SubmitProof(self, request, context):
        record, position = self._submit(request)
        return pb.SubmitProofResponse(job_id=record.id, queue_position=position)

    @_answers
    def AwaitProof(self, request, context):
        with self.own._wait_slot():
            return _answer(self.own._await(self._job_id(request.job_id), request.timeout_ms, context))

    @_answers
    def Prove(self, request, context):
        if not request.HasField("submit"):
            raise InvalidInputError("a ProveRequest carries its SubmitProofRequest in submit")
        with self.own._wait_slot():          # taken first: a job is accepted only when it can be waited for
            record, _ = self._submit(request.submit)
            return pb.ProveResponse(result=_answer(self.own._await(record.id, 0, context)))

    @_answers
    def CancelProof(self, request, context):
        job_id = self._job_id(request.job_id)
        outcome = self.daemon.jobs.cancel(job_id)
        if outcome is None:
            raise self.own._not_found(job_id)
        return pb.CancelProofResponse(was_running=outcome[1])

    def _job_id(self, given: str) -> str:
        """The daemon's id of the job given by its id or by the request_id it was submitted with."""
        job_id = _id(given)
        if self.daemon.journal.get(job_id) is None:
            record = self.daemon.journal.by_request(job_id)
            if record is not None:
                return record.id
        return job_id

    # ------------------------------------------------------------ the daemon

    @_answers
    def GetStatus(self, request, context):
        return status_response(self.daemon.status(), self.daemon.jobs.kinds(), self._names())

    @_answers
    def GetMetrics(self, request, context):
        status = self.daemon.status()
        self.daemon.metrics.observe(status, self.daemon.engine)
        return pb.GetMetricsResponse(prometheus_text=metrics_text(status, self.daemon.metrics))

    @_answers
    def PreloadSRS(self, request, context):
        kind, obj = circuit(request.circuit_id)
        served(kind, f"circuit {request.circuit_id}", self.daemon.jobs)
        loaded = self.daemon.preload(kind, json.dumps(obj).encode())
        return pb.PreloadSrsResponse(already_loaded=loaded["already_loaded"], load_time_ms=_ms(loaded["seconds"]))

    @_answers
    def EvictSRS(self, request, context):
        kind, obj = circuit(request.circuit_id)
        served(kind, f"circuit {request.circuit_id}", self.daemon.jobs)
        freed = self.daemon.evict(self._srs_key(kind, obj))
        return pb.EvictSrsResponse(was_loaded=freed is not None, freed_bytes=freed or 0)

    def _srs_key(self, kind: str, obj: dict) -> str:
        """The key kind's provider gives the parameters of a circuit's preload payload obj."""
        registry = self.daemon.registry
        return registry.provider(kind).srs_key(Job(kind, 1, registry.payload_from_json(kind, obj, 1)))

    def _names(self) -> dict[str, str]:
        """{srs key: circuit id} of every circuit whose kind a provider serves
        (asked once: the providers are fixed while the daemon runs)."""
        if self._circuit_names is None:
            names = {}
            for circuit_id, kind, obj in circuit_ids():
                if kind in self.daemon.registry.providers:
                    try:
                        names[self._srs_key(kind, obj)] = circuit_id
                    except Exception as exc:  # noqa: BLE001 - a provider that names no such circuit
                        LOG.debug("circuit %s: no parameter key from the %s provider: %s", circuit_id, kind, exc)
            self._circuit_names = names
        return self._circuit_names
