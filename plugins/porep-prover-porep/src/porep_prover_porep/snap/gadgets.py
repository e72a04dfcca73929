# SPDX-License-Identifier: Apache-2.0
"""storage-proofs-update's gadgets (gadgets.rs, insertion::select and
por_no_challenge_input) as gadget calls on a Builder, allocation for
allocation:

    nums            AllocatedNum::alloc of n values, in order
    bits_of         AllocatedBit::alloc of x's n low bits, then sum 2^i b_i * 1 = x
                    (k_and_h_select's bits; a digest's 255: allocated_num_to_allocated_bits)
    pack            multipack::pack_bits
    poseidon_gen    neptune's arity-2 Poseidon with the custom tag 2^40 (P_gen)
    digest_index    k * D + j, enforced
    high_bits       get_challenge_high_bits: each h's high bits packed, scaled by its
                    h_select bit, summed
    label_r_new     leaf_d_new * rho, then leaf_r_old + that
    sha256_pair     TreeD's hash of two numbers (filecoin-hashers' Sha256 hash2_circuit)
    por_level       a level of por_no_challenge_input: insert at the given bits, then the
                    level's hash (Poseidon of the arity, or SHA-256 of two)
    select          insertion::select of 2^n numbers by n bits
"""
from __future__ import annotations

from typing import Sequence

from ..circuit.boolean import Boolean, bit, is_
from ..circuit.builder import Builder
from ..circuit.gadgets import alloc_num, insert, pack_bits, pick
from ..circuit.hashes import sha256_children
from ..circuit.poseidon import poseidon_hash
from ..circuit.system import ONE, LC, TraceCS
from ..fr32 import R
from .challenges import GEN_TAG


def _nums(cs: TraceCS, leaves: list, data: list) -> list:
    return [alloc_num(cs, v) for v in data]


def nums(b: Builder, values: Sequence[int | None]) -> list[int]:
    return b.call("nums", _nums, [], list(values), params=(len(values),)) if values else []


def _bits_of(cs: TraceCS, leaves: list, data: list, n: int) -> list:
    x = leaves[0]
    refs = cs.alloc_bits(x, n, cs.value(x))
    cs.enforce({r: 1 << i for i, r in enumerate(refs)}, {ONE: 1}, {x: 1})
    return [is_(r) for r in refs]


def bits_of(b: Builder, x: int, n: int) -> list[Boolean]:
    return b.call("bits of", lambda cs, leaves, data: _bits_of(cs, leaves, data, n), [x], params=(n,))


def pack(b: Builder, bits: Sequence[Boolean]) -> int:
    return b.call("pack", lambda cs, leaves, data: [pack_bits(cs, leaves)], list(bits))[0]


def _poseidon_gen(cs: TraceCS, leaves: list, data: list) -> list:
    return [poseidon_hash(cs, leaves, GEN_TAG)]


def poseidon_gen(b: Builder, x: int, y: int) -> int:
    return b.call("poseidon gen", _poseidon_gen, [x, y])[0]


def _digest_index(cs: TraceCS, leaves: list, data: list, per: int, j: int) -> list:
    k = cs.value(leaves[0])
    v = cs.alloc_solved(None if k is None else (k * per + j) % R)
    cs.enforce({leaves[0]: per, ONE: j}, {ONE: 1}, {v: 1})
    return [v]


def digest_index(b: Builder, partition: int, per: int, j: int) -> int:
    return b.call("digest index", lambda cs, leaves, data: _digest_index(cs, leaves, data, per, j), [partition],
                  params=(per, j))[0]


def _high_bits(cs: TraceCS, leaves: list, data: list, hs: tuple[int, ...]) -> list:
    c_bits, select = leaves[:-len(hs)], leaves[-len(hs):]
    scaled = []
    for h, h_bit in zip(hs, select):
        c_high = pack_bits(cs, c_bits[len(c_bits) - h:])
        on, value = bit(cs, h_bit), cs.value(c_high)
        v = cs.alloc_solved(None if on is None or value is None else value * on)
        cs.enforce({c_high: 1}, h_bit.lc(), {v: 1})
        scaled.append(v)
    values = [cs.value(v) for v in scaled]
    total = cs.alloc_solved(None if None in values else sum(values) % R)    # type: ignore[arg-type]
    lc: LC = {}
    for v in scaled:
        lc[v] = lc.get(v, 0) + 1
    cs.enforce(lc, {ONE: 1}, {total: 1})
    return [total]


def high_bits(b: Builder, c_bits: Sequence[Boolean], h_select: Sequence[Boolean], hs: tuple[int, ...]) -> int:
    return b.call("high bits", lambda cs, leaves, data: _high_bits(cs, leaves, data, hs), [*c_bits, *h_select],
                  params=hs)[0]


def _label_r_new(cs: TraceCS, leaves: list, data: list) -> list:
    old, d_new, rho = leaves
    vo, vd, vr = cs.value(old), cs.value(d_new), cs.value(rho)
    prod = cs.alloc_solved(None if vd is None or vr is None else vd * vr % R)
    cs.enforce({d_new: 1}, {rho: 1}, {prod: 1})
    new = cs.alloc_solved(None if vo is None or vd is None or vr is None else (vo + vd * vr) % R)
    cs.enforce({old: 1, prod: 1}, {ONE: 1}, {new: 1})
    return [new]


def label_r_new(b: Builder, leaf_r_old: int, leaf_d_new: int, rho: int) -> int:
    return b.call("label_r_new", _label_r_new, [leaf_r_old, leaf_d_new, rho])[0]


def sha256_pair(b: Builder, x: int, y: int) -> int:
    return b.call("sha256 pair", lambda cs, leaves, data: [sha256_children(cs, leaves)], [x, y])[0]


def _por_level(cs: TraceCS, leaves: list, data: list, arity: int, hasher: str) -> list:
    n_bits = arity.bit_length() - 1
    cur, bits, siblings = leaves[0], leaves[1:1 + n_bits], leaves[1 + n_bits:]
    children = insert(cs, cur, bits, siblings)
    return [sha256_children(cs, children) if hasher == "sha256" else poseidon_hash(cs, children)]


def por_level(b: Builder, cur: int, bits: Sequence[Boolean], siblings: Sequence[int], hasher: str) -> int:
    arity = len(siblings) + 1
    return b.call("por level", lambda cs, leaves, data: _por_level(cs, leaves, data, arity, hasher),
                  [cur, *bits, *siblings], params=(arity, hasher))[0]


def _select(cs: TraceCS, leaves: list, data: list, n: int) -> list:
    state, bits = list(leaves[:1 << n]), leaves[1 << n:]
    half = len(state) // 2
    for condition in reversed(bits):
        state = [pick(cs, condition, state[half + j], state[j]) for j in range(half)]
        half //= 2
    return [state[0]]


def select(b: Builder, elements: Sequence[int], bits: Sequence[Boolean]) -> int:
    n = len(bits)
    return b.call("select", lambda cs, leaves, data: _select(cs, leaves, data, n), [*elements, *bits],
                  params=(n,))[0]
