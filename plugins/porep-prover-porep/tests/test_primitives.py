# SPDX-License-Identifier: Apache-2.0
"""SHA-256, BLAKE2b, ChaCha, the Feistel permutation and the SDR graph's parents:
native against public vectors and the plain references."""
import hashlib

import numpy as np
import pytest

pytest.importorskip("porep_prover_porep._native")

from porep_prover.errors import InvalidInputError  # noqa: E402
from porep_prover_porep import _native, graph  # noqa: E402
from porep_prover_porep import reference as ref  # noqa: E402


def words_bytes(words):
    return b"".join(int(w).to_bytes(4, "little") for w in words)


@pytest.fixture(params=["extensions", "portable"])
def sha_path(request):
    _native.sha256_force_portable(request.param == "portable")
    yield request.param
    _native.sha256_force_portable(False)


def test_sha256_equals_hashlib_on_every_length(sha_path, rng):
    for length in [0, 1, 31, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1248, rng.randrange(5000)]:
        msg = rng.randbytes(length)
        assert _native.sha256(msg) == hashlib.sha256(msg).digest(), (sha_path, length)


def test_sha256_pairs_are_fr32_truncated(sha_path, rng):
    pairs = np.frombuffer(rng.randbytes(64 * 301), np.uint8).reshape(301, 64)
    out = np.empty((301, 32), np.uint8)
    _native.sha256_pairs(pairs, out)
    for i in (0, 150, 300):
        digest = hashlib.sha256(pairs[i].tobytes()).digest()
        assert out[i].tobytes() == digest[:31] + bytes([digest[31] & 0x3F])
    with pytest.raises(InvalidInputError):
        _native.sha256_pairs(pairs, np.empty((300, 32), np.uint8))


def test_blake2b_equals_hashlib(rng):
    for length in (0, 16, 100, 128):
        msg = rng.randbytes(length)
        assert _native.blake2b_512(msg) == hashlib.blake2b(msg).digest()
    with pytest.raises(InvalidInputError):
        _native.blake2b_512(bytes(129))


def test_chacha_public_vectors():
    zero_key, zero = np.zeros(8, np.uint32), np.zeros(4, np.uint32)
    # draft-strombergson-chacha-test-vectors TC1: 256-bit zero key, zero IV, 8 rounds, blocks 0 and 1
    tc1 = ("3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e984ce172b9216f419f445367456d5619"
           "314a42a3da86b001387bfdb80e0cfe42d2aefa0deaa5c151bf0adb6c01f2a5adc0fd581259f9a2aadcf20f8fd566a26b"
           "5032ec38bbc5da98ee0c6f568b872a65a08abf251deb21bb4b56e5d8821e68aa")
    blocks = [words_bytes(_native.chacha(zero_key, np.array([b, 0, 0, 0], np.uint32), 8)) for b in (0, 1)]
    assert b"".join(blocks).hex() == tc1
    # RFC 8439 2.3.2: key 00..1f, nonce 00:00:00:09:00:00:00:4a:00:00:00:00, counter 1, 20 rounds
    key = np.frombuffer(bytes(range(32)), "<u4").astype(np.uint32)
    words = np.array([1, *np.frombuffer(bytes.fromhex("000000090000004a00000000"), "<u4")], np.uint32)
    assert words_bytes(_native.chacha(key, words, 20)).hex() == (
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e")
    # RFC 8439 A.1 #1: zero key, nonce and counter
    assert words_bytes(_native.chacha(zero_key, zero, 20)).hex().startswith("76b8e0ada0f13d90405d6ae55386bd28")


def test_chacha_equals_the_reference(rng):
    for rounds in (8, 12, 20):
        key = rng.randbytes(32)
        words = [rng.randrange(1 << 32) for _ in range(4)]
        native = _native.chacha(np.frombuffer(key, "<u4").astype(np.uint32), np.array(words, np.uint32), rounds)
        assert native == ref.chacha_block(key, words, rounds)
    with pytest.raises(InvalidInputError):
        _native.chacha(np.zeros(8, np.uint32), np.zeros(4, np.uint32), 10)


def test_feistel_is_a_permutation_equal_to_the_reference(rng):
    keys = [rng.randrange(1 << 64) for _ in range(4)]
    native_keys = np.array(keys, np.uint64)
    for n in (5, 12, 17, 100, 1000):       # not powers of four: the permutation walks its cycles
        image = [_native.feistel(n, i, native_keys) for i in range(n)]
        assert sorted(image) == list(range(n))
        for i in rng.sample(range(n), 4):
            assert image[i] == ref.feistel_permute(n, i, keys)
    with pytest.raises(InvalidInputError):
        _native.feistel(10, 10, native_keys)


@pytest.mark.parametrize("api_v11", [False, True])
def test_parents_equal_the_reference(api_v11, rng):
    porep_id = rng.randbytes(32)
    nodes = 1 << rng.randrange(4, 12)
    table = graph.parents_table(nodes, porep_id, api_v11)
    seed, keys = graph.drg_seed(porep_id), [int(k) for k in graph.feistel_keys(porep_id)]
    for node in [0, 1, 2, nodes - 1] + rng.sample(range(nodes), min(20, nodes)):
        drg = ref.drg_parents(seed, node, api_v11)
        exp = ref.expander_parents(keys, nodes, node, api_v11)
        assert table[node].tolist() == drg + exp
        assert graph.node_parents(nodes, node, porep_id, api_v11) == drg + exp
        if node >= 2:       # the predecessor first (1.1) or last (1.0) among the DRG parents
            assert drg[0 if api_v11 else 5] == node - 1
    assert (table < nodes).all()


@pytest.mark.parametrize("api_v11", [False, True])
def test_the_table_equals_each_nodes_parents(api_v11, rng):
    """The table's expander parents (four Feistel lanes at a time where the CPU has AVX2) are
    those of the one-node path, for every node."""
    porep_id, nodes = rng.randbytes(32), 2048
    table = graph.parents_table(nodes, porep_id, api_v11)
    keys = graph.feistel_keys(porep_id)
    assert all(table[node, 6:].tolist() == _native.expander(keys, nodes, node, api_v11) for node in range(nodes))


def test_graph_inputs_are_checked():
    with pytest.raises(InvalidInputError):
        graph.parents_table(100, bytes(32), True)       # not a power of two
    with pytest.raises(InvalidInputError):
        graph.parents_table(64, bytes(31), True)
    with pytest.raises(InvalidInputError):
        graph.node_parents(64, 64, bytes(32), True)
    with pytest.raises(InvalidInputError):      # past the graph's u32 indices (the domain would overflow)
        _native.expander(graph.feistel_keys(bytes(32)), 1 << 61, 0, True)
    table = graph.parents_table(64, bytes(32), True)
    table[5, 3] = 64        # a parent past the graph is refused before C reads through it
    with pytest.raises(InvalidInputError, match="past the graph"):
        graph.labels(bytes(32), 2, table)
