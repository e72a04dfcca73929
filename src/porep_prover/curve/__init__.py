# SPDX-License-Identifier: Apache-2.0
"""BLS12-381 G1 and G2: point arrays, single points, encodings, checks."""
from .points import G1Array, G1Point, G2Array, G2Point

__all__ = ["G1Array", "G1Point", "G2Array", "G2Point"]
