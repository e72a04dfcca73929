# SPDX-License-Identifier: Apache-2.0
"""Filecoin's registered PoSt proofs and the FallbackPoSt circuit each implies.

From filecoin-proofs' constants.rs (WINNING_POST_CHALLENGE_COUNT 66 and
WINNING_POST_SECTOR_COUNT 1, WINDOW_POST_CHALLENGE_COUNT 10 and
WINDOW_POST_SECTOR_COUNT by size) and parameters.rs (winning_post_setup_params:
a WinningPoSt's 66 challenges of its one sector laid out as 66 sector slots
of one challenge each), and filecoin-proofs-api's RegisteredPoStProof (the
numbers the reference engine's wire carries: 0-4 Winning, 5-9 Window V1,
10-14 Window V1_2, which Go names V1_1).

A partition of the circuit has `sector_count` slots of `challenge_count`
challenges; its parameters are named by the SHA-256 of its identifier
(storage-proofs-core's parameter_cache), the same for Window V1 and V1_2.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from porep_prover.errors import InvalidInputError

from ..registered import GIB, KIB, MIB, tree_arities

WINNING_CHALLENGES = 66
WINDOW_CHALLENGES = 10
_SIZES = (  # name part, bytes, WINDOW_POST_SECTOR_COUNT, tree shape (as the seal proof's)
    ("2KiB", 2 * KIB, 2, (8, 0, 0)),
    ("8MiB", 8 * MIB, 2, (8, 0, 0)),
    ("512MiB", 512 * MIB, 2, (8, 0, 0)),
    ("32GiB", 32 * GIB, 2349, (8, 8, 0)),
    ("64GiB", 64 * GIB, 2300, (8, 8, 2)),
)


@dataclass(frozen=True)
class PoStProof:
    """One registered PoSt proof. kind: "winning" or "window"; sector_count:
    the circuit's sector slots a partition; challenge_count: the challenges a
    slot; api_version: "1.0.0" (a challenge's index counts every earlier
    slot's) or "1.2.0" (it counts the slot's own alone); tree: tree_r_last's
    arities (base, sub, top)."""
    name: str
    number: int
    kind: str
    sector_size: int
    sector_count: int
    challenge_count: int
    api_version: str
    tree: tuple[int, int, int]

    @property
    def nodes(self) -> int:
        return self.sector_size // 32

    @property
    def tree_arities(self) -> list[int]:
        """The arity of each level of a tree_r_last path, leaf first."""
        return tree_arities(self.nodes, self.tree)

    @property
    def sector_challenges(self) -> int:
        """Challenges a sector's vanilla proof answers: a WinningPoSt's every
        slot's (66), a WindowPoSt's a slot's (10)."""
        return self.sector_count * self.challenge_count if self.kind == "winning" else self.challenge_count

    @property
    def identifier(self) -> str:
        """FallbackPoSt::PublicParams' identifier, which names the parameters."""
        return (f"FallbackPoSt::PublicParams{{sector_size: {self.sector_size}, challenge_count: "
                f"{self.challenge_count}, sector_count: {self.sector_count}}}")

    @property
    def params_name(self) -> str:
        """The canonical parameters' file name (parameters.json's key)."""
        base, sub, top = self.tree
        digest = hashlib.sha256(self.identifier.encode()).hexdigest()
        return f"v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-{base}-{sub}-{top}-{digest}.params"


REGISTERED_POST: dict[str, PoStProof] = {}
for _i, (_part, _size, _window, _tree) in enumerate(_SIZES):
    for _name, _number, _kind, _slots, _challenges, _api in (
            (f"StackedDrgWinning{_part}V1", _i, "winning", WINNING_CHALLENGES, 1, "1.0.0"),
            (f"StackedDrgWindow{_part}V1", 5 + _i, "window", _window, WINDOW_CHALLENGES, "1.0.0"),
            (f"StackedDrgWindow{_part}V1_2", 10 + _i, "window", _window, WINDOW_CHALLENGES, "1.2.0")):
        REGISTERED_POST[_name] = PoStProof(_name, _number, _kind, _size, _slots, _challenges, _api, _tree)
BY_NUMBER = {p.number: p for p in REGISTERED_POST.values()}


def post_proof(value, kind: str | None = None) -> PoStProof:
    """The registered PoSt proof of a RegisteredPoStProof number or a name, of
    kind ("winning" or "window") when given; InvalidInputError naming the ones
    served."""
    proof = REGISTERED_POST.get(value) if isinstance(value, str) else \
        BY_NUMBER.get(value) if isinstance(value, int) and not isinstance(value, bool) else None
    if proof is None or (kind is not None and proof.kind != kind):
        served = [p for p in REGISTERED_POST.values() if kind is None or p.kind == kind]
        raise InvalidInputError(f"registered_proof {value!r:.60} is not a registered "
                                f"{kind + ' ' if kind else ''}PoSt proof ("
                                f"{', '.join(f'{p.number} {p.name}' for p in served)})")
    return proof
