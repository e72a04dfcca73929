# SPDX-License-Identifier: Apache-2.0
"""bellperson's boolean gadgets, allocation for allocation: Boolean (a
constant, or an allocated bit possibly negated), the AllocatedBit operations
(xor, and, and_not, nor: one variable and one constraint each), Boolean xor
and and (nothing allocated where an operand is constant), SHA-256's ch and
maj, and UInt32 with its additions batched by MultiEq.

Where bellperson matches on constant and negated operands the branches are
taken in its order, since the branch decides what is allocated.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from .system import ONE, LC, TraceCS

CAPACITY = 254          # Fr::CAPACITY: bits a field element holds without wrapping


@dataclass(frozen=True)
class Boolean:
    """ref None: the constant `neg`; else the allocated bit ref, negated when neg."""
    ref: int | None
    neg: bool

    @property
    def is_constant(self) -> bool:
        return self.ref is None

    def not_(self) -> "Boolean":
        return Boolean(self.ref, not self.neg)

    def lc(self, coeff: int = 1) -> LC:
        if self.ref is None:
            return {ONE: coeff} if self.neg else {}
        if self.neg:
            return {ONE: coeff, self.ref: -coeff}
        return {self.ref: coeff}


TRUE, FALSE = Boolean(None, True), Boolean(None, False)


def is_(ref: int) -> Boolean:
    return Boolean(ref, False)


def constant(value: bool) -> Boolean:
    return TRUE if value else FALSE


def bit(cs: TraceCS, b: Boolean) -> int | None:
    """The value of a Boolean (None while tracing)."""
    if b.ref is None:
        return int(b.neg)
    v = cs.value(b.ref)
    return None if v is None else v ^ b.neg


def add_lc(*lcs: LC) -> LC:
    out: LC = {}
    for lc in lcs:
        for r, c in lc.items():
            out[r] = out.get(r, 0) + c
    return out


def scaled(lc: LC, k: int) -> LC:
    return {r: c * k for r, c in lc.items()}


_TABLES: dict[tuple, int] = {}


def _table(fn: Callable[..., int], operands: Sequence[Boolean]) -> int:
    """fn's truth table over the operands that are not constant (constants folded in)."""
    key = (fn, tuple((b.ref is None, b.neg) for b in operands))
    table = _TABLES.get(key)
    if table is None:
        free = sum(b.ref is not None for b in operands)
        table = 0
        for idx in range(1 << free):
            it = iter(idx >> i & 1 for i in range(free))
            values = [int(b.neg) if b.ref is None else next(it) ^ b.neg for b in operands]
            table |= (fn(*values) & 1) << idx
        _TABLES[key] = table
    return table


def alloc_bool(cs: TraceCS, fn: Callable[..., int], operands: Sequence[Boolean]) -> int:
    """A new bit of value fn(operand values), its rule a truth table over the
    operands that are not constant."""
    values = [bit(cs, b) for b in operands]
    value = None if None in values else fn(*values) & 1
    if not cs.record:
        return cs.alloc_bool(0, (), value)
    return cs.alloc_bool(_table(fn, operands), tuple((b.ref, b.neg) for b in operands if b.ref is not None), value)

# ---------------------------------------------------------------- AllocatedBit


def _xor(x: int, y: int) -> int:
    return x ^ y


def _and(x: int, y: int) -> int:
    return x & y


def _and_not(x: int, y: int) -> int:
    return x & (1 - y)


def _nor(x: int, y: int) -> int:
    return (1 - x) & (1 - y)


def allocated_xor(cs: TraceCS, a: int, b: int) -> int:
    c = alloc_bool(cs, _xor, (is_(a), is_(b)))
    if cs.record:
        cs.enforce(add_lc({a: 1}, {a: 1}), {b: 1}, add_lc({a: 1}, {b: 1}, {c: -1}))
    else:
        cs.tally()
    return c


def allocated_and(cs: TraceCS, a: int, b: int) -> int:
    c = alloc_bool(cs, _and, (is_(a), is_(b)))
    cs.enforce({a: 1}, {b: 1}, {c: 1})
    return c


def allocated_and_not(cs: TraceCS, a: int, b: int) -> int:
    c = alloc_bool(cs, _and_not, (is_(a), is_(b)))
    cs.enforce({a: 1}, {ONE: 1, b: -1}, {c: 1})
    return c


