# SPDX-License-Identifier: Apache-2.0
"""porep_prover.client.Client against an in-process fake daemon
(tests/helpers/fake_proving_engine.py): what it sends, what it hands back, how it
waits, and the named error of every status."""
import json
import random
import shutil
import socket
import subprocess
import sys
import time

import pytest

from fake_proving_engine import FakeEngine, FakeServer
from porep_prover.client import Client, JobState, Priority, ProofStatus
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.errors import (DaemonAuthenticationError, DaemonDeadlineError, DaemonError, DaemonLimitError,
                                 DaemonPermissionError, DaemonRequestError, DaemonUnavailableError,
                                 InvalidInputError, JobNotFoundError, ProofFormatError, PublicInputsError)
from porep_prover.field.constants import R

MATERIAL_PROOFS = 3          # proofs the fake daemon serves (conftest.material)


@pytest.fixture
def client(fake):
    with Client(fake.address, timeout=10) as c:
        yield c


def test_submit_sends_what_it_is_given(fake, client, rng):
    payload = {"constraints": rng.randrange(3, 10_000), "seed": rng.randrange(1 << 64), "path": "a/b"}
    partitions = rng.choice([3, 5, 7, 11])
    priority = rng.choice(list(Priority))
    sub = client.submit("stuck", payload, partitions=partitions, priority=priority.value.upper(), request_id="r-1")
    method, request, _ = fake.engine.calls[-1]
    assert method == "SubmitProof" and request.kind == "stuck" and request.partitions == partitions
    assert json.loads(request.payload) == payload and request.request_id == "r-1"
    assert request.priority == pb.Priority.Value(f"PRIORITY_{priority.name}")
    assert not sub.existing and sub.job_id in fake.engine.jobs
    again = client.submit("stuck", {}, request_id="r-1")
    assert again.existing and again.job_id == sub.job_id and len(fake.engine.jobs) == 1
    info = client.job(sub.job_id)
    assert (info.kind, info.priority, info.partitions, info.request_id) == ("stuck", priority, partitions, "r-1")


def test_await_hands_back_checked_proofs(material, client, rng):
    partitions = rng.choice([2, 3, 5])
    job_id = client.submit("instant", {}, partitions=partitions).job_id
    result = client.await_proof(job_id, timeout=10)
    assert result.ok and result.status is ProofStatus.COMPLETED and result.job.state is JobState.COMPLETED
    assert result.proofs == [material.proofs[i % 3] for i in range(partitions)]
    assert result.public_inputs == [material.public] * partitions
    assert all(isinstance(v, int) for v in result.public_inputs[0])
    assert (result.timings.queue_wait_ms, result.timings.total_ms) == (3, 29)
    assert result.verify(material.vk) and result.failed_partitions(material.vk) == []
    assert len(result.proof_bytes) == 192 * partitions


def test_a_proof_that_does_not_verify_is_named(material, client):
    result = client.await_proof(client.submit("bad-proof", {}, partitions=3).job_id, timeout=10)
    assert result.ok          # the daemon said COMPLETED ...
    assert result.failed_partitions(material.vk) == [1] and not result.verify(material.vk)   # ... but not here


def test_progress_reports_each_step(fake, client, rng):
    partitions = rng.choice([3, 4, 6])
    job_id = client.submit("steps", {}, partitions=partitions).job_id
    seen = []
    started = time.monotonic()
    result = client.await_proof(job_id, timeout=20, progress=seen.append, interval=0.02)
    assert result.ok and time.monotonic() - started < 10
    assert [j.proved for j in seen] == list(range(partitions + 1))
    assert seen[0].state is JobState.RUNNING and seen[-1].state is JobState.COMPLETED and seen[-1].finished
    assert all(j.proved + j.in_flight + j.queued == partitions for j in seen)
    awaits = [r for m, r, _ in fake.engine.calls if m == "AwaitProof"]
    assert awaits and all(0 < r.timeout_ms <= 20 for r in awaits)


@pytest.mark.parametrize("with_progress", [False, True])
def test_await_ends_at_its_timeout(fake, client, with_progress):
    job_id = client.submit("stuck", {}).job_id
    seen = []
    started = time.monotonic()
    result = client.await_proof(job_id, timeout=0.4, progress=seen.append if with_progress else None, interval=0.05)
    elapsed = time.monotonic() - started
    assert result.status is ProofStatus.TIMEOUT and not result.ok and not result.proofs
    assert 0.35 <= elapsed < 5
    polls = sum(m == "GetJob" for m, _, _ in fake.engine.calls)
    if with_progress:
        assert 1 <= polls <= 0.4 / 0.05 + 2 and len(seen) == 1       # one state, reported once
    else:
        assert polls == 0 and fake.engine.calls[-1][1].timeout_ms == 400


