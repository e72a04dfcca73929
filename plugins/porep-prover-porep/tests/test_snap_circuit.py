# SPDX-License-Identifier: Apache-2.0
"""The SnapDeals update's circuit (storage-proofs-update's EmptySectorUpdate)
held to rust-fil-proofs' published numbers: partition counts of
tests/circuit.rs (1 KiB 1,248,389, 2 KiB 1,705,039, 8 KiB 2,620,359, 32 KiB
6,760,091, 32 GiB 81,049,499 constraints, 5 inputs with the one), the
gadgets' counts of gadgets.rs' tests (gen_challenge_bits 568 / 4,544 /
5,680, apex_por 317,654 and 5,808,515), the first five challenges
challenges.rs hard-codes per size and partition (P_gen with the custom tag,
the digests' bits); P_gen equal in and out of the circuit; the 2 KiB and 8
MiB witnesses of sectors sealed and updated here satisfied with a
verifier's public inputs (2 KiB: equal to the plain-Python evaluation),
flipped bits caught."""
import secrets

import pytest

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover.errors import UnsatisfiedError  # noqa: E402
from porep_prover_porep import pieces, poseidon, seal  # noqa: E402
from porep_prover_porep.circuit.builder import Builder  # noqa: E402
from porep_prover_porep.circuit.por import num  # noqa: E402
from porep_prover_porep.circuit.system import TraceCS, port_ref  # noqa: E402
from porep_prover_porep.fr32 import R, to_int  # noqa: E402
from porep_prover_porep.payload import prover_id_of  # noqa: E402
from porep_prover_porep.snap import challenges, vanilla  # noqa: E402
from porep_prover_porep.snap.circuit import (apex_por, challenge_bits, shape_counts, synthesize,  # noqa: E402
                                             update_circuit)
from porep_prover_porep.snap.gadgets import _poseidon_gen, bits_of  # noqa: E402
from porep_prover_porep.snap.registered import REGISTERED_UPDATE, UpdateProof  # noqa: E402
from porep_prover_porep.snap.update import update  # noqa: E402

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
TEST_SEED = bytes([0x59, 0x62, 0xbe, 0x5d, 0x76, 0x3d, 0x31, 0x8d, 0x17, 0xdb, 0x37, 0x32, 0x54, 0x06, 0xbc, 0xe5])
# storage-proofs-update/src/challenges.rs test_challenges_against_hardcoded: (sector bytes, k) -> first 5
CHALLENGES = {
    (1 * KIB, 0): [21, 7, 3, 31, 0], (2 * KIB, 0): [53, 51, 56, 3, 0], (4 * KIB, 0): [117, 25, 62, 0, 72],
    (8 * KIB, 0): [245, 140, 15, 128, 28], (16 * KIB, 0): [245, 140, 15, 128, 28],
    (16 * KIB, 1): [286, 308, 493, 510, 508], (32 * KIB, 0): [245, 454, 3, 400, 193],
    (32 * KIB, 1): [542, 666, 955, 927, 911], (8 * MIB, 0): [36085, 32783, 44060, 10950, 3731],
    (8 * MIB, 1): [78878, 130797, 112892, 93994, 78379], (16 * MIB, 0): [101621, 16391, 109319, 25944, 41193],
    (16 * MIB, 1): [209950, 163702, 175679, 224741, 197410],
    (512 * MIB, 0): [1019125, 116736, 706220, 59698, 799498],
    (512 * MIB, 1): [2092548, 1213276, 1185483, 1164598, 1095197],
    (512 * MIB, 14): [15212432, 15665918, 15015423, 15012912, 15495223],
    (512 * MIB, 15): [16388544, 15794686, 16637142, 16319148, 16328348],
    (32 * GIB, 0): [1019125, 27985696, 15282860, 11586600, 44651330],
    (32 * GIB, 1): [109168525, 127316247, 80331041, 97065716, 72310052],
    (32 * GIB, 14): [990420169, 955146989, 968005601, 976863263, 944650706],
    (32 * GIB, 15): [1038629497, 1053983614, 1030421316, 1027373887, 1068685433],
    (64 * GIB, 0): [1019125, 13992848, 3820715, 18225541, 57316660],
    (64 * GIB, 1): [243386253, 197875851, 204632136, 171516766, 247789010],
    (64 * GIB, 14): [1997053129, 1920414070, 2003609080, 1900492803, 1963254685],
    (64 * GIB, 15): [2045262457, 2036941247, 2136653521, 2091356007, 2147167623],
}
# the TreeR shapes of storage-proofs-update's test sizes (constants.rs validate_tree_r_shape)
TEST_TREES = {1 * KIB: (8, 4, 0), 2 * KIB: (8, 0, 0), 4 * KIB: (8, 2, 0), 8 * KIB: (8, 4, 0), 16 * KIB: (8, 8, 0),
              32 * KIB: (8, 8, 2), 8 * MIB: (8, 0, 0), 16 * MIB: (8, 2, 0), 512 * MIB: (8, 0, 0),
              32 * GIB: (8, 8, 0), 64 * GIB: (8, 8, 2)}


def sized(size: int) -> UpdateProof:
    return UpdateProof(f"test{size}", -1, size, TEST_TREES[size])


class XorShift:
    """rand_xorshift's XorShiftRng (next_u64: two next_u32, low first)."""

    def __init__(self, seed: bytes):
        self.s = [int.from_bytes(seed[i:i + 4], "little") for i in range(0, 16, 4)]

    def u32(self) -> int:
        x, y, z, w = self.s
        t = (x ^ (x << 11)) & 0xFFFFFFFF
        self.s = [y, z, w, (w ^ (w >> 19) ^ t ^ (t >> 8)) & 0xFFFFFFFF]
        return self.s[3]

    def u64(self) -> int:
        low = self.u32()
        return self.u32() << 32 | low


