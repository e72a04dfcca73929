# SPDX-License-Identifier: Apache-2.0
"""The "porep" provider without proving: its payloads (the daemon's, a
preload's, the Python API's and bench batch's), commit-phase-1 outputs read
from a path, bytes or curio's wrapper, damaged and foreign ones refused by
name before anything is synthesized, the circuit and the witness it hands
the engine, canonical parameters checked against their digest and the
circuit, and the seal command the README shows."""
import base64
import gc
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import types

import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover import FrArray  # noqa: E402
from porep_prover.circuits import square_chain  # noqa: E402
from porep_prover.engine import Job, SrsShape  # noqa: E402
from porep_prover.errors import InvalidInputError, ParamsDigestError, ParamsMismatchError, VanillaProofError  # noqa
from porep_prover.groth16 import R1CS, file_digest, insecure_setup, write_mapped, write_params  # noqa: E402
from porep_prover.host_memory import is_mapped  # noqa: E402
from porep_prover_porep import c1_json, pieces, seal  # noqa: E402
from porep_prover_porep.parameters import ENVIRONMENT, canonical_path, parameters  # noqa: E402
from porep_prover_porep.payload import Payload, prover_id_of  # noqa: E402
from porep_prover_porep.provider import PorepProvider  # noqa: E402
from porep_prover_porep.registered import PorepConfig, seal_proof  # noqa: E402

MINER, SECTOR = 1000, 7
ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory):
    """A 2 KiB sector sealed for miner 1000's sector 7: its output and its JSON file."""
    data = pieces.sector_data([pieces.random_piece(2048, 5)], 2048)
    c1 = seal.seal_sector(data, "StackedDrg2KiBV1_1", prover_id_of(MINER), SECTOR, bytes([1] * 32), bytes([2] * 32))
    path = tmp_path_factory.mktemp("c1") / "c1.json"
    c1_json.write(c1, path)
    return c1, path


def daemon_payload(path, **over) -> dict:
    return {"vanilla_proof": str(path), "registered_proof": 5, "sector_size": 2048, "sector_number": SECTOR,
            "miner_id": MINER, **over}


def test_prover_id_is_filecoin_ffis():
    """The ID address payload, an unsigned LEB128 varint, zero-padded: t01000 is e8 07."""
    assert prover_id_of(1000) == bytes([0xE8, 0x07]) + bytes(30)
    assert prover_id_of(0) == bytes(32) and prover_id_of(127) == bytes([127]) + bytes(31)
    assert prover_id_of(1 << 63)[:10] == bytes([0x80] * 9 + [0x01])


def test_the_daemons_payload_is_read_and_its_output_verified(sealed):
    c1, path = sealed
    obj = daemon_payload(path)
    assert PorepProvider.parse_payload(obj, 1) == obj
    job = Job("porep", 1, obj)
    provider = PorepProvider()
    assert provider.srs_key(job) == provider.srs_key(Job("porep", 1, {"sector_size": 2048})) == "porep:2048:insecure"
    r1cs = provider.circuit(job)
    assert isinstance(r1cs, R1CS) and r1cs.num_inputs == 40
    assert provider.constraints(obj) == r1cs.num_constraints == 2_687_921
    got, witness = provider.synthesize(job, 0, 2)
    assert got is r1cs and r1cs.is_satisfied(witness)
    arena = FrArray.zeros(r1cs.num_variables)
    assert provider.synthesize_into(job, 0, 2, arena) is r1cs and arena == witness
    assert provider.synthesis_bytes(job) > r1cs.num_variables          # a byte a variable, and the instances' data
    with pytest.raises(InvalidInputError, match="partition 1 of an output of 1"):
        provider.synthesize(job, 1, 2)


def test_api_payloads_path_bytes_object_and_curios_wrapper(sealed):
    c1, path = sealed
    raw = path.read_bytes()
    wrapped = json.dumps({"SectorNum": SECTOR, "SectorSize": 2048,
                          "Phase1Out": base64.b64encode(raw).decode()}).encode()
    for source in (str(path), raw, wrapped, c1):
        p = Payload.of({"c1": source, "miner_id": MINER, "sector_id": SECTOR, "seed": 0})
        assert p.proof.name == "StackedDrg2KiBV1_1" and p.output(1).comm_r == c1.comm_r
    assert PorepProvider.partitions({"c1": str(path)}) == 1
    assert PorepProvider.partitions({"sector_size": 8 << 20}) == 1


@pytest.mark.parametrize("change, error, words", [
    ({"bogus": 1}, InvalidInputError, "unknown keys bogus"),
    ({"registered_proof": 12}, InvalidInputError, "synthetic"),
    ({"registered_proof": 99}, InvalidInputError, "not a registered seal proof"),
    ({"sector_size": 8 << 20}, InvalidInputError, "sector_size 8388608 is not"),
    ({"miner_id": -1}, InvalidInputError, "miner_id must be an integer"),
    ({"sector_number": SECTOR + 1}, VanillaProofError, "replica id"),
    ({"miner_id": MINER + 1}, VanillaProofError, "replica id"),
    ({"registered_proof": 0}, VanillaProofError, "StackedDrg2KiBV1_1 output, StackedDrg2KiBV1 expected"),
])
def test_a_payload_or_a_foreign_output_is_refused_by_name(sealed, change, error, words):
    with pytest.raises(error, match=words):
        PorepProvider.parse_payload(daemon_payload(sealed[1], **change), 1)


