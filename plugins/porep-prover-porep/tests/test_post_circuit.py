# SPDX-License-Identifier: Apache-2.0
"""The FallbackPoSt circuit (WinningPoSt and WindowPoSt): its shape held to
rust-fil-proofs' published counts (fallback_circuit.rs' test shapes: 64
leaves a base tree, 3 sectors of 5 challenges in trees of arities 8, 8-4
and 8-4-2; 2 sectors; the 32 GiB bench; the registered 32 GiB WinningPoSt
and 32 and 64 GiB WindowPoSt) and to the model "a slot costs 313 + C (2 +
its levels)" at every registered size; its native witness equal to the
plain-Python one on fresh random trees, satisfied, with the public inputs a
verifier computes (padding a short partition as Filecoin pads it); a
flipped bit caught."""
import types

import pytest
from bit_flips import assert_bit_flips_caught

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover import FrArray  # noqa: E402
from porep_prover_porep import poseidon  # noqa: E402
from porep_prover_porep.circuit.builder import Builder  # noqa: E402
from porep_prover_porep.fr32 import R  # noqa: E402
from porep_prover_porep.post import challenges, vanilla  # noqa: E402
from porep_prover_porep.post.circuit import PostCircuit, PostLayout, layout_of, shape_counts, synthesize  # noqa
from porep_prover_porep.post.registered import REGISTERED_POST, PoStProof  # noqa: E402
from porep_prover_porep.trees import SparseTree  # noqa: E402

LEVEL = {2: 314, 4: 387, 8: 530}          # a tree level: index bits, siblings, insertion, Poseidon


def element(rng) -> bytes:
    return rng.randrange(R).to_bytes(32, "little")


@pytest.mark.parametrize("tree, leaves, sectors, inputs, constraints", [
    ((8, 0, 0), 64, 3, 19, 16_869),         # test_fallback_post_circuit_poseidon_single_partition_base_8
    ((8, 4, 0), 256, 3, 19, 22_674),        # ..._sub_8_4
    ((8, 4, 2), 512, 3, 19, 27_384),        # ..._top_8_4_2
    ((8, 0, 0), 64, 2, 13, 11_246),         # ..._two_partitions_base_8
    ((8, 0, 0), 1 << 30, 5, 56, 266_665),   # test_fallback_post_circuit_poseidon_base_8_bench_cs (10 challenges)
])
def test_rust_fil_proofs_test_shapes(tree, leaves, sectors, inputs, constraints):
    challenges_ = 10 if leaves == 1 << 30 else 5
    counts = shape_counts(PostLayout(sectors, challenges_, leaves, tree))
    assert (counts["inputs"], counts["constraints"]) == (inputs, constraints)


def test_registered_shapes_equal_the_published_counts_and_the_model():
    published = {"StackedDrgWinning32GiBV1": (370_590, 133), "StackedDrgWindow32GiBV1": (125_279_217, 25_840),
                 "StackedDrgWindow64GiBV1": (129_887_900, 25_301)}
    for name, proof in REGISTERED_POST.items():
        if name.endswith("V1_2"):
            continue                              # V1_2 shares V1's circuit
        counts = shape_counts(layout_of(proof))
        slot = 313 + proof.challenge_count * (2 + sum(LEVEL[a] for a in proof.tree_arities))
        assert counts["constraints"] == proof.sector_count * slot, name
        assert counts["inputs"] == 1 + proof.sector_count * (1 + proof.challenge_count), name
        if name in published:
            assert (counts["constraints"], counts["inputs"]) == published[name]
    assert layout_of(REGISTERED_POST["StackedDrgWindow2KiBV1_2"]) == \
        layout_of(REGISTERED_POST["StackedDrgWindow2KiBV1"])


def replica(rng, nodes: int, tree):
    """A replica of random leaves (every one given: the tree hashed in full), and a random comm_c."""
    leaves = {i: element(rng) for i in range(nodes)}
    return types.SimpleNamespace(tree_r_last=SparseTree("poseidon", nodes, tree, bytes(32), leaves),
                                 comm_c=element(rng))


def small_proof(tree, nodes, sectors, api="1.1.0") -> PoStProof:
    return PoStProof("test", -1, "window", nodes * 32, sectors, 5, api, tree)



@pytest.mark.parametrize("tree, nodes, total, sectors, partition", [
    ((8, 4, 0), 256, 3, 3, 0),
    ((8, 4, 2), 512, 3, 3, 0),
    ((8, 0, 0), 64, 5, 3, 1),               # the second partition of 5 sectors: 2 sectors, the last repeated
])
def test_native_witness_is_the_plain_one_and_satisfies(tree, nodes, total, sectors, partition, rng):
    proof = small_proof(tree, nodes, sectors)
    randomness = element(rng)
    replicas = [replica(rng, nodes, tree) for _ in range(2)]
    ids = [rng.randrange(1 << 64) for _ in range(total)]
    mine = ids[partition * sectors:(partition + 1) * sectors]
    sps = [vanilla.sector_proof(proof, replicas[i % 2], sid, randomness, partition, i) for i, sid in enumerate(mine)]
    vanilla.verify(proof, sps, randomness, partition)
    slots = vanilla.slots(proof, sps)
    assert len(slots) == sectors and slots[-1] == slots[len(mine) - 1]
    expected = challenges.public_inputs(proof, randomness, [(sp.sector_id, int.from_bytes(sp.comm_r, "little"))
                                                          for sp in sps], partition)
    circuit = PostCircuit(layout_of(proof))
    w = circuit.slots_witness(slots, expected, threads=2)
    assert circuit.r1cs.is_satisfied(w)
    ref = Builder(reference=True)
    synthesize(ref, circuit.layout, slots)
    inputs, aux = ref.values()
    assert FrArray.from_ints([1] + inputs + aux) == w
    per = 1 + proof.challenge_count
    assert w[1:1 + per * sectors].to_ints() == expected
    for slot, sp in enumerate(sps):
        leaves = challenges.sector_challenges(proof, randomness, sp.sector_id, partition, slot)
        assert expected[slot * per:(slot + 1) * per] == [int.from_bytes(sp.comm_r, "little"), *leaves]
    assert_bit_flips_caught(circuit.r1cs, w, rng)


def test_comm_r_is_poseidon_of_comm_c_and_comm_r_last(rng):
    proof = small_proof((8, 0, 0), 64, 1)
    r = replica(rng, 64, (8, 0, 0))
    sp = vanilla.sector_proof(proof, r, 3, element(rng))
    assert sp.comm_r == poseidon.hash_one([r.comm_c, r.tree_r_last.root])
