# SPDX-License-Identifier: Apache-2.0
"""The proving daemon's service through its generated stub (a daemon
process on 127.0.0.1): demo jobs proved and checked, file jobs confined to
the input roots, bad requests answered with their status and a message,
max_pending, bounded waits, cancel of queued and running jobs, health,
reflection, status and metrics."""
import json
import os
import random
import threading
import time
import urllib.request

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from daemon_process import DaemonProcess, bounded, check_proofs, demo_params, demo_request, rpc_error
from porep_prover.circuits import porep_like
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.groth16 import insecure_setup, read_params, save_witness, write_params

MAX_REQUEST_BYTES = 64 * 1024
LONG = 400              # partitions of a job that stays running for the length of a test (cancelled after)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    root = tmp_path_factory.mktemp("daemon")
    inputs = root / "inputs"
    inputs.mkdir()
    settings = {"daemon.max_pending": 3, "daemon.max_waiters": 2, "daemon.input_roots": [str(inputs)],
                "daemon.max_request_bytes": MAX_REQUEST_BYTES}
    with DaemonProcess(root / "state", settings) as d:
        d.inputs, d.outside = inputs, root
        yield d


@pytest.fixture(scope="module")
def n():
    return random.randrange(120, 250)             # the demo circuit's size, not a power of two


def wait_state(stub, job_id, states, seconds=60):
    return bounded(lambda: (j := stub.GetJob(pb.GetJobRequest(job_id=job_id), timeout=5)).state in states and j,
                   seconds, f"job {job_id} in {states}")


def test_demo_jobs_are_proved_and_every_proof_verifies(daemon, n):
    stub = daemon.stub()
    seeds = random.sample(range(1 << 62), 2)
    submitted = [stub.SubmitProof(demo_request(n, partitions=3, seed=seeds[0]), timeout=10),
                 stub.SubmitProof(demo_request(n, partitions=2, seed=seeds[1], priority=pb.PRIORITY_HIGH),
                                  timeout=10)]
    assert len({s.job_id for s in submitted}) == 2 and not any(s.existing for s in submitted)
    answers = [stub.AwaitProof(pb.AwaitProofRequest(job_id=s.job_id, timeout_ms=60_000), timeout=90)
               for s in submitted]
    vk = demo_params(daemon.state_dir, n).vk
    for answer, seed in zip(answers, seeds):
        check_proofs(answer, vk, n, seed)
        assert answer.total_ms >= max(answer.synthesis_ms, answer.gpu_compute_ms) > 0
        assert answer.job.state == pb.JOB_STATE_COMPLETED and answer.job.proved == answer.job.partitions
        assert answer.job.queued == answer.job.in_flight == answer.job.failed == 0
        assert answer.job.finished_unix_ms >= answer.job.submitted_unix_ms > 0
    assert answers[1].job.priority == pb.PRIORITY_HIGH
    proved = stub.Prove(pb.ProveRequest(submit=demo_request(n, seed=7), timeout_ms=60_000), timeout=90)
    check_proofs(proved, vk, n, 7)
    again = stub.AwaitProof(pb.AwaitProofRequest(job_id=answers[0].job_id), timeout=10)   # fetched again
    assert again.proof == answers[0].proof


def test_a_request_id_names_one_job(daemon, n):
    stub = daemon.stub()
    request_id = f"req-{random.getrandbits(64):x}"
    first = stub.SubmitProof(demo_request(n, request_id=request_id), timeout=10)
    second = stub.SubmitProof(demo_request(n, seed=99, request_id=request_id), timeout=10)
    assert second.existing and not first.existing and second.job_id == first.job_id
    answer = stub.AwaitProof(pb.AwaitProofRequest(job_id=first.job_id, timeout_ms=60_000), timeout=90)
    assert answer.job.request_id == request_id
    check_proofs(answer, demo_params(daemon.state_dir, n).vk, n, 0)
    done = stub.SubmitProof(demo_request(n, seed=5, request_id=request_id), timeout=10)
    assert done.existing and done.job_id == first.job_id           # completed: still the same job


