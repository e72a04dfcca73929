# SPDX-License-Identifier: Apache-2.0
"""The reference engine's wire (cuzk.v1.ProvingEngine, daemon/cuzk) through
its generated client, against a daemon process on 127.0.0.1 with a stand-in
porep provider (a plugin made here: it reads the vanilla proof the wire
wrote, and proves a small porep_like circuit whose witness is drawn from
those bytes and the sector's numbers, so proofs verify only when every byte
arrived): proofs submitted, awaited and proved, answered concatenated as the
reference engine answers them, the job seen by the daemon's own service,
status, metrics, preload and evict in the reference engine's terms, the
kinds no provider serves refused by name, bad requests refused, and a job
accepted over the wire resumed after a kill -9."""
import hashlib
import importlib.util
import json
import os
import secrets
import textwrap

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from prometheus_client.parser import text_string_to_metric_families

from daemon_process import DaemonProcess, bounded, rpc_error
from porep_prover.circuits import porep_like
from porep_prover.daemon.cuzk import proving_pb2 as pb
from porep_prover.daemon.cuzk import proving_pb2_grpc
from porep_prover.daemon.v1 import proving_pb2 as own_pb
from porep_prover.groth16 import Proof, verify

MAX_REQUEST_BYTES = 1 << 20
GIB = 1 << 30
STUB = '''
"""A stand-in porep provider for the wire's tests."""
import hashlib, json, os, random, time

from porep_prover.circuits import porep_like
from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import insecure_setup
from porep_prover.hooks import hookimpl

CONSTRAINTS = 61
HOLD = os.path.dirname(os.path.abspath(__file__))      # a file hold-<sector_number> here holds that job
KEYS = {"vanilla_proof", "registered_proof", "sector_size", "sector_number", "miner_id"}


def witness_seed(digest, sector_number, miner_id, partition):
    text = f"{digest}:{sector_number}:{miner_id}:{partition}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little")


def params():
    return insecure_setup(porep_like(CONSTRAINTS)[0], rng=random.Random("stub-porep"), warn=False)


class StubPoRep:
    kinds = ("porep",)
    payload_paths = ("vanilla_proof",)

    def parse_payload(self, obj, partitions):
        if set(obj) == {"sector_size"}:                 # a preload's
            return dict(obj)
        if set(obj) != KEYS:
            raise InvalidInputError(f"stub porep: payload keys {sorted(obj)}")
        with open(obj["vanilla_proof"], "rb") as f:
            data = f.read()
        try:
            said = json.loads(data)["partitions"]
        except (ValueError, TypeError, KeyError) as exc:
            raise InvalidInputError(f"stub porep: not a C1 output: {exc!r}") from None
        if said != partitions:
            raise InvalidInputError(f"stub porep: {partitions} partitions, the C1 output says otherwise")
        return {**obj, "digest": hashlib.sha256(data).hexdigest()}

    def srs_key(self, job):
        return f"stub-porep:{job.payload['sector_size']}"

    def load_srs(self, job):
        return params()

    def synthesize(self, job, partition, threads):
        p = job.payload
        hold = os.path.join(HOLD, f"hold-{p['sector_number']}")
        end = time.monotonic() + 120
        while os.path.exists(hold) and time.monotonic() < end:
            time.sleep(0.02)
        r1cs, witness, _ = porep_like(CONSTRAINTS, seed=witness_seed(p["digest"], p["sector_number"],
                                                                     p["miner_id"], partition))
        return r1cs, witness


@hookimpl
def porep_prover_register_synthesis_providers(registry):
    registry.add_provider(StubPoRep())
'''


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    """The stand-in plugin: its module (loaded here too, for its seeds and
    parameters) and a dist-info naming it, on PYTHONPATH for the daemons."""
    folder = tmp_path_factory.mktemp("stub-plugin")
    (folder / "porep_prover_stub_porep.py").write_text(textwrap.dedent(STUB))
    dist = folder / "porep_prover_stub_porep-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: porep-prover-stub-porep\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[porep_prover]\nstub-porep = porep_prover_stub_porep\n")
    spec = importlib.util.spec_from_file_location("stub_porep_here", folder / "porep_prover_stub_porep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.folder, module.vk = folder, module.params().vk
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        yield module


@pytest.fixture(scope="module")
def daemon(stub, tmp_path_factory):
    root = tmp_path_factory.mktemp("cuzk")
    with DaemonProcess(root / "state", {"daemon.max_request_bytes": MAX_REQUEST_BYTES, "daemon.max_waiters": 4}) as d:
        yield d


def wire(d) -> proving_pb2_grpc.ProvingEngineStub:
    return proving_pb2_grpc.ProvingEngineStub(d.channel())


def c1_output(partitions: int, rng) -> bytes:
    """A stand-in commit-phase-1 output: JSON, its partitions and random bytes."""
    return json.dumps({"partitions": partitions, "noise": rng.randbytes(20_000).hex()}).encode()


def porep_request(rng, registered_proof=8, partitions=10, **fields) -> pb.SubmitProofRequest:
    values = {"proof_kind": pb.POREP_SEAL_COMMIT, "registered_proof": registered_proof,
              "sector_number": rng.randrange(1, 1 << 40), "miner_id": rng.randrange(1000, 1 << 20),
              "vanilla_proof": c1_output(partitions, rng), **fields}
    return pb.SubmitProofRequest(**values)


def check_porep_proof(stub, answer: pb.AwaitProofResponse, request: pb.SubmitProofRequest, partitions: int):
    """The answer holds the partitions' proofs concatenated, each verifying
    for the witness the stand-in draws from the request's bytes and numbers."""
    assert answer.status == pb.AwaitProofResponse.COMPLETED, answer.error_message
    assert len(answer.proof) == 192 * partitions
    digest = hashlib.sha256(request.vanilla_proof).hexdigest()
    for i, proof in enumerate(Proof.split(answer.proof)):
        seed = stub.witness_seed(digest, request.sector_number, request.miner_id, i)
        assert verify(stub.vk, porep_like(stub.CONSTRAINTS, seed=seed)[2], proof), f"partition {i}"
    assert answer.total_ms >= answer.synthesis_ms > 0 and answer.gpu_compute_ms > 0


def test_porep_seal_commit_is_proved_and_answered_as_the_reference_engine_answers(stub, daemon, rng):
    client, own = wire(daemon), daemon.stub()
    request = porep_request(rng, request_id=f"porep-{rng.randrange(1 << 32)}", sector_size=32 * GIB)
    submitted = client.SubmitProof(request, timeout=30)
    assert submitted.job_id and submitted.assigned_gpu == ""
    answer = client.AwaitProof(pb.AwaitProofRequest(job_id=submitted.job_id, timeout_ms=60_000), timeout=90)
    assert answer.job_id == submitted.job_id
    check_porep_proof(stub, answer, request, 10)
    # the reference engine takes the request id for the job's id: so does this wire
    again = client.AwaitProof(pb.AwaitProofRequest(job_id=request.request_id), timeout=10)
    assert again.proof == answer.proof and again.job_id == submitted.job_id
    assert client.SubmitProof(request, timeout=30).job_id == submitted.job_id          # the same key, one job
    # the daemon's own service knows the job
    job = own.GetJob(own_pb.GetJobRequest(job_id=submitted.job_id), timeout=10)
    assert (job.kind, job.partitions, job.proved, job.state, job.request_id, job.priority) == \
        ("porep", 10, 10, own_pb.JOB_STATE_COMPLETED, request.request_id, own_pb.PRIORITY_NORMAL)
    own_answer = own.AwaitProof(own_pb.AwaitProofRequest(job_id=submitted.job_id), timeout=10)
    assert own_answer.proof == answer.proof
    # Prove: one call; a 2 KiB sector's one partition, its size taken from the registered proof
    small = porep_request(rng, registered_proof=5, partitions=1, priority=pb.HIGH)
    proved = client.Prove(pb.ProveRequest(submit=small), timeout=90).result
    check_porep_proof(stub, proved, small, 1)
    assert own.GetJob(own_pb.GetJobRequest(job_id=proved.job_id), timeout=10).priority == own_pb.PRIORITY_HIGH


def test_a_wait_past_its_timeout_and_a_cancel_in_the_reference_engines_terms(stub, daemon, rng):
    client, own = wire(daemon), daemon.stub()
    request = porep_request(rng, registered_proof=7, partitions=1)
    hold = stub.folder / f"hold-{request.sector_number}"
    hold.touch()
    try:
        job_id = client.SubmitProof(request, timeout=30).job_id
        bounded(lambda: own.GetJob(own_pb.GetJobRequest(job_id=job_id), timeout=5).state == own_pb.JOB_STATE_RUNNING,
                60, "the held job runs")
        waited = client.AwaitProof(pb.AwaitProofRequest(job_id=job_id, timeout_ms=200), timeout=30)
        assert waited.status == pb.AwaitProofResponse.TIMEOUT and not waited.proof
        assert client.CancelProof(pb.CancelProofRequest(job_id=job_id), timeout=10).was_running
        ended = client.AwaitProof(pb.AwaitProofRequest(job_id=job_id, timeout_ms=30_000), timeout=60)
        assert ended.status == pb.AwaitProofResponse.CANCELLED and not ended.proof
        assert not client.CancelProof(pb.CancelProofRequest(job_id=job_id), timeout=10).was_running
    finally:
        hold.unlink()
    for call, req in ((client.AwaitProof, pb.AwaitProofRequest(job_id="0" * 32)),
                      (client.CancelProof, pb.CancelProofRequest(job_id="no-such-request"))):
        err = rpc_error(call, req, timeout=10)
        assert err.code() == grpc.StatusCode.NOT_FOUND and "no job" in err.details()


def metric_samples(text: str) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_status_metrics_preload_and_evict_in_the_reference_engines_terms(stub, daemon, rng):
    client = wire(daemon)
    request = porep_request(rng, registered_proof=2, partitions=1)
    check_porep_proof(stub, client.Prove(pb.ProveRequest(submit=request), timeout=90).result, request, 1)
    status = client.GetStatus(pb.GetStatusRequest(), timeout=10)
    assert not status.gpus                                   # the daemon proves on the CPU
    assert status.total_proofs_completed >= 1 and status.uptime_seconds >= 0
    queues = {q.proof_kind: q for q in status.queues}
    assert {"porep-c2", "demo"} <= set(queues) and queues["porep-c2"].pending == queues["porep-c2"].in_progress == 0
    loaded = {s.circuit_id: s for s in status.loaded_srs}
    assert loaded["porep-512m"].tier == pb.SRSStatus.HOT and loaded["porep-512m"].size_bytes > 0
    assert status.pinned_memory_bytes >= loaded["porep-512m"].size_bytes

    samples = metric_samples(client.GetMetrics(pb.GetMetricsRequest(), timeout=10).prometheus_text)
    assert samples[("cuzk_proofs_completed_total", ())] == status.total_proofs_completed
    assert samples[("cuzk_proofs_completed", (("proof_kind", "porep_c2"),))] >= 1
    assert samples[("cuzk_proof_duration_seconds_count", (("proof_kind", "porep_c2"),))] >= 1
    assert samples[("cuzk_proof_duration_seconds_sum", (("proof_kind", "porep_c2"),))] > 0
    assert samples[("cuzk_queue_depth", ())] == 0 and samples[("cuzk_running_jobs", ())] == 0
    own_status = json.loads(daemon.stub().GetStatus(own_pb.GetStatusRequest(), timeout=10).json)
    assert samples[("cuzk_gpu_workers", ())] == own_status["workers"]["device"] > 0       # the CPU device's
    assert samples[("cuzk_uptime_seconds", ())] >= 0
    assert samples[("porep_prover_proofs_completed_total", (("kind", "porep"),))] >= 1     # the daemon's own too

    first = client.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-8m"), timeout=60)
    assert not first.already_loaded
    assert client.PreloadSRS(pb.PreloadSrsRequest(circuit_id="porep-8m"), timeout=60).already_loaded
    size = {s.circuit_id: s.size_bytes for s in client.GetStatus(pb.GetStatusRequest(), timeout=10).loaded_srs}
    assert size["porep-8m"] > 0
    assert client.EvictSRS(pb.EvictSrsRequest(circuit_id="porep-8m"), timeout=10) == \
        pb.EvictSrsResponse(was_loaded=True, freed_bytes=size["porep-8m"])
    assert client.EvictSRS(pb.EvictSrsRequest(circuit_id="porep-8m"), timeout=10) == pb.EvictSrsResponse()
    assert "porep-8m" not in {s.circuit_id for s in client.GetStatus(pb.GetStatusRequest(), timeout=10).loaded_srs}


def test_a_proof_kind_no_provider_serves_is_refused_by_name(daemon, rng):
    client = wire(daemon)
    for kind, job_kind in ((pb.SNAP_DEALS_UPDATE, "snap-update"), (pb.WINDOW_POST_PARTITION, "window-post"),
                           (pb.WINNING_POST, "winning-post")):
        request = pb.SubmitProofRequest(proof_kind=kind, registered_proof=8, sector_size=32 * GIB,
                                        vanilla_proof=b"[]", randomness=rng.randbytes(32))
        for call, req in ((client.SubmitProof, request), (client.Prove, pb.ProveRequest(submit=request))):
            err = rpc_error(call, req, timeout=10)
            assert err.code() == grpc.StatusCode.UNIMPLEMENTED, err.details()
            assert pb.ProofKind.Name(kind) in err.details() and repr(job_kind) in err.details()
            assert "no synthesis provider serves it" in err.details() and "porep" in err.details()
    for circuit_id in ("wpost-32g", "snap-64g", "winning-2k"):
        err = rpc_error(client.PreloadSRS, pb.PreloadSrsRequest(circuit_id=circuit_id), timeout=10)
        assert err.code() == grpc.StatusCode.UNIMPLEMENTED and circuit_id in err.details()


def test_bad_requests_are_refused_and_the_daemon_goes_on(stub, daemon, rng):
    client = wire(daemon)
    good = porep_request(rng, registered_proof=0, partitions=1)

    def but(**fields):
        request = pb.SubmitProofRequest()
        request.CopyFrom(good)
        for name, value in fields.items():
            setattr(request, name, value)
        return request

    bad = {
        "no proof kind": (but(proof_kind=0), "INVALID_ARGUMENT", "invalid proof_kind: 0"),
        "a proof kind past the enum": (but(proof_kind=9), "INVALID_ARGUMENT", "invalid proof_kind: 9"),
        "a negative proof kind": (but(proof_kind=-1), "INVALID_ARGUMENT", "invalid proof_kind: -1"),
        "a priority past the enum": (but(priority=7), "INVALID_ARGUMENT", "priority 7"),
        "an empty vanilla proof": (but(vanilla_proof=b""), "INVALID_ARGUMENT", "vanilla_proof is empty"),
        "no such registered proof": (but(registered_proof=20), "INVALID_ARGUMENT", "registered_proof 20"),
        "a non-interactive PoRep": (but(registered_proof=18), "INVALID_ARGUMENT", "non-interactive"),
        "not its sector size": (but(sector_size=32 * GIB), "INVALID_ARGUMENT", "is not registered_proof 0's (2048)"),
        "a long request id": (but(request_id="r" * 129), "INVALID_ARGUMENT", "request_id of 129 characters"),
        "oversize": (but(vanilla_proof=b"x" * MAX_REQUEST_BYTES), "RESOURCE_EXHAUSTED", "larger than max"),
        "the C1 output's partitions": (but(vanilla_proof=c1_output(10, rng)), "INVALID_ARGUMENT",
                                       "stub porep: 1 partitions"),
    }
    for what, (request, code, words) in bad.items():
        err = rpc_error(client.SubmitProof, request, timeout=10)
        assert err.code().name == code and words in err.details(), (what, err.code(), err.details())
    err = rpc_error(client.Prove, pb.ProveRequest(), timeout=10)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "submit" in err.details()
    for circuit_id in ("porep", "porep-31g", "PoRep-32g", "x" * 5000):
        err = rpc_error(client.EvictSRS, pb.EvictSrsRequest(circuit_id=circuit_id), timeout=10)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "KIND-SIZE" in err.details(), circuit_id
    raw = daemon.channel().unary_unary("/cuzk.v1.ProvingEngine/SubmitProof")
    err = rpc_error(raw, b"\x0a\xff\xff", timeout=10)           # a string field cut short
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "cuzk.v1.ProvingEngine/SubmitProof" in err.details()
    check_porep_proof(stub, client.Prove(pb.ProveRequest(submit=good), timeout=90).result, good, 1)


def test_health_and_reflection_name_the_wire(daemon):
    health = health_pb2_grpc.HealthStub(daemon.channel())
    answer = health.Check(health_pb2.HealthCheckRequest(service="cuzk.v1.ProvingEngine"), timeout=10)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING
    err = rpc_error(health.Check, health_pb2.HealthCheckRequest(service="cuzk.v2.ProvingEngine"), timeout=10)
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert "'cuzk.v1.ProvingEngine'" in err.details() and "'porep_prover.v1.ProvingEngine'" in err.details()
    services = set(ProtoReflectionDescriptorDatabase(daemon.channel()).get_services())
    assert {"cuzk.v1.ProvingEngine", "porep_prover.v1.ProvingEngine"} <= services


def test_a_job_accepted_over_the_wire_survives_a_kill_and_the_token_guards_the_wire(stub, tmp_path, rng):
    request = porep_request(rng, registered_proof=3, partitions=10, request_id="porep-1000-7")
    hold = stub.folder / f"hold-{request.sector_number}"
    hold.touch()
    try:
        with DaemonProcess(tmp_path / "state") as d:
            job_id = wire(d).SubmitProof(request, timeout=30).job_id
            inbox = tmp_path / "state" / "cuzk-inputs"
            assert [p.read_bytes() for p in inbox.iterdir()] == [request.vanilla_proof]
            d.kill()
    finally:
        hold.unlink()
    token = tmp_path / "token"
    token.write_text(secrets.token_hex(24))
    token.chmod(0o600)
    with DaemonProcess(tmp_path / "state", {"daemon.token_file": str(token)}) as d:
        wait = pb.AwaitProofRequest(job_id="porep-1000-7", timeout_ms=60_000)
        err = rpc_error(wire(d).AwaitProof, wait, timeout=10)
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        answer = wire(d).AwaitProof(wait, timeout=90, metadata=[("authorization", f"Bearer {token.read_text()}")])
        assert answer.job_id == job_id
        check_porep_proof(stub, answer, request, 10)


UINT64 = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 2, 3, 5, 14, 15, 19, 20, 2**63, 2**64 - 1]))
ENUM = st.one_of(st.integers(-2, 6), st.integers(-2**31, 2**31 - 1))      # proto3 enums are open: any int32
TEXT = st.one_of(st.text(max_size=40), st.sampled_from(["", "porep-32g", "wpost-2k", "porep-1000-1", "\x00",
                                                       "x" * 129, "x" * 70_000, "\ud7ff" * 3]))
