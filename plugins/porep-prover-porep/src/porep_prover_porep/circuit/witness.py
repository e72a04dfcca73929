# SPDX-License-Identifier: Apache-2.0
"""The witness of a placed circuit, filled natively (native/witness.c): each
instance's template's value rules, the instances of a task in order and a
phase's tasks on every thread.

    program = Program(shape)                 once per circuit (the templates' arrays)
    witness = program.run(data, threads)     per partition: an FrArray, inputs first

data: the values the instances take from outside, in placing order (what
Builder collects when synthesize is given a partition's values).
"""
from __future__ import annotations

import os

import numpy as np

from porep_prover.errors import WitnessError
from porep_prover import FrArray

from . import _witness
from .builder import Shape
from .template import COEFFICIENTS


def _concat(parts: list[np.ndarray], dtype, width: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The parts end to end and each part's offset (in rows)."""
    sizes = [len(p) for p in parts]
    offsets = np.zeros(len(parts) + 1, np.int64)
    np.cumsum(sizes, out=offsets[1:])
    shape = (-1, width) if width else (-1,)
    joined = np.concatenate(parts).astype(dtype).reshape(shape) if parts else np.zeros((0, width or 1), dtype)
    return np.ascontiguousarray(joined), offsets


class Program:
    """A shape's templates and instances as the native generator takes them."""

    def __init__(self, shape: Shape):
        self.shape = shape
        tps = shape.templates
        self.ops, self.ops_off = _concat([t.ops for t in tps], np.int64, 6)
        self.sums, sums_off = _concat([t.sums for t in tps], np.int64, 2)
        self.sums_off = sums_off[:-1].copy()
        self.row_ptr, self.row_ptr_off, self.refs, self.coeff, self.entry_off = [], [], [], [], []
        for m in range(3):
            ptrs = [np.searchsorted(t.rows[m], np.arange(t.n_constraints + 1)).astype(np.int64) for t in tps]
            rp, rp_off = _concat(ptrs, np.int64)
            refs, entry_off = _concat([t.refs[m] for t in tps], np.int64)
            coeff, _ = _concat([t.coeff[m] for t in tps], np.uint32)
            self.row_ptr.append(rp)
            self.row_ptr_off.append(rp_off[:-1].copy())
            self.refs.append(refs)
            self.coeff.append(coeff)
            self.entry_off.append(entry_off[:-1].copy())
        self.coefficients = FrArray.from_ints(COEFFICIENTS.values)
        self.tmpl = np.asarray(shape.tmpl, np.int32)
        self.bases = [np.asarray(getattr(shape, name), np.int64)
                      for name in ("aux_base", "input_base", "port_off", "data_off")]
        raw = np.asarray(shape.ports, np.int64)
        self.ports = np.where(raw < 0, -1, shape.resolve(raw))
        order = sorted(range(len(shape.tasks)), key=lambda k: shape.tasks[k][2])
        self.tasks = np.asarray([shape.tasks[k] for k in order], np.int64).reshape(-1, 3)
        covered = np.zeros(len(self.tmpl), np.int32)
        for start, end, _ in shape.tasks:
            covered[start:end] += 1
        if len(covered) and not np.all(covered == 1):
            raise WitnessError("the circuit's tasks do not cover every instance once")

    @property
    def size(self) -> int:
        return self.shape.num_inputs + self.shape.n_aux

    @property
    def nbytes(self) -> int:
        """Host bytes of the arrays the generator runs by."""
        arrays = [self.ops, self.ops_off, self.sums, self.sums_off, *self.row_ptr, *self.row_ptr_off, *self.refs,
                  *self.coeff, *self.entry_off, self.coefficients.limbs, self.tmpl, *self.bases, self.ports,
                  self.tasks]
        return sum(a.nbytes for a in arrays)

    def run(self, data: list[int], threads: int | None = None, out: FrArray | None = None,
            stop: np.ndarray | None = None) -> FrArray:
        """The witness (inputs first, the one at 0) from the instances' data, in
        placing order, on `threads` threads (default: every core), into `out`
        when given (an FrArray of the witness's size, overwritten); WitnessError
        when the data or out do not fit the circuit. stop: a job's stop flag
        (Job.stop.array, one int32), read before each instance: once set, the
        run stops with JobCancelledError."""
        if len(data) != self.shape.n_data:
            raise WitnessError(f"{len(data)} data values for a circuit that takes {self.shape.n_data}")
        if out is not None and (not isinstance(out, FrArray) or len(out) != self.size):
            raise WitnessError(f"out must be an FrArray of {self.size} elements")
        values = FrArray.from_ints(data) if data else FrArray.zeros(0)
        w = out if out is not None else FrArray.zeros(self.size)
        bits = np.zeros(self.size, np.uint8)
        _witness.run(self.shape.num_inputs, self.coefficients.limbs, self.ops, self.ops_off, self.sums,
                     self.sums_off, tuple(self.row_ptr), tuple(self.row_ptr_off), tuple(self.refs),
                     tuple(self.coeff), tuple(self.entry_off), self.tmpl, *self.bases, self.ports, values.limbs,
                     w.limbs, bits, self.tasks, threads or os.cpu_count() or 1, stop)
        return w
