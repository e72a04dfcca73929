# SPDX-License-Identifier: Apache-2.0
"""The proving daemon's client: `Client` (blocking) and `AsyncClient`
(asyncio), over the service in porep_prover/daemon/v1/proving.proto.

    with Client("127.0.0.1:50051", token=token) as client:
        job = client.submit("demo", {"constraints": 1000, "seed": 1}, partitions=2)
        result = client.await_proof(job.job_id, timeout=600, progress=print)
        assert result.ok and result.verify(vk)

Results are dataclasses (ProofResult: status, proofs as groth16.Proof per
partition, public inputs as ints, timings, the job's JobInfo); a failed call
raises the porep_prover.errors.DaemonError of its gRPC status. Needs grpcio
and protobuf; imports neither the engine nor the daemon's server.
"""
from .aio import AsyncClient
from .messages import (Cancellation, Eviction, JobInfo, JobState, Preload, Priority, ProofResult, ProofStatus,
                       Submission, Timings)
from .sync import Client

__all__ = ["AsyncClient", "Cancellation", "Client", "Eviction", "JobInfo", "JobState", "Preload", "Priority",
           "ProofResult", "ProofStatus", "Submission", "Timings"]
