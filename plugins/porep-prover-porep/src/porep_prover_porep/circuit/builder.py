# SPDX-License-Identifier: Apache-2.0
"""Placing gadgets in synthesis order, and the circuit that results.

Builder.call(name, fn, leaves, data) is one gadget call: in shape mode the
gadget's template (traced once per name, parameters and leaf pattern) is
placed after everything placed before it, its variables and constraints
numbered as bellperson's synthesis numbers them; in reference mode the
gadget runs on one value-carrying TraceCS (the plain-Python witness).
Either way the outputs come back in the caller's references.

Shape.r1cs() lays every instance's constraint entries into CSR matrices
(numpy, a template's instances at once), or those of a run of instances
alone; Shape.counts() is the shape alone.
Tasks (Builder.task(phase)) group consecutive instances that depend only on
earlier phases and themselves: the native witness generator runs a phase's
tasks in parallel.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from porep_prover import FrArray
from porep_prover.errors import R1CSError
from porep_prover.groth16 import R1CS, SparseMatrix

from .boolean import Boolean
from .system import AUX, CONST, INPUT, ONE, PORT, TraceCS, aux_ref, input_ref
from .template import COEFFICIENTS, Gadget, Leaf, Template, pattern, trace

_TEMPLATES: dict[tuple, Template] = {}
_TEMPLATES_LOCK = threading.Lock()


def template(key: tuple, fn: Gadget, leaves: Sequence[Leaf], n_data: int) -> Template:
    """The template of key, traced on first use in this process."""
    got = _TEMPLATES.get(key)
    if got is None:
        traced = trace(key, fn, leaves, n_data)
        with _TEMPLATES_LOCK:
            got = _TEMPLATES.setdefault(key, traced)
    return got


@dataclass
class Shape:
    """The placed instances of a circuit (and their data, when synthesized with values)."""
    templates: list[Template] = field(default_factory=list)
    tmpl: list[int] = field(default_factory=list)
    aux_base: list[int] = field(default_factory=list)
    input_base: list[int] = field(default_factory=list)
    row_base: list[int] = field(default_factory=list)
    port_off: list[int] = field(default_factory=list)
    data_off: list[int] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    data: list[int | None] = field(default_factory=list)
    tasks: list[tuple[int, int, int]] = field(default_factory=list)
    n_aux: int = 0
    n_input: int = 0
    n_constraints: int = 0
    n_data: int = 0

    @property
    def num_inputs(self) -> int:
        """Public inputs with the constant one."""
        return 1 + self.n_input

    def counts(self) -> dict[str, int]:
        return {"constraints": self.n_constraints, "inputs": self.num_inputs, "aux": self.n_aux,
                "instances": len(self.tmpl), "templates": len(self.templates)}

    def resolve(self, refs: np.ndarray) -> np.ndarray:
        """Global references to witness positions (inputs first, the one at 0)."""
        kind, idx = refs & 3, refs >> 2
        return np.where(kind == AUX, self.num_inputs + idx, np.where(kind == INPUT, 1 + idx, 0))

    def _entries(self, m: int, start: int, end: int):
        """Matrix m's entries (row, column, coefficient id) of instances [start, end), the rows counted
        from their first."""
        rows, cols, coeff = [], [], []
        tmpl = np.asarray(self.tmpl[start:end], np.int32)
        bases = {name: np.asarray(getattr(self, name), np.int64)
                 for name in ("aux_base", "input_base", "row_base", "port_off")}
        ports = self.resolve(np.asarray(self.ports, np.int64))
        for t, tp in enumerate(self.templates):
            sel = np.flatnonzero(tmpl == t) + start
            if not len(sel) or not len(tp.rows[m]):
                continue
            kind, idx = tp.refs[m] & 3, tp.refs[m] >> 2
            rows.append((bases["row_base"][sel][:, None] - self.first_row(start) + tp.rows[m][None, :]).ravel())
            col = np.zeros((len(sel), len(idx)), np.int64)
            for k, base in ((AUX, self.num_inputs + bases["aux_base"][sel]), (INPUT, 1 + bases["input_base"][sel])):
                on = kind == k
                col[:, on] = base[:, None] + idx[on][None, :]
            on = kind == PORT
            col[:, on] = ports[bases["port_off"][sel][:, None] + idx[on][None, :]]
            cols.append(col.ravel())
            coeff.append(np.broadcast_to(tp.coeff[m], (len(sel), len(idx))).ravel())
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint32)
        return np.concatenate(rows), np.concatenate(cols), np.concatenate(coeff)

    def _matrix(self, m: int, table: FrArray, start: int, end: int) -> SparseMatrix:
        rows, cols, coeff = self._entries(m, start, end)
        n_rows = self.rows_of(start, end)
        order = np.argsort(rows << 32 | cols, kind="stable")
        rows, cols, coeff = rows[order], cols[order], coeff[order]
        if len(rows) > 1 and np.any((rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1])):
            return SparseMatrix.from_arrays(rows, cols, FrArray(np.take(table.limbs, coeff, axis=0)),
                                            n_rows).tabled()
        indptr = np.zeros(n_rows + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
        return SparseMatrix(indptr, cols.astype(np.uint32), table, coeff.astype(np.uint32))

    def first_row(self, instance: int) -> int:
        """The first constraint of an instance (the constraints' count past the last)."""
        return self.row_base[instance] if instance < len(self.row_base) else self.n_constraints

    def rows_of(self, start: int, end: int) -> int:
        """The constraints of instances [start, end)."""
        return self.first_row(end) - self.first_row(start)

    def r1cs(self, start: int = 0, end: int | None = None) -> R1CS:
        """The circuit as CSR matrices (coefficients tabled); with start and end,
        the constraints of instances [start, end) alone (its row 0 their first)
        over every variable of the circuit."""
        end = len(self.tmpl) if end is None else end
        if not 0 <= start <= end <= len(self.tmpl):
            raise R1CSError(f"instances [{start}, {end}) of a circuit of {len(self.tmpl)}")
        table = FrArray.from_ints(COEFFICIENTS.values)
        return R1CS(self.num_inputs, self.n_aux, *(self._matrix(m, table, start, end) for m in range(3)))


class Builder:
    """Places gadget calls in order; reference=True evaluates them instead (values
    of every variable, in TraceCS.aux_values / input_values); data_of=shape
    collects the calls' data alone, for a circuit already placed as shape (its
    k-th call's template taken as placed there, nothing traced or mapped: the
    outputs handed back are the template's own, good for their count only)."""

    def __init__(self, reference: bool = False, data_of: Shape | None = None):
        self.reference = reference
        self.cs = TraceCS(values=True, record=False) if reference else None
        self.shape = Shape()
        self.data_of = data_of
        self._index: dict[tuple, int] = {}

    @contextlib.contextmanager
    def task(self, phase: int):
        start = len(self.shape.tmpl)
        yield
        if len(self.shape.tmpl) > start:
            self.shape.tasks.append((start, len(self.shape.tmpl), phase))

    def call(self, name: str, fn: Gadget, leaves: Sequence[Leaf], data: Sequence[int | None] = (),
             params: tuple = ()) -> list:
        """fn(cs, leaves, data) placed (or run), its outputs in the caller's references."""
        if self.cs is not None:
            return fn(self.cs, list(leaves), list(data))
        if self.data_of is not None:
            return self._data_only(name, data)
        s = self.shape
        key = (name, params, pattern(leaves))
        tp = template(key, fn, leaves, len(data))
        t = self._index.get(key)
        if t is None:
            t = self._index[key] = len(s.templates)
            s.templates.append(tp)
        s.tmpl.append(t)
        s.aux_base.append(s.n_aux)
        s.input_base.append(s.n_input)
        s.row_base.append(s.n_constraints)
        s.port_off.append(len(s.ports))
        s.data_off.append(s.n_data)
        s.ports += [x if isinstance(x, int) else (-1 if x.ref is None else x.ref) for x in leaves]
        s.data += data
        aux, inp = s.n_aux, s.n_input
        s.n_aux += tp.n_aux
        s.n_input += tp.n_input
        s.n_constraints += tp.n_constraints
        s.n_data += tp.n_data
        return [self._output(o, aux, inp, leaves) for o in tp.outputs]

    def _data_only(self, name: str, data: Sequence[int | None]) -> list:
        s, like = self.shape, self.data_of
        k = len(s.tmpl)
        t = like.tmpl[k] if like is not None and k < len(like.tmpl) else -1
        tp = like.templates[t] if like is not None and t >= 0 else None
        if tp is None or tp.key[0] != name or tp.n_data != len(data):
            raise R1CSError(f"call {k} ({name}) is not the circuit's")
        s.tmpl.append(t)
        s.data += data
        s.n_data += tp.n_data
        return tp.outputs

    @staticmethod
    def _output(o, aux: int, inp: int, leaves: Sequence[Leaf]):
        if isinstance(o, Boolean):
            if o.ref is None:
                return o
            mapped = Builder._output(o.ref, aux, inp, leaves)
            if isinstance(mapped, Boolean):
                return Boolean(mapped.ref, mapped.neg ^ o.neg)
            return Boolean(mapped, o.neg)
        kind, idx = o & 3, o >> 2
        if kind == AUX:
            return aux_ref(aux + idx)
        if kind == INPUT:
            return input_ref(inp + idx)
        if kind == PORT:
            return leaves[idx]
        assert kind == CONST
        return ONE

    @property
    def n_aux(self) -> int:
        return self.cs.n_aux if self.cs is not None else self.shape.n_aux

    def values(self) -> tuple[list, list]:
        """Reference mode: (input values, aux values)."""
        assert self.cs is not None
        return self.cs.input_values, self.cs.aux_values
