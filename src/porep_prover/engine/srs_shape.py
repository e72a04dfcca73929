# SPDX-License-Identifier: Apache-2.0
"""A parameter set's shape: the lengths of its SRS arrays, its public
inputs and whether its points are mapped from a file; what the memory plans
read of a set, known before the set is made or read.

A provider that can say it (SynthesisProvider's optional srs_shape(job))
lets the engine plan a set's host memory, and refuse a set that cannot fit,
before its parameters are loaded at all (a scale-1 PoRep set is 47 GB and
minutes to make). SrsShape.of reads the shape of a loaded set, so that the
plan is always made from a shape, and a provider's word is checked against
what it then loads.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..groth16.keys import Parameters
    from ..r1cs.system import R1CS

ARRAYS = ("h", "l", "a", "b_g1", "b_g2")
GROUPS = {"h": 1, "l": 1, "a": 1, "b_g1": 1, "b_g2": 2}


@dataclasses.dataclass(frozen=True)
class ShapePoints:
    """An SRS array by its group and length alone (what a device plan reads of one)."""
    GROUP: int
    count: int

    def __len__(self) -> int:
        return self.count


@dataclasses.dataclass(frozen=True)
class ShapeKey:
    """A verifying key by its public inputs alone (the constant one included)."""
    num_inputs: int


@dataclasses.dataclass(frozen=True)
class ShapeArrays:
    """A set's arrays as a backend's device_plan reads them (lengths and
    groups; backend.device_plan.SrsArrays), with no point in them."""
    vk: ShapeKey
    h: ShapePoints
    l: ShapePoints  # noqa: E741 (the parameter set's own name)
    a: ShapePoints
    b_g1: ShapePoints
    b_g2: ShapePoints


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
    def of(cls, params: Parameters, mapped: bool) -> SrsShape:
        """The shape of a loaded set (mapped: its points are a file mapping)."""
        return cls(len(params.h), len(params.l), len(params.a), len(params.b_g1), len(params.b_g2),
                   params.vk.num_inputs, mapped)

    @classmethod
    def of_circuit(cls, r1cs: R1CS, mapped: bool = False) -> SrsShape:
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

    def arrays(self) -> ShapeArrays:
        """The set's arrays by length and group: what a backend's device_plan
        is given in place of the set's points, before they exist."""
        points = {name: ShapePoints(GROUPS[name], self.count(name)) for name in ARRAYS}
        return ShapeArrays(ShapeKey(self.inputs), **points)
