# SPDX-License-Identifier: Apache-2.0
"""Filecoin's registered seal proofs and the sector parameters each implies.

From filecoin-proofs' constants.rs (layers, partitions, minimum challenges, tree
shapes) and filecoin-proofs-api's RegisteredSealProof (names, numbering, porep_id:
the proof's number and its nonce 0 as u64 little-endian, then zeros). Version 1
proofs use API version 1.0 of the graph, version 1.1 proofs API version 1.1.

A sector's graph and replica id are made under a porep_id and an API version
(PorepConfig). Filecoin's are its registered proof's (SealProof.config); other
chains built on the same proofs set their own (all zeros under API version
1.2.0, say), given with the job: porep_config(proof, porep_id, api_version).
API version 1.2.0 draws the graph as 1.1.0 does (storage-proofs-core's
drgraph and expander test `>= V1_1_0` and `== V1_0_0`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from porep_prover.errors import InvalidInputError

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
API_VERSIONS = ("1.0.0", "1.1.0", "1.2.0")


@dataclass(frozen=True)
class PorepConfig:
    """What a sector's graph and replica id are made under besides its size
    (storage-proofs' PoRepConfig): porep_id, 32 bytes; api_version, one of
    API_VERSIONS."""
    porep_id: bytes
    api_version: str

    @property
    def api_v11(self) -> bool:
        """The graph of API version 1.1 and later (the predecessor first; expander indices not truncated)."""
        return self.api_version != "1.0.0"


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
    def config(self) -> PorepConfig:
        """Filecoin's porep_id and API version of this proof."""
        return PorepConfig(self.porep_id, "1.1.0" if self.api_v11 else "1.0.0")

    @property
    def tree_arities(self) -> list[int]:
        """The arity of each level of a tree_c / tree_r_last path, leaf first."""
        return tree_arities(self.nodes, self.tree)

    @property
    def challenges_per_partition(self) -> int:
        return math.ceil(self.challenges / self.partitions)

    @property
    def vanilla_variant(self) -> str:
        """The VanillaSealProof enum variant its proofs travel in (one per sector size)."""
        return self.name.split("V1")[0] + "V1"


def tree_arities(nodes: int, tree: tuple[int, int, int]) -> list[int]:
    """The arity of each level of a path in a tree of `nodes` leaves of shape
    (base, sub, top), leaf first: base levels up to each base tree's root,
    then the sub-tree's level and the top's where present (rust-fil-proofs'
    LCTree / DiskTree: top x sub base trees)."""
    base, sub, top = tree
    leaves = nodes // max(sub, 1) // max(top, 1)
    levels = 0
    while leaves > 1:
        leaves //= base
        levels += 1
    return [base] * levels + [a for a in (sub, top) if a]


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


def _porep_id(value) -> bytes:
    if isinstance(value, str):
        try:
            value = bytes.fromhex(value)
        except ValueError:
            value = b""
    if not isinstance(value, (bytes, bytearray)) or len(value) != 32:
        raise InvalidInputError(f"a porep_id is 32 bytes (64 hex digits), not {value!r:.80}")
    return bytes(value)


def _api_version(value) -> str:
    text = value.removeprefix("V").replace("_", ".") if isinstance(value, str) else None
    if text not in API_VERSIONS:
        raise InvalidInputError(f"api_version {value!r:.40} is not one of {', '.join(API_VERSIONS)} "
                                "(or V1_0_0, V1_1_0, V1_2_0)")
    return text


def porep_config(proof: SealProof, porep_id=None, api_version=None) -> PorepConfig:
    """The config a job gives (porep_id: 32 bytes or 64 hex digits; api_version:
    "1.2.0" or "V1_2_0"), each part not given the registered proof's own;
    InvalidInputError naming a part that is neither."""
    own = proof.config
    return PorepConfig(own.porep_id if porep_id is None else _porep_id(porep_id),
                       own.api_version if api_version is None else _api_version(api_version))
