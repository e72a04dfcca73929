# SPDX-License-Identifier: Apache-2.0
"""Filecoin's SnapDeals update (storage-proofs-update's EmptySectorUpdate)
for porep_prover: the registered update proofs (registered), the
randomness Poseidon, phi, rho and the challenges (challenges), the
partition proofs as the orchestrator sends them (bincode), their making
from a sealed replica and new data, and their verifier (vanilla), the
circuit (circuit), the payloads (payload) and the "snap-update" provider
(provider)."""