REQUESTS = st.builds(pb.SubmitProofRequest, request_id=TEXT, proof_kind=ENUM, sector_size=UINT64,
                     registered_proof=UINT64, priority=ENUM, vanilla_proof=st.binary(max_size=300),
                     sector_number=UINT64, miner_id=UINT64, randomness=st.binary(max_size=300),
                     partition_index=st.integers(0, 2**32 - 1), comm_r_old=st.binary(max_size=300),
                     vanilla_proofs=st.lists(st.binary(max_size=100), max_size=3))
FINE = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.NOT_FOUND}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=REQUESTS, circuit_id=TEXT, job_id=TEXT)
def test_random_requests_are_answered_by_name_never_internal(daemon, request, circuit_id, job_id):
    """A random SubmitProofRequest (its vanilla proof no C1 output, so none is
    accepted), circuit id and job id: each refused with a status that says
    why, and never INTERNAL or UNKNOWN."""
    client = wire(daemon)
    calls = ((client.SubmitProof, request), (client.PreloadSRS, pb.PreloadSrsRequest(circuit_id=circuit_id)),
             (client.EvictSRS, pb.EvictSrsRequest(circuit_id=circuit_id)),
             (client.CancelProof, pb.CancelProofRequest(job_id=job_id)),
             (client.AwaitProof, pb.AwaitProofRequest(job_id=job_id, timeout_ms=1)))
    for call, message in calls:
        try:
            call(message, timeout=30)
        except grpc.RpcError as exc:
            assert exc.code() in FINE and exc.details(), (message, exc.code(), exc.details())
