# SPDX-License-Identifier: Apache-2.0
"""PoSt vanilla proofs as the orchestrator sends them: FallbackPoStSectorProof
in bincode written and read back, its sizes at 32 GiB (a MerkleProof 2,484
bytes, a WindowPoSt sector 24,960, a WinningPoSt sector 164,064), every
count bounded before anything is allocated and every damage refused with a
VanillaProofError naming the field (truncation, trailing bytes, a huge
count, a foreign tree kind, a position past the arity, an element not below
r, another randomness's challenge, a comm_r or path that does not hash),
random damage refused the same way; the challenges' indexing under API
versions 1.0 and 1.2, the WinningPoSt sector choice and the randomness."""
import hashlib
import struct
import types

import pytest

pytest.importorskip("porep_prover_porep._native")

from porep_prover.errors import InvalidInputError, VanillaProofError  # noqa: E402
from porep_prover_porep.fr32 import R  # noqa: E402
from porep_prover_porep.post import bincode, challenges, vanilla  # noqa: E402
from porep_prover_porep.post.registered import post_proof  # noqa: E402
from porep_prover_porep.trees import SparseTree  # noqa: E402

WINNING_2K, WINDOW_2K = post_proof("StackedDrgWinning2KiBV1"), post_proof("StackedDrgWindow2KiBV1")


def element(rng) -> bytes:
    return rng.randrange(R).to_bytes(32, "little")


def randomness(rng) -> bytes:
    return element(rng)


def sparse_replica(rng, proof, given: int = 8):
    """tree_r_last of the proof's shape, every leaf one value but a few."""
    leaves = {rng.randrange(proof.nodes): element(rng) for _ in range(given)}
    return types.SimpleNamespace(tree_r_last=SparseTree("poseidon", proof.nodes, proof.tree, element(rng), leaves),
                                 comm_c=element(rng))


@pytest.fixture
def winning(rng):
    r = randomness(rng)
    sp = vanilla.sector_proof(WINNING_2K, sparse_replica(rng, WINNING_2K, 64), rng.randrange(1 << 64), r)
    return sp, bincode.write(sp), r


def test_written_and_read_back(rng):
    for name in ("StackedDrgWinning2KiBV1", "StackedDrgWindow8MiBV1_2", "StackedDrgWindow64GiBV1"):
        proof = post_proof(name)
        r = randomness(rng)
        sp = vanilla.sector_proof(proof, sparse_replica(rng, proof), rng.randrange(1 << 64), r)
        assert bincode.read(bincode.write(sp), proof) == sp
        vanilla.verify(proof, [sp], r)
    items = [rng.randbytes(rng.randrange(0, 300)) for _ in range(5)]
    assert bincode.read_list(bincode.write_list(items)) == items


def test_sizes_at_32gib(rng):
    r = randomness(rng)
    for name, size in (("StackedDrgWindow32GiBV1", 24_960), ("StackedDrgWinning32GiBV1", 164_064)):
        proof = post_proof(name)
        sp = vanilla.sector_proof(proof, sparse_replica(rng, proof), 5, r)
        raw = bincode.write(sp)
        assert len(raw) == size
        assert len(bincode.write_merkle(sp.sectors[0].inclusion_proofs[0])) == 2_484
        assert bincode.read(raw, proof) == sp


def refused(data: bytes, proof, where: str, r: bytes | None = None) -> VanillaProofError:
    with pytest.raises(VanillaProofError) as caught:
        sp = bincode.read(data, proof)
        vanilla.verify(proof, [sp], r)
    assert where in str(caught.value), str(caught.value)
    return caught.value


def test_damage_is_refused_naming_the_field(winning, rng):
    sp, raw, r = winning
    refused(raw[:-1], WINNING_2K, "sectors[0].comm_r_last")
    refused(raw + b"\0", WINNING_2K, "bytes past the proof's end")
    refused(raw[:40] + struct.pack("<Q", 2) + raw[48:], WINNING_2K, "vanilla_proof.sectors: 2 elements, 1 expected")
    huge = raw[:48] + struct.pack("<Q", 1 << 60) + raw[56:]
    refused(huge, WINNING_2K, "inclusion_proofs: 1152921504606846976 elements, 66 expected")
    refused(raw[:56] + struct.pack("<I", 1) + raw[60:], WINNING_2K, "inclusion_proofs[0].data: a Sub proof")
    refused(raw[:56] + struct.pack("<I", 7) + raw[60:], WINNING_2K, "tag 7")
    refused(raw, WINDOW_2K, "inclusion_proofs: 66 elements, 10 expected")
    first_index = 56 + 4 + 64 + 8 + 8 + 7 * 32          # tag, root, leaf, path length, hashes length, hashes
    refused(raw[:first_index] + struct.pack("<Q", 8) + raw[first_index + 8:], WINNING_2K, "path[0].index")
    refused(raw[:56 + 4 + 64 + 8] + struct.pack("<Q", 6) + raw[56 + 4 + 64 + 16:], WINNING_2K,
            "path[0].hashes: 6 elements, 7 expected")
    refused(raw, WINNING_2K, "opens leaf", randomness(rng))
    high = (R + 5).to_bytes(32, "little")
    refused(raw[:56 + 4 + 32] + high + raw[56 + 4 + 64:], WINNING_2K, "inclusion_proofs[0].leaf: not below r", r)
    refused(raw[:8] + element(rng) + raw[40:], WINNING_2K, "comm_r is not Poseidon-2", r)
    sibling = 56 + 4 + 64 + 8 + 8 + 32 * 3
    err = refused(raw[:sibling] + element(rng) + raw[sibling + 32:], WINNING_2K, "does not hash up to its root", r)
    assert "inclusion_proofs[0]" in str(err)
    vanilla.verify(WINNING_2K, [bincode.read(raw, WINNING_2K)], r)


