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

import collections
import threading

from porep_prover.errors import R1CSError, UnsatisfiedError, VanillaProofError
from porep_prover import FrArray
from porep_prover.groth16 import R1CS

from ..proofs import C1Output
from ..registered import PorepConfig, SealProof
from .builder import Builder, Shape
from .counts import CircuitCounts, circuit_counts, placing_bytes, synthesis_bytes
from .stacked import Layout, synthesize
from .values import layout_of, partition_values, public_inputs
from .template import COEFFICIENTS
from .witness import Program

KEEP_CIRCUITS = 2           # circuits a process keeps (a 512 MiB partition's holds ~2 GB of matrices)


class PartitionCircuit:
    """One layout's circuit: its placed shape, and on first use its R1CS and witness program."""

    def __init__(self, layout: Layout):
        self.layout = layout
        builder = Builder()
        synthesize(builder, layout)
        self.shape: Shape = builder.shape
        self._r1cs: R1CS | None = None
        self._program: Program | None = None
        self._counts: CircuitCounts | None = None
        self._lock = threading.Lock()

    @property
    def r1cs(self) -> R1CS:
        with self._lock:
            if self._r1cs is None:
                self._r1cs = self.shape.r1cs()
            return self._r1cs

    @property
    def program(self) -> Program:
        with self._lock:
            if self._program is None:
                self._program = Program(self.shape)
            return self._program

    @property
    def counts(self) -> CircuitCounts:
        """Its size, entries and density, counted from its templates (the R1CS not built)."""
        with self._lock:
            if self._counts is None:
                self._counts = circuit_counts(self.shape, len(COEFFICIENTS.values))
            return self._counts

    @property
    def host_bytes(self) -> int:
        """Host bytes a provider keeps for the circuit once it synthesizes: its
        R1CS (counted, built or not), its witness program and its placing."""
        return self.counts.r1cs_bytes + self.program.nbytes + placing_bytes(self.shape)

    @property
    def synthesis_bytes(self) -> int:
        """Host bytes one partition's synthesis holds beside its witness."""
        return synthesis_bytes(self.shape)

    def data(self, c1: C1Output, k: int) -> list[int]:
        """The values partition k's instances take, in placing order."""
        builder = Builder(data_of=self.shape)
        try:
            synthesize(builder, self.layout, partition_values(c1, k))
        except (R1CSError, ValueError) as exc:
            raise VanillaProofError(f"partition {k} does not fit the {self.layout} circuit: {exc}",
                                    "vanilla_proofs") from None
        if builder.shape.tmpl != self.shape.tmpl or None in builder.shape.data:
            raise VanillaProofError(f"partition {k} does not fit the {self.layout} circuit", "vanilla_proofs")
        return builder.shape.data            # type: ignore[return-value]

    def witness(self, c1: C1Output, k: int, threads: int | None = None, out: FrArray | None = None,
                config: PorepConfig | None = None) -> FrArray:
        """Partition k's witness (the one, the public inputs, the aux), into out when
        given; VanillaProofError when its public inputs are not the ones a verifier
        computes (under config: the job's porep_id and API version, by default the
        registered proof's)."""
        w = self.program.run(self.data(c1, k), threads, out)
        expected = public_inputs(c1, k, config)
        got = w[1:self.shape.num_inputs].to_ints()
        if got != expected:
            bad = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
            raise VanillaProofError(f"public input {bad + 1} of partition {k} is {got[bad]}, a verifier computes "
                                    f"{expected[bad]}", "vanilla_proofs")
        return w

    def check(self, witness: FrArray, entries: int = 1 << 25, threads: int | None = None) -> None:
        """Check a witness against every constraint, the matrices laid out a run of
        instances at a time (about `entries` entries each), so that a circuit too
        large to lay out whole (a 32 GiB partition's) is checked on a small host.
        UnsatisfiedError naming the first constraint not satisfied."""
        shape, start = self.shape, 0
        sizes = [t.nnz for t in shape.templates]
        while start < len(shape.tmpl):
            end, held = start, 0
            while end < len(shape.tmpl) and (end == start or held + sizes[shape.tmpl[end]] <= entries):
                held += sizes[shape.tmpl[end]]
                end += 1
            try:
                shape.r1cs(start, end).check(witness, threads)
            except UnsatisfiedError as exc:
                bad = shape.first_row(start) + max(exc.constraint, 0)
                raise UnsatisfiedError(f"constraint {bad} is not satisfied (instance {start} on)", bad) from None
            start = end


_CIRCUITS: collections.OrderedDict[Layout, PartitionCircuit] = collections.OrderedDict()
_CIRCUITS_LOCK = threading.Lock()


def partition_circuit(proof: SealProof) -> PartitionCircuit:
    """The partition circuit of a registered proof, built on first use in this
    process; the KEEP_CIRCUITS last used are kept."""
    layout = layout_of(proof)
    with _CIRCUITS_LOCK:
        got = _CIRCUITS.get(layout)
        if got is None:
            got = _CIRCUITS[layout] = PartitionCircuit(layout)
        _CIRCUITS.move_to_end(layout)
        while len(_CIRCUITS) > KEEP_CIRCUITS:
            _CIRCUITS.popitem(last=False)
        return got


def shape_counts(layout: Layout) -> dict[str, int]:
    """Constraints, public inputs (with the one) and aux variables of a layout's
    circuit, counted from its templates without building it."""
    builder = Builder()
    synthesize(builder, layout)
    return builder.shape.counts()
