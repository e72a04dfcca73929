# SPDX-License-Identifier: Apache-2.0
"""The "winning-post" and "window-post" providers: payloads (the daemon's,
a preload's, the Python API's), vanilla proofs read from a file, bytes or a
list and refused by name before anything is synthesized, and proofs through
an engine on the CPU (INSECURE parameters made for each circuit), each
verified against the public inputs a verifier computes: WinningPoSt and
WindowPoSt (V1 and V1_2, a short partition padded) of a 2 KiB sector sealed
here, WinningPoSt and WindowPoSt of an 8 MiB sparse sector."""
import secrets

import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

import porep_prover as pp  # noqa: E402
from porep_prover.engine import Job  # noqa: E402
from porep_prover.errors import InvalidInputError, VanillaProofError  # noqa: E402
from porep_prover.groth16 import verify  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402
from porep_prover_porep import pieces, seal, sparse  # noqa: E402
from porep_prover_porep.payload import prover_id_of  # noqa: E402
from porep_prover_porep.post import bincode, challenges, vanilla  # noqa: E402
from porep_prover_porep.post.provider import PostProvider  # noqa: E402
from porep_prover_porep.post.registered import post_proof  # noqa: E402

MINER = 1000
WINNING, WINDOW = PostProvider("winning"), PostProvider("window")


def new_randomness() -> bytes:
    r = bytearray(secrets.token_bytes(32))
    r[31] &= 0x3F                      # as the orchestrator clears the top two bits
    return bytes(r)


@pytest.fixture(scope="module")
def sealed_2k():
    data = pieces.sector_data([pieces.random_piece(2048, secrets.randbelow(1 << 32))], 2048)
    pc1 = seal.precommit1("StackedDrg2KiBV1_1", data, prover_id_of(MINER), 7, secrets.token_bytes(32))
    return seal.precommit2(pc1)


@pytest.fixture(scope="module")
def sparse_8m():
    return sparse.sparse_sector("StackedDrg8MiBV1_1", prover_id_of(MINER), 9, secrets.token_bytes(32),
                                secrets.token_bytes(32))


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path_factory.mktemp("params")))
        for kind in ("WINNING", "WINDOW"):
            mp.delenv(f"POREP_PROVER_{kind}_POST_PARAMS", raising=False)
        pm = plugin_manager()
        config = pp.load_config(overrides=["engine.devices=cpu", "engine.partition_workers=1"])
        with pp.Engine(config, registry=collect_registry(pm), plugins=pm) as e:
            yield e


def payload_of(proof, sectors, randomness, partition=0, **over) -> dict:
    """A payload for sectors [(replica, sector id)] at their slots of the partition."""
    raw = [bincode.write(vanilla.sector_proof(proof, replica, sid, randomness, partition, slot))
           for slot, (replica, sid) in enumerate(sectors)]
    return {"vanilla_proofs": bincode.write_list(raw), "registered_proof": proof.number,
            "randomness": randomness.hex(), "partition_index": partition, **over}


def proved(engine, proof, payload) -> None:
    """The job proved by the engine and verified against a verifier's public inputs."""
    provider = WINNING if proof.kind == "winning" else WINDOW
    kind = provider.kinds[0]
    result = engine.prove(Job(kind, 1, payload))
    assert result.ok, result.error
    sps = [bincode.read(x, proof) for x in bincode.read_list(payload["vanilla_proofs"])]
    expected = challenges.public_inputs(proof, bytes.fromhex(payload["randomness"]),
                                        [(sp.sector_id, int.from_bytes(sp.comm_r, "little")) for sp in sps],
                                        payload.get("partition_index", 0))
    assert result.public_inputs == [expected]
    vk = engine.registry.provider(kind).load_srs(Job(kind, 1, {"sector_size": proof.sector_size})).vk
    assert verify(vk, expected, result.proofs[0])
    assert not verify(vk, [expected[0] + 1, *expected[1:]], result.proofs[0])


