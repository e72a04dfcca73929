# SPDX-License-Identifier: Apache-2.0
"""WinningPoSt and WindowPoSt through a daemon process with the porep
plugin's providers, on the reference engine's wire (cuzk.v1: WINNING_POST
and WINDOW_POST_PARTITION with the vanilla proofs, randomness and partition
as curio sends them) and on the daemon's own service (kinds winning-post
and window-post, the vanilla proofs' file in the JSON payload): each proof
verifies against the public inputs a verifier computes; the kinds' default
priorities (WinningPoSt CRITICAL, WindowPoSt HIGH); damaged vanilla proofs
and a foreign randomness refused INVALID_ARGUMENT before any synthesis;
GetStatus counts each kind's queue under the reference engine's names.

The 2 KiB circuits' INSECURE parameters are made here and handed to the
daemon as canonical files beside their digests."""
import json
import pathlib
import secrets
import sys

import grpc
import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover.daemon.cuzk import proving_pb2 as cuzk  # noqa: E402
from porep_prover.daemon.cuzk import proving_pb2_grpc  # noqa: E402
from porep_prover.daemon.v1 import proving_pb2 as own  # noqa: E402
from porep_prover.groth16 import Proof, file_digest, insecure_setup, verify, write_params  # noqa: E402
from porep_prover_porep import pieces, seal  # noqa: E402
from porep_prover_porep.payload import prover_id_of  # noqa: E402
from porep_prover_porep.post import bincode, challenges, vanilla  # noqa: E402
from porep_prover_porep.post.circuit import post_circuit  # noqa: E402
from porep_prover_porep.post.registered import post_proof  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[3]
MINER = 1000
WAIT_MS = 300_000
WINNING, WINDOW = post_proof("StackedDrgWinning2KiBV1"), post_proof("StackedDrgWindow2KiBV1")


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """INSECURE parameters of the 2 KiB WinningPoSt and WindowPoSt circuits in
    files with their digests, named by the kinds' variables while the module
    runs; their verifying keys."""
    folder = tmp_path_factory.mktemp("post-params")
    vks = {}
    with pytest.MonkeyPatch.context() as mp:
        for proof in (WINNING, WINDOW):
            path = folder / proof.params_name
            params = insecure_setup(post_circuit(proof).r1cs, warn=False)
            write_params(path, params)
            pathlib.Path(f"{path}.digest").write_text(file_digest(path) + "\n")
            mp.setenv(f"POREP_PROVER_{proof.kind.upper()}_POST_PARAMS", str(path))
            vks[proof.kind] = params.vk
        yield vks


@pytest.fixture(scope="module")
def sealed():
    data = pieces.sector_data([pieces.random_piece(2048, secrets.randbelow(1 << 32))], 2048)
    return seal.precommit2(seal.precommit1("StackedDrg2KiBV1_1", data, prover_id_of(MINER), 7, bytes(32)))


@pytest.fixture(scope="module")
def daemon(keys, tmp_path_factory):
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from daemon_process import DaemonProcess
    inputs = tmp_path_factory.mktemp("inputs")
    settings = {"daemon.input_roots": [str(inputs)], "engine.threads": 2, "engine.synthesis_threads": 2}
    with DaemonProcess(tmp_path_factory.mktemp("daemon") / "state", settings) as d:
        d.inputs = inputs
        yield d


def randomness() -> bytes:
    r = bytearray(secrets.token_bytes(32))
    r[31] &= 0x3F
    return bytes(r)


def vanilla_proofs(proof, replica, sectors, r: bytes, partition: int = 0) -> list[bytes]:
    return [bincode.write(vanilla.sector_proof(proof, replica, sid, r, partition, slot))
            for slot, sid in enumerate(sectors)]


def verified(vk, proof, items: list[bytes], r: bytes, answer_proof: bytes, partition: int = 0) -> None:
    sps = [bincode.read(x, proof) for x in items]
    expected = challenges.public_inputs(proof, r, [(sp.sector_id, int.from_bytes(sp.comm_r, "little"))
                                                   for sp in sps], partition)
    split = Proof.split(answer_proof)
    assert len(split) == 1 and verify(vk, expected, split[0])


