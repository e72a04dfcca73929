# SPDX-License-Identifier: Apache-2.0
"""The SnapDeals update's partition proofs: bincode written and read back
(2 KiB of a sector sealed and updated here; the 32 and 64 GiB sizes of
sparse replicas), hostile bytes refused by name before anything is
allocated, random damage always refused (by the reader or the verifier),
proofs of another partition, h or commitments refused, the payloads'
commitment forms (32 bytes, hex, curio's CIDs) and refusals, the
parameters' names."""
import random
import secrets
import struct

import pytest

from porep_prover.errors import InvalidInputError, VanillaProofError
from porep_prover_porep import pieces, seal
from porep_prover_porep.fr32 import R, to_int
from porep_prover_porep.payload import prover_id_of
from porep_prover_porep.post.bincode import read_list, write_list
from porep_prover_porep.snap import bincode, challenges, vanilla
from porep_prover_porep.snap.payload import SnapPayload, commitment_cid, commitment_of
from porep_prover_porep.snap.provider import SnapProvider
from porep_prover_porep.snap.registered import REGISTERED_UPDATE, update_proof
from porep_prover_porep.snap.update import sparse_update, update

TWO_KIB = REGISTERED_UPDATE["StackedDrg2KiBV1"]


@pytest.fixture(scope="module")
def updated():
    data = pieces.sector_data([pieces.random_piece(2048, secrets.randbelow(1 << 32))], 2048)
    sealed = seal.precommit2(seal.precommit1("StackedDrg2KiBV1_1", data, prover_id_of(1000), 5, bytes(32)))
    return update(sealed, pieces.sector_data([pieces.random_piece(2048, secrets.randbelow(1 << 32))], 2048))


def comms(u) -> tuple[int, int, int]:
    return to_int(u.comm_r_old), to_int(u.comm_d_new), to_int(u.comm_r_new)


def payload_of(u, **over) -> dict:
    return {"vanilla_proofs": write_list([bincode.write(p) for p in u.partition_proofs()]),
            "registered_proof": u.proof.number, "comm_r_old": u.comm_r_old.hex(), "comm_d_new": u.comm_d_new.hex(),
            "comm_r_new": u.comm_r_new.hex(), **over}


def element(seed: bytes) -> bytes:
    return (int.from_bytes(seed * 2, "little") % R).to_bytes(32, "little")


def test_round_trip_and_sizes(updated):
    pp = updated.partition_proof(0)
    raw = bincode.write(pp)
    assert len(raw) == 15_064 and bincode.read(raw, TWO_KIB) == pp
    vanilla.verify(TWO_KIB, pp, 0, updated.h, *comms(updated))
    for name, size in (("StackedDrg32GiBV1", 561_768), ("StackedDrg64GiBV1", 575_528)):
        proof = REGISTERED_UPDATE[name]
        s = sparse_update(proof, element(b"leaf" * 8), element(b"comm_c" * 6))
        pp = s.partition_proof(15)
        raw = bincode.write(pp)
        assert len(raw) == size
        vanilla.verify(proof, bincode.read(raw, proof), 15, s.h, *comms(s))


def test_hostile_bytes_are_refused_by_name(updated):
    raw = bincode.write(updated.partition_proof(0))
    apex_count = 32
    first_proof = apex_count + 8 + 8 * 32 + 8
    cases = [
        (raw[:-1], "challenge_proofs[9].proof_r_new.path[1].index"),
        (raw + b"\0", "past the proof's end"),
        (raw[:apex_count] + struct.pack("<Q", 1 << 62) + raw[apex_count + 8:], "apex_leafs"),
        (raw[:first_proof - 8] + struct.pack("<Q", 11) + raw[first_proof:], "challenge_proofs"),
        (raw[:first_proof] + struct.pack("<I", 7) + raw[first_proof + 4:], "proof_r_old.data"),
        (raw[:first_proof] + struct.pack("<I", 1) + raw[first_proof + 4:], "proof_r_old.data"),
        (raw[:20], "comm_c"),
        (b"", "comm_c"),
    ]
    # the first TreeR path's first level: tag, root, leaf, the path's count, then 7 siblings' count
    level = first_proof + 4 + 64 + 8
    cases.append((raw[:level] + struct.pack("<Q", 8) + raw[level + 8:], "proof_r_old.path[0].hashes"))
    index = level + 8 + 7 * 32
    cases.append((raw[:index] + struct.pack("<Q", 8) + raw[index + 8:], "proof_r_old.path[0].index"))
    for data, where in cases:
        with pytest.raises(VanillaProofError, match=r"\w") as caught:
            bincode.read(data, TWO_KIB)
        assert where in f"{caught.value.where} {caught.value}", (where, caught.value.where, str(caught.value))
    with pytest.raises(VanillaProofError, match="bytes expected"):
        bincode.read("not bytes", TWO_KIB)                    # type: ignore[arg-type]
    with pytest.raises(VanillaProofError, match="at most"):
        bincode.read(bytes(bincode.MAX_BYTES + 1), TWO_KIB)


def test_random_damage_is_always_refused(updated):
    raw = bincode.write(updated.partition_proof(0))
    rng = random.Random(52)
    for _ in range(300):
        at = rng.randrange(len(raw))
        bad = bytearray(raw)
        bad[at] ^= 1 << rng.randrange(8)
        with pytest.raises(VanillaProofError):
            vanilla.verify(TWO_KIB, bincode.read(bytes(bad), TWO_KIB), 0, updated.h, *comms(updated))