def test_partitions_other_than_the_outputs_are_refused(sealed):
    with pytest.raises(VanillaProofError, match="1 partitions, the job has 10"):
        PorepProvider.parse_payload(daemon_payload(sealed[1]), 10)
    with pytest.raises(VanillaProofError, match="the job has 2"):
        PorepProvider().synthesize(Job("porep", 2, {"c1": str(sealed[1])}), 0, 1)


def test_a_damaged_output_is_refused_before_synthesis(sealed, tmp_path):
    c1, path = sealed
    obj = json.loads(path.read_text())
    proof = obj["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]
    proof["labeling_proofs"][1]["parents"][3][0] ^= 1
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(obj))
    with pytest.raises(VanillaProofError, match=r"labeling_proofs\[1\]\.parents\[3\]"):
        PorepProvider.parse_payload(daemon_payload(damaged), 1)
    with pytest.raises(VanillaProofError, match=r"labeling_proofs\[1\]\.parents\[3\]"):
        PorepProvider().synthesize(Job("porep", 1, {"c1": damaged.read_bytes()}), 0, 1)
    (tmp_path / "cut.json").write_bytes(path.read_bytes()[:-100])
    with pytest.raises(VanillaProofError, match="not JSON"):
        PorepProvider.parse_payload(daemon_payload(tmp_path / "cut.json"), 1)
    bad = {"SectorNum": SECTOR, "SectorSize": 2048, "Phase1Out": "not base64!"}
    with pytest.raises(VanillaProofError, match="not base64"):
        Payload.of({"c1": json.dumps(bad).encode()}).output()


def test_a_file_is_read_again_once_it_changes(sealed, tmp_path):
    """A path's output is read once while the file stays as it was (the same
    inode, size and modification time); rewritten, it is read and checked
    again, and a damaged rewrite is refused."""
    from porep_prover_porep import payload as payloads
    _, path = sealed
    copy = tmp_path / "c1.json"
    copy.write_bytes(path.read_bytes())
    reads = []
    real_open = open

    def counting_open(file, *args, **kwargs):
        if os.fspath(file) == os.fspath(copy):
            reads.append(file)
        return real_open(file, *args, **kwargs)
    payloads.open = counting_open          # the module's open: its reads of the file counted
    try:
        for _ in range(3):
            Payload.of({"c1": str(copy)}).output()
        assert len(reads) == 1
        obj = json.loads(copy.read_text())
        obj["comm_r"][0] ^= 1
        copy.write_text(json.dumps(obj))
        later = os.stat(copy).st_mtime_ns + 10**9
        os.utime(copy, ns=(later, later))     # a rewrite within one clock tick of the first write keeps its time
        with pytest.raises(VanillaProofError, match="comm_r"):
            Payload.of({"c1": str(copy)}).output()
        assert len(reads) == 2
    finally:
        del payloads.open


def test_preload_payloads():
    assert PorepProvider.parse_payload({"sector_size": 32 << 30}, 10) == {"sector_size": 32 << 30}
    assert Payload.of({"sector_size": 2048}).proof.name == "StackedDrg2KiBV1_1"
    for obj, words in (({"sector_size": 4096}, "not a sector size"), ({}, "c1 .or vanilla_proof., or sector_size"),
                       ({"sector_size": 2048, "miner_id": 1}, "a preload's names sector_size")):
        with pytest.raises(InvalidInputError, match=words):
            PorepProvider.parse_payload(obj, 1)


def _canonical_folder(tmp_path, r1cs: R1CS, digest: str | None = None) -> pathlib.Path:
    folder = tmp_path / "filecoin-proof-parameters"
    folder.mkdir()
    name = "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-0123.params"
    write_params(folder / name, insecure_setup(r1cs, warn=False))
    listing = {name: {"cid": "Qm", "digest": digest or file_digest(folder / name), "sector_size": 2048},
               "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-0170.params":
                   {"cid": "Qm", "digest": "0" * 32, "sector_size": 2048}}
    (folder / "parameters.json").write_text(json.dumps(listing))
    return folder


def test_canonical_parameters_are_found_and_checked(tmp_path, monkeypatch):
    """A parameters.json folder: the stacked-proof-of-replication file of the sector size,
    its digest checked first, then its shape against the circuit."""
    proof = seal_proof("StackedDrg2KiBV1_1")
    other = square_chain(50)[0]
    folder = _canonical_folder(tmp_path, other)
    monkeypatch.setenv(ENVIRONMENT, str(folder))
    assert canonical_path(proof).startswith(str(folder / "v28-stacked-proof-of-replication"))
    with pytest.raises(ParamsMismatchError, match="do not match the circuit"):
        parameters(proof, square_chain(60)[0])
    assert parameters(proof, other).summary()["inputs"] == other.num_inputs
    listing = json.loads((folder / "parameters.json").read_text())
    name = next(n for n in listing if "replication" in n)
    listing[name]["digest"] = "f" * 32
    (folder / "parameters.json").write_text(json.dumps(listing))
    with pytest.raises(ParamsDigestError, match="does not match"):
        parameters(proof, other)
    with pytest.raises(InvalidInputError, match="no stacked-proof-of-replication parameters for 8388608"):
        canonical_path(seal_proof("StackedDrg8MiBV1_1"))


