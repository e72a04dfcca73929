# SPDX-License-Identifier: Apache-2.0
"""Filecoin's FallbackPoSt (WinningPoSt and WindowPoSt) for porep_prover:
the registered PoSt proofs (registered), their challenges and public
inputs (challenges), the vanilla proofs as the orchestrator sends them
(bincode) made, verified and laid out in sector slots (vanilla), the
circuit (circuit), the payloads (payload) and the "winning-post" and
"window-post" providers (provider)."""