def test_random_damage_is_refused_as_bad_input(winning, rng):
    sp, raw, r = winning
    for _ in range(300):
        data = bytearray(raw)
        how = rng.randrange(3)
        at = rng.randrange(len(data))
        if how == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif how == 1:
            del data[at:at + rng.randrange(1, 64)]
        else:
            data[at:at] = rng.randbytes(rng.randrange(1, 64))
        try:
            vanilla.verify(WINNING_2K, [bincode.read(bytes(data), WINNING_2K)], r)
        except VanillaProofError:
            continue
        assert bytes(data) == raw or bincode.read(bytes(data), WINNING_2K) == sp   # a flip that left it valid
    with pytest.raises(VanillaProofError, match="items"):
        bincode.read_list(struct.pack("<Q", 1 << 40))
    with pytest.raises(VanillaProofError, match="needed"):
        bincode.read_list(struct.pack("<QQ", 1, 1 << 40) + b"x")


def leaf(r: bytes, sector: int, j: int, nodes: int) -> int:
    digest = hashlib.sha256(r + struct.pack("<QQ", sector, j)).digest()
    return struct.unpack("<Q", digest[:8])[0] % nodes


def test_challenge_indexing_by_api_version(rng):
    r, sector = randomness(rng), rng.randrange(1 << 64)
    v1, v12 = post_proof("StackedDrgWindow32GiBV1"), post_proof("StackedDrgWindow32GiBV1_2")
    partition, slot = rng.randrange(4), rng.randrange(2349)
    assert challenges.sector_challenges(v1, r, sector, partition, slot) == \
        [leaf(r, sector, (partition * 2349 + slot) * 10 + n, 1 << 30) for n in range(10)]
    assert challenges.sector_challenges(v12, r, sector, partition, slot) == [leaf(r, sector, n, 1 << 30)
                                                                            for n in range(10)]
    winning = post_proof(3)
    assert winning.name == "StackedDrgWinning32GiBV1"
    assert challenges.sector_challenges(winning, r, sector) == [leaf(r, sector, n, 1 << 30) for n in range(66)]
    inputs = challenges.public_inputs(winning, r, [(sector, 12345)])
    assert inputs == [x for n in range(66) for x in (12345, leaf(r, sector, n, 1 << 30))]
    padded = challenges.public_inputs(post_proof("StackedDrgWindow2KiBV1"), r, [(sector, 9)], partition=3)
    first = [9] + [leaf(r, sector, (3 * 2 + 0) * 10 + n, 64) for n in range(10)]
    assert padded == first + first
    with pytest.raises(InvalidInputError, match="1 to 2 sectors, not 3"):
        challenges.public_inputs(post_proof("StackedDrgWindow2KiBV1"), r, [(1, 2)] * 3)


def test_winning_sector_and_randomness(rng):
    prover, r = rng.randbytes(32), randomness(rng)
    digest = hashlib.sha256(prover + r + bytes(8)).digest()
    assert challenges.winning_sector(prover, r, 1000) == struct.unpack("<Q", digest[:8])[0] % 1000
    with pytest.raises(InvalidInputError, match="empty sector set"):
        challenges.winning_sector(prover, r, 0)
    assert challenges.randomness_of(r) == r
    with pytest.raises(InvalidInputError, match="top two bits"):
        challenges.randomness_of(bytes(31) + b"\xc0")
    with pytest.raises(InvalidInputError, match="32 bytes"):
        challenges.randomness_of(bytes(31))


def test_registered_post_proofs_and_their_parameters():
    """The numbers the wire carries and the canonical files' names (parameters.json, v28)."""
    assert [post_proof(n).name for n in (0, 4, 5, 9, 10, 14)] == [
        "StackedDrgWinning2KiBV1", "StackedDrgWinning64GiBV1", "StackedDrgWindow2KiBV1", "StackedDrgWindow64GiBV1",
        "StackedDrgWindow2KiBV1_2", "StackedDrgWindow64GiBV1_2"]
    names = {n: post_proof(n).params_name.split("-")[-1][:8] for n in (0, 3, 4, 5, 8, 9, 13)}
    assert names == {0: "3ea05428", 3: "559e581f", 4: "b6209862", 5: "0170db1f", 8: "0377ded6", 9: "2627e400",
                     13: "0377ded6"}
    assert post_proof(8).params_name.startswith("v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-")
    for bad, kind in ((15, None), ("StackedDrg2KiBV1", None), (5, "winning"), (True, None)):
        with pytest.raises(InvalidInputError, match="is not a registered"):
            post_proof(bad, kind)