def test_failed_and_cancelled_jobs(client):
    failed = client.await_proof(client.submit("broken", {}).job_id, timeout=10)
    assert failed.status is ProofStatus.FAILED and "synthesis failed" in failed.error_message and not failed.proofs
    job_id = client.submit("stuck", {}, partitions=2).job_id
    outcome = client.cancel(job_id)
    assert outcome.cancelled and not outcome.was_running
    assert client.await_proof(job_id, timeout=10).status is ProofStatus.CANCELLED
    assert not client.cancel(job_id).cancelled
    assert client.job(job_id).state is JobState.CANCELLED


def test_prove_is_one_call_without_progress(fake, material, client):
    result = client.prove("instant", {"n": 1}, partitions=2, timeout=10)
    assert result.verify(material.vk)
    assert [m for m, _, _ in fake.engine.calls] == ["Prove"] and fake.engine.calls[0][1].timeout_ms == 10_000
    seen = []
    result = client.prove("steps", {}, partitions=2, timeout=10, progress=seen.append, interval=0.01)
    assert result.verify(material.vk) and seen[-1].proved == 2
    assert {m for m, _, _ in fake.engine.calls[1:]} == {"SubmitProof", "GetJob", "AwaitProof"}


ERRORS = {"UNAVAILABLE": DaemonUnavailableError, "RESOURCE_EXHAUSTED": DaemonLimitError,
          "INVALID_ARGUMENT": DaemonRequestError, "PERMISSION_DENIED": DaemonPermissionError,
          "UNAUTHENTICATED": DaemonAuthenticationError, "DEADLINE_EXCEEDED": DaemonDeadlineError,
          "NOT_FOUND": JobNotFoundError, "INTERNAL": DaemonError, "FAILED_PRECONDITION": DaemonError}


@pytest.mark.parametrize("code", sorted(ERRORS))
def test_every_status_is_a_named_error(fake, client, code):
    with pytest.raises(ERRORS[code]) as info:
        client.submit(f"status:{code}", {})
    assert info.value.code == code and info.value.details == f"fake {code} for SubmitProof"
    assert fake.address in str(info.value) and code in str(info.value)
    with pytest.raises(ERRORS[code]):
        client.preload(f"status:{code}", {})


def test_the_daemon_refusals_read_well(fake, client):
    with pytest.raises(DaemonRequestError, match="unknown kind 'nope'") as info:
        client.submit("nope", {})
    assert isinstance(info.value, InvalidInputError)
    with pytest.raises(JobNotFoundError, match="no job 'job-9999'"):
        client.job("job-9999")
    with pytest.raises(JobNotFoundError):
        client.await_proof("job-9999", timeout=1, progress=lambda job: None)
    fake.engine.max_pending = 1
    client.submit("stuck", {})
    with pytest.raises(DaemonLimitError, match="1 jobs pending"):
        client.submit("stuck", {})


def test_the_token_goes_with_every_call(material):
    token = "t0k-" + "".join(random.choices("abcdef0123456789", k=24))
    server = FakeServer(FakeEngine(material, token=token))
    try:
        for wrong in (None, token + "x"):
            with Client(server.address, token=wrong, timeout=10) as c, \
                    pytest.raises(DaemonAuthenticationError, match="missing or wrong bearer token"):
                c.status()
        with Client(server.address, token=token, timeout=10) as c:
            assert c.status()["version"] == "fake"
            assert c.await_proof(c.submit("instant", {}).job_id, timeout=10, progress=lambda j: None).ok
        assert all(dict(md).get("authorization") == f"Bearer {token}" for _, _, md in server.engine.calls[2:])
    finally:
        server.stop()


def test_the_daemon_facing_calls(fake, client):
    done = client.submit("instant", {}).job_id
    stuck = client.submit("stuck", {}).job_id
    assert [j.job_id for j in client.list_jobs()] == [stuck, done]
    assert [j.job_id for j in client.list_jobs(states=["completed"])] == [done]
    assert [j.job_id for j in client.list_jobs(states=[JobState.QUEUED, "failed"], limit=5)] == [stuck]
    assert list(fake.engine.calls[-1][1].states) == [pb.JOB_STATE_QUEUED, pb.JOB_STATE_FAILED]
    assert len(client.list_jobs(limit=1)) == 1
    status = client.status()
    assert status["devices"][0]["label"] == "cpu" and status["queues"] == [{"priority": "high", "jobs": 1}]
    assert status["detail"] == {"devices": [{"label": "cpu"}], "jobs": {"running": 0}} and "json" not in status
    assert "porep_prover_proofs_completed_total 2" in client.metrics()
    first, second = client.preload("demo", {"constraints": 77}), client.preload("demo", {"constraints": 77})
    assert (first.srs_key, first.already_loaded, second.already_loaded) == ("demo:77", False, True)
    assert client.evict("demo:77").evicted and not client.evict("demo:77").evicted


