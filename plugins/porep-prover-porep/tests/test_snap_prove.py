# SPDX-License-Identifier: Apache-2.0
"""SnapDeals updates proved: a 2 KiB sector sealed here and updated with new
data, its partition proofs proved by an engine on the CPU and through a
daemon process on the reference engine's wire (cuzk.v1 SNAP_DEALS_UPDATE:
the partition proofs, registered proof and commitments as curio's CIDs, as
curio sends them) and on the daemon's own service (kind snap-update, the
file in the JSON payload); each proof verifies against the public inputs a
verifier computes and not against others. Damaged partition proofs and
foreign commitments are refused INVALID_ARGUMENT before any synthesis;
GetStatus counts the kind's queue under the reference engine's name.

The 2 KiB update circuit's INSECURE parameters are made once here and
handed to the engine and the daemon as a canonical file beside its digest."""
import json
import pathlib
import secrets
import sys

import grpc
import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

import porep_prover as pp  # noqa: E402
from porep_prover.daemon.cuzk import proving_pb2 as cuzk  # noqa: E402
from porep_prover.daemon.cuzk import proving_pb2_grpc  # noqa: E402
from porep_prover.daemon.v1 import proving_pb2 as own  # noqa: E402
from porep_prover.engine import Job  # noqa: E402
from porep_prover.groth16 import Proof, file_digest, insecure_setup, verify, write_params  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402
from porep_prover_porep import pieces, seal  # noqa: E402
from porep_prover_porep.fr32 import to_int  # noqa: E402
from porep_prover_porep.payload import prover_id_of  # noqa: E402
from porep_prover_porep.post.bincode import write_list  # noqa: E402
from porep_prover_porep.snap import bincode, challenges  # noqa: E402
from porep_prover_porep.snap.circuit import update_circuit  # noqa: E402
from porep_prover_porep.snap.payload import commitment_cid  # noqa: E402
from porep_prover_porep.snap.registered import REGISTERED_UPDATE  # noqa: E402
from porep_prover_porep.snap.update import update  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[3]
MINER = 1000
WAIT_MS = 300_000
PROOF = REGISTERED_UPDATE["StackedDrg2KiBV1"]


