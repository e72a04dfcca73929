# SPDX-License-Identifier: Apache-2.0
"""A 2 KiB sector sealed here, proved end to end: by an engine in this process
(the Python API), and by a daemon process on its own service (kind porep, the
output's path) and on the reference engine's wire (POREP_SEAL_COMMIT with the
output in curio's wrapper). Each 192-byte proof verifies against the public
inputs a verifier computes from the output's public values.

The partition circuit has 2.7 M constraints: its INSECURE parameters are made
once here (about a minute and a half on 2 cores) and handed to the engine and
the daemon as a canonical file beside its digest (POREP_PROVER_POREP_PARAMS);
each proof takes about a minute on 2 cores."""
import base64
import json
import pathlib
import secrets
import sys

import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

import porep_prover as pp  # noqa: E402
from porep_prover.daemon.cuzk import proving_pb2 as cuzk  # noqa: E402
from porep_prover.daemon.cuzk import proving_pb2_grpc  # noqa: E402
from porep_prover.daemon.v1 import proving_pb2 as own  # noqa: E402
from porep_prover.engine import Job  # noqa: E402
from porep_prover.groth16 import Proof, file_digest, insecure_setup, verify, write_params  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402
from porep_prover_porep import c1_json, pieces, seal  # noqa: E402
from porep_prover_porep.circuit.partition import partition_circuit  # noqa: E402
from porep_prover_porep.circuit.values import public_inputs  # noqa: E402
from porep_prover_porep.parameters import ENVIRONMENT  # noqa: E402
from porep_prover_porep.payload import prover_id_of  # noqa: E402
from porep_prover_porep.registered import seal_proof  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = pathlib.Path(__file__).resolve().parents[3]
MINER, SECTOR = 1000, 7
WAIT_MS = 600_000


@pytest.fixture(scope="module")
def sector(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sector")
    data = pieces.sector_data([pieces.random_piece(1024, secrets.randbelow(1 << 32)), pieces.zero_piece(1024)], 2048)
    c1 = seal.seal_sector(data, "StackedDrg2KiBV1_1", prover_id_of(MINER), SECTOR, secrets.token_bytes(32),
                          secrets.token_bytes(32))
    c1_json.write(c1, folder / "c1.json")
    return c1, folder / "c1.json"


@pytest.fixture(scope="module")
def vk(tmp_path_factory):
    """INSECURE parameters of the 2 KiB circuit, in a file with its digest beside it,
    named by POREP_PROVER_POREP_PARAMS while the module runs; their verifying key."""
    path = tmp_path_factory.mktemp("params") / "porep-2048.params"
    params = insecure_setup(partition_circuit(seal_proof("StackedDrg2KiBV1_1")).r1cs, warn=False)
    write_params(path, params)
    pathlib.Path(f"{path}.digest").write_text(file_digest(path) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(ENVIRONMENT, str(path))
        yield params.vk


def _verified(vk, proofs: bytes, c1, public_answers=None) -> None:
    split = Proof.split(proofs)
    assert len(proofs) == 192 * len(c1.vanilla_proofs) == 192 * len(split)
    for k, proof in enumerate(split):
        expected = public_inputs(c1, k)
        assert verify(vk, expected, proof), f"partition {k}"
        if public_answers is not None:
            assert [int(v) for v in public_answers[k].values] == expected


def engine_proofs(c1, path: pathlib.Path, vk) -> None:
    """The output's partitions proved by an engine in this process, verified."""
    pm = plugin_manager()
    config = pp.load_config(overrides=["engine.devices=cpu", "engine.partition_workers=1"])
    partitions = len(c1.vanilla_proofs)
    with pp.Engine(config, registry=collect_registry(pm), plugins=pm) as engine:
        result = engine.prove(Job("porep", partitions, {"c1": str(path), "miner_id": MINER, "sector_id": SECTOR}))
    assert result.ok, result.error
    assert result.public_inputs == [public_inputs(c1, k) for k in range(partitions)]
    _verified(vk, b"".join(p.to_bytes() for p in result.proofs), c1)


def daemon_proofs(c1, path: pathlib.Path, vk, folder: pathlib.Path) -> None:
    """The output proved by a daemon process on its own service (kind porep, the
    output's path) and on the reference engine's wire (curio's wrapper), verified."""
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from daemon_process import DaemonProcess
    proof = seal_proof(c1.registered_proof)
    wrapped = json.dumps({"SectorNum": SECTOR, "SectorSize": proof.sector_size,
                          "Phase1Out": base64.b64encode(path.read_bytes()).decode()}).encode()
    settings = {"daemon.input_roots": [str(path.parent)], "engine.threads": 2, "engine.synthesis_threads": 2}
    with DaemonProcess(folder / "state", settings) as daemon:
        service = daemon.stub()
        payload = json.dumps({"c1": str(path), "miner_id": MINER, "sector_id": SECTOR}).encode()
        mine = service.SubmitProof(own.SubmitProofRequest(kind="porep", partitions=len(c1.vanilla_proofs),
                                                          payload=payload), timeout=60)
        wire = proving_pb2_grpc.ProvingEngineStub(daemon.channel())
        theirs = wire.SubmitProof(cuzk.SubmitProofRequest(
            request_id=f"porep-{SECTOR}-{secrets.token_hex(4)}", proof_kind=cuzk.POREP_SEAL_COMMIT,
            registered_proof=proof.number, sector_size=proof.sector_size, sector_number=SECTOR, miner_id=MINER,
            vanilla_proof=wrapped), timeout=60)
        answer = service.AwaitProof(own.AwaitProofRequest(job_id=mine.job_id, timeout_ms=WAIT_MS), timeout=WAIT_MS)
        assert answer.status == own.AwaitProofResponse.COMPLETED, answer.error_message or daemon.log()
        _verified(vk, answer.proof, c1, answer.public_inputs)
        reply = wire.AwaitProof(cuzk.AwaitProofRequest(job_id=theirs.job_id, timeout_ms=WAIT_MS), timeout=WAIT_MS)
        assert reply.status == cuzk.AwaitProofResponse.COMPLETED, reply.error_message or daemon.log()
        _verified(vk, reply.proof, c1)


def test_an_engine_proves_a_sector_sealed_here(sector, vk):
    engine_proofs(*sector, vk)


def test_a_daemon_proves_it_on_both_services(sector, vk, tmp_path):
    daemon_proofs(*sector, vk, tmp_path)
