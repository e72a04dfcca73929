# SPDX-License-Identifier: Apache-2.0
"""The porep plugin's hooks. It registers no synthesis provider yet: the "porep"
job kind (Filecoin's StackedDRG circuit over a commit-phase-1 output) comes with
the circuit; the primitives, sealing and the vanilla-proof verifier are its
library (porep_prover_porep)."""
from __future__ import annotations

from porep_prover import hookimpl


@hookimpl
def porep_prover_register_synthesis_providers(registry) -> None:
    """Nothing to register until the circuit exists."""
