# SPDX-License-Identifier: Apache-2.0
"""The StackedDRG circuit: its shapes against rust-fil-proofs' numbers (the toy
circuit of stacked_circuit.rs, one label, a 32 GiB partition counted), its
gadgets against bellperson's and neptune's counts and against the plain
primitives, the native witness against the plain-Python one, satisfaction of
the witnesses it makes for toy and 2 KiB sectors, and failure of any other."""
import hashlib

import numpy as np
import pytest
from bit_flips import assert_bit_flips_caught

pytest.importorskip("porep_prover_porep.circuit._witness")

from porep_prover.field.fr_array import FrArray  # noqa: E402
from porep_prover_porep import pieces, poseidon, seal  # noqa: E402
from porep_prover_porep.circuit import toy, values  # noqa: E402
from porep_prover_porep.circuit.boolean import Boolean, bit  # noqa: E402
from porep_prover_porep.circuit.builder import Builder  # noqa: E402
from porep_prover_porep.circuit.gadgets import to_bits_le  # noqa: E402
from porep_prover_porep.circuit.hashes import create_label, poseidon as poseidon_call, sha256  # noqa: E402
from porep_prover_porep.circuit.partition import partition_circuit, shape_counts  # noqa: E402
from porep_prover_porep.circuit.poseidon import poseidon_hash  # noqa: E402
from porep_prover_porep.circuit.stacked import Layout, synthesize  # noqa: E402
from porep_prover_porep.circuit.system import TraceCS, port_ref  # noqa: E402
from porep_prover_porep.circuit.witness import Program  # noqa: E402
from porep_prover_porep.fr32 import R, truncate  # noqa: E402
from porep_prover_porep.registered import seal_proof  # noqa: E402

GIB = 1 << 30


def _bits_from_data(cs, leaves, data):
    """256 allocated bits of 32 bytes, each byte most significant bit first
    (storage-proofs-core's bytes_into_boolean_vec_be)."""
    value = data[0]
    return [Boolean(r, False) for r in cs.alloc_bits(~cs.data_slot(), 256, value)]


def _message_order(raw: bytes | None) -> int | None:
    """32 bytes as the integer whose bit j is the message's bit j (bytes in order,
    each most significant bit first)."""
    return None if raw is None else int.from_bytes(bytes(int(f"{x:08b}"[::-1], 2) for x in raw), "little")


def _label_circuit(b: Builder, layer: int, node: int, id_bytes: bytes | None, parents: list | None):
    id_bits = b.call("bits", _bits_from_data, [], [_message_order(id_bytes)])
    parent_bits = [b.call("bits", _bits_from_data, [], [_message_order(p)]) for p in (parents or [None] * 37)]
    node_bits = [Boolean(None, bool(node >> i & 1)) for i in range(64)]
    return create_label(b, id_bits, layer, node_bits, parent_bits)


def test_the_toy_circuit_has_rust_fil_proofs_shape():
    """storage-proofs-porep/tests/stacked_circuit.rs: 8 nodes, 2 layers, 1 challenge."""
    counts = shape_counts(toy.LAYOUT)
    assert (counts["constraints"], counts["inputs"]) == (1_199_620, 22)
    binary = shape_counts(Layout(2, 1, 8, (2, 0, 0)))            # DiskTree<PoseidonHasher, U2, U0, U0>
    assert (binary["constraints"], binary["inputs"]) == (1_206_212, 22)


def test_a_32gib_partition_counted_has_filecoins_shape():
    """11 layers, 18 challenges, LCTree<Poseidon, U8, U8, U0> over 2^30 nodes: the
    reference engine's 130,278,869 are the circuit's 130,278,541 constraints and the
    prover's one constraint per public input (328, with the one)."""
    big = seal_proof("StackedDrg32GiBV1_1")
    counts = shape_counts(values.layout_of(big))
    assert counts["constraints"] == 130_278_541
    assert counts["constraints"] + counts["inputs"] == 130_278_869
    assert counts["inputs"] == 328 and counts["aux"] == 130_169_893


def test_one_label_has_create_labels_count_and_value(rng):
    """create_label.rs's test: replica id and 37 parents' bytes as allocated bits,
    node and layer constants: 532,025 constraints; the label is the plain one."""
    shape = Builder()
    _label_circuit(shape, 3, 22, None, None)
    assert shape.shape.n_constraints == 532_025
    replica = truncate(rng.randbytes(32))
    parents = [truncate(rng.randbytes(32)) for _ in range(37)]
    ref = Builder(reference=True)
    out = _label_circuit(ref, 3, 22, replica, parents)
    msg = replica + (3).to_bytes(4, "big") + (22).to_bytes(8, "big") + bytes(20) + b"".join(parents)
    assert ref.cs.value(out) == int.from_bytes(truncate(hashlib.sha256(msg).digest()), "little")


