# SPDX-License-Identifier: Apache-2.0
"""Sealing 2 KiB sectors: comm_d and comm_r against the references, the C1 output's JSON
in rust-fil-proofs' layout, read back and verified; any damage is named."""
import hashlib
import json
import random

import pytest

pytest.importorskip("porep_prover_porep._native")

from porep_prover.errors import InvalidInputError, VanillaProofError  # noqa: E402
from porep_prover_porep import c1_json, pieces, seal, vanilla  # noqa: E402
from porep_prover_porep import reference as ref  # noqa: E402
from porep_prover_porep.fr32 import R, from_int, to_int, truncate  # noqa: E402
from porep_prover_porep.circuit import values  # noqa: E402
from porep_prover_porep.registered import PorepConfig, porep_config, seal_proof  # noqa: E402

PROVER, SECTOR, TICKET, SEED = bytes(range(32)), 4242, bytes([7] * 32), bytes([9] * 32)
ZERO_2KIB_COMM_D = "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833"   # filecoin-proofs pieces.rs


@pytest.fixture(scope="module")
def zero_c1():
    return seal.seal_sector(pieces.zero_piece(2048), "StackedDrg2KiBV1_1", PROVER, SECTOR, TICKET, SEED)


def test_zero_sector_comm_d_and_json_layout(zero_c1):
    assert zero_c1.comm_d.hex() == ZERO_2KIB_COMM_D
    text = c1_json.dumps(zero_c1)
    assert " " not in text                  # serde_json's compact form
    obj = json.loads(text)
    assert list(obj) == ["registered_proof", "vanilla_proofs", "comm_r", "comm_d", "replica_id", "seed", "ticket"]
    assert obj["registered_proof"] == "StackedDrg2KiBV1_1" and list(obj["vanilla_proofs"]) == ["StackedDrg2KiBV1"]
    assert obj["comm_d"] == list(bytes.fromhex(ZERO_2KIB_COMM_D)) and obj["seed"] == list(SEED)
    partitions = obj["vanilla_proofs"]["StackedDrg2KiBV1"]
    assert len(partitions) == 1 and len(partitions[0]) == 2          # 1 partition of 2 challenges
    proof = partitions[0][0]
    assert list(proof) == ["comm_d_proofs", "comm_r_last_proof", "replica_column_proofs", "labeling_proofs",
                           "encoding_proof"]
    single = proof["comm_d_proofs"]["data"]["Single"]
    assert list(single) == ["root", "leaf", "path"] and len(single["path"]["path"]) == 6     # 64 leaves, binary
    assert len(proof["comm_r_last_proof"]["data"]["Single"]["path"]["path"]) == 2             # 64 leaves, arity 8
    c_x = proof["replica_column_proofs"]["c_x"]
    assert list(c_x["column"]) == ["index", "rows", "_h"] and c_x["column"]["_h"] is None
    assert [len(proof["replica_column_proofs"][k]) for k in ("drg_parents", "exp_parents")] == [6, 8]
    assert list(proof["labeling_proofs"][1]) == ["parents", "layer_index", "node"]
    assert len(proof["labeling_proofs"][1]["parents"]) == 37


@pytest.mark.parametrize("registered", ["StackedDrg2KiBV1_1", "StackedDrg2KiBV1"])
def test_random_sector_equals_the_references_and_verifies(registered, rng, tmp_path):
    data = pieces.sector_data([pieces.random_piece(1024, rng.randrange(1 << 32)), pieces.zero_piece(512)], 2048)
    prover, ticket, seed, sector = rng.randbytes(32), rng.randbytes(32), rng.randbytes(32), rng.randrange(1 << 64)
    c1 = seal.seal_sector(data, registered, prover, sector, ticket, seed)
    nodes = [data[i:i + 32] for i in range(0, 2048, 32)]
    comm_d = ref.merkle_root(nodes, 2, lambda c: truncate(hashlib.sha256(b"".join(c)).digest()))
    assert c1.comm_d == comm_d
    porep_id = (5 if registered.endswith("V1_1") else 0).to_bytes(8, "little") + bytes(24)
    replica = truncate(hashlib.sha256(prover + sector.to_bytes(8, "big") + ticket + comm_d + porep_id).digest())
    assert c1.replica_id == replica
    labels = ref.labels(replica, 2, 64, porep_id, registered.endswith("V1_1"))
    c3, c9 = ref.grain_constants(3, 55), ref.grain_constants(9, 57)

    def p8(children):
        return from_int(ref.poseidon([to_int(c) for c in children], c9, 57))

    columns = [from_int(ref.poseidon([to_int(labels[0][n]), to_int(labels[1][n])], c3, 55)) for n in range(64)]
    replica_nodes = [from_int((to_int(labels[1][n]) + to_int(nodes[n])) % R) for n in range(64)]
    comm_c, comm_r_last = ref.merkle_root(columns, 8, p8), ref.merkle_root(replica_nodes, 8, p8)
    assert c1.comm_r == from_int(ref.poseidon([to_int(comm_c), to_int(comm_r_last)], c3, 55))
    challenges = [int.from_bytes(hashlib.sha256(replica + seed + j.to_bytes(4, "little")).digest(), "little") % 63 + 1
                  for j in range(2)]
    assert [p.comm_d_proofs.leaf for p in c1.vanilla_proofs[0]] == [nodes[c] for c in challenges]
    c1_json.write(c1, tmp_path / "c1.json")
    back = c1_json.read(tmp_path / "c1.json")
    assert back == c1
    vanilla.verify(back, prover, sector)
    with pytest.raises(VanillaProofError, match="replica id"):
        vanilla.verify(back, prover, sector + 1)