BAD_ADDRESSES = ["", "localhost", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:x", "unix:relative",
                 "http://127.0.0.1:80", "a b:1", 5]


@pytest.mark.parametrize("address", BAD_ADDRESSES)
def test_a_bad_address_is_named(address):
    with pytest.raises(InvalidInputError, match="address"):
        Client(address)


def test_bad_arguments_are_named_before_anything_is_sent(fake, client, tmp_path):
    bad = [lambda: client.submit("instant", {}, priority="urgent"),
           lambda: client.submit("instant", [1, 2]),
           lambda: client.submit("instant", {"x": float("nan")}),
           lambda: client.submit("instant", {"x": object()}),
           lambda: client.submit("", {}),
           lambda: client.submit("instant", {}, request_id=7),
           lambda: client.submit("instant", {}, partitions=0),
           lambda: client.submit("instant", {}, partitions=65537),
           lambda: client.submit("instant", {}, partitions=True),
           lambda: client.job(""),
           lambda: client.await_proof("job-1", timeout=0),
           lambda: client.await_proof("job-1", timeout=float("nan")),
           lambda: client.await_proof("job-1", timeout=1, interval=-1, progress=print),
           lambda: client.list_jobs(states=["done"]),
           lambda: client.list_jobs(limit=0),
           lambda: Client(fake.address, token="two words"),
           lambda: Client(fake.address, token=""),
           lambda: Client(fake.address, timeout=0),
           lambda: Client(fake.address, tls=str(tmp_path / "missing.pem")),
           lambda: Client(fake.address, tls=__file__),
           lambda: Client(fake.address, max_message_bytes=0)]
    for call in bad:
        with pytest.raises(InvalidInputError):
            call()
    assert fake.engine.calls == []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_daemon_is_unavailable_at_once():
    started = time.monotonic()
    with Client(f"127.0.0.1:{free_port()}", timeout=10) as c, pytest.raises(DaemonUnavailableError):
        c.status()
    assert time.monotonic() - started < 10


def test_a_unix_socket(material, tmp_path):
    server = FakeServer(FakeEngine(material), unix_path=str(tmp_path / "daemon.sock"))
    try:
        with Client(server.address, timeout=10) as c:
            assert c.prove("instant", {}, timeout=10).verify(material.vk)
    finally:
        server.stop()


def test_tls_with_the_daemon_certificate(material, tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (it makes the test certificate)")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True, timeout=60)
    server = FakeServer(FakeEngine(material), tls=(key.read_bytes(), cert.read_bytes()))
    try:
        with Client(server.address, tls=str(cert), timeout=10) as c:
            assert c.prove("instant", {}, timeout=10).verify(material.vk)
        with Client(f"localhost:{server.port}", tls=str(cert), timeout=10) as c:
            assert c.status()["version"] == "fake"
        with Client(server.address, timeout=5) as c, pytest.raises(DaemonUnavailableError):
            c.status()               # plain text to a TLS port
        with Client(server.address, tls=True, timeout=5) as c, pytest.raises(DaemonUnavailableError):
            c.status()               # a certificate no default root signed
    finally:
        server.stop()


def test_malformed_replies_are_named(material, fake, client, monkeypatch):
    reply = fake.engine._result

    def truncated(job):
        out = reply(job)
        out.proof = out.proof[:-1]
        return out

    def out_of_range(job):
        out = reply(job)
        out.public_inputs[0].values[0] = str(R)
        return out

    def too_few(job):
        out = reply(job)
        del out.public_inputs[-1]
        return out

    for patch, error in ((truncated, ProofFormatError), (out_of_range, PublicInputsError), (too_few, ProofFormatError)):
        monkeypatch.setattr(fake.engine, "_result", patch)
        with pytest.raises(error, match="job-"):
            client.prove("instant", {}, partitions=2, timeout=10)


def test_the_client_imports_neither_engine_nor_server():
    code = ("import sys, porep_prover.client;"
            "bad = [m for m in sys.modules if m.startswith(('porep_prover.engine', 'porep_prover.hooks', 'pluggy'))"
            " or (m.startswith('porep_prover.daemon.') and not m.startswith('porep_prover.daemon.v1'))];"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