def test_a_request_id_of_a_cancelled_job_names_the_next_one(daemon, n):
    """An orchestrator's retry: the request_id of a job that was cancelled
    (or failed) starts a new job, which it names from then on; the old job
    keeps its id and its state."""
    stub = daemon.stub()
    request_id = f"retry-{random.getrandbits(64):x}"
    first = stub.SubmitProof(demo_request(n, partitions=40, request_id=request_id), timeout=10)
    cancel_all(stub, [first.job_id])
    old = stub.GetJob(pb.GetJobRequest(job_id=first.job_id), timeout=10)
    if old.state != pb.JOB_STATE_CANCELLED:
        pytest.skip("the job was proved before its cancel came")
    retried = stub.SubmitProof(demo_request(n, seed=3, request_id=request_id), timeout=10)
    assert not retried.existing and retried.job_id != first.job_id
    again = stub.SubmitProof(demo_request(n, seed=4, request_id=request_id), timeout=10)
    assert again.existing and again.job_id == retried.job_id
    answer = stub.AwaitProof(pb.AwaitProofRequest(job_id=retried.job_id, timeout_ms=60_000), timeout=90)
    check_proofs(answer, demo_params(daemon.state_dir, n).vk, n, 3)
    assert answer.job.request_id == request_id
    assert stub.GetJob(pb.GetJobRequest(job_id=first.job_id), timeout=10).state == pb.JOB_STATE_CANCELLED


def test_bad_requests_get_their_status_and_the_daemon_goes_on(daemon, n):
    stub = daemon.stub()
    bad = {
        "unknown kind": (pb.SubmitProofRequest(kind="no-such-kind", partitions=1), "INVALID_ARGUMENT", "no-such-kind"),
        "not JSON": (pb.SubmitProofRequest(kind="demo", partitions=1, payload=b'{"constraints": '),
                     "INVALID_ARGUMENT", "not JSON"),
        "not an object": (pb.SubmitProofRequest(kind="demo", partitions=1, payload=b"[1, 2]"), "INVALID_ARGUMENT",
                          "JSON object"),
        "not UTF-8": (pb.SubmitProofRequest(kind="demo", partitions=1, payload=b'{"a": "\xff"}'), "INVALID_ARGUMENT",
                      "UTF-8"),
        "too few constraints": (demo_request(5), "INVALID_ARGUMENT", "from 8 to 1048576"),
        "too many constraints": (demo_request(1 << 21), "INVALID_ARGUMENT", "from 8 to 1048576"),
        "unknown payload key": (pb.SubmitProofRequest(kind="demo", partitions=1, payload=b'{"constraints": 9, "x": 1}'),
                                "INVALID_ARGUMENT", "not x"),
        "no partitions": (demo_request(n, partitions=0), "INVALID_ARGUMENT", "from 1 to 65536"),
        "too many partitions": (demo_request(n, partitions=70_000), "INVALID_ARGUMENT", "from 1 to 65536"),
        "bad priority": (demo_request(n, priority=9), "INVALID_ARGUMENT", "priority"),
        "a number of 5001 digits": (pb.SubmitProofRequest(kind="demo", partitions=1,
                                                          payload=b'{"constraints": ' + b"9" * 5001 + b"}"),
                                    "INVALID_ARGUMENT", "too long"),
        "a long request id": (pb.SubmitProofRequest(kind="demo", partitions=1, request_id="r" * 10_000),
                              "INVALID_ARGUMENT", "request_id of 10000 characters"),
        "a long kind": (pb.SubmitProofRequest(kind="k" * 129, partitions=1), "INVALID_ARGUMENT", "kind of 129"),
        "inline": (pb.SubmitProofRequest(kind="inline", partitions=1), "INVALID_ARGUMENT", "inline"),
        "oversize": (pb.SubmitProofRequest(kind="demo", partitions=1, payload=b" " * (MAX_REQUEST_BYTES + 1)),
                     "RESOURCE_EXHAUSTED", "larger than max"),
        # 65,536 partitions of 2^20 constraints: past the default cost bound, refused before anything is made
        "past the cost bound": (demo_request(1 << 20, partitions=1 << 16), "RESOURCE_EXHAUSTED",
                                "past daemon.max_job_constraints (8,589,934,592)"),
    }
    for what, (request, code, words) in bad.items():
        err = rpc_error(stub.SubmitProof, request, timeout=10)
        assert err.code().name == code and words in err.details(), (what, err.code(), err.details())
    for call, request in ((stub.AwaitProof, pb.AwaitProofRequest(job_id="0" * 32)),
                          (stub.GetJob, pb.GetJobRequest(job_id="f" * 32)),
                          (stub.CancelProof, pb.CancelProofRequest(job_id="nope")),
                          (stub.AwaitProof, pb.AwaitProofRequest(job_id="x" * 5000))):
        err = rpc_error(call, request, timeout=10)
        assert err.code() == grpc.StatusCode.NOT_FOUND and "no job" in err.details() and "removed" not in err.details()
    err = rpc_error(stub.ListJobs, pb.ListJobsRequest(states=[42]), timeout=10)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    check_proofs(stub.Prove(pb.ProveRequest(submit=demo_request(n, seed=3)), timeout=90),
                 demo_params(daemon.state_dir, n).vk, n, 3)


