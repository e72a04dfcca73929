# SPDX-License-Identifier: Apache-2.0
"""The small gadgets of bellperson and storage-proofs-core, allocation for
allocation: numbers from data, inputize, to_bits_le (255 bits and the
unpacking constraint), multipack's pack_bits and pack_into_inputs, UInt64
from data, pick and the insertion permutations (insert_2, insert_4, insert_8),
constraint::equal and add (encode), and the Merkle path levels of
storage-proofs-core's PoR gadget (index bits, siblings, insertion, hash).
"""
from __future__ import annotations

from typing import Sequence

from ..fr32 import R
from .boolean import CAPACITY, Boolean, add_lc, allocated_and, allocated_nor, bit, is_
from .poseidon import poseidon_hash
from .system import ONE, LC, TraceCS

NUM_BITS = 255


def alloc_num(cs: TraceCS, value: int | None) -> int:
    """AllocatedNum::alloc of a value the instance's data gives."""
    return cs.alloc_data(value)


def inputize(cs: TraceCS, x: int) -> int:
    """AllocatedNum::inputize: a public input equal to x."""
    v = cs.alloc_solved(cs.value(x), public=True)
    cs.enforce({v: 1}, {ONE: 1}, {x: 1})
    return v


def to_bits_le(cs: TraceCS, x: int) -> list[Boolean]:
    """AllocatedNum::to_bits_le: 255 allocated bits, then 0 * 0 = sum 2^i b_i - x."""
    refs = cs.alloc_bits(x, NUM_BITS, cs.value(x))
    lc: LC = {r: 1 << i for i, r in enumerate(refs)}
    lc[x] = lc.get(x, 0) - 1
    cs.enforce({}, {}, lc)
    return [is_(r) for r in refs]


def reverse_bit_numbering(bits: Sequence[Boolean]) -> list[Boolean]:
    """Pad to whole bytes with false, then reverse the bits within each byte."""
    padded = list(bits) + [Boolean(None, False)] * (-len(bits) % 8)
    return [b for i in range(0, len(padded), 8) for b in reversed(padded[i:i + 8])]


def _packed(cs: TraceCS, bits: Sequence[Boolean]) -> tuple[LC, int | None]:
    lc: LC = {}
    value: int | None = 0
    for i, b in enumerate(bits[:CAPACITY]):
        for r, c in b.lc(1 << i).items():
            lc[r] = lc.get(r, 0) + c
        v = bit(cs, b)
        value = None if value is None or v is None else value + (v << i)
    return lc, value


def pack_bits(cs: TraceCS, bits: Sequence[Boolean]) -> int:
    """multipack::pack_bits: a number equal to the first 254 bits, little-endian."""
    lc, value = _packed(cs, bits)
    v = cs.alloc_solved(value)
    cs.enforce(lc, {ONE: 1}, {v: 1})
    return v


def pack_into_inputs(cs: TraceCS, bits: Sequence[Boolean]) -> list[int]:
    """multipack::pack_into_inputs: a public input per 254 bits."""
    out = []
    for start in range(0, len(bits), CAPACITY):
        lc, value = _packed(cs, bits[start:start + CAPACITY])
        v = cs.alloc_solved(value, public=True)
        cs.enforce(lc, {ONE: 1}, {v: 1})
        out.append(v)
    return out


def uint64_bits(cs: TraceCS, value: int | None) -> list[Boolean]:
    """UInt64::alloc of a data value: its 64 bits, least significant first."""
    return [is_(r) for r in cs.alloc_bits(~cs.data_slot(), 64, value)]


def equal(cs: TraceCS, a: int, b: int) -> None:
    """constraint::equal: a * 1 = b."""
    cs.enforce({a: 1}, {ONE: 1}, {b: 1})


def add(cs: TraceCS, a: int, b: int) -> int:
    """constraint::add (encode): a new number a + b."""
    va, vb = cs.value(a), cs.value(b)
    v = cs.alloc_solved(None if va is None or vb is None else (va + vb) % R)
    cs.enforce(add_lc({a: 1}, {b: 1}), {ONE: 1}, {v: 1})
    return v


def pick(cs: TraceCS, condition: Boolean, a: int, b: int) -> int:
    """a if condition else b: (b - a) * condition = b - c."""
    cond, va, vb = bit(cs, condition), cs.value(a), cs.value(b)
    v = cs.alloc_solved(None if cond is None else (va if cond else vb))
    cs.enforce(add_lc({b: 1}, {a: -1}), condition.lc(), add_lc({b: 1}, {v: -1}))
    return v


def insert(cs: TraceCS, element: int, bits: Sequence[Boolean], elements: Sequence[int]) -> list[int]:
    """storage-proofs-core's insert for 2, 4 and 8 children: element placed at
    the position the bits give among the others (insert_2, insert_4, insert_8)."""
    if len(elements) == 1:
        return [pick(cs, bits[0], elements[0], element), pick(cs, bits[0], element, elements[0])]
    if len(elements) == 3:
        b0, b1 = bits
        a, b, c, d = element, *elements
        return [pick(cs, b1, b, pick(cs, b0, b, a)), pick(cs, b1, c, pick(cs, b0, a, b)),
                pick(cs, b1, pick(cs, b0, d, a), c), pick(cs, b1, pick(cs, b0, a, d), d)]
    assert len(elements) == 7 and len(bits) == 3
    b0, b1, b2 = bits
    a, b, c, d, e, f, g, h = element, *elements
    nor = is_(allocated_nor(cs, b0.ref, b1.ref))           # type: ignore[arg-type]
    both = is_(allocated_and(cs, b0.ref, b1.ref))          # type: ignore[arg-type]
    p0 = pick(cs, b2, b, pick(cs, nor, a, b))
    p1 = pick(cs, b2, c, pick(cs, b1, c, pick(cs, b0, a, b)))
    p2 = pick(cs, b2, d, pick(cs, b1, pick(cs, b0, d, a), c))
    p3 = pick(cs, b2, e, pick(cs, both, a, d))
    p4 = pick(cs, b2, pick(cs, nor, a, f), e)
    p5 = pick(cs, b2, pick(cs, b1, g, pick(cs, b0, a, f)), f)
    p6 = pick(cs, b2, pick(cs, b1, pick(cs, b0, h, a), g), g)
    p7 = pick(cs, b2, pick(cs, both, a, h), h)
    return [p0, p1, p2, p3, p4, p5, p6, p7]


def path_level(cs: TraceCS, cur: int, data: Sequence[int | None]) -> tuple[list[Boolean], list[int]]:
    """The start of a Merkle path level: the index bits (data[0], log2 arity of
    them) and the siblings (data[1:]), then the children with cur inserted."""
    arity = len(data)
    index_bits = [is_(r) for r in cs.alloc_bits(~cs.data_slot(), arity.bit_length() - 1, data[0])]
    siblings = [alloc_num(cs, v) for v in data[1:]]
    return index_bits, insert(cs, cur, index_bits, siblings)


def poseidon_level(cs: TraceCS, cur: int, data: Sequence[int | None]) -> tuple[list[Boolean], int]:
    """One level of a Poseidon tree's path: its index bits, and the parent."""
    bits, children = path_level(cs, cur, data)
    return bits, poseidon_hash(cs, children)
