# SPDX-License-Identifier: Apache-2.0
"""Commit-phase-1 outputs over sparse sectors (porep_prover_porep.sparse):
equal to the output of a sector laid out in full from the same leaves and
sealed by seal.precommit2 and seal.commit1 (its challenged labels hashed here
with hashlib from the full layers); the sparse trees against full ones in
every shape (sub-tree and top levels); verified at 2 KiB, 8 MiB and 512 MiB;
the circuit satisfied by their witnesses (also checked a run of instances at
a time, as a 32 GiB partition is); damage refused; the command."""
import hashlib

import numpy as np
import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover import FrArray  # noqa: E402
from porep_prover.engine import Job  # noqa: E402
from porep_prover.errors import InvalidInputError, UnsatisfiedError, VanillaProofError  # noqa: E402
from porep_prover_porep import c1_json, graph, poseidon, seal, sparse, trees, vanilla  # noqa: E402
from porep_prover_porep.__main__ import main  # noqa: E402
from porep_prover_porep.circuit.partition import partition_circuit  # noqa: E402
from porep_prover_porep.fr32 import R, from_int, truncate  # noqa: E402
from porep_prover_porep.provider import PorepProvider  # noqa: E402
from porep_prover_porep.registered import PorepConfig, seal_proof  # noqa: E402

PROVER, SECTOR, TICKET, SEED = bytes(range(32)), 4242, bytes([7] * 32), bytes([9] * 32)
DATA_NODE = bytes(range(31)) + b"\x21"
ZEROS_V12 = PorepConfig(bytes(32), "1.2.0")
# comm_d of an empty 2 KiB sector (filecoin-proofs tests/pieces.rs) and of an empty 32 GiB one (the digest of
# its unsealed CID, baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq)
ZERO_COMM_D = {"StackedDrg2KiBV1_1": "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833",
               "StackedDrg32GiBV1_1": "077e5fde35c50a9303a55009e3498a4ebedff39c42b710b730d8ec7ac7afa63e"}


def full_sector(name: str, config: PorepConfig, data_node: bytes):
    """The sparse construction laid out in full and sealed here: every data node
    data_node, every label the off-path label of its layer, then each challenged
    node's label hashed from its parents' labels in the full layers (hashlib), the
    layers in order and the nodes ascending; PC2 and C1 by seal."""
    proof = seal_proof(name)
    data = np.tile(np.frombuffer(data_node, np.uint8), (proof.nodes, 1))
    tree_d = trees.sha256_tree(data)
    replica_id = graph.replica_id(PROVER, SECTOR, TICKET, tree_d.root, config.porep_id)
    parents = graph.parents_table(proof.nodes, config.porep_id, config.api_v11)
    labels = np.empty((proof.layers, proof.nodes, 32), np.uint8)
    labels[:] = np.frombuffer(b"".join(sparse.OFF_PATH_LABELS[:proof.layers]), np.uint8).reshape(-1, 1, 32)
    challenged = sorted({c for k in range(proof.partitions) for c in seal.challenges(proof, replica_id, SEED, k)})
    for layer in range(1, proof.layers + 1):
        for node in challenged:
            row = parents[node]
            got = [labels[layer - 1, p].tobytes() for p in row[:6]]
            got += [labels[layer - 2, p].tobytes() for p in row[6:]] if layer > 1 else []
            msg = replica_id + layer.to_bytes(4, "big") + node.to_bytes(8, "big") + bytes(20)
            labels[layer - 1, node] = np.frombuffer(
                truncate(hashlib.sha256(msg + b"".join(got[k % len(got)] for k in range(37))).digest()), np.uint8)
    pc1 = seal.PreCommit1(proof, data, tree_d, replica_id, parents, labels)
    return seal.commit1(seal.precommit2(pc1), TICKET, SEED)


