# SPDX-License-Identifier: Apache-2.0
"""A porep job that stops mid-way loses nothing: a daemon process proving
2 KiB sectors (commit-phase-1 outputs on sparse trees, 2.7 M constraints a
partition: about a second of synthesis and ten or more of kernel region on
2 cores) whose job is cancelled in its synthesis, and another in its
kernel region, goes idle within a second of the cancel (its CPU time
stops rising: the witness generator, the MSMs and the NTTs read the job's
stop flag), reports the job cancelled at once, gives its memory back (RSS
within 10 % of what it held before the job) and proves the next job; one
killed (-9) with jobs done, running and accepted proves, after a restart
on its state folder, each unfinished job once, and serves the result it
had written.

The partition's INSECURE parameters come from the parameter cache the
plugin makes them in (made once, about a minute and a half on 2 cores),
handed to the daemons by POREP_PROVER_POREP_PARAMS."""
import json
import os
import pathlib
import sys
import time

import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover.daemon.jobs import TRIM_DELAY  # noqa: E402
from porep_prover.daemon.v1 import proving_pb2 as pb  # noqa: E402
from porep_prover.engine.timeline import read_log  # noqa: E402
from porep_prover.groth16 import ParamsCache, Proof, read_verifying_key, verify  # noqa: E402
from porep_prover_porep import c1_json, sparse  # noqa: E402
from porep_prover_porep.circuit.partition import partition_circuit  # noqa: E402
from porep_prover_porep.circuit.values import public_inputs  # noqa: E402
from porep_prover_porep.parameters import ENVIRONMENT, insecure_name, parameters  # noqa: E402
from porep_prover_porep.payload import prover_id_of  # noqa: E402
from porep_prover_porep.registered import seal_proof  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "tests" / "helpers"))
from daemon_process import DaemonProcess, bounded  # noqa: E402

pytestmark = pytest.mark.slow
PROOF = seal_proof("StackedDrg2KiBV1_1")
MINER = 1000
WAIT_S = 300
STOP_S = 1.0                   # a cancelled job's work ends within this of the cancel
IDLE_CORES = 0.25              # the daemon is idle below this many cores busy, over IDLE_WINDOW
IDLE_WINDOW = 0.3
SETTLE = TRIM_DELAY + 1.5      # seconds after a job ends that the daemon's memory is read
SETTINGS = {"engine.threads": 2, "engine.synthesis_threads": 2}


@pytest.fixture(scope="module")
def params_path():
    """The 2 KiB partition's INSECURE parameters file (the plugin's cache; made when absent)."""
    cache = ParamsCache()
    path = cache.use(insecure_name(PROOF))
    if path is None:
        parameters(PROOF, partition_circuit(PROOF).r1cs)
        path = cache.use(insecure_name(PROOF))
    assert path is not None
    return path


@pytest.fixture
def sectors(tmp_path, params_path, monkeypatch):
    """make(sector) -> (the job's JSON payload, the output) of a 2 KiB sparse
    sector's commit-phase-1 output; the parameters named for the daemons."""
    monkeypatch.setenv(ENVIRONMENT, params_path)
    folder = tmp_path / "c1"
    folder.mkdir()

    def make(sector: int):
        c1 = sparse.sparse_c1(PROOF.name, prover_id_of(MINER), sector, bytes([sector] * 31) + b"\0",
                              bytes([sector + 1] * 32))
        path = folder / f"c1-{sector}.json"
        c1_json.write(c1, path)
        return json.dumps({"c1": str(path), "miner_id": MINER, "sector_id": sector}).encode(), c1
    return make


def submit(stub, payload: bytes) -> str:
    return stub.SubmitProof(pb.SubmitProofRequest(kind="porep", partitions=1, payload=payload), timeout=60).job_id


def verified(answer, c1, vk) -> bytes:
    """The completed answer's proof, checked against the public inputs a verifier computes."""
    assert answer.status == pb.AwaitProofResponse.COMPLETED, answer.error_message
    (proof,) = Proof.split(answer.proof)
    assert verify(vk, public_inputs(c1, 0), proof)
    return answer.proof


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle_after(pid: int, since: float, limit: float = 30.0) -> float:
    """Seconds from since (time.monotonic()) to the start of the first
    IDLE_WINDOW in which the process used less than IDLE_CORES of CPU."""
    samples = [(time.monotonic(), cpu_seconds(pid))]
    while samples[-1][0] - since < limit:
        time.sleep(0.02)
        now, used = time.monotonic(), cpu_seconds(pid)
        samples.append((now, used))
        earlier = [s for s in samples if now - s[0] >= IDLE_WINDOW]
        if earlier and (used - earlier[-1][1]) / (now - earlier[-1][0]) < IDLE_CORES:
            return max(0.0, earlier[-1][0] - since)
    raise AssertionError(f"the daemon was still busy {limit} s after the cancel")


def events(daemon, job: str, name: str):
    return [e for e in read_log(daemon.settings["logging.timeline"]) if e.job == job and e.event == name]


