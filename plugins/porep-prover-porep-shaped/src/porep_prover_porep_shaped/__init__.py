# SPDX-License-Identifier: Apache-2.0
"""Synthetic PoRep-C2-shaped partitions for the porep-prover engine (job kind "porep-shaped")."""
from .circuit import PARTITION, TARGET, build, counts, statistics, witness

__all__ = ["PARTITION", "TARGET", "build", "counts", "statistics", "witness"]