def allocated_nor(cs: TraceCS, a: int, b: int) -> int:
    c = alloc_bool(cs, _nor, (is_(a), is_(b)))
    cs.enforce({ONE: 1, a: -1}, {ONE: 1, b: -1}, {c: 1})
    return c

# ---------------------------------------------------------------- Boolean


def xor(cs: TraceCS, a: Boolean, b: Boolean) -> Boolean:
    if a == FALSE:
        return b
    if b == FALSE:
        return a
    if a == TRUE:
        return b.not_()
    if b == TRUE:
        return a.not_()
    if a.neg != b.neg:                          # a xor (not b) = not (a xor b)
        plain, negated = (a, b) if not a.neg else (b, a)
        return Boolean(allocated_xor(cs, plain.ref, negated.ref), True)     # type: ignore[arg-type]
    return is_(allocated_xor(cs, a.ref, b.ref))                             # type: ignore[arg-type]


def and_(cs: TraceCS, a: Boolean, b: Boolean) -> Boolean:
    if a == FALSE or b == FALSE:
        return FALSE
    if a == TRUE:
        return b
    if b == TRUE:
        return a
    if a.neg != b.neg:
        plain, negated = (a, b) if not a.neg else (b, a)
        return is_(allocated_and_not(cs, plain.ref, negated.ref))          # type: ignore[arg-type]
    if a.neg:
        return is_(allocated_nor(cs, a.ref, b.ref))                        # type: ignore[arg-type]
    return is_(allocated_and(cs, a.ref, b.ref))                            # type: ignore[arg-type]


def _ch(x: int, y: int, z: int) -> int:
    return (x & y) ^ ((1 - x) & z)


def _maj(x: int, y: int, z: int) -> int:
    return (x & y) ^ (x & z) ^ (y & z)


def sha256_ch(cs: TraceCS, a: Boolean, b: Boolean, c: Boolean) -> Boolean:
    """(a and b) xor ((not a) and c), bellperson's branches in order."""
    if a.is_constant and b.is_constant and c.is_constant:
        return constant(bool(_ch(int(a.neg), int(b.neg), int(c.neg))))
    if a == FALSE:
        return c
    if b == FALSE:
        return and_(cs, a.not_(), c)
    if c == FALSE:
        return and_(cs, a, b)
    if c == TRUE:
        return and_(cs, a, b.not_()).not_()
    if b == TRUE:
        return and_(cs, a.not_(), c.not_()).not_()
    ch = alloc_bool(cs, _ch, (a, b, c))
    cs.enforce(add_lc(b.lc(), scaled(c.lc(), -1)), a.lc(), add_lc({ch: 1}, scaled(c.lc(), -1)))
    return is_(ch)


def sha256_maj(cs: TraceCS, a: Boolean, b: Boolean, c: Boolean) -> Boolean:
    """(a and b) xor (a and c) xor (b and c), bellperson's branches in order."""
    if a.is_constant and b.is_constant and c.is_constant:
        return constant(bool(_maj(int(a.neg), int(b.neg), int(c.neg))))
    if a == FALSE:
        return and_(cs, b, c)
    if b == FALSE:
        return and_(cs, a, c)
    if c == FALSE:
        return and_(cs, a, b)
    if c == TRUE:
        return and_(cs, a.not_(), b.not_()).not_()
    if b == TRUE:
        return and_(cs, a.not_(), c.not_()).not_()
    if a == TRUE:
        return and_(cs, b.not_(), c.not_()).not_()
    maj = alloc_bool(cs, _maj, (a, b, c))
    bc = and_(cs, b, c)
    cs.enforce(add_lc(bc.lc(2), scaled(b.lc(), -1), scaled(c.lc(), -1)), a.lc(),
               add_lc(bc.lc(), {maj: -1}))
    return is_(maj)

# ---------------------------------------------------------------- UInt32


