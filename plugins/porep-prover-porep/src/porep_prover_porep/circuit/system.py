# SPDX-License-Identifier: Apache-2.0
"""A constraint system that records what bellperson's would: every alloc,
alloc_input and enforce in order, with the rule that gives each allocated
variable its value.

Variables are references (ints): local aux k, local input k, port k (a
variable the gadget was handed) and ONE, the constant one. A gadget traced
here with ports in place of its operands becomes a template (template.py),
placed as many times as the circuit needs it; traced with values (ports
absent, every value known) it is the plain-Python reference of the witness.

The value rules (ops), run by the native witness generator in allocation
order:

    OP_DATA    k         the value is the instance's data element k
    OP_BITS    src, n    n consecutive bits, little-endian, of the canonical
                         value of src (a variable, or data element ~src)
    OP_BOOL    table, (a, b, c)
                         one bit: table's bit at index a + 2b + 4c of the
                         operand bits (each a variable, possibly negated)
    OP_SUMBITS lc, n     n consecutive bits of the integer sum of an integer
                         combination of bits (UInt32 additions)
    OP_SOLVE   row       the one unknown of constraint row: in C (any
                         coefficient), or in A when B is exactly ONE
"""
from __future__ import annotations

from porep_prover.errors import R1CSError

from ..fr32 import R

AUX, INPUT, PORT, CONST = 0, 1, 2, 3
ONE = CONST                     # the reference of the constant one (index 0, kind CONST)

OP_DATA, OP_BITS, OP_BOOL, OP_SUMBITS, OP_SOLVE = range(5)


def aux_ref(k: int) -> int:
    return k << 2 | AUX


def input_ref(k: int) -> int:
    return k << 2 | INPUT


def port_ref(k: int) -> int:
    return k << 2 | PORT


def kind(ref: int) -> int:
    return ref & 3


def index(ref: int) -> int:
    return ref >> 2


LC = dict  # {reference: coefficient}, coefficients any integers (reduced mod r when recorded)


class TraceCS:
    """Records allocations, constraints and value rules; with values=True it
    also evaluates every variable (port_values gives the ports' values)."""

    def __init__(self, values: bool = False, port_values: list[int] | None = None, record: bool = True):
        self.evaluating = values
        self.record = record
        self.port_values = port_values or []
        self.aux_values: list[int | None] = []
        self.input_values: list[int | None] = []
        self.n_aux = self.n_input = self.n_data = 0
        self.constraints: list[tuple[LC, LC, LC]] = []
        self.n_constraints = 0
        self.ops: list[tuple] = []     # (target ref, op, args...)
        self._pending: int | None = None

    # ------------------------------------------------------------ values

    def value(self, ref: int) -> int | None:
        """A variable's value (None while tracing without values)."""
        if not self.evaluating:
            return None
        k, i = ref & 3, ref >> 2
        if k == AUX:
            return self.aux_values[i]
        if k == CONST:
            return 1
        if k == INPUT:
            return self.input_values[i]
        return self.port_values[i]

    def lc_value(self, lc: LC) -> int | None:
        if not self.evaluating:
            return None
        return sum(c * self.value(r) for r, c in lc.items()) % R

    # ------------------------------------------------------------ allocation

    def _aux(self, value: int | None) -> int:
        ref = aux_ref(self.n_aux)
        self.n_aux += 1
        if self.evaluating:
            self.aux_values.append(value)
        return ref

    def alloc_data(self, value: int | None) -> int:
        """A number whose value the instance supplies (its next data element)."""
        ref = self._aux(value)
        self._op(ref, OP_DATA, self.data_slot())
        return ref

    def data_slot(self) -> int:
        """The next data element, for OP_BITS of data (as source ~slot)."""
        self.n_data += 1
        return self.n_data - 1

    def _op(self, ref: int, *rule) -> None:
        if self.record:
            self.ops.append((ref, *rule))

    def alloc_bits(self, source: int, n: int, value: int | None) -> list[int]:
        """n allocated bits of value (source: a variable, or ~slot for a data element),
        each with its boolean constraint, as AllocatedBit::alloc makes them."""
        refs = [self._aux(None if value is None else (value >> i) & 1) for i in range(n)]
        self._op(refs[0], OP_BITS, source, n)
        for r in refs:
            self.enforce({ONE: 1, r: -1}, {r: 1}, {})
        return refs

    def alloc_sum_bits(self, lc: LC, n: int, value: int | None) -> list[int]:
        """n bits of the integer value of lc (a combination of bits and ONE), each
        boolean-constrained (UInt32::addmany's result bits)."""
        refs = [self._aux(None if value is None else (value >> i) & 1) for i in range(n)]
        self._op(refs[0], OP_SUMBITS, dict(lc), n)
        for r in refs:
            if self.record:
                self.enforce({ONE: 1, r: -1}, {r: 1}, {})
            else:
                self.tally()
        return refs

    def alloc_bool(self, table: int, operands: tuple[tuple[int, bool], ...], value: int | None) -> int:
        """One bit given by a truth table over up to three (variable, negated) operands."""
        ref = self._aux(value)
        self._op(ref, OP_BOOL, table, operands)
        return ref

    def alloc_solved(self, value: int | None, public: bool = False) -> int:
        """A variable the next constraint determines (its value rule: OP_SOLVE)."""
        if public:
            ref = input_ref(self.n_input)
            self.n_input += 1
            if self.evaluating:
                self.input_values.append(value)
        else:
            ref = self._aux(value)
        self._pending = ref
        return ref

    # ------------------------------------------------------------ constraints

    def tally(self) -> None:
        """A constraint counted, not recorded (evaluating only)."""
        self.n_constraints += 1
        self._pending = None

    def enforce(self, a: LC, b: LC, c: LC) -> None:
        row = self.n_constraints
        self.n_constraints += 1
        if self._pending is not None:
            ref, self._pending = self._pending, None
            if self.record:
                if not (c.get(ref, 0) % R) and not ((a.get(ref, 0) % R) and b == {ONE: 1}):
                    raise R1CSError("a solved variable is not alone in C, nor in A over ONE")
                self.ops.append((ref, OP_SOLVE, row))
        if self.record:
            self.constraints.append((a, b, c))
