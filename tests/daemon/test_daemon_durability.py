# SPDX-License-Identifier: Apache-2.0
"""Nothing the daemon accepted is lost: killed (-9) in the middle of a job,
or drained by SIGTERM, and started again on its state folder, it finishes
every job without proving a partition twice; finished results outlive a
kill and leave after their retention."""
import random
import sqlite3
import threading
import time

import grpc
import pytest

from daemon_process import DaemonProcess, bounded, check_proofs, demo_params, demo_request, rpc_error
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.engine.timeline import read_log

PARTITIONS = 8


@pytest.fixture
def n():
    return random.randrange(600, 900)      # a partition takes a few tens of ms: a job is several partitions long


def journaled(state_dir, job_id) -> set[int]:
    """The partitions the journal holds a proof of (read as any reader would, beside the daemon)."""
    con = sqlite3.connect(f"file:{state_dir / 'journal.sqlite3'}?mode=ro", uri=True, timeout=10)
    try:
        return {r[0] for r in con.execute("SELECT idx FROM partitions WHERE job_id = ?", (job_id,))}
    finally:
        con.close()


def proved_after(timeline, job_id, since) -> dict[int, int]:
    """Partition -> proofs finished (FINALIZE_END) for job_id at or after since (seconds since the epoch)."""
    counts = {}
    for e in read_log(timeline):
        if e.event == "FINALIZE_END" and e.job == job_id and e.t >= since:
            counts[e.partition] = counts.get(e.partition, 0) + 1
    return counts


def settings_with_timeline(tmp_path):
    return {"logging.timeline": str(tmp_path / "timeline.log")}


def test_kill_9_mid_job_then_restart_proves_only_what_is_left(tmp_path, n):
    state, settings = tmp_path / "state", settings_with_timeline(tmp_path)
    seed = random.getrandbits(60)
    with DaemonProcess(state, settings) as first:
        stub = first.stub()
        job = stub.SubmitProof(demo_request(n, partitions=PARTITIONS, seed=seed, request_id="sector-17"), timeout=10)
        bounded(lambda: stub.GetJob(pb.GetJobRequest(job_id=job.job_id), timeout=5).proved >= 1, 60,
                "a first partition journaled", every=0.005)
        late = stub.SubmitProof(demo_request(n, partitions=2, seed=seed + 1), timeout=10)   # acknowledged, not begun
        first.kill()
    done_before = journaled(state, job.job_id)
    assert 1 <= len(done_before) < PARTITIONS, "the kill came too late to be in the middle of the job"
    restarted_at = time.time()
    with DaemonProcess(state, settings) as second:
        stub = second.stub()
        again = stub.SubmitProof(demo_request(n, partitions=PARTITIONS, seed=seed, request_id="sector-17"),
                                 timeout=10)
        assert again.existing and again.job_id == job.job_id
        answer = stub.AwaitProof(pb.AwaitProofRequest(job_id=job.job_id, timeout_ms=120_000), timeout=150)
        vk = demo_params(state, n).vk
        check_proofs(answer, vk, n, seed)
        check_proofs(stub.AwaitProof(pb.AwaitProofRequest(job_id=late.job_id, timeout_ms=120_000), timeout=150),
                     vk, n, seed + 1)
        assert second.stop() == 0
    proved = proved_after(settings["logging.timeline"], job.job_id, restarted_at)
    assert set(proved) == set(range(PARTITIONS)) - done_before          # the rest, and only the rest
    assert all(count == 1 for count in proved.values())