def test_sealing_is_deterministic(zero_c1):
    again = seal.seal_sector(bytes(2048), "StackedDrg2KiBV1_1", PROVER, SECTOR, TICKET, SEED)
    assert c1_json.dumps(again) == c1_json.dumps(zero_c1)
    other = seal.seal_sector(bytes(2048), "StackedDrg2KiBV1_1", PROVER, SECTOR, TICKET, bytes(32))
    assert other.comm_r == zero_c1.comm_r and other.vanilla_proofs != zero_c1.vanilla_proofs


def leaf_paths(value, path=()):
    """Every scalar's position in a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaf_paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaf_paths(v, path + (i,))
    else:
        yield path


def pattern(path):
    return tuple("#" if isinstance(p, int) else p for p in path)


def container(obj, path):
    for p in path[:-1]:
        obj = obj[p]
    return obj


def rejected(obj, what):
    with pytest.raises(VanillaProofError) as err:
        vanilla.verify(c1_json.from_obj(obj), PROVER, SECTOR)
    assert err.value.where, what


def test_every_damaged_field_is_named(zero_c1):
    """Each kind of scalar changed, each field and list entry removed, an unknown field
    added: the reader or the verifier refuses, naming a place."""
    obj = c1_json.to_obj(zero_c1)
    picker = random.Random(5)                 # fixed: the sealed inputs are fixed too
    places: dict = {}
    for path in leaf_paths(obj):
        for end in range(1, len(path) + 1):
            places.setdefault(pattern(path[:end]), []).append(path[:end])
    assert len(places) > 60
    for paths in places.values():
        path = picker.choice(paths)
        parent, key = container(obj, path), path[-1]
        value = parent[key]
        if not isinstance(value, (dict, list)):
            parent[key] = "StackedDrg2KiBV1" if isinstance(value, str) else 0 if value is None else value ^ 1
            rejected(obj, (path, "changed"))
            parent[key] = value
        del parent[key]
        rejected(obj, (path, "removed"))
        if isinstance(key, int):
            parent.insert(key, value)
        else:
            parent[key] = value
        if isinstance(value, dict):
            value["extra"] = 0
            rejected(obj, (path, "a field added"))
            del value["extra"]
    assert c1_json.from_obj(obj) == zero_c1         # every damage undone, in place


def test_named_places(zero_c1):
    obj = c1_json.to_obj(zero_c1)
    at = "vanilla_proofs.StackedDrg2KiBV1[0][1]"
    proof = obj["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]
    proof["labeling_proofs"][1]["parents"][20][3] ^= 1
    with pytest.raises(VanillaProofError) as err:
        vanilla.verify(c1_json.from_obj(obj))
    assert err.value.where == f"{at}.labeling_proofs[1].parents[20]"
    proof["labeling_proofs"][1]["parents"][20][3] ^= 1
    proof["replica_column_proofs"]["exp_parents"][3]["column"]["rows"][0] = [0] * 31 + [0xFF]
    with pytest.raises(VanillaProofError) as err:
        vanilla.verify(c1_json.from_obj(obj))
    assert err.value.where == f"{at}.replica_column_proofs.exp_parents[3].column.rows"
    proof["comm_d_proofs"]["data"]["Single"]["path"]["path"][2]["index"] = 2
    with pytest.raises(VanillaProofError) as err:
        c1_json.from_obj(obj)
    assert err.value.where == f"{at}.comm_d_proofs.data.Single.path.path[2].index"


def test_malformed_text_is_refused(zero_c1, tmp_path, monkeypatch):
    text = c1_json.dumps(zero_c1)
    for bad in ("", "[", text[:-1], text.replace('"seed"', '"seed":[],"seed"', 1), '{"registered_proof":NaN}',
                text.replace("StackedDrg2KiBV1_1", "StackedDrg2KiBV9"), "[" * 100000):
        with pytest.raises(VanillaProofError):
            c1_json.loads(bad)
    monkeypatch.setattr(c1_json, "MAX_BYTES", len(text) - 1)
    (tmp_path / "big.json").write_text(text)
    with pytest.raises(VanillaProofError, match="at most"):
        c1_json.read(tmp_path / "big.json")


def test_seal_inputs_are_checked():
    with pytest.raises(InvalidInputError):
        seal.precommit1("StackedDrg2KiBV1_1", bytes(2016), PROVER, SECTOR, TICKET)
    with pytest.raises(InvalidInputError, match="fr32"):
        seal.precommit1("StackedDrg2KiBV1_1", bytes(31) + b"\x40" + bytes(2016), PROVER, SECTOR, TICKET)
    with pytest.raises(InvalidInputError, match="not sealed here"):
        seal.precommit1("StackedDrg32GiBV1_1", bytes(2048), PROVER, SECTOR, TICKET)
    with pytest.raises(InvalidInputError, match="unknown registered"):
        seal.precommit1("StackedDrg2KiB", bytes(2048), PROVER, SECTOR, TICKET)
    with pytest.raises(InvalidInputError):
        seal.seal_sector(bytes(2048), "StackedDrg2KiBV1_1", PROVER[:16], SECTOR, TICKET, SEED)


@pytest.mark.slow
def test_an_8mib_sector_seals_and_verifies():
    data = pieces.sector_data([pieces.random_piece(4 << 20, 11), pieces.zero_piece(2 << 20)], 8 << 20)
    c1 = seal.seal_sector(data, "StackedDrg8MiBV1_1", PROVER, SECTOR, TICKET, SEED)
    proof = c1.vanilla_proofs[0][0]
    assert len(proof.comm_d_proofs.paths[0]) == 18 and len(proof.comm_r_last_proof.paths[0]) == 6
    vanilla.verify(c1_json.loads(c1_json.dumps(c1)), PROVER, SECTOR)


def test_an_output_sealed_under_another_porep_id_verifies_under_it_alone(rng):
    """Another chain's porep_id (all zeros, API version 1.2.0): its replica id and
    graph; refused under Filecoin's, or under the same porep_id and API version 1.0.0."""
    config = PorepConfig(bytes(32), "1.2.0")
    data = pieces.sector_data([pieces.random_piece(2048, rng.randrange(1 << 32))], 2048)
    c1 = seal.seal_sector(data, "StackedDrg2KiBV1_1", PROVER, SECTOR, TICKET, SEED, config)
    assert c1.replica_id == truncate(hashlib.sha256(PROVER + SECTOR.to_bytes(8, "big") + TICKET + c1.comm_d
                                                    + bytes(32)).digest())
    vanilla.verify(c1, PROVER, SECTOR, config)
    for other in (None, PorepConfig(bytes(32), "1.0.0"), seal_proof("StackedDrg2KiBV1_1").config):
        with pytest.raises(VanillaProofError, match="node"):
            vanilla.verify(c1, config=other)
    with pytest.raises(VanillaProofError, match="replica id"):
        vanilla.verify(c1, PROVER, SECTOR)
    assert values.public_inputs(c1, 0, config)[3:] != values.public_inputs(c1, 0)[3:]


def test_a_porep_config_is_the_registered_proofs_unless_given():
    proof = seal_proof("StackedDrg2KiBV1_1")
    assert porep_config(proof) == PorepConfig((5).to_bytes(8, "little") + bytes(24), "1.1.0") == proof.config
    assert porep_config(proof, "00" * 32, "V1_2_0") == PorepConfig(bytes(32), "1.2.0")
    assert porep_config(seal_proof("StackedDrg2KiBV1"), bytes(32)).api_version == "1.0.0"
    for porep_id, version in (("00" * 31, None), (b"x", None), (None, "1.3.0"), (None, 1), (None, "V1_1")):
        with pytest.raises(InvalidInputError):
            porep_config(proof, porep_id, version)
