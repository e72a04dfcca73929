# SPDX-License-Identifier: Apache-2.0
"""The porep plugin's hooks: the synthesis provider of job kind "porep"
(Filecoin's StackedDRG circuit over a commit-phase-1 output; provider.py)."""
from __future__ import annotations

from porep_prover import hookimpl

from .provider import PorepProvider


@hookimpl
def porep_prover_register_synthesis_providers(registry) -> None:
    registry.add_provider(PorepProvider())