@pytest.mark.parametrize("name, config", [("StackedDrg2KiBV1_1", None), ("StackedDrg8MiBV1_1", ZEROS_V12)])
def test_a_sparse_output_is_the_output_of_its_sector_sealed_in_full(name, config):
    got = sparse.sparse_c1(name, PROVER, SECTOR, TICKET, SEED, config, DATA_NODE)
    expected = full_sector(name, config or seal_proof(name).config, DATA_NODE)
    assert c1_json.dumps(got) == c1_json.dumps(expected)
    assert got.comm_d != got.comm_r and len({p.labeling_proofs[0].node for p in got.vanilla_proofs[0]}) == 2


@pytest.mark.parametrize("name", ["StackedDrg2KiBV1_1", "StackedDrg32GiBV1_1"])
def test_an_empty_sparse_sector_has_the_empty_pieces_comm_d(name):
    assert sparse.sparse_sector(name, PROVER, SECTOR, TICKET, SEED).comm_d.hex() == ZERO_COMM_D[name]


def _leaves(rng, count: int, nodes: int) -> dict:
    return {rng.randrange(nodes): from_int(rng.randrange(R)) for _ in range(count)}


@pytest.mark.parametrize("shape, kind, parts", [((8, 0, 0), "Single", (3,)), ((8, 8, 0), "Sub", (2, 1)),
                                                ((8, 8, 2), "Top", (2, 1, 1))])
