# SPDX-License-Identifier: Apache-2.0
"""storage-proofs-core's PoRCircuit and the small gadgets around it, as
gadget calls on a Builder: a number from data (AllocatedNum::alloc), a
public input equal to a number (inputize), constraint::equal, and a leaf's
inclusion path with a private root (PoRCircuit::synthesize: per level the
index bits, the siblings, insertion and the level's hash; the index bits
packed into public inputs, one per 254 bits; the root computed enforced
equal to the root given). The StackedDRG circuit (stacked) and the
FallbackPoSt circuit (post) both place these.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .boolean import Boolean
from .builder import Builder
from .gadgets import alloc_num, equal as enforce_equal, inputize as alloc_input, pack_into_inputs
from .hashes import tree_level
from .system import TraceCS


@dataclass(frozen=True)
class Path:
    """A Merkle path's values: per level the index within the siblings and the siblings."""
    levels: tuple[tuple[int, tuple[int, ...]], ...]


def unknown_path(arities: Sequence[int]) -> Path:
    """A path of these levels' arities with no values (a circuit's shape alone)."""
    return Path(tuple((None, (None,) * (a - 1)) for a in arities))        # type: ignore[misc]


def _num(cs: TraceCS, leaves: list, data: list) -> list:
    return [alloc_num(cs, data[0])]


def _inputize(cs: TraceCS, leaves: list, data: list) -> list:
    alloc_input(cs, leaves[0])
    return []


def _equal(cs: TraceCS, leaves: list, data: list) -> list:
    enforce_equal(cs, leaves[0], leaves[1])
    return []


def _pack_inputs(cs: TraceCS, leaves: list, data: list) -> list:
    pack_into_inputs(cs, leaves)
    return []


def num(b: Builder, value: int | None) -> int:
    """A number allocated from the instance's data."""
    return b.call("num", _num, [], [value])[0]


def inputize(b: Builder, x: int) -> None:
    """A public input equal to x."""
    b.call("inputize", _inputize, [x])


def equal(b: Builder, x: int, y: int) -> None:
    """x * 1 = y."""
    b.call("equal", _equal, [x, y])


def pack_inputs(b: Builder, bits: Sequence[Boolean]) -> None:
    """The bits packed into public inputs, 254 a input (multipack::pack_into_inputs)."""
    b.call("pack into inputs", _pack_inputs, bits)


Level = Callable[[Builder, int, int, int | None, Sequence[int | None]], tuple[list[Boolean], int]]


def _poseidon_level(b: Builder, cur: int, arity: int, index: int | None, siblings: Sequence[int | None]
                    ) -> tuple[list[Boolean], int]:
    return tree_level(b, cur, arity, index, siblings)


def por(b: Builder, arities: Sequence[int], leaf: int, path: Path, root: int,
        level: Level = _poseidon_level) -> None:
    """PoRCircuit with a private root: the path up from leaf through levels of
    these arities (level: one level's gadget calls, a Poseidon tree's by
    default), its index bits packed into public inputs, the root enforced
    equal. ValueError when the path has not one level an arity."""
    bits: list[Boolean] = []
    cur = leaf
    for arity, (index, siblings) in zip(arities, path.levels, strict=True):
        level_bits, cur = level(b, cur, arity, index, siblings)
        bits += level_bits
    pack_inputs(b, bits)
    equal(b, cur, root)