def r1cs_files(folder, partitions: int):
    """A circuit, its parameters and `partitions` witness files in folder."""
    size = random.randrange(60, 120)
    r1cs, _, _ = porep_like(size)
    params = insecure_setup(r1cs, warn=False)
    r1cs.save(folder / "c.npz")
    write_params(folder / "c.params", params)
    witnesses = []
    for i in range(partitions):
        path = folder / f"w{i}.bin"
        save_witness(path, porep_like(size, seed=random.getrandbits(32))[1])
        witnesses.append(str(path))
    return params, {"params": str(folder / "c.params"), "circuit": str(folder / "c.npz"), "witnesses": witnesses}


def test_file_jobs_read_only_inside_the_input_roots(daemon):
    stub = daemon.stub()
    params, payload = r1cs_files(daemon.inputs, 2)
    request = pb.SubmitProofRequest(kind="r1cs-file", partitions=2, payload=json.dumps(payload).encode())
    check_proofs(stub.Prove(pb.ProveRequest(submit=request), timeout=90), params.vk)
    outside = daemon.outside / "elsewhere"
    outside.mkdir(exist_ok=True)
    _, elsewhere = r1cs_files(outside, 2)
    link = daemon.inputs / "link.params"
    if not link.exists():
        link.symlink_to(elsewhere["params"])                 # inside the root by name, outside once resolved
    inside = str(daemon.inputs)
    refused = {
        "outside": {**payload, "params": elsewhere["params"]},
        "a witness outside": {**payload, "witnesses": [payload["witnesses"][0], elsewhere["witnesses"][1]]},
        "a symlink out": {**payload, "params": str(link)},
        "dot-dot": {**payload, "circuit": f"{inside}/../inputs/c.npz"},
        "relative": {**payload, "circuit": "c.npz"},
        "the system": {**payload, "params": "/etc/passwd"},
    }
    for what, body in refused.items():
        request = pb.SubmitProofRequest(kind="r1cs-file", partitions=2, payload=json.dumps(body).encode())
        err = rpc_error(stub.SubmitProof, request, timeout=10)
        assert err.code() == grpc.StatusCode.PERMISSION_DENIED, (what, err.details())
    link_error = rpc_error(stub.SubmitProof, pb.SubmitProofRequest(
        kind="r1cs-file", partitions=2, payload=json.dumps(refused["a symlink out"]).encode()), timeout=10)
    assert "resolves to" in link_error.details() and "input roots" in link_error.details()
    writes = {**payload, "mapped_cache": inside}               # a folder to write to is not taken from a request
    err = rpc_error(stub.SubmitProof, pb.SubmitProofRequest(kind="r1cs-file", partitions=2,
                                                            payload=json.dumps(writes).encode()), timeout=10)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "mapped_cache" in err.details()
    shaped = {"params": str(daemon.inputs / "none.params")}     # porep-shaped: a params file it would make: refused
    err = rpc_error(stub.SubmitProof, pb.SubmitProofRequest(kind="porep-shaped", partitions=1,
                                                            payload=json.dumps(shaped).encode()), timeout=10)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "exists" in err.details()


