# SPDX-License-Identifier: Apache-2.0
"""The porep circuit counted without building it (circuit.counts): equal to
the R1CS built at 2 KiB and 8 MiB (entries, the parameters' shape, host
bytes); `porep-prover plan -t porep` plans a partition by those counts, its
circuit at least the R1CS's own bytes and its synthesis's scratch counted,
and shows a 32 GiB partition's plan with no parameters made."""
import re

import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover.cli import build_parser, main, plan_cmds  # noqa: E402
from porep_prover.engine import Job, SrsShape  # noqa: E402
from porep_prover_porep.circuit.partition import partition_circuit  # noqa: E402
from porep_prover_porep.provider import PorepProvider  # noqa: E402
from porep_prover_porep.registered import seal_proof  # noqa: E402

GIB = 1 << 30


@pytest.mark.parametrize("name", ["StackedDrg2KiBV1_1", "StackedDrg8MiBV1_1"])
def test_the_counts_are_the_built_r1css(name):
    circuit = partition_circuit(seal_proof(name))
    counts, r1cs = circuit.counts, circuit.r1cs
    assert counts.nonzeros == (r1cs.a.nnz, r1cs.b.nnz, r1cs.c.nnz)
    assert (counts.constraints, counts.inputs, counts.aux) == (r1cs.num_constraints, r1cs.num_inputs, r1cs.num_aux)
    assert counts.srs_shape() == SrsShape.of_circuit(r1cs)
    job = Job("porep", 1, {"sector_size": seal_proof(name).sector_size})
    assert PorepProvider.srs_shape(job) == SrsShape.of_circuit(r1cs)
    r1cs.query_index("a"), r1cs.query_index("b")        # the maps an engine makes, counted
    assert counts.r1cs_bytes == r1cs.host_bytes
    assert PorepProvider.circuit_bytes(job) >= r1cs.host_bytes + circuit.program.nbytes


def _plan(argv: list[str]):
    return plan_cmds.choose(build_parser().parse_args(["plan", "-t", "porep", *argv]))


@pytest.mark.parametrize("devices", ["0", "1"])
def test_the_plan_counts_the_circuit_and_a_synthesis(devices):
    """The plan's circuit is at least the R1CS's own bytes (and the witness
    program's); a running synthesis holds the provider's scratch."""
    stats, chosen = _plan(["--sector-size", "2048", "--host-memory-gib", "64", "--devices", devices])
    circuit = partition_circuit(seal_proof("StackedDrg2KiBV1_1"))
    r1cs = circuit.r1cs
    r1cs.query_index("a"), r1cs.query_index("b")
    held = {item.name: item for item in chosen.plan.held}
    assert held["circuit"].total >= r1cs.host_bytes + circuit.program.nbytes
    scratch = PorepProvider.synthesis_bytes(Job("porep", 1, {"sector_size": 2048}))
    assert scratch >= r1cs.num_variables and chosen.plan.synthesis is not None
    assert chosen.plan.synthesis.nbytes >= scratch
    assert stats["constraints"] == r1cs.num_constraints and stats["aux"] == r1cs.num_aux


def test_the_plan_of_a_32gib_partition_makes_no_parameters(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path))
    assert main(["plan", "-t", "porep", "--host-memory-gib", "256", "--device-memory-gib", "80"]) == 0
    out = capsys.readouterr().out
    assert "130,278,541 constraints, 130,169,893 aux variables" in out
    counts = partition_circuit(seal_proof("StackedDrg32GiBV1_1")).counts
    circuit_gib = float(re.search(r"\n  circuit +([0-9.]+) GiB", out)[1])
    assert circuit_gib * GIB >= counts.r1cs_bytes - 0.01 * GIB and "a synthesis running" in out
    shape = counts.srs_shape()
    for name in ("a", "b_g1"):
        assert re.search(rf"\n  {name} +{shape.count(name):,} points", out)
    assert not list(tmp_path.iterdir())
    assert main(["plan", "-t", "porep", "--scale", "0.5"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
