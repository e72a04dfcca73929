# SPDX-License-Identifier: Apache-2.0
"""The toy circuit of rust-fil-proofs' stacked_circuit.rs: a sector of 8
nodes, tree_c and tree_r_last of arity 8 (one level), 2 layers, 1 challenge,
porep_id [44; 32], API version 1.1; sealed here from seeded random data.
1,199,620 constraints and 22 public inputs."""
from __future__ import annotations

import numpy as np

from .. import graph
from ..fr32 import FR32_MASK
from ..proofs import C1Output
from ..registered import SealProof
from ..seal import PreCommit1, precommit2, vanilla_proof
from ..trees import sha256_tree
from .stacked import Layout

PROOF = SealProof("StackedDrgToy", -1, 8 * 32, True, 2, 1, 1, (8, 0, 0))
LAYOUT = Layout(PROOF.layers, 1, PROOF.nodes, PROOF.tree)
POREP_ID = bytes([44] * 32)


def toy_output(seed: int = 0) -> C1Output:
    """A commit-phase-1 output of one partition and one challenge over a toy sector."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, (PROOF.nodes, 32), dtype=np.uint8)
    data[:, 31] &= FR32_MASK
    replica_id = bytearray(rng.bytes(32))
    replica_id[31] &= FR32_MASK
    parents = graph.parents_table(PROOF.nodes, POREP_ID, True)
    labels = graph.labels(bytes(replica_id), PROOF.layers, parents)
    sealed = precommit2(PreCommit1(PROOF, data, sha256_tree(data), bytes(replica_id), parents, labels))
    challenge = int(rng.integers(1, PROOF.nodes))
    seed_bytes = bytes(32)
    return C1Output(PROOF.name, ((vanilla_proof(sealed, challenge),),), sealed.comm_r, sealed.comm_d,
                    bytes(replica_id), seed_bytes, bytes(32))