def test_2kib_winning_and_window_posts_of_a_sector_sealed_here(engine, sealed_2k):
    r = new_randomness()
    winning = post_proof("StackedDrgWinning2KiBV1")
    proved(engine, winning, payload_of(winning, [(sealed_2k, 7)], r))
    v1, v12 = post_proof("StackedDrgWindow2KiBV1"), post_proof("StackedDrgWindow2KiBV1_2")
    proved(engine, v1, payload_of(v1, [(sealed_2k, 7), (sealed_2k, 8)], r, partition=2))
    proved(engine, v12, payload_of(v12, [(sealed_2k, 11)], r, partition=1))       # one sector: padded


def test_8mib_winning_and_window_posts_of_a_sparse_sector(engine, sparse_8m):
    r = new_randomness()
    for name in ("StackedDrgWinning8MiBV1", "StackedDrgWindow8MiBV1_2"):
        proof = post_proof(name)
        proved(engine, proof, payload_of(proof, [(sparse_8m, 9)], r))


def test_payload_forms_and_refusals(sealed_2k, tmp_path):
    proof, r = post_proof("StackedDrgWinning2KiBV1"), new_randomness()
    obj = payload_of(proof, [(sealed_2k, 7)], r, sector_number=7, miner_id=MINER, sector_size=2048)
    items = bincode.read_list(obj["vanilla_proofs"])
    path = tmp_path / "winning.vanilla"
    path.write_bytes(obj["vanilla_proofs"])
    for source in (str(path), obj["vanilla_proofs"], items):
        assert WINNING.parse_payload({**obj, "vanilla_proofs": source}, 1)["randomness"] == r.hex()
    assert WINNING.parse_payload({**obj, "randomness": r}, 1)
    assert WINNING.srs_key(Job("winning-post", 1, obj)) == WINNING.srs_key(Job("winning-post", 1,
                                                                             {"sector_size": 2048}))
    assert WINNING.constraints(obj) == 90_750 and WINDOW.constraints({"sector_size": 2048}) == 21_866
    refusals = [
        ({**obj, "randomness": new_randomness().hex()}, VanillaProofError, "opens leaf"),
        ({**obj, "randomness": "00" * 31 + "c0"}, InvalidInputError, "top two bits"),
        ({**obj, "randomness": "zz"}, InvalidInputError, "64 hex digits"),
        ({k: v for k, v in obj.items() if k != "randomness"}, InvalidInputError, "randomness"),
        ({**obj, "partition_index": 1}, InvalidInputError, "one partition"),
        ({**obj, "registered_proof": 5}, InvalidInputError, "not a registered winning PoSt proof"),
        ({**obj, "sector_size": 4096}, InvalidInputError, "sector_size 4096"),
        ({**obj, "ticket": 1}, InvalidInputError, "unknown keys ticket"),
        ({**obj, "vanilla_proofs": bincode.write_list(items * 2)}, VanillaProofError, "2 sectors' vanilla proofs"),
        ({**obj, "vanilla_proofs": obj["vanilla_proofs"][:-3]}, VanillaProofError, "vanilla_proofs"),
        ({**obj, "vanilla_proofs": str(tmp_path / "missing")}, InvalidInputError, "cannot be read"),
        ({"sector_size": 2048, "randomness": r.hex()}, InvalidInputError, "a preload's sector_size"),
    ]
    for bad, error, match in refusals:
        with pytest.raises(error, match=match):
            WINNING.parse_payload(bad, 1)
    with pytest.raises(InvalidInputError, match="1 partition, not 2"):
        WINNING.parse_payload(obj, 2)
    window = post_proof("StackedDrgWindow2KiBV1")
    three = payload_of(window, [(sealed_2k, 1)], r)
    three["vanilla_proofs"] = bincode.write_list(bincode.read_list(three["vanilla_proofs"]) * 3)
    with pytest.raises(VanillaProofError, match="takes 1 to 2"):
        WINDOW.parse_payload(three, 1)


def test_the_kinds_default_priorities():
    """A job given no priority takes its kind's: WinningPoSt CRITICAL (4), WindowPoSt HIGH (3)."""
    assert [Job(kind, 1).priority for kind in ("winning-post", "window-post", "porep")] == [4, 3, 0]
    assert Job("winning-post", 1, priority=1).priority == 1
