# SPDX-License-Identifier: Apache-2.0
"""Filecoin's registered update proofs and the EmptySectorUpdate circuit each implies.

From storage-proofs-update's constants.rs (partition_count, challenge_count,
hs, apex_leaf_count, the TreeR shapes) and filecoin-proofs-api's
RegisteredUpdateProof (the numbers the reference engine's wire carries:
0-4 for 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB):

    partitions      1 up to 8 KiB, 2 up to 32 KiB, 4 up to 16 MiB, else 16
    challenges      10 a partition up to 16 MiB, else 86
    hs              the h values allowed: [1] * 6 up to 32 KiB, else 7..12 (default hs[3])
    apex leaves     8 up to 8 KiB, else 128
    tree_r          TreeR (tree_r_last's shape: base, sub, top arities); tree_d binary SHA-256

Its parameters are named by the SHA-256 of PublicParams' identifier
(storage-proofs-core's parameter_cache).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from porep_prover.errors import InvalidInputError

from ..registered import GIB, KIB, MIB, tree_arities

KIB_8, KIB_32, MIB_16 = 1 << 8, 1 << 10, 1 << 19          # sector sizes in nodes
_SIZES = (  # name part, bytes, tree shape (TreeR's, as the seal proof's)
    ("2KiB", 2 * KIB, (8, 0, 0)),
    ("8MiB", 8 * MIB, (8, 0, 0)),
    ("512MiB", 512 * MIB, (8, 0, 0)),
    ("32GiB", 32 * GIB, (8, 8, 0)),
    ("64GiB", 64 * GIB, (8, 8, 2)),
)


def partition_count(nodes: int) -> int:
    return 1 if nodes <= KIB_8 else 2 if nodes <= KIB_32 else 4 if nodes <= MIB_16 else 16


def challenge_count(nodes: int) -> int:
    return 10 if nodes <= MIB_16 else 86


def hs(nodes: int) -> tuple[int, ...]:
    return (1,) * 6 if nodes <= KIB_32 else (7, 8, 9, 10, 11, 12)


def apex_leaf_count(nodes: int) -> int:
    return 8 if nodes <= KIB_8 else 128


@dataclass(frozen=True)
class UpdateProof:
    """One registered update proof: its sector's size and TreeR shape (base, sub, top)."""
    name: str
    number: int
    sector_size: int
    tree: tuple[int, int, int]

    @property
    def nodes(self) -> int:
        return self.sector_size // 32

    @property
    def challenge_bits(self) -> int:
        """log2(nodes): a challenge's bits, tree_d's height."""
        return self.nodes.bit_length() - 1

    @property
    def partitions(self) -> int:
        return partition_count(self.nodes)

    @property
    def partition_bits(self) -> int:
        return self.partitions.bit_length() - 1

    @property
    def challenges(self) -> int:
        """Challenges a partition."""
        return challenge_count(self.nodes)

    @property
    def hs(self) -> tuple[int, ...]:
        return hs(self.nodes)

    @property
    def default_h(self) -> int:
        """The h filecoin-proofs encodes with (hs[3])."""
        return self.hs[3]

    @property
    def apex_leaves(self) -> int:
        return apex_leaf_count(self.nodes)

    @property
    def apex_bits(self) -> int:
        return self.apex_leaves.bit_length() - 1

    @property
    def tree_arities(self) -> list[int]:
        """The arity of each level of a TreeR path, leaf first."""
        return tree_arities(self.nodes, self.tree)

    @property
    def identifier(self) -> str:
        """PublicParams' identifier, which names the parameters."""
        return f"empty_sector_update::PublicParams{{ sector_nodes: {self.nodes} }}"

    @property
    def params_name(self) -> str:
        """The canonical parameters' file name (parameters.json's key)."""
        base, sub, top = self.tree
        digest = hashlib.sha256(self.identifier.encode()).hexdigest()
        return f"v28-empty-sector-update-merkletree-poseidon_hasher-{base}-{sub}-{top}-{digest}.params"


REGISTERED_UPDATE: dict[str, UpdateProof] = {}
for _i, (_part, _size, _tree) in enumerate(_SIZES):
    REGISTERED_UPDATE[f"StackedDrg{_part}V1"] = UpdateProof(f"StackedDrg{_part}V1", _i, _size, _tree)
BY_NUMBER = {p.number: p for p in REGISTERED_UPDATE.values()}
BY_SIZE = {p.sector_size: p for p in REGISTERED_UPDATE.values()}


def update_proof(value) -> UpdateProof:
    """The registered update proof of a RegisteredUpdateProof number or a name;
    InvalidInputError naming the ones served."""
    proof = REGISTERED_UPDATE.get(value) if isinstance(value, str) else \
        BY_NUMBER.get(value) if isinstance(value, int) and not isinstance(value, bool) else None
    if proof is None:
        raise InvalidInputError(f"registered_proof {value!r:.60} is not a registered update proof ("
                                f"{', '.join(f'{p.number} {p.name}' for p in REGISTERED_UPDATE.values())})")
    return proof
