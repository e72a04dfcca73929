# SPDX-License-Identifier: Apache-2.0
"""A circuit placed from its synthesis function, built once and kept: its
shape, and on first use its R1CS, witness program and counts; the witness
of a set of values, its public inputs held to those a verifier computes;
a witness checked a run of instances at a time. The StackedDRG partition
(partition) and the FallbackPoSt partition (post.circuit) are such circuits.

    circuit = PlacedCircuit(lambda b, values: synthesize(b, layout, values))
    circuit.witness(values, expected_inputs, threads)
    kept(key, make)        the circuit of key, made once; the KEEP_CIRCUITS last used kept
"""
from __future__ import annotations

import collections
import threading
from typing import Callable, Hashable, TypeVar

import numpy as np

from porep_prover import FrArray
from porep_prover.errors import JobCancelledError, R1CSError, UnsatisfiedError, VanillaProofError
from porep_prover.groth16 import R1CS

from .builder import Builder, Shape
from .counts import CircuitCounts, circuit_counts, placing_bytes, synthesis_bytes
from .template import COEFFICIENTS
from .witness import Program

KEEP_CIRCUITS = 2           # circuits a process keeps (a 512 MiB PoRep partition's holds ~2 GB of matrices)
Synthesis = Callable[[Builder, object], None]


class PlacedCircuit:
    """A circuit of synthesize(builder, values) (values None: its shape), placed
    once; its R1CS, witness program and counts made on first use."""

    def __init__(self, synthesize: Synthesis, name: str = "circuit"):
        self.synthesize, self.name = synthesize, name
        builder = Builder()
        synthesize(builder, None)
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
        """Host bytes one synthesis holds beside its witness."""
        return synthesis_bytes(self.shape)

    def data_of(self, values, what: str) -> list[int]:
        """The values the instances take, in placing order; VanillaProofError
        (naming what) when values do not fit the circuit."""
        builder = Builder(data_of=self.shape)
        try:
            self.synthesize(builder, values)
        except (R1CSError, ValueError) as exc:
            raise VanillaProofError(f"{what} does not fit the {self.name}: {exc}", "vanilla_proofs") from None
        if builder.shape.tmpl != self.shape.tmpl or None in builder.shape.data:
            raise VanillaProofError(f"{what} does not fit the {self.name}", "vanilla_proofs")
        return builder.shape.data            # type: ignore[return-value]

    def witness(self, values, expected: list[int], what: str, threads: int | None = None,
                out: FrArray | None = None, stop: np.ndarray | None = None) -> FrArray:
        """The witness of values (the one, the public inputs, the aux), into out
        when given; VanillaProofError when its public inputs are not expected
        (those a verifier computes). stop: a job's stop flag (Job.stop.array),
        read after the values are placed and by the native generator before
        each instance: once set, JobCancelledError."""
        data = self.data_of(values, what)
        if stop is not None and stop[0]:
            raise JobCancelledError(f"the witness of {what} stopped: its job has ended")
        w = self.program.run(data, threads, out, stop)
        got = w[1:self.shape.num_inputs].to_ints()
        if got != expected:
            bad = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
            shown = (got[bad] if bad < len(got) else None, expected[bad] if bad < len(expected) else None)
            raise VanillaProofError(f"public input {bad + 1} of {what} is {shown[0]}, a verifier computes "
                                    f"{shown[1]}", "vanilla_proofs")
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


C = TypeVar("C", bound=PlacedCircuit)
_KEPT: collections.OrderedDict[Hashable, PlacedCircuit] = collections.OrderedDict()
_KEPT_LOCK = threading.Lock()


def kept(key: Hashable, make: Callable[[], C]) -> C:
    """The circuit of key, made on first use in this process; the
    KEEP_CIRCUITS last used (of every kind) are kept."""
    with _KEPT_LOCK:
        got = _KEPT.get(key)
        if got is None:
            got = _KEPT[key] = make()
        _KEPT.move_to_end(key)
        while len(_KEPT) > KEEP_CIRCUITS:
            _KEPT.popitem(last=False)
        return got                                       # type: ignore[return-value]