def test_porep_shaped_jobs_make_their_parameters_in_the_state_folder(daemon):
    stub = daemon.stub()
    payload = {"scale": 1.6e-4, "seed": random.getrandbits(16), "job_seed": 5}   # its least circuit, 20845 rows
    request = pb.SubmitProofRequest(kind="porep-shaped", partitions=1, payload=json.dumps(payload).encode())
    answer = stub.Prove(pb.ProveRequest(submit=request), timeout=180)
    made = list((daemon.state_dir / "params-cache").glob(f"porep-shaped-*-{payload['seed']}.params"))
    assert len(made) == 1
    check_proofs(answer, read_params(made[0]).vk)
    for bad, words in (({"scale": 1e-6}, "at least 20000"), ({"scale": "1"}, "scale"), ({"sale": 1}, "unknown keys")):
        err = rpc_error(stub.SubmitProof, pb.SubmitProofRequest(kind="porep-shaped", partitions=1,
                                                                payload=json.dumps(bad).encode()), timeout=10)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and words in err.details(), err.details()


def cancel_all(stub, ids):
    for job_id in ids:
        stub.CancelProof(pb.CancelProofRequest(job_id=job_id), timeout=10)
    for job_id in ids:
        wait_state(stub, job_id, {pb.JOB_STATE_CANCELLED, pb.JOB_STATE_COMPLETED})


def test_max_pending_and_cancel_of_queued_and_running_jobs(daemon, n):
    stub = daemon.stub()
    ids = [stub.SubmitProof(demo_request(n, partitions=LONG, seed=i), timeout=10).job_id for i in range(3)]
    try:
        err = rpc_error(stub.SubmitProof, demo_request(n), timeout=10)
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "daemon.max_pending is 3" in err.details()
        running = wait_state(stub, ids[0], {pb.JOB_STATE_RUNNING})
        assert running.proved + running.in_flight >= 1
        queued = stub.GetJob(pb.GetJobRequest(job_id=ids[2]), timeout=5)
        assert queued.state == pb.JOB_STATE_QUEUED and queued.queued == LONG and queued.proved == 0
        listed = stub.ListJobs(pb.ListJobsRequest(states=[pb.JOB_STATE_QUEUED, pb.JOB_STATE_RUNNING]), timeout=5)
        assert {j.job_id for j in listed.jobs} == set(ids)
        assert stub.CancelProof(pb.CancelProofRequest(job_id=ids[2]), timeout=10) == \
            pb.CancelProofResponse(cancelled=True, was_running=False)
        start = time.monotonic()
        assert stub.CancelProof(pb.CancelProofRequest(job_id=ids[0]), timeout=10) == \
            pb.CancelProofResponse(cancelled=True, was_running=True)
        answer = stub.AwaitProof(pb.AwaitProofRequest(job_id=ids[0]), timeout=30)
        assert answer.status == pb.AwaitProofResponse.CANCELLED and not answer.proof
        assert time.monotonic() - start < 5
        assert answer.job.state == pb.JOB_STATE_CANCELLED and answer.job.proved < LONG
        assert stub.CancelProof(pb.CancelProofRequest(job_id=ids[0]), timeout=10).cancelled is False
        # room again: a job is accepted; CRITICAL, it passes the partitions of the long job accepted before
        # it (only those already handed to a worker finish first)
        before = wait_state(stub, ids[1], {pb.JOB_STATE_RUNNING}).proved
        fresh = stub.SubmitProof(demo_request(n, partitions=3, seed=11, priority=pb.PRIORITY_CRITICAL), timeout=10)
        answer = stub.AwaitProof(pb.AwaitProofRequest(job_id=fresh.job_id, timeout_ms=60_000), timeout=90)
        check_proofs(answer, demo_params(daemon.state_dir, n).vk, n, 11)
        assert stub.GetJob(pb.GetJobRequest(job_id=ids[1]), timeout=5).proved - before <= 8
    finally:
        cancel_all(stub, ids)


