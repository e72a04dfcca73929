# SPDX-License-Identifier: Apache-2.0
"""Filecoin's registered seal proofs and the sector parameters each implies.

From filecoin-proofs' constants.rs (layers, partitions, minimum challenges, tree
shapes) and filecoin-proofs-api's RegisteredSealProof (names, numbering, porep_id:
the proof's number and its nonce 0 as u64 little-endian, then zeros). Version 1
proofs use API version 1.0 of the graph, version 1.1 proofs API version 1.1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from porep_prover.errors import InvalidInputError

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class SealProof:
    """One registered seal proof.

    tree: the arities (base, sub, top) of tree_c and tree_r_last, 0 where a
    level is absent; challenges: the minimum over all partitions.
    """
    name: str
    number: int
    sector_size: int
    api_v11: bool
    layers: int
    partitions: int
    challenges: int
    tree: tuple[int, int, int]

    @property
    def nodes(self) -> int:
        return self.sector_size // 32

    @property
    def porep_id(self) -> bytes:
        return self.number.to_bytes(8, "little") + bytes(24)

    @property
    def challenges_per_partition(self) -> int:
        return math.ceil(self.challenges / self.partitions)

    @property
    def vanilla_variant(self) -> str:
        """The VanillaSealProof enum variant its proofs travel in (one per sector size)."""
        return self.name.split("V1")[0] + "V1"


_SIZES = (  # name part, bytes, layers, partitions, minimum challenges, tree shape
    ("2KiB", 2 * KIB, 2, 1, 2, (8, 0, 0)),
    ("8MiB", 8 * MIB, 2, 1, 2, (8, 0, 0)),
    ("512MiB", 512 * MIB, 2, 1, 2, (8, 0, 0)),
    ("32GiB", 32 * GIB, 11, 10, 176, (8, 8, 0)),
    ("64GiB", 64 * GIB, 11, 10, 176, (8, 8, 2)),
)

REGISTERED: dict[str, SealProof] = {}
for _version, _first in (("V1", 0), ("V1_1", 5)):
    for _i, (_part, _size, _layers, _partitions, _challenges, _tree) in enumerate(_SIZES):
        _name = f"StackedDrg{_part}{_version}"
        REGISTERED[_name] = SealProof(_name, _first + _i, _size, _version == "V1_1", _layers, _partitions,
                                      _challenges, _tree)


def seal_proof(name: str) -> SealProof:
    """The registered proof of that name; InvalidInputError naming the known ones."""
    try:
        return REGISTERED[name]
    except (KeyError, TypeError):
        raise InvalidInputError(f"unknown registered seal proof {name!r}: {', '.join(REGISTERED)}") from None
