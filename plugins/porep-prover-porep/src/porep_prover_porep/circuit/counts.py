# SPDX-License-Identifier: Apache-2.0
"""What a placed circuit is and holds, counted from its templates without
laying out its matrices: each matrix's entries, the variables A and B read
(the density that shapes the parameters: SrsShape), and the host bytes of
its R1CS, its witness program, its placing and one synthesis. A 32 GiB
partition is counted in seconds where its R1CS (130 M constraints, tens of
GB to lay out) is not built at all; tests hold the counts to the R1CS built
for the small sizes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from porep_prover.engine import SrsShape

from .builder import Shape
from .system import AUX, CONST, INPUT, PORT

SCALAR_BYTES = 32
CHUNK = 1 << 22             # references marked at once
PYTHON_INT_BYTES = 36       # a list slot and an int object of up to 64 bits (a placing's lists)


@dataclass(frozen=True)
class CircuitCounts:
    """A circuit's size: constraints, public inputs with the one, aux variables,
    the entries of A, B and C, the aux variables A reads, the inputs and aux
    variables B reads (bellman's density), its distinct coefficients."""
    constraints: int
    inputs: int
    aux: int
    nonzeros: tuple[int, int, int]
    a_aux: int
    b_inputs: int
    b_aux: int
    coefficients: int

    @property
    def variables(self) -> int:
        return self.inputs + self.aux

    @property
    def domain(self) -> int:
        """The H domain: constraints and one `input * 0 = 0` a public input, to a power of two."""
        return 1 << max(0, (self.constraints + self.inputs - 1).bit_length())

    def srs_shape(self, mapped: bool = False) -> SrsShape:
        """The shape of the bellman-flavoured parameters of the circuit (as
        SrsShape.of_circuit counts it from the R1CS)."""
        b = self.b_inputs + self.b_aux
        return SrsShape(self.domain - 1, self.aux, self.inputs + self.a_aux, b, b, self.inputs, mapped)

    @property
    def r1cs_bytes(self) -> int:
        """Host bytes of the R1CS as Shape.r1cs lays it out (each matrix's int64
        row pointers, uint32 columns and coefficient ids, the coefficient table)
        with its density masks and both queries' int64 maps made."""
        matrices = 3 * 8 * (self.constraints + 1) + 8 * sum(self.nonzeros) + 3 * SCALAR_BYTES * self.coefficients
        queries = self.inputs + self.a_aux + self.b_inputs + self.b_aux
        return matrices + self.inputs + 2 * self.aux + 8 * queries

    def stats(self) -> dict:
        """The circuit by its statistics, as porep-prover plan takes a workload
        (cli.plan_cmds.CircuitStats): the shares of the aux variables A and B
        read, each matrix's entries a constraint."""
        return {"constraints": self.constraints, "inputs": self.inputs, "aux": self.aux,
                "a_density": self.a_aux / max(1, self.aux), "b_density": self.b_aux / max(1, self.aux),
                "nonzeros": tuple(n / max(1, self.constraints) for n in self.nonzeros)}


def _reads(shape: Shape, m: int, tmpl: np.ndarray) -> np.ndarray:
    """Which variables matrix m reads (a mask over the witness, inputs first)."""
    mask = np.zeros(shape.num_inputs + shape.n_aux, bool)
    ports = shape.resolve(np.asarray(shape.ports, np.int64))
    bases = {AUX: (np.asarray(shape.aux_base, np.int64), shape.num_inputs),
             INPUT: (np.asarray(shape.input_base, np.int64), 1), PORT: (np.asarray(shape.port_off, np.int64), 0)}
    for t, tp in enumerate(shape.templates):
        refs = np.unique(tp.refs[m])
        kind, idx = refs & 3, refs >> 2
        mask[0] |= bool((kind == CONST).any())
        sel = np.flatnonzero(tmpl == t)
        for k, (base, offset) in bases.items():
            local = idx[kind == k]
            step = max(1, CHUNK // max(1, len(local)))
            for start in range(0, len(sel) if len(local) else 0, step):
                at = base[sel[start:start + step]][:, None] + local[None, :]
                mask[ports[at] if k == PORT else offset + at] = True
    return mask


def circuit_counts(shape: Shape, coefficients: int) -> CircuitCounts:
    """The counts of a placed circuit whose templates use `coefficients`
    distinct coefficients (template.COEFFICIENTS)."""
    tmpl = np.asarray(shape.tmpl, np.int64)
    instances = np.bincount(tmpl, minlength=len(shape.templates))
    nonzeros = tuple(sum(len(tp.rows[m]) * int(n) for tp, n in zip(shape.templates, instances)) for m in range(3))
    k = shape.num_inputs
    a, b = _reads(shape, 0, tmpl), _reads(shape, 1, tmpl)
    return CircuitCounts(shape.n_constraints, k, shape.n_aux, nonzeros, int(a[k:].sum()), int(b[:k].sum()),
                         int(b[k:].sum()), coefficients)


def placing_bytes(shape: Shape) -> int:
    """Host bytes of a placed circuit kept for its witness: its templates'
    arrays and its placing's lists (the instances, their ports and tasks)."""
    arrays = sum(a.nbytes for tp in shape.templates for a in (*tp.rows, *tp.refs, *tp.coeff, tp.ops, tp.sums))
    entries = 6 * len(shape.tmpl) + len(shape.ports) + len(shape.data) + 3 * len(shape.tasks)
    return arrays + PYTHON_INT_BYTES * entries


def synthesis_bytes(shape: Shape) -> int:
    """Host bytes one partition's synthesis holds beside its witness: the
    generator's bit a variable, the instances' data (collected as Python ints,
    then as Fr) and the placing the collection makes."""
    return shape.num_inputs + shape.n_aux + (PYTHON_INT_BYTES + 28 + SCALAR_BYTES) * shape.n_data \
        + PYTHON_INT_BYTES * len(shape.tmpl)
