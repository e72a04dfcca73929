# SPDX-License-Identifier: Apache-2.0
"""Commit-phase-1 outputs careless and hostile (c1_mutations.py): every one
is refused before synthesis with a named error, by the checks the provider
runs (property tests over the output's structure and text), by an engine
(the job fails naming the field, no proof is made), and on both of a
daemon's wires (INVALID_ARGUMENT at submit, the field named, nothing
journaled); a 32 GiB output parses in bounded time and memory (the fuzz run
of 10,000 and more: benchmarks/bench_c1_fuzz.py)."""
import base64
import json
import pathlib
import random
import sys

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import c1_mutations as m
from porep_prover.errors import VanillaProofError
from porep_prover_porep import c1_json, sparse
from porep_prover_porep.payload import checked_output, prover_id_of
from porep_prover_porep.registered import seal_proof

ROOT = pathlib.Path(__file__).resolve().parents[3]
MINER, SECTOR = 1000, 7
NUMBER = seal_proof("StackedDrg2KiBV1_1").number       # the registered proof's number on the wire


@pytest.fixture(scope="module")
def valid():
    """(the JSON object, its text, the output) of a 2 KiB sparse sector's commit-phase-1 output."""
    c1 = sparse.sparse_c1("StackedDrg2KiBV1_1", prover_id_of(MINER), SECTOR, bytes(range(32)), bytes([7] * 32))
    text = c1_json.dumps(c1)
    return json.loads(text), text, c1


@pytest.fixture(scope="module")
def places(valid):
    return m.paths(valid[0])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**64 - 1))
def test_a_mutated_structure_is_refused_by_name(valid, places, seed):
    obj, text, _ = valid
    what, changed = m.mutate_object(obj, random.Random(seed), places)
    got = m.outcome(m.encode(changed), text)
    assert got.startswith("refused ") or got == "accepted unchanged", f"{what}: {got}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**64 - 1))
def test_a_mutated_text_is_refused_by_name(valid, seed):
    _, text, _ = valid
    what, changed = m.mutate_text(text.encode(), random.Random(seed))
    got = m.outcome(changed, text)
    assert got.startswith("refused ") or got == "accepted unchanged", f"{what}: {got}"


def _edit(obj, path, value):
    out = json.loads(json.dumps(obj))
    box = out
    for step in path[:-1]:
        box = box[step]
    box[path[-1]] = value(box[path[-1]]) if callable(value) else value
    return out


PROOF = ("vanilla_proofs", "StackedDrg2KiBV1", 0, 0)
CX = PROOF + ("replica_column_proofs", "c_x", "column")


@pytest.mark.parametrize("path,value,named", [
    (("comm_r",), lambda v: [v[0] ^ 1] + v[1:], "comm_r"),                              # commitments that differ
    (("comm_d",), lambda v: v[:31] + [v[31] ^ 4], "comm_d"),
    (CX + ("index",), 2048, "c_x.column.index"),                                       # a challenge out of range
    (CX + ("index",), lambda v: (v + 1) % 64, "c_x"),                                  # another node's column
    (CX + ("rows",), lambda v: v[:-1], "c_x.column.rows"),                             # a column of the wrong height
    (PROOF + ("labeling_proofs",), lambda v: v + v[:1], "labeling_proofs"),            # a wrong length
    (("vanilla_proofs", "StackedDrg2KiBV1"), lambda v: v + v, "vanilla_proofs"),      # a partition too many
    (("registered_proof",), "StackedDrg8MiBV1_1", "vanilla_proofs"),                   # a foreign registered proof
    (("seed",), lambda v: v[:31] + [v[31] ^ 1], "vanilla_proofs"),                     # challenges of another seed
], ids=["comm_r", "comm_d", "index out of range", "another column", "column height", "labeling length",
        "partitions", "registered proof", "seed"])
