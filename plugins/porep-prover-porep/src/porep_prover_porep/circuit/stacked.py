# SPDX-License-Identifier: Apache-2.0
"""One partition of the StackedDRG PoRep circuit, in bellperson's synthesis
order (storage-proofs-porep's StackedCircuit::synthesize and Proof::synthesize,
storage-proofs-core's PoRCircuit), as gadget calls on a Builder.

Layout says what the shape depends on (layers, challenges, nodes, tree
arities); PartitionValues carries a partition's values (None: the shape
alone). Tasks: phase 0 the commitments; phase 1 each challenge's tree_d
path, parent columns and challenge bits; phase 2 each label; phase 3 the
encoding, the replica path and the challenged column.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..registered import tree_arities
from .boolean import Boolean
from .builder import Builder
from .gadgets import add, reverse_bit_numbering, to_bits_le, uint64_bits
from .hashes import create_label, poseidon, sha256_level
from .por import Path, equal, inputize, num, pack_inputs, por, unknown_path
from .system import TraceCS

DRG_PARENTS, EXP_PARENTS = 6, 8
LABEL_PARENTS = 37


@dataclass(frozen=True)
class Layout:
    """The shape of a partition's circuit. tree: the arities (base, sub, top) of
    tree_c and tree_r_last, 0 where a level is absent."""
    layers: int
    challenges: int
    nodes: int
    tree: tuple[int, int, int]

    @property
    def tree_d_depth(self) -> int:
        return self.nodes.bit_length() - 1

    @property
    def tree_arities(self) -> list[int]:
        """The arity of each level of a tree_c / tree_r_last path, leaf first."""
        return tree_arities(self.nodes, self.tree)


@dataclass(frozen=True)
class ColumnValues:
    rows: tuple[int, ...]
    path: Path


@dataclass(frozen=True)
class ChallengeValues:
    challenge: int
    data_leaf: int
    tree_d: Path
    drg: tuple[ColumnValues, ...]
    exp: tuple[ColumnValues, ...]
    replica: Path
    column: Path            # the challenged column's path in tree_c (its rows are the labels)


@dataclass(frozen=True)
class PartitionValues:
    replica_id: int
    comm_d: int
    comm_r: int
    comm_r_last: int
    comm_c: int
    challenges: tuple[ChallengeValues, ...]

# ---------------------------------------------------------------- gadget calls


def _to_bits(cs: TraceCS, leaves: list, data: list) -> list:
    return to_bits_le(cs, leaves[0])


def _uint64(cs: TraceCS, leaves: list, data: list) -> list:
    return uint64_bits(cs, data[0])


def _encode(cs: TraceCS, leaves: list, data: list) -> list:
    return [add(cs, leaves[0], leaves[1])]


def _bits(b: Builder, x: int) -> list[Boolean]:
    return b.call("to_bits_le", _to_bits, [x])

# ---------------------------------------------------------------- the partition


def _sha_level(b: Builder, cur: int, arity: int, index: int | None, siblings) -> tuple[list[Boolean], int]:
    bit, parent = sha256_level(b, cur, index, siblings[0])
    return [bit], parent


def _inclusion(b: Builder, layout: Layout, leaf: int, path: Path, root: int, sha: bool) -> None:
    """PoRCircuit with a private root, in tree_d (sha) or a Poseidon tree."""
    if sha:
        por(b, [2] * layout.tree_d_depth, leaf, path, root, _sha_level)
    else:
        por(b, layout.tree_arities, leaf, path, root)


def _column(b: Builder, layout: Layout, column: ColumnValues, comm_c: int) -> list[int]:
    rows = [num(b, v) for v in column.rows]
    _inclusion(b, layout, poseidon(b, rows), column.path, comm_c, sha=False)
    return rows


def _challenge(b: Builder, layout: Layout, v: ChallengeValues | None, roots: dict[str, int],
               replica_bits: list[Boolean]) -> None:
    if v is None:
        tree_path = unknown_path(layout.tree_arities)
        unknown_column = ColumnValues((None,) * layout.layers, tree_path)             # type: ignore[arg-type]
        v = ChallengeValues(None, None, unknown_path([2] * layout.tree_d_depth),     # type: ignore[arg-type]
                            (unknown_column,) * DRG_PARENTS, (unknown_column,) * EXP_PARENTS, tree_path, tree_path)
    with b.task(1):
        data_leaf = num(b, v.data_leaf)
        _inclusion(b, layout, data_leaf, v.tree_d, roots["comm_d"], sha=True)
    parents = []
    for column in v.drg + v.exp:
        with b.task(1):
            parents.append(_column(b, layout, column, roots["comm_c"]))
    with b.task(1):
        node_bits = b.call("uint64", _uint64, [], [v.challenge])
        pack_inputs(b, node_bits)
    labels = []
    for layer in range(1, layout.layers + 1):
        with b.task(2):
            rows = [column[layer - 1] for column in parents[:DRG_PARENTS]]
            if layer > 1:
                rows += [column[layer - 2] for column in parents[DRG_PARENTS:]]
            bits = [reverse_bit_numbering(_bits(b, x)) for x in rows]
            expanded = [bits[k % len(bits)] for k in range(LABEL_PARENTS)]
            labels.append(create_label(b, replica_bits, layer, node_bits, expanded))
    with b.task(3):
        encoded = b.call("encode", _encode, [labels[-1], data_leaf])[0]
        _inclusion(b, layout, encoded, v.replica, roots["comm_r_last"], sha=False)
        _inclusion(b, layout, poseidon(b, labels), v.column, roots["comm_c"], sha=False)


def synthesize(b: Builder, layout: Layout, values: PartitionValues | None = None) -> None:
    """Place (or evaluate) one partition's circuit."""
    get = (lambda name: getattr(values, name)) if values is not None else (lambda name: None)
    with b.task(0):
        replica = num(b, get("replica_id"))
        inputize(b, replica)
        replica_bits = reverse_bit_numbering(_bits(b, replica))
        roots = {}
        for name in ("comm_d", "comm_r"):
            roots[name] = num(b, get(name))
            inputize(b, roots[name])
        roots["comm_r_last"] = num(b, get("comm_r_last"))
        roots["comm_c"] = num(b, get("comm_c"))
        equal(b, roots["comm_r"], poseidon(b, [roots["comm_c"], roots["comm_r_last"]]))
    challenges = values.challenges if values is not None else (None,) * layout.challenges
    if len(challenges) != layout.challenges:
        raise ValueError(f"{len(challenges)} challenges for a circuit of {layout.challenges}")
    for v in challenges:
        _challenge(b, layout, v, roots, replica_bits)