def test_other_statements_are_refused(updated):
    pp = updated.partition_proof(0)
    old, d_new, new = comms(updated)
    with pytest.raises(VanillaProofError, match="comm_r_old"):
        vanilla.verify(TWO_KIB, pp, 0, updated.h, (old + 1) % R, d_new, new)
    with pytest.raises(VanillaProofError, match="opens leaf|root"):
        vanilla.verify(TWO_KIB, pp, 0, updated.h, old, (d_new + 1) % R, new)
    with pytest.raises(InvalidInputError, match="partition 1"):
        vanilla.verify(TWO_KIB, pp, 1, updated.h, old, d_new, new)
    with pytest.raises(InvalidInputError, match="h 7"):
        vanilla.verify(TWO_KIB, pp, 0, 7, old, d_new, new)
    eight = REGISTERED_UPDATE["StackedDrg8MiBV1"]
    s = sparse_update(eight, element(b"l" * 16), element(b"c" * 16), h=10)
    pp8 = s.partition_proof(2)
    with pytest.raises(VanillaProofError, match="opens leaf"):
        vanilla.verify(eight, pp8, 1, 10, *comms(s))
    vanilla.verify(eight, pp8, 2, 10, *comms(s))              # all-zero data: every h encodes the same


def test_payload_forms_and_refusals(updated, tmp_path):
    obj = payload_of(updated, sector_size=2048, sector_number=5, miner_id=1000)
    provider = SnapProvider()
    path = tmp_path / "u.vanilla"
    path.write_bytes(obj["vanilla_proofs"])
    cids = {name: commitment_cid(to_int(getattr(updated, name)), name)
            for name in ("comm_r_old", "comm_d_new", "comm_r_new")}
    for form in (obj, {**obj, "vanilla_proofs": str(path)}, {**obj, **{k: v.hex() for k, v in cids.items()}},
                 {**obj, **cids}, {**obj, "registered_proof": "StackedDrg2KiBV1", "h": 1}):
        assert provider.parse_payload(form, 1)
    assert SnapPayload.of(obj).public_inputs(0) == challenges.public_inputs(TWO_KIB, 0, 1, *comms(updated))
    assert cids["comm_d_new"].hex().startswith("0181e203922020")          # CIDv1, fil-commitment-unsealed
    assert cids["comm_r_new"].hex().startswith("0182e20381e80220")        # fil-commitment-sealed, poseidon
    assert provider.partitions({"sector_size": 32 << 30}) == 16 and provider.constraints(obj) == 1_705_039
    assert provider.parse_payload({"sector_size": 32 << 30}, 1) == {"sector_size": 32 << 30}     # a preload's
    refusals = [
        ({**obj, "comm_r_old": cids["comm_d_new"]}, InvalidInputError, "sealed commitment's CID"),
        ({**obj, "comm_d_new": "zz"}, InvalidInputError, "comm_d_new must be hex"),
        ({**obj, "comm_r_new": "ff" * 32}, InvalidInputError, "canonical Fr"),
        ({k: v for k, v in obj.items() if k != "comm_r_new"}, InvalidInputError, "comm_r_new"),
        ({**obj, "comm_r_new": obj["comm_r_old"]}, VanillaProofError, "comm_r_new|opens leaf"),
        ({**obj, "h": 10}, InvalidInputError, "h 10"),
        ({**obj, "registered_proof": 5}, InvalidInputError, "not a registered update proof"),
        ({**obj, "sector_size": 4096}, InvalidInputError, "sector_size 4096"),
        ({**obj, "randomness": "00"}, InvalidInputError, "unknown keys randomness"),
        ({**obj, "vanilla_proofs": write_list(read_list(obj["vanilla_proofs"]) * 2)}, VanillaProofError,
         "2 partition proofs"),
        ({**obj, "vanilla_proofs": obj["vanilla_proofs"][:-3]}, VanillaProofError, "vanilla_proofs"),
        ({"sector_size": 2048, "comm_r_old": "00" * 32}, InvalidInputError, "a preload's sector_size"),
    ]
    for bad, error, match in refusals:
        with pytest.raises(error, match=match):
            provider.parse_payload(bad, 1)
    with pytest.raises(InvalidInputError, match="1 partition"):
        provider.parse_payload(obj, 16)
    assert commitment_of(cids["comm_r_old"], "comm_r_old") == to_int(updated.comm_r_old)


def test_registered_proofs_and_parameters_names():
    assert [p.number for p in REGISTERED_UPDATE.values()] == [0, 1, 2, 3, 4]
    assert [(p.partitions, p.challenges, p.apex_leaves, p.default_h) for p in REGISTERED_UPDATE.values()] == [
        (1, 10, 8, 1), (4, 10, 128, 10), (16, 86, 128, 10), (16, 86, 128, 10), (16, 86, 128, 10)]
    names = {n: update_proof(n).params_name for n in ("StackedDrg2KiBV1", "StackedDrg32GiBV1", "StackedDrg64GiBV1")}
    assert names["StackedDrg2KiBV1"].startswith("v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-fb9e095b")
    assert names["StackedDrg32GiBV1"].startswith("v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-3b7f44a9")
    assert names["StackedDrg64GiBV1"].startswith("v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-102e1444")
    with pytest.raises(InvalidInputError, match="0 StackedDrg2KiBV1"):
        update_proof(9)


def test_a_stopped_jobs_witness_ends(updated):
    from porep_prover.engine import Job
    from porep_prover.errors import JobCancelledError
    job = Job("snap-update", 1, payload_of(updated))
    provider = SnapProvider()
    assert provider.synthesize(job, 0, 1)[1][0] == 1
    job.stop.set()
    with pytest.raises(JobCancelledError):
        provider.synthesize(job, 0, 1)