def test_sha256_gadget_count_and_digest(rng):
    """A compression of 512 allocated bits from the IV: bellperson's 25,840; a
    two-block message's digest equals hashlib's."""
    cs = TraceCS()
    from porep_prover_porep.circuit.sha256 import compress, iv
    compress(cs, [Boolean(port_ref(k), False) for k in range(512)], iv())
    assert cs.n_constraints == 25_840
    msg = rng.randbytes(64)
    ref = Builder(reference=True)
    bits = [b for half in (msg[:32], msg[32:]) for b in ref.call("bits", _bits_from_data, [], [_message_order(half)])]
    digest = sha256(ref, bits)
    got = bytes(int("".join(str(bit(ref.cs, b)) for b in digest[i:i + 8]), 2) for i in range(0, 256, 8))
    assert got == hashlib.sha256(msg).digest()


@pytest.mark.parametrize("arity, count", [(2, 311), (8, 505), (11, 598)])
def test_poseidon_gadget_count_and_hash(arity, count, rng):
    """neptune's legacy circuit: 311 / 505 / 598 constraints; the hash is the plugin's."""
    cs = TraceCS()
    poseidon_hash(cs, [port_ref(k) for k in range(arity)])
    assert cs.n_constraints == cs.n_aux == count
    xs = [rng.randrange(R) for _ in range(arity)]
    ref = Builder(reference=True)
    out = poseidon_call(ref, [ref.cs.alloc_data(x) for x in xs])
    assert ref.cs.value(out) == int.from_bytes(poseidon.hash_one([x.to_bytes(32, "little") for x in xs]), "little")


def test_to_bits_le_allocates_255_bits():
    cs = TraceCS()
    to_bits_le(cs, port_ref(0))
    assert (cs.n_aux, cs.n_constraints) == (255, 256)


@pytest.fixture(scope="module")
def toy_circuit():
    return partition_circuit_of(toy.LAYOUT)


def partition_circuit_of(layout):
    b = Builder()
    synthesize(b, layout)
    return b.shape, b.shape.r1cs(), Program(b.shape)


def test_the_native_toy_witness_is_the_plain_one_and_satisfies(toy_circuit, rng):
    shape, r1cs, program = toy_circuit
    c1 = toy.toy_output(rng.randrange(1 << 32))
    pv = values.partition_values(c1, 0)
    data = Builder()
    synthesize(data, toy.LAYOUT, pv)
    w = program.run(data.shape.data, threads=2)
    assert r1cs.is_satisfied(w)
    ref = Builder(reference=True)
    synthesize(ref, toy.LAYOUT, pv)
    inputs, aux = ref.values()
    assert FrArray.from_ints([1] + inputs + aux) == w
    assert w[1:4].to_ints() == [pv.replica_id, pv.comm_d, pv.comm_r]


@pytest.fixture(scope="module")
def sector_2kib():
    rng = np.random.default_rng(11)
    data = pieces.sector_data([pieces.random_piece(2048, int(rng.integers(1 << 32)))], 2048)
    return seal.seal_sector(data, "StackedDrg2KiBV1_1", bytes(range(32)), 77, bytes([3] * 32), bytes([4] * 32))


def test_a_2kib_partition_is_satisfied_with_a_verifiers_public_inputs(sector_2kib):
    circuit = partition_circuit(seal_proof("StackedDrg2KiBV1_1"))
    w = circuit.witness(sector_2kib, 0, threads=2)
    assert circuit.r1cs.num_inputs == 40 and circuit.r1cs.is_satisfied(w)
    assert w[1:40].to_ints() == values.public_inputs(sector_2kib, 0)


def test_a_witness_with_one_bit_flipped_fails(sector_2kib, rng):
    circuit = partition_circuit(seal_proof("StackedDrg2KiBV1_1"))
    w = circuit.witness(sector_2kib, 0, threads=2)
    assert_bit_flips_caught(circuit.r1cs, w, rng)


def test_a_v1_partition_shares_the_circuit_and_is_satisfied():
    """V1 outputs (API 1.0's graph) fill the same circuit; their public inputs
    follow the graph of their version."""
    data = pieces.sector_data([pieces.random_piece(1024, 3)], 2048)
    c1 = seal.seal_sector(data, "StackedDrg2KiBV1", bytes(32), 5, bytes([6] * 32), bytes([8] * 32))
    circuit = partition_circuit(seal_proof("StackedDrg2KiBV1"))
    assert circuit is partition_circuit(seal_proof("StackedDrg2KiBV1_1"))
    w = circuit.witness(c1, 0, threads=1)
    assert circuit.r1cs.is_satisfied(w) and w[1:40].to_ints() == values.public_inputs(c1, 0)
