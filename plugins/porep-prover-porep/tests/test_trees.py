# SPDX-License-Identifier: Apache-2.0
"""fr32 padding, test pieces, tree_d / tree_c / tree_r_last and their paths."""
import hashlib

import numpy as np
import pytest

pytest.importorskip("porep_prover_porep._native")

from porep_prover.errors import InvalidInputError, VanillaProofError  # noqa: E402
from porep_prover_porep import fr32, pieces, poseidon, trees  # noqa: E402
from porep_prover_porep import reference as ref  # noqa: E402
from porep_prover_porep.proofs import PathElement  # noqa: E402

# filecoin-proofs tests/pieces.rs: comm_d of a 2 KiB sector of one zero piece
ZERO_2KIB_COMM_D = "fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833"


def sha_node(children):
    return fr32.truncate(hashlib.sha256(b"".join(children)).digest())


def test_zero_piece_comm_d():
    assert trees.sha256_tree(pieces.zero_piece(2048)).root.hex() == ZERO_2KIB_COMM_D


def test_fr32_padding_equals_the_reference(rng):
    raw = rng.randbytes(127 * rng.randrange(1, 40))
    padded = fr32.pad(raw)
    assert padded == ref.fr32_pad(raw) and len(padded) == len(raw) // 127 * 128
    assert all(padded[i] < 64 for i in range(31, len(padded), 32))
    assert fr32.unpad(padded) == raw
    with pytest.raises(InvalidInputError):
        fr32.pad(raw + b"x")
    with pytest.raises(InvalidInputError):
        fr32.unpad(bytes(127) + b"\xff")


def test_fr32_padding_vectors():
    # filecoin-proofs src/fr32_reader.rs: test_simple_127 and test_exotic (its source zero-extended to 127 bytes)
    padded = fr32.pad(bytes([255] * 127))
    assert padded[:31] == bytes([255] * 31) and padded[31] == 0b0011_1111 and padded[32] == 0xFF
    source = list(range(1, 32)) + [0xFF] + list(range(1, 32)) + [0xFF, 9, 9, 9, 0xFF]
    buf = fr32.pad(bytes(source) + bytes(127 - len(source)))
    assert list(buf[:31]) == list(range(1, 32)) and buf[31] == 63 and buf[32] == (1 << 2) | 0b11
    assert [buf[i] for i in range(33, 63)] == [(i - 31) << 2 for i in range(33, 63)]
    assert list(buf[63:69]) == [0x0F << 2, 0x0F | 9 << 4, 9 << 4, 9 << 4, 0xF0, 0x0F]


def test_pieces_are_aligned_and_padded(rng):
    seed = rng.randrange(1 << 32)
    a, b = pieces.random_piece(128, seed), pieces.random_piece(512, seed + 1)
    assert a == pieces.random_piece(128, seed) and a != pieces.random_piece(128, seed + 1)
    data = pieces.sector_data([a, b], 2048)
    assert len(data) == 2048 and data[:128] == a and data[128:512] == bytes(384) and data[512:1024] == b
    with pytest.raises(InvalidInputError):
        pieces.sector_data([pieces.zero_piece(2048), a], 2048)
    with pytest.raises(InvalidInputError):
        pieces.random_piece(384, seed)