def test_a_sparse_tree_is_the_full_tree_of_its_leaves(shape, kind, parts, rng):
    """An 8-ary tree of 512 leaves is also eight base trees under a sub-tree level; two of them under an
    arity-2 top are 64 GiB's shape: the same root and the same path, split as rust-fil-proofs splits it."""
    nodes = 1024 if shape[2] else 512
    default = from_int(rng.randrange(R))
    leaves = _leaves(rng, 5, nodes)
    tree = trees.SparseTree("poseidon", nodes, shape, default, leaves)
    data = b"".join(leaves.get(i, default) for i in range(nodes))
    halves = [trees.poseidon_tree(data[i:i + 512 * 32]) for i in range(0, len(data), 512 * 32)]
    root = poseidon.hash_one([h.root for h in halves]) if shape[2] else halves[0].root
    assert tree.root == root
    for index in (*leaves, 0, nodes - 1):
        proof = tree.proof(index)
        flat = halves[index // 512].proof(index % 512).paths[0]
        if shape[2]:
            flat += (trees.PathElement((halves[1 - index // 512].root,), index // 512),)
        assert proof.kind == kind and tuple(len(p) for p in proof.paths) == parts
        assert tuple(e for p in proof.paths for e in p) == flat and proof.leaf == data[32 * index:32 * index + 32]
        assert c1_json._merkle_in(c1_json._merkle(proof), "p", shape) == proof


def test_a_sparse_sha256_tree_and_bad_trees(rng):
    leaves = {k: truncate(v) for k, v in _leaves(rng, 3, 1 << 10).items()}
    tree = trees.SparseTree("sha256", 1 << 10, (2, 0, 0), bytes(32), leaves)
    full = trees.sha256_tree(b"".join(leaves.get(i, bytes(32)) for i in range(1 << 10)))
    assert tree.root == full.root and all(tree.proof(i) == full.proof(i) for i in (*leaves, 5))
    for args in (("sha256", 64, (8, 0, 0)), ("poseidon", 96, (8, 0, 0)), ("blake2s", 64, (2, 0, 0))):
        with pytest.raises(InvalidInputError):
            trees.SparseTree(*args, bytes(32), {})
    with pytest.raises(InvalidInputError):
        trees.SparseTree("poseidon", 64, (8, 0, 0), bytes(32), {64: bytes(32)})
    with pytest.raises(InvalidInputError):
        tree.proof(1 << 10)


@pytest.mark.parametrize("name", ["StackedDrg2KiBV1_1", "StackedDrg8MiBV1_1", "StackedDrg512MiBV1_1"])
def test_a_sparse_output_verifies(name):
    c1 = c1_json.loads(c1_json.dumps(sparse.sparse_c1(name, PROVER, SECTOR, TICKET, SEED)))
    vanilla.verify(c1, PROVER, SECTOR)
    with pytest.raises(VanillaProofError, match="replica id"):
        vanilla.verify(c1, PROVER, SECTOR + 1)


@pytest.mark.parametrize("name", ["StackedDrg2KiBV1_1", "StackedDrg8MiBV1_1"])
def test_its_witness_satisfies_the_circuit(name):
    c1 = sparse.sparse_c1(name, PROVER, SECTOR, TICKET, SEED, data_node=DATA_NODE)
    circuit = partition_circuit(seal_proof(name))
    witness = circuit.witness(c1, 0, 2)
    assert circuit.r1cs.is_satisfied(witness)
    if name == "StackedDrg2KiBV1_1":        # checked a run of instances at a time, as a 32 GiB partition is
        circuit.check(witness, 1 << 22)
        values = witness.to_ints()
        values[1_000_000] += 1
        with pytest.raises(UnsatisfiedError) as err:
            circuit.check(FrArray.from_ints(values), 1 << 22)
        with pytest.raises(UnsatisfiedError) as whole:
            circuit.r1cs.check(FrArray.from_ints(values))
        assert err.value.constraint == whole.value.constraint > 0


def test_a_damaged_sparse_output_is_refused():
    """One opening's sibling, one label: the verifier names the place."""
    obj = c1_json.to_obj(sparse.sparse_c1("StackedDrg8MiBV1_1", PROVER, SECTOR, TICKET, SEED))
    at = "vanilla_proofs.StackedDrg8MiBV1[0][1]"
    proof = obj["vanilla_proofs"]["StackedDrg8MiBV1"][0][1]
    sibling = proof["replica_column_proofs"]["exp_parents"][2]["inclusion_proof"]["data"]["Single"]["path"]["path"][3]
    sibling["hashes"][4][0] ^= 1
    with pytest.raises(VanillaProofError) as err:
        vanilla.verify(c1_json.from_obj(obj))
    assert err.value.where == f"{at}.replica_column_proofs.exp_parents[2].inclusion_proof.data.Single.root"
    sibling["hashes"][4][0] ^= 1
    proof["labeling_proofs"][1]["parents"][9][5] ^= 1
    with pytest.raises(VanillaProofError) as err:
        vanilla.verify(c1_json.from_obj(obj))
    assert err.value.where == f"{at}.labeling_proofs[1].parents[9]"
    proof["labeling_proofs"][1]["parents"][9][5] ^= 1
    proof["replica_column_proofs"]["c_x"]["column"]["rows"][1][0] ^= 1
    with pytest.raises(VanillaProofError, match="the leaf is not the column's hash"):
        vanilla.verify(c1_json.from_obj(obj))


def test_the_command_writes_a_sparse_output(tmp_path, capsys):
    out = tmp_path / "c1.json"
    assert main(["synth-c1", str(out), "--proof", "StackedDrg2KiBV1_1", "--miner-id", "1000", "--sector-number", "7",
                 "--porep-id", "00" * 32, "--api-version", "1.2.0", "--check"]) == 0
    assert "read back and verified" in capsys.readouterr().out
    c1 = c1_json.read(out)
    with pytest.raises(VanillaProofError):
        vanilla.verify(c1)                      # not under the registered proof's porep_id
    job = Job("porep", 1, {"c1": str(out), "miner_id": 1000, "sector_id": 7, "porep_id": bytes(32),
                           "api_version": "1.2.0"})
    r1cs, witness = PorepProvider().synthesize(job, 0, 2)      # the provider takes it as it takes a sealed one's
    assert r1cs.is_satisfied(witness)
    assert main(["synth-c1", str(out), "--proof", "StackedDrg2KiBV1_1", "--data-node", "ff" * 32]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fr32" in err[0]