def test_sigterm_drains_journals_and_the_job_resumes(tmp_path, n):
    state, settings = tmp_path / "state", settings_with_timeline(tmp_path)
    settings["daemon.drain_timeout_seconds"] = 30
    seed = random.getrandbits(60)
    # enough partitions that the job is still running when the signal comes, however quick the host
    total = 12 * PARTITIONS
    with DaemonProcess(state, settings) as first:
        stub = first.stub()
        job = stub.SubmitProof(demo_request(n, partitions=total, seed=seed), timeout=10)
        bounded(lambda: stub.GetJob(pb.GetJobRequest(job_id=job.job_id), timeout=5).proved >= 1, 60,
                "a first partition journaled")
        waits = []
        waiter = threading.Thread(target=lambda: waits.append(rpc_error(
            stub.AwaitProof, pb.AwaitProofRequest(job_id=job.job_id), timeout=60)))
        waiter.start()
        time.sleep(0.2)
        stopped_at = time.time()
        first.proc.send_signal(15)
        err = bounded(lambda: _refused(stub, n), 30, "a submit refused while stopping", every=0.001)
        assert err.code() == grpc.StatusCode.UNAVAILABLE
        waiter.join(60)
        assert waits[0].code() == grpc.StatusCode.UNAVAILABLE and "resumes" in waits[0].details()
        assert first.stop() == 0
    done = journaled(state, job.job_id)
    finished_before = {p for p, _ in proved_after(settings["logging.timeline"], job.job_id, 0).items()}
    assert done == finished_before                      # what was in flight finished, and was journaled
    assert len(done) < total
    events = read_log(settings["logging.timeline"])
    held = [e.t for e in events if e.event == "HOLD"]
    assert held and held[0] >= stopped_at
    started_after_stop = [e for e in events if e.event == "SYNTH_START" and e.job == job.job_id and e.t >= held[0]]
    assert not started_after_stop                       # nothing new began once it drained
    restarted_at = time.time()
    with DaemonProcess(state, settings) as second:
        stub = second.stub()
        answer = stub.AwaitProof(pb.AwaitProofRequest(job_id=job.job_id, timeout_ms=120_000), timeout=150)
        check_proofs(answer, demo_params(state, n).vk, n, seed)
    proved = proved_after(settings["logging.timeline"], job.job_id, restarted_at)
    assert set(proved) == set(range(total)) - done and all(c == 1 for c in proved.values())


def _refused(stub, n):
    try:
        stub.SubmitProof(demo_request(n), timeout=5)
    except grpc.RpcError as exc:
        return exc
    return None


def test_results_outlive_a_kill_and_leave_after_their_retention(tmp_path):
    state, n = tmp_path / "state", random.randrange(20, 60)
    with DaemonProcess(state) as first:
        stub = first.stub()
        job = stub.SubmitProof(demo_request(n, partitions=2, seed=4), timeout=10)
        bounded(lambda: stub.GetJob(pb.GetJobRequest(job_id=job.job_id), timeout=5).state ==
                pb.JOB_STATE_COMPLETED, 60, "the job completed")
        first.kill()
    with DaemonProcess(state) as second:
        answer = second.stub().AwaitProof(pb.AwaitProofRequest(job_id=job.job_id), timeout=30)
        check_proofs(answer, demo_params(state, n).vk, n, 4)
    time.sleep(max(0.0, answer.job.finished_unix_ms / 1000 + 2.5 - time.time()))     # past a retention of 2 s
    with DaemonProcess(state, {"daemon.result_retention_seconds": 2}) as third:
        stub = third.stub()
        err = rpc_error(stub.GetJob, pb.GetJobRequest(job_id=job.job_id), timeout=10)
        assert err.code() == grpc.StatusCode.NOT_FOUND                  # swept at start: past its retention
        assert "was removed at" in err.details() and "daemon.result_retention_seconds" in err.details()
        assert not (state / "results" / job.job_id).exists()
        fresh = stub.Prove(pb.ProveRequest(submit=demo_request(n, seed=5)), timeout=60)
        check_proofs(fresh, demo_params(state, n).vk, n, 5)
        assert (state / "results" / fresh.job_id).is_dir()
        bounded(lambda: _gone(stub, fresh.job_id), 15, "the fetched job swept", every=0.2)
        assert not (state / "results" / fresh.job_id).exists()


def _gone(stub, job_id):
    try:
        stub.GetJob(pb.GetJobRequest(job_id=job_id), timeout=5)
    except grpc.RpcError as exc:
        return exc.code() == grpc.StatusCode.NOT_FOUND
    return False