def test_posts_on_the_reference_engines_wire(daemon, keys, sealed):
    wire = proving_pb2_grpc.ProvingEngineStub(daemon.channel())
    r = randomness()
    winning = vanilla_proofs(WINNING, sealed, [7], r)
    request = cuzk.SubmitProofRequest(request_id=f"winning-{secrets.token_hex(4)}", proof_kind=cuzk.WINNING_POST,
                                      registered_proof=WINNING.number, sector_size=2048, miner_id=MINER,
                                      sector_number=7, randomness=r, vanilla_proofs=winning)
    answer = wire.Prove(cuzk.ProveRequest(submit=request), timeout=WAIT_MS / 1000).result
    assert answer.status == cuzk.AwaitProofResponse.COMPLETED, answer.error_message or daemon.log()
    verified(keys["winning"], WINNING, winning, r, answer.proof)
    window = vanilla_proofs(WINDOW, sealed, [7], r, partition=3)          # one sector: the partition padded
    request = cuzk.SubmitProofRequest(proof_kind=cuzk.WINDOW_POST_PARTITION, registered_proof=WINDOW.number,
                                      sector_size=2048, miner_id=MINER, randomness=r, partition_index=3,
                                      vanilla_proofs=window)
    job = wire.SubmitProof(request, timeout=60)
    answer = wire.AwaitProof(cuzk.AwaitProofRequest(job_id=job.job_id, timeout_ms=WAIT_MS), timeout=WAIT_MS / 1000)
    assert answer.status == cuzk.AwaitProofResponse.COMPLETED, answer.error_message or daemon.log()
    verified(keys["window"], WINDOW, window, r, answer.proof, partition=3)
    jobs = {j.job_id: j for j in daemon.stub().ListJobs(own.ListJobsRequest(), timeout=10).jobs}
    assert jobs[job.job_id].priority == own.PRIORITY_HIGH
    queues = {q.proof_kind for q in wire.GetStatus(cuzk.GetStatusRequest(), timeout=10).queues}
    assert {"porep-c2", "winning-post", "window-post"} <= queues


def test_posts_on_the_daemons_own_service(daemon, keys, sealed):
    service = daemon.stub()
    r = randomness()
    items = vanilla_proofs(WINNING, sealed, [9], r)
    path = daemon.inputs / "winning.vanilla"
    path.write_bytes(bincode.write_list(items))
    payload = json.dumps({"vanilla_proofs": str(path), "randomness": r.hex(), "registered_proof": WINNING.number})
    job = service.SubmitProof(own.SubmitProofRequest(kind="winning-post", partitions=1, payload=payload.encode()),
                              timeout=60)
    answer = service.AwaitProof(own.AwaitProofRequest(job_id=job.job_id, timeout_ms=WAIT_MS), timeout=WAIT_MS / 1000)
    assert answer.status == own.AwaitProofResponse.COMPLETED, answer.error_message or daemon.log()
    verified(keys["winning"], WINNING, items, r, answer.proof)
    assert service.GetJob(own.GetJobRequest(job_id=job.job_id), timeout=10).priority == own.PRIORITY_CRITICAL


def test_bad_vanilla_proofs_are_refused_before_synthesis(daemon, sealed):
    wire = proving_pb2_grpc.ProvingEngineStub(daemon.channel())
    r = randomness()
    good = vanilla_proofs(WINNING, sealed, [7], r)
    base = dict(proof_kind=cuzk.WINNING_POST, registered_proof=WINNING.number, sector_size=2048, randomness=r)
    bad = {"truncated": ({"vanilla_proofs": [good[0][:-1]]}, "comm_r_last"),
           "another randomness": ({"vanilla_proofs": good, "randomness": randomness()}, "opens leaf"),
           "two sectors": ({"vanilla_proofs": good * 2}, "2 sectors' vanilla proofs"),
           "a window proof type": ({"vanilla_proofs": good, "registered_proof": 5}, "not a registered winning"),
           "short randomness": ({"vanilla_proofs": good, "randomness": r[:31]}, "randomness is 32 bytes"),
           "high randomness": ({"vanilla_proofs": good, "randomness": r[:31] + b"\xff"}, "top two bits"),
           "no vanilla proofs": ({}, "vanilla_proofs is empty")}
    before = len(daemon.stub().ListJobs(own.ListJobsRequest(), timeout=10).jobs)
    for name, (fields, message) in bad.items():
        with pytest.raises(grpc.RpcError) as caught:
            wire.SubmitProof(cuzk.SubmitProofRequest(**{**base, **fields}), timeout=60)
        err = caught.value
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and message in err.details(), (name, err.details())
    assert len(daemon.stub().ListJobs(own.ListJobsRequest(), timeout=10).jobs) == before
