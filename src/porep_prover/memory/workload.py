# SPDX-License-Identifier: Apache-2.0
"""A parameter set and its circuit as memory sees them: the one model the
host plan and every device's plan read.

SrsShape is a set's shape: each SRS array's length, the public inputs and
whether the points are mapped from a file, known before the set is made or
read. A provider that can say it (SynthesisProvider's optional
srs_shape(job)) lets the engine plan a set's memory, and refuse a set that
cannot fit, before its parameters are loaded at all (a scale-1 PoRep set is
47 GB and minutes to make); SrsShape.of reads the shape of a loaded set, so
that a plan is always made from a shape, and a provider's word is checked
against what it then loads.

Workload is a shape and what its circuit takes: the circuit's host bytes
and its matrices' device bytes (where a device may evaluate A w, B w, C w).
Everything else a plan reads (the domain, the witness's variables, the a
and b queries' points, the bytes of a partition's arrays) follows from
them, in one place.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..errors import InvalidInputError
from .sizes import POINT_BYTES, SCALAR_BYTES, aligned

if TYPE_CHECKING:
    from numpy.typing import NDArray

ARRAYS = ("h", "l", "a", "b_g1", "b_g2")
GROUPS = {"h": 1, "l": 1, "a": 1, "b_g1": 1, "b_g2": 2}


class InputsKey(Protocol):
    """A verifying key as a shape reads it: its public inputs (the constant one included)."""

    @property
    def num_inputs(self) -> int: ...


class Points(Protocol):
    """An SRS array (curve.points.G1Array, G2Array): its length and its limbs, a row a point."""

    @property
    def limbs(self) -> NDArray[np.uint64]: ...

    def __len__(self) -> int: ...


class PointSets(Protocol):
    """A parameter set's SRS point arrays by name (groth16.keys.Parameters)."""

    @property
    def h(self) -> Points: ...

    @property
    def l(self) -> Points: ...  # noqa: E743 (the parameter set's own name)

    @property
    def a(self) -> Points: ...

    @property
    def b_g1(self) -> Points: ...

    @property
    def b_g2(self) -> Points: ...


class SrsArrays(PointSets, Protocol):
    """A parameter set as a shape reads it: its point arrays and its verifying key."""

    @property
    def vk(self) -> InputsKey: ...


class Circuit(Protocol):
    """A circuit as memory sees it (r1cs.system.R1CS): its host bytes and
    the device bytes its evaluation on a device keeps resident."""

    @property
    def host_bytes(self) -> int: ...

    @property
    def device_bytes(self) -> int: ...


class DensityCircuit(Protocol):
    """A circuit as the shape of its parameters reads it (r1cs.system.R1CS):
    its domain, its variables and the density of its A and B queries."""

    @property
    def domain_size(self) -> int: ...

    @property
    def num_aux(self) -> int: ...

    @property
    def num_inputs(self) -> int: ...

    def density(self) -> Any: ...


@dataclasses.dataclass(frozen=True)
class SrsShape:
    """A parameter set's shape: the points of each SRS array (h, l, a, b_g1,
    b_g2), the public inputs with the constant one (inputs, the verifying
    key's ic), and whether the points are mapped from a file (a .pmap,
    page cache) rather than anonymous memory."""
    h: int
    l: int  # noqa: E741 (the parameter set's own name)
    a: int
    b_g1: int
    b_g2: int
    inputs: int
    mapped: bool = False

    @classmethod
    def of(cls, params: SrsArrays, mapped: bool) -> SrsShape:
        """The shape of a loaded set (mapped: its points are a file mapping)."""
        return cls(len(params.h), len(params.l), len(params.a), len(params.b_g1), len(params.b_g2),
                   params.vk.num_inputs, mapped)

    @classmethod
    def of_circuit(cls, r1cs: DensityCircuit, mapped: bool = False) -> SrsShape:
        """The shape of the bellman-flavoured set made for r1cs (as
        Parameters.check_matches counts it: the points at infinity of a and
        b left out by the circuit's density), without making it."""
        density = r1cs.density()
        b_count = int(density.b_input.sum() + density.b_aux.sum())
        return cls(r1cs.domain_size - 1, r1cs.num_aux, r1cs.num_inputs + int(density.a_aux.sum()), b_count,
                   b_count, r1cs.num_inputs, mapped)

    def count(self, name: str) -> int:
        """The points of array name (one of ARRAYS)."""
        return int(getattr(self, name))


@dataclasses.dataclass(frozen=True)
class PointArray:
    """One array of SRS points a partition's MSMs read once: its name, group and length."""
    name: str
    group: int
    count: int

    @property
    def nbytes(self) -> int:
        return POINT_BYTES[self.group] * self.count


