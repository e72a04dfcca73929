# SPDX-License-Identifier: Apache-2.0
"""The H polynomial's flavors: which Groth16 the H scalars are for. Defined
beside the transforms that make H (ntt/_cpu, ntt/gpu.py), below the
backends whose protocol (backend.base) names it."""
from __future__ import annotations

import enum

from ..errors import InvalidInputError


class Flavor(enum.StrEnum):
    """Whose Groth16 the H scalars are for.

    BELLMAN: the n - 1 coefficients of H = (A B - C) / Z (7-based roots, coset 7).
    SNARKJS: the n values of A B - C on the odd coset omega_2n <omega_n> (5-based roots)."""
    BELLMAN = "bellman"
    SNARKJS = "snarkjs"

    @classmethod
    def of(cls, value: "Flavor | str") -> "Flavor":
        """value as a Flavor (its name as a string accepted); InvalidInputError otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise InvalidInputError(f"flavor {value!r}: one of {', '.join(f.value for f in cls)}") from None