def _readme_seal_line() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## The real PoRep: from a C1 output to ten proofs", 1)[1]
    return next(line for line in section.splitlines() if line.startswith("python3 -m porep_prover_porep seal"))


def test_the_readmes_seal_command_writes_an_output_the_provider_takes(tmp_path):
    line = re.sub(r"\s+#.*$", "", _readme_seal_line())
    argv = shlex.split(line)
    run = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    out = next(tmp_path.glob("*.json"))
    miner = int(argv[argv.index("--miner-id") + 1])
    sector = int(argv[argv.index("--sector-number") + 1])
    assert PorepProvider.parse_payload({"c1": str(out), "miner_id": miner, "sector_id": sector}, 1)


def test_the_circuit_command_counts_and_writes_the_r1cs(tmp_path, capsys):
    from porep_prover_porep.__main__ import main
    assert main(["circuit", "StackedDrg2KiBV1_1", "--out", str(tmp_path / "c.npz")]) == 0
    assert "2,687,921 constraints" in capsys.readouterr().out
    loaded = R1CS.load(tmp_path / "c.npz")
    assert (loaded.num_constraints, loaded.num_inputs, loaded.num_aux) == (2_687_921, 40, 2_685_673)


def test_the_shape_is_said_before_the_parameters_exist_and_a_set_in_use_is_handed_out_again(tmp_path, monkeypatch):
    """srs_shape counts the parameters from the circuit (its counts), before any
    is made or read (mapped where the canonical file is a .pmap); load_srs hands
    out the set in use (KEPT) without reading or making it again, and one
    that nothing holds is gone. A small circuit stands in for the 2 KiB
    partition's."""
    from porep_prover_porep import parameters as made_here, provider as module
    small = square_chain(50)[0]
    counts = types.SimpleNamespace(srs_shape=lambda mapped=False: SrsShape.of_circuit(small, mapped))
    monkeypatch.setattr(module, "partition_circuit", lambda proof: types.SimpleNamespace(r1cs=small, counts=counts))
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    made = []
    real = made_here.insecure_setup
    monkeypatch.setattr(made_here, "insecure_setup", lambda *a, **k: made.append(1) or real(*a, **k))
    job = Job("porep", 1, {"sector_size": 2048})
    said = PorepProvider.srs_shape(job)
    assert not made and said == SrsShape.of_circuit(small) and not said.mapped
    params = PorepProvider.load_srs(job)
    assert said == SrsShape.of(params, False) and len(made) == 1
    assert PorepProvider.load_srs(job) is params and len(made) == 1
    key = PorepProvider.srs_key(job)
    assert key in module.KEPT.keys()
    del params
    gc.collect()
    assert key not in module.KEPT.keys()
    pmap = tmp_path / "canonical.pmap"
    write_mapped(pmap, real(small, warn=False))
    mapped_job = Job("porep", 1, {"sector_size": 2048, "params": str(pmap)})
    said = PorepProvider.srs_shape(mapped_job)
    loaded = PorepProvider.load_srs(mapped_job)
    assert said.mapped and said == SrsShape.of(loaded, is_mapped(loaded.h.limbs))


def test_a_payload_gives_the_porep_id_and_api_version_its_sector_was_sealed_under(tmp_path):
    """Another chain's sector: read, verified and synthesized under the payload's
    porep_id and API version; refused under its registered proof's."""
    config = PorepConfig(bytes(32), "1.2.0")
    data = pieces.sector_data([pieces.random_piece(2048, 9)], 2048)
    c1 = seal.seal_sector(data, "StackedDrg2KiBV1_1", prover_id_of(MINER), SECTOR, bytes([1] * 32), bytes([2] * 32),
                          config)
    path = tmp_path / "c1.json"
    c1_json.write(c1, path)
    given = {"porep_id": "00" * 32, "api_version": "V1_2_0"}
    assert PorepProvider.parse_payload(daemon_payload(path, **given), 1)["porep_id"] == "00" * 32
    job = Job("porep", 1, {"c1": str(path), "miner_id": MINER, "sector_id": SECTOR, "porep_id": bytes(32),
                           "api_version": "1.2.0"})
    r1cs, witness = PorepProvider().synthesize(job, 0, 2)
    assert r1cs.is_satisfied(witness)
    with pytest.raises(VanillaProofError):
        PorepProvider.parse_payload(daemon_payload(path), 1)
    for bad, words in (({"porep_id": "00" * 31}, "porep_id is 32 bytes"), ({"api_version": "2"}, "api_version")):
        with pytest.raises(InvalidInputError, match=words):
            PorepProvider.parse_payload(daemon_payload(path, **bad), 1)
