# SPDX-License-Identifier: Apache-2.0
"""The native witness generator reads a job's stop flag before each
instance: a clear flag changes no witness, a set one ends the run with
JobCancelledError, and the provider hands it the job's (Job.stop), so a
partition of a job that has ended is not synthesized."""
import numpy as np
import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover.engine import Job  # noqa: E402
from porep_prover.errors import JobCancelledError  # noqa: E402
from porep_prover_porep import c1_json, sparse  # noqa: E402
from porep_prover_porep.circuit.partition import partition_circuit  # noqa: E402
from porep_prover_porep.payload import prover_id_of  # noqa: E402
from porep_prover_porep.provider import PorepProvider  # noqa: E402
from porep_prover_porep.registered import seal_proof  # noqa: E402

PROOF = seal_proof("StackedDrg2KiBV1_1")


@pytest.fixture(scope="module")
def output():
    return sparse.sparse_c1(PROOF.name, prover_id_of(1000), 7, bytes(31) + b"\0", bytes([3] * 32))


def test_a_clear_flag_changes_no_witness_and_a_set_one_stops_the_run(output):
    circuit = partition_circuit(PROOF)
    data = circuit.data(output, 0)
    plain = circuit.program.run(data, 2)
    assert circuit.program.run(data, 2, stop=np.zeros(1, np.int32)) == plain
    with pytest.raises(JobCancelledError, match="stopped"):
        circuit.program.run(data, 2, stop=np.ones(1, np.int32))
    with pytest.raises(JobCancelledError):
        circuit.witness(output, 0, 2, stop=np.ones(1, np.int32))


def test_the_provider_stops_the_synthesis_of_a_job_that_has_ended(output, tmp_path):
    c1_json.write(output, tmp_path / "c1.json")
    job = Job("porep", 1, {"c1": str(tmp_path / "c1.json"), "miner_id": 1000, "sector_id": 7})
    _, witness = PorepProvider.synthesize(job, 0, 2)
    assert witness == partition_circuit(PROOF).witness(output, 0, 2)
    job.ended = True                       # as the engine marks a job it has cancelled
    with pytest.raises(JobCancelledError):
        PorepProvider.synthesize(job, 0, 2)
