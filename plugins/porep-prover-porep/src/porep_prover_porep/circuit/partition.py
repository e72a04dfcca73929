# SPDX-License-Identifier: Apache-2.0
"""A registered proof's partition circuit, built once and kept, and the
witness of a commit-phase-1 output's partition.

    circuit = partition_circuit(seal_proof("StackedDrg2KiBV1_1"))
    circuit.r1cs                         the CSR matrices (built on first use)
    circuit.counts                       its size and density, counted without building the R1CS
    circuit.witness(c1, k, threads)      partition k's witness: inputs first (config: the job's porep_id)
    circuit.check(witness, entries)      the witness against the constraints, laid out a run at a time
    shape_counts(layout)                 constraints, inputs, aux of a shape, nothing built

The witness's public inputs are checked against storage-proofs-porep's
generate_public_inputs computed from the output's public values alone;
VanillaProofError when they differ (a path that is not the graph's).
"""
from __future__ import annotations

import numpy as np

from porep_prover import FrArray

from ..proofs import C1Output
from ..registered import PorepConfig, SealProof
from .builder import Builder
from .placed import KEEP_CIRCUITS, PlacedCircuit, kept
from .stacked import Layout, synthesize
from .values import layout_of, partition_values, public_inputs

__all__ = ["KEEP_CIRCUITS", "PartitionCircuit", "partition_circuit", "shape_counts"]


class PartitionCircuit(PlacedCircuit):
    """One layout's circuit: its placed shape, and on first use its R1CS and witness program."""

    def __init__(self, layout: Layout):
        super().__init__(lambda b, values: synthesize(b, layout, values), f"{layout} circuit")
        self.layout = layout

    def data(self, c1: C1Output, k: int) -> list[int]:
        """The values partition k's instances take, in placing order."""
        return self.data_of(partition_values(c1, k), f"partition {k}")

    def witness(self, c1: C1Output, k: int, threads: int | None = None,      # type: ignore[override]
                out: FrArray | None = None, config: PorepConfig | None = None,
                stop: np.ndarray | None = None) -> FrArray:
        """Partition k's witness (the one, the public inputs, the aux), into out when
        given; VanillaProofError when its public inputs are not the ones a verifier
        computes (under config: the job's porep_id and API version, by default the
        registered proof's). stop: the job's stop flag (PlacedCircuit.witness)."""
        return super().witness(partition_values(c1, k), public_inputs(c1, k, config), f"partition {k}", threads,
                               out, stop)


def partition_circuit(proof: SealProof) -> PartitionCircuit:
    """The partition circuit of a registered proof, built on first use in this
    process; the KEEP_CIRCUITS last used are kept."""
    layout = layout_of(proof)
    return kept(("porep", layout), lambda: PartitionCircuit(layout))


def shape_counts(layout: Layout) -> dict[str, int]:
    """Constraints, public inputs (with the one) and aux variables of a layout's
    circuit, counted from its templates without building it."""
    builder = Builder()
    synthesize(builder, layout)
    return builder.shape.counts()