def test_an_inconsistent_output_names_what_is_wrong(valid, path, value, named):
    obj, text, _ = valid
    with pytest.raises(VanillaProofError, match=named.replace(".", r"\.")):
        checked_output(m.encode(_edit(obj, path, value)))


def test_an_engine_fails_the_job_naming_the_field_before_any_parameters(valid, tmp_path, monkeypatch):
    """A damaged output given to an engine: the job fails naming the field,
    before its parameters are loaded or made (no proof, no 2.7 M-constraint
    setup for an output that was never going to verify)."""
    import porep_prover as pp
    from porep_prover.engine import Job
    from porep_prover.errors import JobFailedError
    from porep_prover.hooks import collect_registry, plugin_manager
    from porep_prover_porep.provider import PorepProvider

    def never(job):
        raise AssertionError("parameters asked for a job whose output does not verify")
    monkeypatch.setattr(PorepProvider, "load_srs", staticmethod(never))
    obj, _, _ = valid
    path = tmp_path / "c1.json"
    path.write_bytes(m.encode(_edit(obj, ("comm_r",), lambda v: [v[0] ^ 1] + v[1:])))
    pm = plugin_manager()
    config = pp.load_config(overrides=["engine.devices=cpu", "engine.partition_workers=1"])
    with pp.Engine(config, registry=collect_registry(pm), plugins=pm) as engine:
        handle = engine.submit(Job("porep", 1, {"c1": str(path), "miner_id": MINER, "sector_id": SECTOR}))
        with pytest.raises(JobFailedError, match="VanillaProofError: comm_r"):
            handle.result(timeout=120)


def test_both_wires_refuse_hostile_outputs_as_invalid_argument(valid, tmp_path):
    """A dozen mutated outputs on the daemon's own service (kind porep, the
    output's path) and on the reference engine's wire (POREP_SEAL_COMMIT,
    curio's wrapper): each INVALID_ARGUMENT at submit, its message naming
    what is wrong; no job is left behind; the daemon answers after them."""
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    from daemon_process import DaemonProcess
    from porep_prover.daemon.cuzk import proving_pb2 as cuzk
    from porep_prover.daemon.cuzk import proving_pb2_grpc
    from porep_prover.daemon.v1 import proving_pb2 as own
    obj, text, _ = valid
    rnd = random.Random()
    cases = [m.encode(m.mutate_object(obj, rnd)[1]) for _ in range(10)] + \
        [m.mutate_text(text.encode(), rnd)[1] for _ in range(4)]
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    settings_ = {"daemon.input_roots": [str(inputs)], "daemon.kinds": ["porep"]}
    with DaemonProcess(tmp_path / "state", settings_) as daemon:
        service, wire = daemon.stub(), proving_pb2_grpc.ProvingEngineStub(daemon.channel())
        for i, case in enumerate(cases):
            if m.outcome(case, text) == "accepted unchanged":
                continue
            path = inputs / f"c1-{i}.json"
            path.write_bytes(case)
            payload = json.dumps({"c1": str(path), "miner_id": MINER, "sector_id": SECTOR}).encode()
            with pytest.raises(grpc.RpcError) as err:
                service.SubmitProof(own.SubmitProofRequest(kind="porep", partitions=1, payload=payload), timeout=60)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
            wrapped = json.dumps({"SectorNum": SECTOR, "SectorSize": 2048,
                                  "Phase1Out": base64.b64encode(case).decode()}).encode()
            with pytest.raises(grpc.RpcError) as err:
                wire.SubmitProof(cuzk.SubmitProofRequest(
                    request_id=f"hostile-{i}", proof_kind=cuzk.POREP_SEAL_COMMIT, registered_proof=NUMBER,
                    sector_size=2048, sector_number=SECTOR, miner_id=MINER, vanilla_proof=wrapped), timeout=60)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
        status = service.GetStatus(own.GetStatusRequest(), timeout=10)
        assert status.jobs_running == 0 and status.accepting
