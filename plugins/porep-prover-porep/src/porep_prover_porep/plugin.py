# SPDX-License-Identifier: Apache-2.0
"""The porep plugin's hooks: the synthesis providers of job kinds "porep"
(Filecoin's StackedDRG circuit over a commit-phase-1 output; provider.py),
"winning-post" and "window-post" (Filecoin's FallbackPoSt circuit over a
PoSt's vanilla proofs; post/provider.py) and "snap-update" (Filecoin's
EmptySectorUpdate circuit over an update's partition proofs; snap/provider.py)."""
from __future__ import annotations

from porep_prover import hookimpl

from .post.provider import PostProvider
from .provider import PorepProvider
from .snap.provider import SnapProvider


@hookimpl
def porep_prover_register_synthesis_providers(registry) -> None:
    registry.add_provider(PorepProvider())
    registry.add_provider(PostProvider("winning"))
    registry.add_provider(PostProvider("window"))
    registry.add_provider(SnapProvider())