def fr_random(rng: XorShift) -> int:
    """blstrs' Scalar::random: four u64 words, the top bit cleared, drawn again until below r."""
    while True:
        words = [rng.u64() for _ in range(4)]
        value = sum(w << (64 * i) for i, w in enumerate(words)) & ((1 << 255) - 1)
        if value < R:
            return value


def test_partition_counts_equal_rust_fil_proofs():
    published = {1 * KIB: 1_248_389, 2 * KIB: 1_705_039, 8 * KIB: 2_620_359, 32 * KIB: 6_760_091,
                 32 * GIB: 81_049_499}
    for size, constraints in published.items():
        counts = shape_counts(sized(size))
        assert (counts["constraints"], counts["inputs"]) == (constraints, 5), size
    assert shape_counts(REGISTERED_UPDATE["StackedDrg2KiBV1"])["constraints"] == 1_705_039
    assert shape_counts(REGISTERED_UPDATE["StackedDrg32GiBV1"])["constraints"] == 81_049_499


def test_gadget_counts_equal_rust_fil_proofs():
    for size, expected in ((2 * KIB, 568), (512 * MIB, 4_544), (32 * GIB, 5_680), (64 * GIB, 5_680)):
        b = Builder()
        comm_r_new, partition = num(b, None), num(b, None)
        before = b.shape.n_constraints
        bits = challenge_bits(b, sized(size), comm_r_new, partition)
        assert b.shape.n_constraints - before == expected, size
        assert len(bits) == sized(size).challenges
    for leaves, partitions, expected in ((8, 1, 317_654), (128, 2, 5_808_515), (16, 4, 771_448), (8, 8, 453_797)):
        b = Builder()
        comm_d, apex = num(b, None), [num(b, None) for _ in range(leaves)]
        path = [num(b, None) for _ in range(partitions.bit_length() - 1)]
        k_bits = bits_of(b, num(b, None), len(path)) if path else []
        before = b.shape.n_constraints
        apex_por(b, apex, k_bits, path, comm_d)
        assert b.shape.n_constraints - before == expected, (leaves, partitions)


def test_challenges_equal_the_hard_coded_vectors():
    comm_r_new = fr_random(XorShift(TEST_SEED))
    for (size, k), expected in CHALLENGES.items():
        assert challenges.challenges(sized(size), comm_r_new, k)[:5] == expected, (size, k)
    got = challenges.challenges(REGISTERED_UPDATE["StackedDrg32GiBV1"], comm_r_new, 15)
    assert len(got) == 86 and all(c >> 26 == 15 for c in got)


def test_p_gen_equals_the_circuits_and_the_merkle_tag_the_native_hash():
    for a, b in ((0, 0), (1, 2), (R - 1, secrets.randbelow(R))):
        cs = TraceCS(values=True, port_values=[a, b], record=False)
        out = _poseidon_gen(cs, [port_ref(0), port_ref(1)], [])[0]
        assert cs.value(out) == challenges.gen_hash(a, b)
    a, b = secrets.randbelow(R), secrets.randbelow(R)
    merkle = poseidon.hash_one([a.to_bytes(32, "little"), b.to_bytes(32, "little")])
    saved = challenges.GEN_TAG
    try:
        challenges.GEN_TAG = 3
        assert challenges.gen_hash(a, b) == int.from_bytes(merkle, "little")
    finally:
        challenges.GEN_TAG = saved


def updated(size: int, seal_name: str, h: int | None = None):
    data = pieces.sector_data([pieces.random_piece(size, secrets.randbelow(1 << 32))], size)
    sealed = seal.precommit2(seal.precommit1(seal_name, data, prover_id_of(1000), 3, secrets.token_bytes(32)))
    return update(sealed, pieces.sector_data([pieces.random_piece(size, secrets.randbelow(1 << 32))], size), h)


def partition_values(u, k: int):
    public = challenges.public_inputs(u.proof, k, u.h, to_int(u.comm_r_old), to_int(u.comm_d_new),
                                      to_int(u.comm_r_new))
    pp = u.partition_proof(k)
    vanilla.verify(u.proof, pp, k, u.h, *public[1:])
    return vanilla.values(u.proof, pp, public), public


def test_2kib_witness_is_satisfied_and_equals_the_reference():
    u = updated(2 * KIB, "StackedDrg2KiBV1_1")
    values, public = partition_values(u, 0)
    circuit = update_circuit(u.proof)
    w = circuit.partition_witness(values, public, threads=2)
    circuit.check(w)
    b = Builder(reference=True)
    synthesize(b, u.proof, values)
    inputs, aux = b.values()
    assert w.to_ints() == [1, *inputs, *aux]
    for at in (1 + len(public) + 7, len(w) // 2, len(w) - 1):
        bad = w.copy()
        bad.limbs[at, 0] ^= 1
        with pytest.raises(UnsatisfiedError):
            circuit.check(bad)


def test_8mib_update_of_a_sealed_sector_satisfies_its_last_partition():
    u = updated(8 * MIB, "StackedDrg8MiBV1_1", h=9)
    assert u.proof.partitions == 4 and u.h == 9
    for k in range(4):
        values, public = partition_values(u, k)
    assert public[0] == 3 | (1 << 2) << 2                   # k = 3, h_select = 2^2 (h = hs[2] = 9)
    circuit = update_circuit(u.proof)
    circuit.check(circuit.partition_witness(values, public, threads=2))
