# SPDX-License-Identifier: Apache-2.0
"""2 KiB sectors sealed here, proved end to end: one sealed under another
chain's porep_id (all zeros, API version 1.2.0) by an engine in this process
(the Python API, the porep_id given with the job) and by a daemon process on
its own service (kind porep, the output's path and the porep_id in its JSON
payload), one sealed under Filecoin's on the reference engine's wire
(POREP_SEAL_COMMIT with the output in curio's wrapper, which carries no
porep_id). Each 192-byte proof verifies against the public inputs a verifier
computes from the output's public values under the sector's porep_id.

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
from porep_prover_porep.registered import PorepConfig, seal_proof  # noqa: E402

pytestmark = pytest.mark.slow
ROOT = pathlib.Path(__file__).resolve().parents[3]
MINER, SECTOR = 1000, 7
WAIT_MS = 600_000
OTHER_CHAIN = PorepConfig(bytes(32), "1.2.0")


def sealed(folder: pathlib.Path, config: PorepConfig | None):
    data = pieces.sector_data([pieces.random_piece(1024, secrets.randbelow(1 << 32)), pieces.zero_piece(1024)], 2048)
    c1 = seal.seal_sector(data, "StackedDrg2KiBV1_1", prover_id_of(MINER), SECTOR, secrets.token_bytes(32),
                          secrets.token_bytes(32), config)
    c1_json.write(c1, folder / "c1.json")
    return c1, folder / "c1.json"


@pytest.fixture(scope="module")
def sector(tmp_path_factory):
    """A sector sealed under Filecoin's porep_id for StackedDrg2KiBV1_1."""
    return sealed(tmp_path_factory.mktemp("sector"), None)


@pytest.fixture(scope="module")
def other_chains_sector(tmp_path_factory):
    """A sector sealed under another chain's porep_id (OTHER_CHAIN)."""
    return sealed(tmp_path_factory.mktemp("other-chain"), OTHER_CHAIN)


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


def _verified(vk, proofs: bytes, c1, public_answers=None, config: PorepConfig | None = None) -> None:
    split = Proof.split(proofs)
    assert len(proofs) == 192 * len(c1.vanilla_proofs) == 192 * len(split)
    for k, proof in enumerate(split):
        expected = public_inputs(c1, k, config)
        assert verify(vk, expected, proof), f"partition {k}"
        if public_answers is not None:
            assert [int(v) for v in public_answers[k].values] == expected


def engine_proofs(c1, path: pathlib.Path, vk) -> None:
    """Another chain's sector's partitions proved by an engine in this process
    (its porep_id and API version given with the job), verified."""
    pm = plugin_manager()
    config = pp.load_config(overrides=["engine.devices=cpu", "engine.partition_workers=1"])
    partitions = len(c1.vanilla_proofs)
    payload = {"c1": str(path), "miner_id": MINER, "sector_id": SECTOR, "porep_id": OTHER_CHAIN.porep_id,
               "api_version": OTHER_CHAIN.api_version}
    with pp.Engine(config, registry=collect_registry(pm), plugins=pm) as engine:
        result = engine.prove(Job("porep", partitions, payload))
    assert result.ok, result.error
    assert result.public_inputs == [public_inputs(c1, k, OTHER_CHAIN) for k in range(partitions)]
    assert result.public_inputs != [public_inputs(c1, k) for k in range(partitions)]
    _verified(vk, b"".join(p.to_bytes() for p in result.proofs), c1, config=OTHER_CHAIN)


def daemon_proofs(ours, theirs, vk, folder: pathlib.Path) -> None:
    """Another chain's sector (ours) proved by a daemon process on its own
    service (kind porep, the output's path, the porep_id in the JSON payload),
    and Filecoin's (theirs) on the reference engine's wire (curio's wrapper),
    each verified."""
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from daemon_process import DaemonProcess
    (c1, path), (other, other_path) = theirs, ours
    proof = seal_proof(c1.registered_proof)
    wrapped = json.dumps({"SectorNum": SECTOR, "SectorSize": proof.sector_size,
                          "Phase1Out": base64.b64encode(path.read_bytes()).decode()}).encode()
    settings = {"daemon.input_roots": [str(path.parent), str(other_path.parent)], "engine.threads": 2,
                "engine.synthesis_threads": 2}
    with DaemonProcess(folder / "state", settings) as daemon:
        service = daemon.stub()
        payload = json.dumps({"c1": str(other_path), "miner_id": MINER, "sector_id": SECTOR,
                              "porep_id": OTHER_CHAIN.porep_id.hex(), "api_version": "V1_2_0"}).encode()
        mine = service.SubmitProof(own.SubmitProofRequest(kind="porep", partitions=len(other.vanilla_proofs),
                                                          payload=payload), timeout=60)
        wire = proving_pb2_grpc.ProvingEngineStub(daemon.channel())
        theirs = wire.SubmitProof(cuzk.SubmitProofRequest(
            request_id=f"porep-{SECTOR}-{secrets.token_hex(4)}", proof_kind=cuzk.POREP_SEAL_COMMIT,
            registered_proof=proof.number, sector_size=proof.sector_size, sector_number=SECTOR, miner_id=MINER,
            vanilla_proof=wrapped), timeout=60)
        answer = service.AwaitProof(own.AwaitProofRequest(job_id=mine.job_id, timeout_ms=WAIT_MS), timeout=WAIT_MS)
        assert answer.status == own.AwaitProofResponse.COMPLETED, answer.error_message or daemon.log()
        _verified(vk, answer.proof, other, answer.public_inputs, OTHER_CHAIN)
        reply = wire.AwaitProof(cuzk.AwaitProofRequest(job_id=theirs.job_id, timeout_ms=WAIT_MS), timeout=WAIT_MS)
        assert reply.status == cuzk.AwaitProofResponse.COMPLETED, reply.error_message or daemon.log()
        _verified(vk, reply.proof, c1)


def test_an_engine_proves_a_sector_sealed_here_under_another_chains_porep_id(other_chains_sector, vk):
    engine_proofs(*other_chains_sector, vk)


def test_a_daemon_proves_sectors_on_both_services(other_chains_sector, sector, vk, tmp_path):
    daemon_proofs(other_chains_sector, sector, vk, tmp_path)
