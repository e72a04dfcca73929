# SPDX-License-Identifier: Apache-2.0
"""storage-proofs-post's FallbackPoStCircuit (WinningPoSt and WindowPoSt) as
gadget calls on a Builder, in bellperson's synthesis order, and its
registered proofs' partition circuits.

Per sector slot (Sector::synthesize):

    comm_r_last, comm_c, comm_r    numbers, in that order; comm_r a public input
    comm_r = Poseidon-2(comm_c, comm_r_last)
    per challenge: the leaf, a number; its tree_r_last path to comm_r_last
                   (PoRCircuit, private root), its index bits packed into a
                   public input equal to the leaf's index

So a slot costs 313 + C (2 + the levels' costs) constraints (a level of
arity 8 costs 530, of 4 387, of 2 314) and has 1 + C public inputs; there is
no tree_c, no SHA-256 and no randomness in the circuit. A slot is a task of
the witness generator's one phase (slots are independent).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from porep_prover import FrArray

from ..circuit.builder import Builder
from ..circuit.hashes import poseidon
from ..circuit.placed import PlacedCircuit, kept
from ..circuit.por import Path, equal, inputize, num, por, unknown_path
from ..registered import tree_arities
from .registered import PoStProof


@dataclass(frozen=True)
class PostLayout:
    """The shape of a FallbackPoSt partition: sector slots, challenges a slot,
    the sector's nodes and tree_r_last's arities (base, sub, top)."""
    sectors: int
    challenges: int
    nodes: int
    tree: tuple[int, int, int]

    @property
    def tree_arities(self) -> list[int]:
        return tree_arities(self.nodes, self.tree)


@dataclass(frozen=True)
class SlotValues:
    """A sector slot's values: its commitments, and per challenge the leaf and its path."""
    comm_r: int
    comm_c: int
    comm_r_last: int
    leaves: tuple[int, ...]
    paths: tuple[Path, ...]


def layout_of(proof: PoStProof) -> PostLayout:
    return PostLayout(proof.sector_count, proof.challenge_count, proof.nodes, proof.tree)


def _slot(b: Builder, layout: PostLayout, v: SlotValues | None) -> None:
    if v is None:
        v = SlotValues(None, None, None, (None,) * layout.challenges,         # type: ignore[arg-type]
                       (unknown_path(layout.tree_arities),) * layout.challenges)
    if len(v.leaves) != layout.challenges or len(v.paths) != layout.challenges:
        raise ValueError(f"{len(v.leaves)} leaves and {len(v.paths)} paths for a slot of {layout.challenges}")
    comm_r_last = num(b, v.comm_r_last)
    comm_c = num(b, v.comm_c)
    comm_r = num(b, v.comm_r)
    inputize(b, comm_r)
    equal(b, comm_r, poseidon(b, [comm_c, comm_r_last]))
    for leaf, path in zip(v.leaves, v.paths):
        por(b, layout.tree_arities, num(b, leaf), path, comm_r_last)


def synthesize(b: Builder, layout: PostLayout, slots: Sequence[SlotValues] | None = None) -> None:
    """Place (or evaluate) one partition: every slot, each a task of phase 0."""
    if slots is not None and len(slots) != layout.sectors:
        raise ValueError(f"{len(slots)} sector slots for a circuit of {layout.sectors}")
    for i in range(layout.sectors):
        with b.task(0):
            _slot(b, layout, slots[i] if slots is not None else None)


class PostCircuit(PlacedCircuit):
    """A FallbackPoSt partition circuit of one layout."""

    def __init__(self, layout: PostLayout):
        super().__init__(lambda b, values: synthesize(b, layout, values), f"{layout} circuit")
        self.layout = layout

    def slots_witness(self, slots: Sequence[SlotValues], expected: list[int], threads: int | None = None,
                      out: FrArray | None = None) -> FrArray:
        """The partition's witness from its slots' values, its public inputs held
        to expected (a verifier's); VanillaProofError otherwise."""
        return self.witness(slots, expected, "the PoSt partition", threads, out)


def post_circuit(proof: PoStProof) -> PostCircuit:
    """The partition circuit of a registered PoSt proof, built on first use in this process."""
    layout = layout_of(proof)
    return kept(("post", layout), lambda: PostCircuit(layout))


def shape_counts(layout: PostLayout) -> dict[str, int]:
    """Constraints, public inputs (with the one) and aux of a layout's circuit, nothing built."""
    builder = Builder()
    synthesize(builder, layout)
    return builder.shape.counts()
