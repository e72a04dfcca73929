# SPDX-License-Identifier: Apache-2.0
"""The interface every compute backend implements."""
from __future__ import annotations

from typing import Protocol

from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..field.fr_array import FrArray


class Backend(Protocol):
    """Kernels the prover needs. Inputs are validated by the caller
    (backend.api); implementations may assume matching lengths and sizes."""

    name: str

    def msm(self, points: G1Array | G2Array, scalars: FrArray, threads: int) -> tuple[G1Point | G2Point, dict]:
        """sum scalars[i] * points[i], and how the scalars were split."""

    def msm_many(self, parts: list[tuple[G1Array | G2Array, FrArray]], threads: int) -> G1Point | G2Point:
        """sum of msm(points, scalars) over parts (all of one group)."""

    def batch_sum(self, points: G1Array | G2Array, threads: int) -> G1Point | G2Point:
        """sum points[i]."""

    def ntt(self, values: FrArray, inverse: bool, coset: bool, threads: int) -> FrArray:
        """Transform of a copy of values (length a power of two)."""

    def h_poly(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: str = "bellman") -> FrArray:
        """The H scalars from A, B, C evaluated on the size-n domain; a, b, c are consumed.
        bellman: the n - 1 coefficients of H = (A B - C) / Z (7-based roots, coset 7).
        snarkjs: the n values of A B - C on the odd coset omega_2n <omega_n> (5-based roots)."""

    def fixed_base(self, base: G1Array | G2Array, scalars: FrArray, threads: int) -> G1Array | G2Array:
        """scalars[i] * base[0] for every i."""