@dataclasses.dataclass(frozen=True)
class Workload:
    """A parameter set by its shape and its circuit by what it takes:
    circuit_bytes, the host bytes the provider keeps for it (None: not
    known before its first partition); matrix_bytes, the device bytes of
    its matrices' CSR arrays and the queries' maps, where a device may
    evaluate A w, B w, C w (0: A w, B w, C w on the host)."""
    shape: SrsShape
    circuit_bytes: int | None = None
    matrix_bytes: int = 0

    def __post_init__(self) -> None:
        if self.matrix_bytes < 0 or (self.circuit_bytes is not None and self.circuit_bytes < 0) \
                or min(self.shape.count(name) for name in ARRAYS) < 0 or self.shape.inputs < 0:
            raise InvalidInputError(f"a workload of negative bytes or points: {self}")

    @classmethod
    def of(cls, params: SrsArrays, r1cs: Circuit | None = None, on_device: bool = False,
           mapped: bool = False) -> Workload:
        """The workload of a loaded set (groth16.keys.Parameters); r1cs,
        on_device: as of_shape's; mapped: its points are a file mapping."""
        return cls.of_shape(SrsShape.of(params, mapped), r1cs, on_device)

    @classmethod
    def of_shape(cls, shape: SrsShape, r1cs: Circuit | None = None, on_device: bool = False) -> Workload:
        """The workload of a set's shape (loaded or not) and, with r1cs, its
        circuit: its host bytes, and where on_device (a device may evaluate
        A w, B w, C w) its matrices' device bytes (R1CS.device_bytes, which
        makes the queries' maps: read after the host bytes)."""
        if r1cs is None:
            return cls(shape)
        held = r1cs.host_bytes
        return cls(shape, held, r1cs.device_bytes if on_device else 0)

    @classmethod
    def estimated(cls, constraints: int, inputs: int, aux: int, a_density: float, b_density: float,
                  nonzeros: tuple[float, float, float], on_device: bool = True, mapped: bool = False,
                  circuit_bytes: int | None = None) -> Workload:
        """The workload of a circuit known by its statistics alone (no
        circuit built): constraints, inputs (the constant one included),
        aux variables, the share of aux variables A and B read, the nonzeros
        a row of A, B, C; on_device: its matrices' estimate counted for a
        device (estimated_matrix_bytes), else none."""
        domain = 1 << max(1, (constraints + inputs - 1).bit_length())
        a_count, b_count = inputs + round(a_density * aux), inputs + round(b_density * aux)
        shape = SrsShape(domain - 1, aux, a_count, b_count, b_count, inputs, mapped)
        matrices = estimated_matrix_bytes(constraints, nonzeros, a_count, b_count) if on_device else 0
        return cls(shape, circuit_bytes, matrices)

    # ------------------------------------------------------------ what follows from the shape

    @property
    def arrays(self) -> tuple[PointArray, ...]:
        """Every SRS array, in ARRAYS' order."""
        return tuple(PointArray(name, GROUPS[name], self.shape.count(name)) for name in ARRAYS)

    def array(self, name: str) -> PointArray:
        """The SRS array called name (one of ARRAYS)."""
        return PointArray(name, GROUPS[name], self.shape.count(name))

    @property
    def mapped(self) -> bool:
        return self.shape.mapped

    @property
    def domain(self) -> int:
        """The H domain: H's points and one."""
        return self.shape.h + 1

    @property
    def variables(self) -> int:
        """The witness's length: the inputs (the constant one included) and the aux variables."""
        return self.shape.inputs + self.shape.l

    @property
    def a_count(self) -> int:
        return self.shape.a

    @property
    def b_count(self) -> int:
        return self.shape.b_g1

    @property
    def map_bytes(self) -> int:
        """The queries' uint32 maps a device keeps to gather their scalars from the witness (A's rows, B's index)."""
        return 4 * (self.shape.l + self.shape.b_g1)

    def array_bytes(self, name: str) -> int:
        return self.array(name).nbytes

    @property
    def srs_bytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    @property
    def witness_bytes(self) -> int:
        return SCALAR_BYTES * self.variables

    @property
    def host_assignment_bytes(self) -> int:
        """A partition whose A w, B w, C w the host evaluates: a, b, c over the
        domain, the witness (the l scalars are a view of it), A's and B's
        query scalars (groth16.prover.HostAssignment)."""
        return SCALAR_BYTES * (3 * self.domain + self.a_count + self.b_count) + self.witness_bytes

    def arena_bytes(self, matvec: bool, gathers: bool = False) -> int:
        """An arena a partition is laid out in (groth16.prover.assignment_bytes):
        its arrays each aligned."""
        rows = [self.variables] if matvec else [self.domain] * 3 + [self.variables] \
            + ([] if gathers else [self.a_count, self.b_count])
        return sum(aligned(SCALAR_BYTES * n) for n in rows)


def estimated_matrix_bytes(constraints: int, nonzeros: tuple[float, float, float], a_count: int,
                           b_count: int) -> int:
    """A circuit's matrices on a device by its statistics: the CSR of A, B, C
    (an int64 row pointer a row, a uint32 column and a uint16 coefficient id
    an entry) and the queries' uint32 maps (A's rows, B's gather)."""
    nnz = round(sum(nonzeros) * constraints)
    return 3 * 8 * (constraints + 1) + 6 * nnz + 4 * (a_count + b_count)
