# SPDX-License-Identifier: Apache-2.0
"""The SnapDeals update's randomness, challenges and public inputs, as
storage-proofs-update computes them (challenges.rs, vanilla.rs, circuit.rs):

    P_gen(a, b)     arity-2 Poseidon (neptune's constants) with the custom domain
                    tag 1 * 2^40 (HashType::Custom(CType::Arbitrary(1)))
    phi             P_gen(comm_d_new, comm_r_old)
    rho(high)       P_gen(phi, high): high the h high bits of a node's index
    challenges      partition k's: b = log2(nodes) - log2(partitions) random bits
                    each, floor(254 / b) from each digest P_gen(comm_r_new, k * D + j)
                    (D digests a partition), little-endian from the digest's bit
                    0, then k appended above them
    public inputs   k | h_select << log2(partitions) (h_select = 2^i where h = hs[i]),
                    comm_r_old, comm_d_new, comm_r_new (after the one)

P_gen is a plain permutation here (a few a partition; 2^h at most to
encode a sector).
"""
from __future__ import annotations

import functools

from porep_prover.errors import InvalidInputError

from .. import poseidon
from ..fr32 import R
from .registered import UpdateProof

GEN_TAG = 1 << 40
CAPACITY = 254


@functools.cache
def _constants() -> tuple[list[int], list[list[int]]]:
    t = 3
    return poseidon.round_constants(2), [[pow(i + t + j, -1, R) for j in range(t)] for i in range(t)]


def gen_hash(a: int, b: int) -> int:
    """P_gen(a, b) of two field elements (ints below r)."""
    rc, mds = _constants()
    state = [GEN_TAG, a, b]
    half, rp = poseidon.FULL_ROUNDS // 2, poseidon.PARTIAL_ROUNDS[2]
    for r in range(poseidon.FULL_ROUNDS + rp):
        state = [(x + rc[3 * r + i]) % R for i, x in enumerate(state)]
        if half <= r < half + rp:
            state[0] = pow(state[0], 5, R)
        else:
            state = [pow(x, 5, R) for x in state]
        state = [sum(mds[j][i] * state[j] for j in range(3)) % R for i in range(3)]
    return state[1]


def phi(comm_d_new: int, comm_r_old: int) -> int:
    return gen_hash(comm_d_new, comm_r_old)


def rho(phi_value: int, high: int) -> int:
    return gen_hash(phi_value, high)


def random_bits(proof: UpdateProof) -> int:
    """Random bits a challenge (those below the partition's)."""
    return proof.challenge_bits - proof.partition_bits


def digests_per_partition(proof: UpdateProof) -> int:
    per = CAPACITY // random_bits(proof)
    return -(-proof.challenges // per)


def challenges(proof: UpdateProof, comm_r_new: int, k: int) -> list[int]:
    """Partition k's challenged nodes (Challenges::new(sector_nodes, comm_r_new, k))."""
    if not 0 <= k < proof.partitions:
        raise InvalidInputError(f"partition {k} of an update of {proof.partitions}")
    b = random_bits(proof)
    per = CAPACITY // b
    out: list[int] = []
    j = k * digests_per_partition(proof)
    while len(out) < proof.challenges:
        digest = gen_hash(comm_r_new, j)
        for i in range(min(per, proof.challenges - len(out))):
            out.append((digest >> (i * b)) & ((1 << b) - 1) | k << b)
        j += 1
    return out


def h_select(proof: UpdateProof, h: int) -> int:
    """2^i for h = hs[i] (the first such i); InvalidInputError for an h not allowed."""
    if h not in proof.hs:
        raise InvalidInputError(f"h {h!r} is not one of {proof.name}'s {sorted(set(proof.hs))}")
    return 1 << proof.hs.index(h)


def public_inputs(proof: UpdateProof, k: int, h: int, comm_r_old: int, comm_d_new: int, comm_r_new: int
                  ) -> list[int]:
    """Partition k's public inputs as a verifier computes them (after the one)."""
    if not 0 <= k < proof.partitions:
        raise InvalidInputError(f"partition {k} of an update of {proof.partitions}")
    return [k | h_select(proof, h) << proof.partition_bits, comm_r_old, comm_d_new, comm_r_new]