def test_waits_end_by_timeout_deadline_and_limit(daemon, n):
    stub = daemon.stub()
    job_id = stub.SubmitProof(demo_request(n, partitions=LONG), timeout=10).job_id
    try:
        start = time.monotonic()
        answer = stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id, timeout_ms=300), timeout=30)
        assert answer.status == pb.AwaitProofResponse.TIMEOUT and 0.25 < time.monotonic() - start < 5
        assert answer.job.state in (pb.JOB_STATE_QUEUED, pb.JOB_STATE_RUNNING)
        start = time.monotonic()
        err = rpc_error(stub.AwaitProof, pb.AwaitProofRequest(job_id=job_id), timeout=0.5)
        assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED and time.monotonic() - start < 5
        # daemon.max_waiters = 2: two waits hold, a third is refused at once; a cancel ends the two
        results = []

        def wait():
            try:
                results.append(stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id), timeout=60).status)
            except grpc.RpcError as exc:
                results.append(exc.code())

        waiters = [threading.Thread(target=wait) for _ in range(2)]
        for t in waiters:
            t.start()
        time.sleep(0.5)
        err = bounded(lambda: _refused_wait(stub, job_id), 10, "a third wait refused")
        assert "daemon.max_waiters" in err.details()
        stub.CancelProof(pb.CancelProofRequest(job_id=job_id), timeout=10)
        for t in waiters:
            t.join(30)
        assert results == [pb.AwaitProofResponse.CANCELLED] * 2
    finally:
        cancel_all(stub, [job_id])


def _refused_wait(stub, job_id):
    try:
        stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id, timeout_ms=200), timeout=10)
    except grpc.RpcError as exc:
        return exc if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED else None
    return None


def test_health_reflection_status_metrics(daemon, n):
    channel = daemon.channel()
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "porep_prover.v1.ProvingEngine"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    services = set(ProtoReflectionDescriptorDatabase(channel).get_services())
    assert {"porep_prover.v1.ProvingEngine", "grpc.health.v1.Health"} <= services
    stub = daemon.stub()
    check_proofs(stub.Prove(pb.ProveRequest(submit=demo_request(n, seed=5)), timeout=90),
                 demo_params(daemon.state_dir, n).vk, n, 5)
    status = stub.GetStatus(pb.GetStatusRequest(), timeout=10)
    assert status.accepting and status.version and [d.label for d in status.devices] == ["cpu"]
    assert status.proofs_completed >= 1 and status.memory_budget_bytes > 0
    assert {q.priority for q in status.queues} == {pb.PRIORITY_LOW, pb.PRIORITY_NORMAL, pb.PRIORITY_HIGH,
                                                   pb.PRIORITY_CRITICAL}
    assert any(s.key == f"demo:{n}" for s in status.srs)
    assert json.loads(status.json)["jobs"]["counts"]["completed"] == status.proofs_completed
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=10).text
    assert 'porep_prover_proofs_completed_total{kind="demo"}' in text
    with urllib.request.urlopen(f"http://{daemon.status_address}/status", timeout=10) as reply:
        assert json.loads(reply.read())["accepting"] is True
    with urllib.request.urlopen(f"http://{daemon.status_address}/metrics", timeout=10) as reply:
        assert b"porep_prover_partitions_proved_total" in reply.read()


def test_preload_and_evict(daemon):
    stub = daemon.stub()
    size = random.randrange(30, 60)
    payload = json.dumps({"constraints": size}).encode()
    first = stub.PreloadSRS(pb.PreloadSRSRequest(kind="demo", payload=payload), timeout=60)
    assert first.srs_key == f"demo:{size}" and first.bytes > 0 and not first.already_loaded
    assert os.path.exists(daemon.state_dir / "params-cache" / f"porep-like-{size}.params")
    assert stub.PreloadSRS(pb.PreloadSRSRequest(kind="demo", payload=payload), timeout=60).already_loaded
    assert stub.EvictSRS(pb.EvictSRSRequest(srs_key=first.srs_key), timeout=10) == \
        pb.EvictSRSResponse(evicted=True, bytes_freed=first.bytes)
    assert not stub.EvictSRS(pb.EvictSRSRequest(srs_key=first.srs_key), timeout=10).evicted
    err = rpc_error(stub.PreloadSRS, pb.PreloadSRSRequest(kind="r1cs-file", payload=b'{"params": "/etc/x"}'),
                    timeout=10)
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
