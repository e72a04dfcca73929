# SPDX-License-Identifier: Apache-2.0
"""Many clients at once: 16 of them submit 20 small jobs each, all at once;
every job completes with proofs that verify, none is lost or doubled, and
the daemon's memory stays bounded."""
import random
import threading

import grpc

from daemon_process import DaemonProcess, check_proofs, demo_params, demo_request
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.daemon.v1 import proving_pb2_grpc

CLIENTS, JOBS = 16, 20
RSS_GROWTH_BYTES = 96 << 20


def test_16_clients_submitting_20_jobs_each(tmp_path):
    n = random.randrange(10, 40)
    settings = {"daemon.max_pending": CLIENTS * JOBS, "daemon.max_waiters": CLIENTS}
    with DaemonProcess(tmp_path / "state", settings) as daemon:
        stub = daemon.stub()
        check_proofs(stub.Prove(pb.ProveRequest(submit=demo_request(n)), timeout=60), demo_params(daemon.state_dir,
                                                                                                n).vk)
        rss_before = daemon.rss_bytes()
        answers, errors, lock = {}, [], threading.Lock()
        start = threading.Barrier(CLIENTS)

        def client(c):
            try:
                with grpc.insecure_channel(daemon.address) as channel:
                    mine = proving_pb2_grpc.ProvingEngineStub(channel)
                    start.wait(30)
                    ids = [mine.SubmitProof(demo_request(n, seed=c * JOBS + j, request_id=f"c{c}-j{j}"),
                                            timeout=30).job_id for j in range(JOBS)]
                    for j, job_id in enumerate(ids):
                        answer = mine.AwaitProof(pb.AwaitProofRequest(job_id=job_id, timeout_ms=150_000), timeout=180)
                        with lock:
                            answers[(c, j)] = answer
            except Exception as exc:  # noqa: BLE001 - reported below
                with lock:
                    errors.append(exc)

        threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(240)
        assert not errors, errors[:3]
        assert len(answers) == CLIENTS * JOBS and len({a.job_id for a in answers.values()}) == CLIENTS * JOBS
        vk = demo_params(daemon.state_dir, n).vk
        for (c, j), answer in answers.items():
            check_proofs(answer, vk, n, c * JOBS + j)
            assert answer.job.request_id == f"c{c}-j{j}"
        status = stub.GetStatus(pb.GetStatusRequest(), timeout=10)
        assert status.proofs_completed == CLIENTS * JOBS + 1 and status.proofs_failed == 0
        growth = daemon.rss_bytes() - rss_before
        assert growth < RSS_GROWTH_BYTES, f"RSS grew by {growth >> 20} MiB"
        listed = stub.ListJobs(pb.ListJobsRequest(states=[pb.JOB_STATE_COMPLETED], limit=1000), timeout=10)
        assert len(listed.jobs) == CLIENTS * JOBS + 1