class MultiEq:
    """Equalities packed into one constraint until CAPACITY bits would be passed
    (bellperson's MultiEq); finish() emits the last batch."""

    def __init__(self, cs: TraceCS):
        self.cs, self.bits_used = cs, 0
        self.lhs: LC = {}
        self.rhs: LC = {}

    def _accumulate(self) -> None:
        self.cs.enforce(self.lhs, {ONE: 1}, self.rhs)
        self.lhs, self.rhs, self.bits_used = {}, {}, 0

    def enforce_equal(self, num_bits: int, lhs: LC, rhs: LC) -> None:
        if CAPACITY <= self.bits_used + num_bits:
            self._accumulate()
        if self.cs.record:
            k = 1 << self.bits_used
            self.lhs = add_lc(self.lhs, scaled(lhs, k))
            self.rhs = add_lc(self.rhs, scaled(rhs, k))
        self.bits_used += num_bits

    def finish(self) -> None:
        if self.bits_used > 0:
            self._accumulate()


class UInt32:
    """32 Booleans, least significant first, and the value when known."""

    __slots__ = ("bits", "value")

    def __init__(self, bits: list[Boolean], value: int | None):
        self.bits, self.value = bits, value

    @classmethod
    def constant(cls, value: int) -> "UInt32":
        return cls([constant(bool(value >> i & 1)) for i in range(32)], value)

    @classmethod
    def from_bits_be(cls, cs: TraceCS, bits: Sequence[Boolean]) -> "UInt32":
        values = [bit(cs, b) for b in bits]
        value = None if None in values else int("".join(map(str, values)), 2)
        return cls(list(reversed(bits)), value)

    def into_bits_be(self) -> list[Boolean]:
        return list(reversed(self.bits))

    def rotr(self, by: int) -> "UInt32":
        by %= 32
        value = None if self.value is None else (self.value >> by | self.value << (32 - by)) & 0xFFFFFFFF
        return UInt32(self.bits[by:] + self.bits[:by], value)

    def shr(self, by: int) -> "UInt32":
        by %= 32
        return UInt32(self.bits[by:] + [FALSE] * by, None if self.value is None else self.value >> by)

    def xor(self, cs: TraceCS, other: "UInt32") -> "UInt32":
        value = None if self.value is None or other.value is None else self.value ^ other.value
        return UInt32([xor(cs, a, b) for a, b in zip(self.bits, other.bits)], value)

    @staticmethod
    def _triop(cs: TraceCS, f, word_f, a: "UInt32", b: "UInt32", c: "UInt32") -> "UInt32":
        value = None if None in (a.value, b.value, c.value) else word_f(a.value, b.value, c.value)
        return UInt32([f(cs, x, y, z) for x, y, z in zip(a.bits, b.bits, c.bits)], value)

    @classmethod
    def sha256_ch(cls, cs: TraceCS, a: "UInt32", b: "UInt32", c: "UInt32") -> "UInt32":
        return cls._triop(cs, sha256_ch, lambda x, y, z: (x & y) ^ (~x & z & 0xFFFFFFFF), a, b, c)

    @classmethod
    def sha256_maj(cls, cs: TraceCS, a: "UInt32", b: "UInt32", c: "UInt32") -> "UInt32":
        return cls._triop(cs, sha256_maj, lambda x, y, z: (x & y) ^ (x & z) ^ (y & z), a, b, c)

    @classmethod
    def addmany(cls, cs: TraceCS, eq: MultiEq, operands: Sequence["UInt32"]) -> "UInt32":
        """Their sum mod 2^32: the full sum's bits allocated, its equality with the
        operands' bits batched in eq; a constant when every bit is."""
        assert 2 <= len(operands) <= 10
        max_value = len(operands) * 0xFFFFFFFF
        values = [op.value for op in operands]
        total = None if None in values else sum(values)     # type: ignore[arg-type]
        if all(b.is_constant for op in operands for b in op.bits) and total is not None:
            return cls.constant(total & 0xFFFFFFFF)
        lc: LC = {}
        if cs.record:
            for op in operands:
                for i, b in enumerate(op.bits):
                    for r, c in b.lc(1 << i).items():
                        lc[r] = lc.get(r, 0) + c
        n = max_value.bit_length()
        refs = cs.alloc_sum_bits(lc, n, total)
        eq.enforce_equal(n, lc, {r: 1 << i for i, r in enumerate(refs)} if cs.record else {})
        return cls([is_(r) for r in refs[:32]], None if total is None else total & 0xFFFFFFFF)