@pytest.mark.parametrize("leaves", [2, 64, 1024])
def test_sha256_tree_equals_the_reference(leaves, rng):
    data = fr32.pad(rng.randbytes(leaves * 32 // 128 * 127)) if leaves >= 4 else rng.randbytes(64)
    tree = trees.sha256_tree(data)
    nodes = [data[i:i + 32] for i in range(0, len(data), 32)]
    assert tree.root == ref.merkle_root(nodes, 2, sha_node)


def test_poseidon_tree_equals_the_reference(rng):
    leaves = [fr32.from_int(rng.randrange(fr32.R)) for _ in range(64)]
    constants = ref.grain_constants(9, 57)

    def node(children):
        return fr32.from_int(ref.poseidon([fr32.to_int(c) for c in children], constants, 57))

    tree = trees.poseidon_tree(b"".join(leaves))
    assert tree.root == ref.merkle_root(leaves, 8, node)
    assert [r.shape[0] for r in tree.rows] == [64, 8, 1]


@pytest.mark.parametrize("arity, hasher", [(2, "sha256"), (8, "poseidon")])
def test_paths_lead_to_the_root(arity, hasher, rng):
    data = b"".join(fr32.from_int(rng.randrange(fr32.R)) for _ in range(arity ** 3))
    tree = trees.MerkleTree(data, arity, hasher)
    for index in (0, arity ** 3 - 1, rng.randrange(arity ** 3)):
        proof = tree.proof(index)
        path = proof.paths[0]
        assert len(path) == 3 and all(len(e.hashes) == arity - 1 for e in path)
        assert trees.path_index(path) == index and proof.leaf == data[32 * index:32 * index + 32]
        assert trees.path_root(hasher, proof.leaf, path) == tree.root
        moved = (PathElement(path[0].hashes, (path[0].index + 1) % arity),) + path[1:]
        assert trees.path_root(hasher, proof.leaf, moved) != tree.root


def test_column_hashes_hash_each_nodes_labels(rng):
    labels = np.frombuffer(b"".join(fr32.from_int(rng.randrange(1 << 254)) for _ in range(2 * 16)),
                           np.uint8).reshape(2, 16, 32)
    out = trees.column_hashes(labels)
    for node in (0, 7, 15):
        assert out[node].tobytes() == poseidon.hash_one([labels[0, node].tobytes(), labels[1, node].tobytes()])


def test_tree_inputs_are_checked():
    with pytest.raises(InvalidInputError):
        trees.sha256_tree(bytes(96))            # 3 leaves
    with pytest.raises(InvalidInputError):
        trees.poseidon_tree(bytes(32 * 16))     # not a power of 8
    with pytest.raises(InvalidInputError):
        trees.MerkleTree(bytes(64), 2, "blake2s")
    with pytest.raises(InvalidInputError):
        trees.sha256_tree(bytes(64)).proof(2)


@pytest.mark.parametrize("kind, split, shape", [("Sub", (1,), (8, 8, 0)), ("Top", (1, 2), (8, 8, 2))])
def test_compound_proofs_read_back_and_lead_to_the_root(kind, split, shape, rng):
    """32 and 64 GiB trees are sub-trees under a top: a proof's base, sub and top paths
    concatenated are one path from the leaf to the root (rust-fil-proofs' Sub and Top proofs)."""
    from porep_prover_porep import c1_json
    from porep_prover_porep.proofs import MerkleProof

    leaves = 128 if kind == "Top" else 64
    data = b"".join(fr32.from_int(rng.randrange(fr32.R)) for _ in range(leaves))
    if kind == "Top":       # base and sub levels of arity 8, a top of arity 2: two trees of 64 under one root
        halves = [trees.poseidon_tree(data[:len(data) // 2]), trees.poseidon_tree(data[len(data) // 2:])]
        root = poseidon.hash_one([halves[0].root, halves[1].root])
        index = rng.randrange(leaves)
        single = halves[index // 64].proof(index % 64).paths[0]
        path = single + (PathElement((halves[1 - index // 64].root,), index // 64),)
    else:
        tree = trees.poseidon_tree(data)
        root, index = tree.root, rng.randrange(leaves)
        path = tree.proof(index).paths[0]
    cuts = (0,) + split + (len(path),)
    proof = MerkleProof(kind, root, data[32 * index:32 * index + 32],
                        tuple(path[cuts[i]:cuts[i + 1]] for i in range(len(cuts) - 1)))
    obj = c1_json._merkle(proof)
    assert list(obj["data"]) == [kind] and list(obj["data"][kind])[-2:] == ["root", "leaf"]
    back = c1_json._merkle_in(obj, "p", shape)
    assert back == proof
    flat = tuple(e for level in back.paths for e in level)
    assert trees.path_index(flat) == index and trees.path_root("poseidon", back.leaf, flat) == root
    with pytest.raises(VanillaProofError):
        c1_json._merkle_in(obj, "p", (8, 0, 0))      # a compound proof where one tree is expected
