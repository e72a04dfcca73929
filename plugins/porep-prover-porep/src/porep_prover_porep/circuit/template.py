# SPDX-License-Identifier: Apache-2.0
"""Templates: a gadget traced once with ports in place of its operands,
kept as arrays, and placed wherever the circuit calls it.

A gadget is a function fn(cs, leaves, data) -> outputs: leaves a list of
numbers (references) and Booleans, data the values it allocates from
outside (None while tracing), outputs a list of references and Booleans.
Its template depends on the pattern of its leaves (which are constant, and
their values; which are negated), so the pattern is part of its key.

Arrays, references encoded as in system.py (kind in the low two bits):
    rows[m]     int32   each entry's constraint, for m = A, B, C
    refs[m]     int64   each entry's variable
    coeff[m]    uint32  each entry's coefficient, an index into COEFFICIENTS
    ops         int64   (n_ops, 6): opcode, target, four arguments (witness.c)
    sums        int64   (n, 2): the (variable, coefficient) pairs of OP_SUMBITS
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..fr32 import R
from .boolean import Boolean
from .system import OP_BITS, OP_BOOL, OP_DATA, OP_SOLVE, OP_SUMBITS, TraceCS, port_ref

Leaf = int | Boolean
Gadget = Callable[[TraceCS, list, list], list]


class CoefficientTable:
    """Every distinct coefficient of every template, in first-seen order (ids are stable)."""

    def __init__(self) -> None:
        self.values: list[int] = [1]
        self._ids: dict[int, int] = {1: 0}
        self._lock = threading.Lock()

    def id(self, value: int) -> int:
        value %= R
        got = self._ids.get(value)
        if got is None:
            with self._lock:
                got = self._ids.setdefault(value, len(self.values))
                if got == len(self.values):
                    self.values.append(value)
        return got


COEFFICIENTS = CoefficientTable()


def pattern(leaves: Sequence[Leaf]) -> tuple:
    """What a template depends on in its leaves: kind, and constant values or negation."""
    return tuple("n" if isinstance(x, int) else ("c", x.neg) if x.ref is None else ("b", x.neg) for x in leaves)


def ports_of(leaves: Sequence[Leaf]) -> list[Leaf]:
    """The leaves with ports for their variables (port k for the k-th leaf)."""
    out: list[Leaf] = []
    for k, x in enumerate(leaves):
        if isinstance(x, int):
            out.append(port_ref(k))
        else:
            out.append(x if x.ref is None else Boolean(port_ref(k), x.neg))
    return out


@dataclass
class Template:
    """A traced gadget: sizes, constraint entries, value rules and outputs."""
    key: tuple
    n_ports: int
    n_aux: int
    n_input: int
    n_constraints: int
    n_data: int
    rows: tuple[np.ndarray, np.ndarray, np.ndarray]
    refs: tuple[np.ndarray, np.ndarray, np.ndarray]
    coeff: tuple[np.ndarray, np.ndarray, np.ndarray]
    ops: np.ndarray
    sums: np.ndarray
    outputs: list

    @property
    def nnz(self) -> int:
        return sum(len(r) for r in self.rows)


def _constraint_arrays(cs: TraceCS):
    rows, refs, coeff = [], [], []
    for m in range(3):
        r_, f_, c_ = [], [], []
        for row, abc in enumerate(cs.constraints):
            for ref, c in sorted(abc[m].items()):
                if c % R:
                    r_.append(row)
                    f_.append(ref)
                    c_.append(COEFFICIENTS.id(c))
        rows.append(np.array(r_, np.int32))
        refs.append(np.array(f_, np.int64))
        coeff.append(np.array(c_, np.uint32))
    return tuple(rows), tuple(refs), tuple(coeff)


def _op_arrays(cs: TraceCS) -> tuple[np.ndarray, np.ndarray]:
    ops = np.zeros((len(cs.ops), 6), np.int64)
    sums: list[tuple[int, int]] = []
    for i, (target, op, *args) in enumerate(cs.ops):
        row = [op, target, 0, 0, 0, 0]
        if op == OP_DATA:
            row[2] = args[0]
        elif op == OP_BITS:
            row[2], row[3] = args
        elif op == OP_BOOL:
            table, operands = args
            row[2] = table
            for j in range(3):
                row[3 + j] = operands[j][0] << 1 | int(operands[j][1]) if j < len(operands) else -1
        elif op == OP_SUMBITS:
            lc, n = args
            start = len(sums)
            sums += [(r, c) for r, c in sorted(lc.items()) if c]
            row[2], row[3], row[4] = start, len(sums) - start, n
        elif op == OP_SOLVE:
            a, b, c = cs.constraints[args[0]]
            in_c = bool(c.get(target, 0) % R)
            row[2], row[3] = args[0], 0 if in_c else 1
            row[4] = COEFFICIENTS.id(pow((c if in_c else a)[target], -1, R))
        ops[i] = row
    return ops, np.array(sums, np.int64).reshape(-1, 2)


def trace(key: tuple, fn: Gadget, leaves: Sequence[Leaf], n_data: int) -> Template:
    """The template of fn over leaves of this pattern (values are not looked at)."""
    cs = TraceCS()
    outputs = fn(cs, ports_of(leaves), [None] * n_data)
    if cs.n_data != n_data:
        raise AssertionError(f"{key[0]} takes {cs.n_data} data elements, called with {n_data}")
    rows, refs, coeff = _constraint_arrays(cs)
    ops, sums = _op_arrays(cs)
    return Template(key, len(leaves), cs.n_aux, cs.n_input, cs.n_constraints, cs.n_data, rows, refs, coeff, ops,
                    sums, list(outputs))
