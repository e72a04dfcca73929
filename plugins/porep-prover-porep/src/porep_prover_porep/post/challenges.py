# SPDX-License-Identifier: Apache-2.0
"""FallbackPoSt's challenges and public inputs, as storage-proofs-post
computes them (fallback/vanilla.rs, utils.rs, compound.rs) and
filecoin-proofs lays them out (post_util.rs, winning_post.rs):

    leaf challenge   u64_le(SHA-256(randomness || sector_id u64 LE || j u64 LE)[0..8]) mod nodes
    j                (partition * sector_count + slot) * challenge_count + n under API
                     version 1.0 (WinningPoSt: j = n, its 66 challenges of one sector;
                     WindowPoSt V1), n under 1.2 (WindowPoSt V1_2)
    winning sector   u64_le(SHA-256(prover_id || randomness || 0 u64 LE)[0..8]) mod the
                     eligible sectors (chosen outside the circuit)

A partition's public inputs (without the one): per slot its sector's comm_r,
then each challenge's leaf index; a WinningPoSt's 66 slots all its one
sector's; a WindowPoSt partition of fewer sectors than slots repeats its last
sector's inputs. The randomness must be a canonical Fr (as_safe_commitment),
as Curio makes it by clearing its top two bits.
"""
from __future__ import annotations

import hashlib
from typing import Sequence

from porep_prover.errors import InvalidInputError

from ..fr32 import R
from .registered import PoStProof

U64 = (1 << 64) - 1


def randomness_of(value) -> bytes:
    """The 32 bytes of a PoSt's randomness; InvalidInputError unless they are a canonical Fr."""
    if not isinstance(value, (bytes, bytearray)) or len(value) != 32:
        raise InvalidInputError(f"randomness is 32 bytes, not {value!r:.80}")
    if int.from_bytes(value, "little") >= R:
        raise InvalidInputError("randomness is not a canonical Fr (its top two bits are set): the orchestrator "
                                "clears them")
    return bytes(value)


def leaf_challenge(randomness: bytes, sector_id: int, j: int, nodes: int) -> int:
    """generate_leaf_challenge: the j-th challenged leaf of a sector."""
    digest = hashlib.sha256(randomness + sector_id.to_bytes(8, "little") + j.to_bytes(8, "little")).digest()
    return int.from_bytes(digest[:8], "little") % nodes


def challenge_index(proof: PoStProof, partition: int, slot: int, n: int) -> int:
    """get_challenge_index: the j of challenge n of a partition's slot."""
    if proof.api_version == "1.2.0":
        return n
    return (partition * proof.sector_count + slot) * proof.challenge_count + n


def sector_challenges(proof: PoStProof, randomness: bytes, sector_id: int, partition: int = 0,
                      slot: int = 0) -> list[int]:
    """The leaves a sector's vanilla proof answers (generate_fallback_sector_challenges):
    a WinningPoSt sector's 66, a WindowPoSt sector's 10 at its slot of its partition."""
    if proof.kind == "winning":
        return [leaf_challenge(randomness, sector_id, n, proof.nodes) for n in range(proof.sector_challenges)]
    return [leaf_challenge(randomness, sector_id, challenge_index(proof, partition, slot, n), proof.nodes)
            for n in range(proof.challenge_count)]


def winning_sector(prover_id: bytes, randomness: bytes, eligible: int) -> int:
    """generate_winning_post_sector_challenge: which of `eligible` sectors a WinningPoSt proves."""
    if eligible < 1:
        raise InvalidInputError("an empty sector set is not proved")
    digest = hashlib.sha256(prover_id + randomness + (0).to_bytes(8, "little")).digest()
    return int.from_bytes(digest[:8], "little") % eligible


def public_inputs(proof: PoStProof, randomness: bytes, sectors: Sequence[tuple[int, int]], partition: int = 0
                  ) -> list[int]:
    """FallbackPoStCompound::generate_public_inputs of one partition, as a
    verifier computes them: sectors are the partition's (sector_id, comm_r)
    (a WinningPoSt's one sector; a WindowPoSt partition's, at most
    sector_count). InvalidInputError for a count that does not fit."""
    if proof.kind == "winning":
        if len(sectors) != 1:
            raise InvalidInputError(f"a WinningPoSt proves 1 sector, not {len(sectors)}")
        sectors = list(sectors) * proof.sector_count        # verify_winning_post: the sector in every slot
    elif not 1 <= len(sectors) <= proof.sector_count:
        raise InvalidInputError(f"a {proof.name} partition proves 1 to {proof.sector_count} sectors, "
                                f"not {len(sectors)}")
    out: list[int] = []
    for slot, (sector_id, comm_r) in enumerate(sectors):
        out.append(comm_r)
        for n in range(proof.challenge_count):
            out.append(leaf_challenge(randomness, sector_id, challenge_index(proof, partition, slot, n), proof.nodes))
    per_slot = 1 + proof.challenge_count
    while len(out) < per_slot * proof.sector_count:
        out += out[-per_slot:]
    return out