@pytest.fixture(scope="module")
def vk(tmp_path_factory):
    """INSECURE parameters of the 2 KiB update circuit in a file with its
    digest, named by POREP_PROVER_SNAP_UPDATE_PARAMS while the module runs;
    their verifying key."""
    path = tmp_path_factory.mktemp("snap-params") / PROOF.params_name
    params = insecure_setup(update_circuit(PROOF).r1cs, warn=False)
    write_params(path, params)
    pathlib.Path(f"{path}.digest").write_text(file_digest(path) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("POREP_PROVER_SNAP_UPDATE_PARAMS", str(path))
        yield params.vk


def new_update(sector: int):
    data = pieces.sector_data([pieces.random_piece(2048, secrets.randbelow(1 << 32))], 2048)
    sealed = seal.precommit2(seal.precommit1("StackedDrg2KiBV1_1", data, prover_id_of(MINER), sector,
                                             secrets.token_bytes(32)))
    return update(sealed, pieces.sector_data([pieces.random_piece(2048, secrets.randbelow(1 << 32))], 2048))


@pytest.fixture(scope="module")
def updated():
    return new_update(11)


def expected(u) -> list[int]:
    return challenges.public_inputs(PROOF, 0, u.h, to_int(u.comm_r_old), to_int(u.comm_d_new), to_int(u.comm_r_new))


def verified(vk, u, proof) -> None:
    """proof (a Proof, or a partition's 192 bytes) verifies against u's public inputs alone."""
    if isinstance(proof, bytes):
        split = Proof.split(proof)
        assert len(split) == PROOF.partitions
        proof = split[0]
    good = expected(u)
    assert verify(vk, good, proof)
    assert not verify(vk, [*good[:3], good[3] ^ 1], proof)


def test_2kib_update_proved_by_an_engine(vk, updated):
    payload = {"vanilla_proofs": write_list([bincode.write(p) for p in updated.partition_proofs()]),
               "registered_proof": PROOF.number, "comm_r_old": updated.comm_r_old.hex(),
               "comm_d_new": updated.comm_d_new.hex(), "comm_r_new": updated.comm_r_new.hex()}
    pm = plugin_manager()
    config = pp.load_config(overrides=["engine.devices=cpu", "engine.partition_workers=1"])
    with pp.Engine(config, registry=collect_registry(pm), plugins=pm) as engine:
        result = engine.prove(Job("snap-update", 1, payload))
    assert result.ok, result.error
    assert result.public_inputs == [expected(updated)]
    verified(vk, updated, result.proofs[0])


@pytest.fixture(scope="module")
def daemon(vk, tmp_path_factory):
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from daemon_process import DaemonProcess
    inputs = tmp_path_factory.mktemp("inputs")
    settings = {"daemon.input_roots": [str(inputs)], "engine.threads": 2, "engine.synthesis_threads": 2}
    with DaemonProcess(tmp_path_factory.mktemp("daemon") / "state", settings) as d:
        d.inputs = inputs
        yield d


def wire_request(u, **over) -> cuzk.SubmitProofRequest:
    """As curio's ProveUpdateCuzk sends it: the partition proofs, the commitments' CIDs."""
    fields = dict(request_id=f"snap-{secrets.token_hex(4)}", proof_kind=cuzk.SNAP_DEALS_UPDATE,
                  registered_proof=PROOF.number, sector_size=2048, miner_id=MINER, sector_number=11,
                  vanilla_proofs=[bincode.write(p) for p in u.partition_proofs()],
                  comm_r_old=commitment_cid(to_int(u.comm_r_old), "comm_r_old"),
                  comm_r_new=commitment_cid(to_int(u.comm_r_new), "comm_r_new"),
                  comm_d_new=commitment_cid(to_int(u.comm_d_new), "comm_d_new"))
    return cuzk.SubmitProofRequest(**{**fields, **over})


def test_update_on_the_reference_engines_wire(daemon, vk, updated):
    wire = proving_pb2_grpc.ProvingEngineStub(daemon.channel())
    answer = wire.Prove(cuzk.ProveRequest(submit=wire_request(updated)), timeout=WAIT_MS / 1000).result
    assert answer.status == cuzk.AwaitProofResponse.COMPLETED, answer.error_message or daemon.log()
    assert len(answer.proof) == 192
    verified(vk, updated, answer.proof)
    status = wire.GetStatus(cuzk.GetStatusRequest(), timeout=10)
    assert "snap-update" in {q.proof_kind for q in status.queues}
    assert "snap-2k" in {s.circuit_id for s in status.loaded_srs}
    assert wire.EvictSRS(cuzk.EvictSrsRequest(circuit_id="snap-2k"), timeout=10).was_loaded
    assert wire.PreloadSRS(cuzk.PreloadSrsRequest(circuit_id="snap-2k"), timeout=60)
    assert "snap-2k" in {s.circuit_id for s in wire.GetStatus(cuzk.GetStatusRequest(), timeout=10).loaded_srs}


def test_update_on_the_daemons_own_service(daemon, vk):
    u = new_update(12)
    service = daemon.stub()
    path = daemon.inputs / "update.vanilla"
    path.write_bytes(write_list([bincode.write(p) for p in u.partition_proofs()]))
    payload = json.dumps({"vanilla_proofs": str(path), "registered_proof": PROOF.number,
                          "comm_r_old": u.comm_r_old.hex(), "comm_d_new": u.comm_d_new.hex(),
                          "comm_r_new": u.comm_r_new.hex()})
    job = service.SubmitProof(own.SubmitProofRequest(kind="snap-update", partitions=1, payload=payload.encode()),
                              timeout=60)
    answer = service.AwaitProof(own.AwaitProofRequest(job_id=job.job_id, timeout_ms=WAIT_MS), timeout=WAIT_MS / 1000)
    assert answer.status == own.AwaitProofResponse.COMPLETED, answer.error_message or daemon.log()
    verified(vk, u, answer.proof)
    assert service.GetJob(own.GetJobRequest(job_id=job.job_id), timeout=10).priority == own.PRIORITY_NORMAL


def test_bad_partition_proofs_are_refused_before_synthesis(daemon, updated):
    wire = proving_pb2_grpc.ProvingEngineStub(daemon.channel())
    good = [bincode.write(p) for p in updated.partition_proofs()]
    other = new_update(13)
    bad = {"truncated": ({"vanilla_proofs": [good[0][:-1]]}, "proof_r_new"),
           "two partitions": ({"vanilla_proofs": good * 2}, "2 partition proofs"),
           "another update's comm_r_new": ({"comm_r_new": commitment_cid(to_int(other.comm_r_new), "comm_r_new")},
                                           "comm_r_new"),
           "comm_d as comm_r_old": ({"comm_r_old": commitment_cid(to_int(updated.comm_d_new), "comm_d_new")},
                                    "sealed commitment's CID"),
           "an unknown update proof": ({"registered_proof": 7}, "not a registered update proof"),
           "another sector size": ({"sector_size": 8 << 20}, "sector_size 8388608 is not StackedDrg2KiBV1's"),
           "no sector size": ({"sector_size": 12345}, "sector_size 12345 is not a sector size"),
           "no vanilla proofs": ({"vanilla_proofs": []}, "vanilla_proofs is empty")}
    before = len(daemon.stub().ListJobs(own.ListJobsRequest(), timeout=10).jobs)
    for name, (fields, message) in bad.items():
        with pytest.raises(grpc.RpcError) as caught:
            wire.SubmitProof(wire_request(updated, **fields), timeout=60)
        err = caught.value
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and message in err.details(), (name, err.details())
    assert len(daemon.stub().ListJobs(own.ListJobsRequest(), timeout=10).jobs) == before


def test_a_wire_request_without_sector_size_takes_its_registered_proofs():
    from porep_prover.daemon.cuzk.requests import wire_job
    for number, partitions in enumerate((1, 4, 16, 16, 16)):
        request = cuzk.SubmitProofRequest(proof_kind=cuzk.SNAP_DEALS_UPDATE, registered_proof=number,
                                          vanilla_proofs=[b"x"])
        assert wire_job(request).partitions == partitions == REGISTERED_UPDATE[
            ["StackedDrg2KiBV1", "StackedDrg8MiBV1", "StackedDrg512MiBV1", "StackedDrg32GiBV1",
             "StackedDrg64GiBV1"][number]].partitions