def cancel_in(daemon, stub, job: str, stage: str, after: float = 0.0) -> dict:
    """Cancel job `after` seconds into stage ("synthesis": once SYNTH_START is
    on the timeline; "region": GPU_START); the cancel's figures: seconds to
    idle, to the job reported cancelled, and whether it landed in the stage."""
    start, end = {"synthesis": ("SYNTH_START", "SYNTH_END"), "region": ("GPU_START", "GPU_END")}[stage]
    bounded(lambda: events(daemon, job, start), WAIT_S, f"job {job} at {start}", every=0.005)
    time.sleep(after)
    at, wall = time.monotonic(), time.time()
    assert stub.CancelProof(pb.CancelProofRequest(job_id=job), timeout=30).cancelled
    state = stub.GetJob(pb.GetJobRequest(job_id=job), timeout=10).state
    reported = time.monotonic() - at
    idle = idle_after(daemon.proc.pid, at)
    ended = events(daemon, job, end)
    return {"idle": idle, "reported": reported, "state": state, "in_stage": not ended or ended[0].t >= wall}


def test_a_porep_job_cancelled_in_synthesis_or_region_stops_within_a_second(tmp_path, sectors, params_path):
    vk = read_verifying_key(params_path)
    settings = {**SETTINGS, "logging.timeline": str(tmp_path / "timeline.log"),
                "daemon.input_roots": [str(tmp_path / "c1")]}
    with DaemonProcess(tmp_path / "state", settings) as daemon:
        stub = daemon.stub()
        payload, c1 = sectors(1)
        verified(stub.Prove(pb.ProveRequest(submit=pb.SubmitProofRequest(kind="porep", partitions=1,
                                                                          payload=payload)), timeout=WAIT_S), c1, vk)
        time.sleep(SETTLE)
        before = daemon.rss_bytes()
        figures = {}
        for stage, after, sector in (("synthesis", 0.1, 2), ("region", 2.0, 3)):
            figure = cancel_in(daemon, stub, submit(stub, sectors(sector)[0]), stage, after)
            time.sleep(SETTLE)
            figure["rss"] = daemon.rss_bytes()
            figures[stage] = figure
        print(f"RSS before {before >> 20} MiB; " + "; ".join(
            f"{s}: idle {f['idle']:.2f} s, reported {f['reported']:.3f} s, RSS {f['rss'] >> 20} MiB"
            for s, f in figures.items()))
        for stage, figure in figures.items():
            assert figure["in_stage"], f"the cancel came after the {stage} ended"
            assert figure["state"] == pb.JOB_STATE_CANCELLED and figure["reported"] < STOP_S, (stage, figure)
            assert figure["idle"] < STOP_S, f"busy {figure['idle']:.2f} s after a cancel in its {stage}"
            assert abs(figure["rss"] - before) <= 0.1 * before, \
                f"RSS {figure['rss'] >> 20} MiB after a cancel in its {stage}, {before >> 20} MiB before"
        payload, c1 = sectors(4)
        verified(stub.Prove(pb.ProveRequest(submit=pb.SubmitProofRequest(kind="porep", partitions=1,
                                                                          payload=payload)), timeout=WAIT_S), c1, vk)


def test_kill_9_with_porep_jobs_done_running_and_accepted_loses_none(tmp_path, sectors, params_path):
    """Killed with one job done, one in its kernel region and one accepted a
    moment before (journaled, whatever the engine began of it): after the
    restart the done job's proof is served as written, and the other two are
    proved, each once (the timeline's FINALIZE_END events, both runs')."""
    vk = read_verifying_key(params_path)
    timeline = tmp_path / "timeline.log"
    settings = {**SETTINGS, "logging.timeline": str(timeline), "daemon.input_roots": [str(tmp_path / "c1")]}
    (done_payload, done_c1), (running_payload, running_c1), (accepted_payload, accepted_c1) = \
        sectors(5), sectors(6), sectors(7)
    with DaemonProcess(tmp_path / "state", settings) as first:
        stub = first.stub()
        done = submit(stub, done_payload)
        written = verified(stub.AwaitProof(pb.AwaitProofRequest(job_id=done, timeout_ms=WAIT_S * 1000),
                                           timeout=WAIT_S), done_c1, vk)
        running = submit(stub, running_payload)
        bounded(lambda: events(first, running, "GPU_START"), WAIT_S, "the running job in its region", every=0.01)
        time.sleep(1.0)
        accepted = submit(stub, accepted_payload)
        first.kill()
    assert not events(first, running, "FINALIZE_END") and not events(first, accepted, "FINALIZE_END")
    killed_at = time.time()
    with DaemonProcess(tmp_path / "state", settings) as second:
        stub = second.stub()
        again = stub.AwaitProof(pb.AwaitProofRequest(job_id=done, timeout_ms=1000), timeout=30)
        assert verified(again, done_c1, vk) == written          # served from disk, not proved again
        for job, c1 in ((running, running_c1), (accepted, accepted_c1)):
            verified(stub.AwaitProof(pb.AwaitProofRequest(job_id=job, timeout_ms=WAIT_S * 1000), timeout=WAIT_S),
                     c1, vk)
    proofs = [(e.job, e.t >= killed_at) for e in read_log(timeline) if e.event == "FINALIZE_END"]
    assert sorted(proofs) == sorted([(done, False), (running, True), (accepted, True)]), proofs
