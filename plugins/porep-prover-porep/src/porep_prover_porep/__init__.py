# SPDX-License-Identifier: Apache-2.0
"""Filecoin's Proof-of-Replication pieces for porep_prover.

Primitives in native code, each checked against public vectors and a plain
Python reference (porep_prover_porep.reference): Poseidon (poseidon), SHA-256
with fr32 truncation and fr32 padding (fr32), the SDR graph, replica id and
labels (graph), Merkle trees and column hashes (trees). Sealing small sectors
(seal: PC1, PC2, C1 to rust-fil-proofs' SealCommitPhase1Output), its JSON
(c1_json) and a verifier of the vanilla proofs (vanilla); test data (pieces).
"""

# porep_prover first: the OpenMP runtime, which the native module links too, then
# starts under the engine's wait policy (porep_prover.config.openmp_wait_policy)
import porep_prover  # noqa: F401
