# SPDX-License-Identifier: Apache-2.0
"""Poseidon of arities 2, 4, 8 and 11: neptune's and filecoin-hashers' vectors, the Grain
constants against the plain reference and neptune's published file, and the native
sparse schedule against the plain one on fresh random inputs."""
import numpy as np
import pytest

pytest.importorskip("porep_prover_porep._native")

from porep_prover.errors import InvalidInputError, ScalarRangeError  # noqa: E402
from porep_prover_porep import poseidon  # noqa: E402
from porep_prover_porep import reference as ref  # noqa: E402
from porep_prover_porep.fr32 import R  # noqa: E402


def limbs(*words):
    return b"".join(w.to_bytes(8, "little") for w in words)


def element(value):
    return value.to_bytes(32, "little")


# neptune src/poseidon.rs, hash_values (Strength::Standard): Merkle hash of 0, 1, ..., arity - 1
NEPTUNE = {
    2: limbs(0x2e203c369a02e7ff, 0xa6fba9339d05a69d, 0x739e0fd902efe161, 0x396508d75e76a56b),
    4: limbs(0x019814ff6662075d, 0xfb6b4605bf1327ec, 0x00db3c6579229399, 0x58a54b10a9e5848a),
    8: limbs(0x2a9934f56d38a5e6, 0x4b682e9d9cc4aed9, 0x1201004211677077, 0x2394611da3a5de55),
    11: limbs(0xcee3bbc32b693163, 0x09f3dcd8ccb08fc1, 0x6ca537e232ebe87a, 0x0c0fc1b2e5227f28),
}


@pytest.mark.parametrize("arity", [2, 4, 8, 11])
def test_neptune_hash_values(arity):
    preimage = [element(i) for i in range(arity)]
    assert poseidon.hash_one(preimage) == NEPTUNE[arity]
    batch = np.frombuffer(b"".join(preimage), np.uint8).reshape(1, arity, 32)
    assert poseidon.hash_batch(arity, batch, plain=True)[0].tobytes() == NEPTUNE[arity]
    assert element(ref.poseidon(list(range(arity)), ref.grain_constants(arity + 1, poseidon.PARTIAL_ROUNDS[arity]),
                                poseidon.PARTIAL_ROUNDS[arity])) == NEPTUNE[arity]


def test_filecoin_hashers_poseidon_tree():
    # filecoin-hashers poseidon.rs test_poseidon_hasher: leaves 1, 0, 0, 1 of a binary tree
    one, zero = element(1), element(0)
    left, right = poseidon.hash_one([one, zero]), poseidon.hash_one([zero, one])
    assert left == limbs(0xb339ff6079800b5e, 0xec5907b3dc3094af, 0x93c003cc74a24f26, 0x042f94ffbe786bc3)
    assert poseidon.hash_one([left, right]) == limbs(0xefbb8be3e291e671, 0x77cc72b8cb2b5ad2, 0x30eb6385ae6b74ae,
                                                     0x1effebb7b26ad9eb)


@pytest.mark.parametrize("arity", [2, 4, 8, 11])
def test_round_constants_equal_the_grain_reference(arity):
    rp = poseidon.PARTIAL_ROUNDS[arity]
    assert tuple(poseidon.round_constants(arity)) == ref.grain_constants(arity + 1, rp)
    assert len(poseidon.round_constants(arity)) == (8 + rp) * (arity + 1)


def test_round_constants_equal_neptunes_file():
    # neptune parameters/round_constants-1-1-255-9-8-57-73EDA7...01.txt (sage create_rcs_grain.sage)
    constants = poseidon.round_constants(8)
    assert constants[0] == 0x6ce90d12c4045fe08c3caddb776dd84ac52b4ae7e48cd49443984154f2f4c2f9
    assert constants[1] == 0x0ccd9b480c84022b25a75b52c8e89d80b4fa6378d32e58f3a175504940bcec39
    assert constants[-1] == 0x3b3a75eb91b0f723bcc4ab7e449e4a011b8960063efe74670c05e545519d9a8c


@pytest.mark.parametrize("arity", [2, 4, 8, 11])
def test_random_inputs_equal_the_plain_reference(arity, rng):
    rp = poseidon.PARTIAL_ROUNDS[arity]
    constants = ref.grain_constants(arity + 1, rp)
    n = 37                                   # a batch that splits unevenly over the threads
    values = [[rng.randrange(R) for _ in range(arity)] for _ in range(n)]
    values[0] = [R - 1] * arity
    batch = np.frombuffer(b"".join(element(v) for row in values for v in row), np.uint8).reshape(n, arity, 32)
    fast, plain = poseidon.hash_batch(arity, batch), poseidon.hash_batch(arity, batch, plain=True)
    assert (fast == plain).all()
    for i in (0, 1, n - 1):
        assert int.from_bytes(fast[i].tobytes(), "little") == ref.poseidon(values[i], constants, rp)


def test_inputs_are_checked(rng):
    batch = np.zeros((3, 2, 32), np.uint8)
    batch[2, 1] = np.frombuffer(element(R), np.uint8)
    with pytest.raises(ScalarRangeError, match="input 2 element 1"):
        poseidon.hash_batch(2, batch)
    with pytest.raises(InvalidInputError):
        poseidon.hash_batch(3, np.zeros((1, 3, 32), np.uint8))
    with pytest.raises(InvalidInputError):
        poseidon.hash_batch(8, np.zeros((1, 2, 32), np.uint8))
    with pytest.raises(InvalidInputError):
        poseidon.hash_one([bytes(32)] * 3)
    assert poseidon.hash_batch(2, np.zeros((0, 2, 32), np.uint8)).shape == (0, 32)
