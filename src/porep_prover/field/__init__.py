# SPDX-License-Identifier: Apache-2.0
"""The BLS12-381 fields: Fr (scalars) and Fq (coordinates), constants and vectors."""
from .fr_array import FrArray

__all__ = ["FrArray"]
