# SPDX-License-Identifier: Apache-2.0
"""SDR labels and the replica id: rust-fil-proofs' label vectors and the plain reference."""
import hashlib

import pytest

pytest.importorskip("porep_prover_porep._native")

from porep_prover.errors import InvalidInputError  # noqa: E402
from porep_prover_porep import graph  # noqa: E402
from porep_prover_porep import reference as ref  # noqa: E402


def limbs(*words):
    return b"".join(w.to_bytes(8, "little") for w in words)


# storage-proofs-porep tests/stacked_vanilla.rs test_stacked_porep_generate_labels: 11 layers,
# replica_id [9; 32], the last label of a 2 KiB (64 nodes) and a 4 KiB (128 nodes) graph
LABEL_VECTORS = [
    (64, bytes(32), False, limbs(0xd3faa96b9a0fba04, 0xea81a283d106485e, 0xe3d51b9afa5ac2b3, 0x0462f4f4f1a68d37)),
    (128, bytes(32), False, limbs(0x7e191e52c4a8da86, 0x5ae8a1c9e6fac148, 0xce239f3b88a894b8, 0x234c00d1dc1d53be)),
    (64, bytes([123] * 32), True, limbs(0xabb3f38bb70defcf, 0x777a2e4d7769119f, 0x3448959d495490bc,
                                        0x06021188c7a71cb5)),
    (128, bytes([123] * 32), True, limbs(0x22ab81cf68c4676d, 0x7a77a82fc7c9c189, 0xc6c03d32c1e42d23,
                                         0x0f777c18cc2c55bd)),
]


@pytest.mark.parametrize("nodes, porep_id, api_v11, last", LABEL_VECTORS)
def test_rust_fil_proofs_label_vectors(nodes, porep_id, api_v11, last):
    labels = graph.labels(bytes([9] * 32), 11, graph.parents_table(nodes, porep_id, api_v11))
    assert labels.shape == (11, nodes, 32)
    assert labels[-1, -1].tobytes() == last


@pytest.mark.parametrize("api_v11", [False, True])
def test_labels_equal_the_reference(api_v11, rng):
    replica, porep_id = rng.randbytes(31) + bytes([rng.randrange(64)]), rng.randbytes(32)
    nodes, layers = rng.choice([16, 64, 256]), rng.choice([2, 3])
    native = graph.labels(replica, layers, graph.parents_table(nodes, porep_id, api_v11))
    expected = ref.labels(replica, layers, nodes, porep_id, api_v11)
    for layer in range(layers):
        assert [native[layer, n].tobytes() for n in range(nodes)] == expected[layer]
    assert (native[..., 31] < 64).all()       # every label fr32-truncated


def test_replica_id_is_the_truncated_sha256_of_its_inputs(rng):
    prover, ticket, comm_d, porep_id = (rng.randbytes(32) for _ in range(4))
    sector = rng.randrange(1 << 64)
    digest = hashlib.sha256(prover + sector.to_bytes(8, "big") + ticket + comm_d + porep_id).digest()
    assert graph.replica_id(prover, sector, ticket, comm_d, porep_id) == digest[:31] + bytes([digest[31] & 0x3F])
    with pytest.raises(InvalidInputError):
        graph.replica_id(prover, -1, ticket, comm_d, porep_id)
    with pytest.raises(InvalidInputError):
        graph.replica_id(prover[:31], sector, ticket, comm_d, porep_id)


def test_label_inputs_are_checked():
    table = graph.parents_table(64, bytes(32), True)
    with pytest.raises(InvalidInputError):
        graph.labels(bytes(31), 2, table)
    with pytest.raises(InvalidInputError):
        graph.labels(bytes(32), 0, table)
    with pytest.raises(InvalidInputError):
        graph.labels(bytes(32), 2, table[:, :13])
