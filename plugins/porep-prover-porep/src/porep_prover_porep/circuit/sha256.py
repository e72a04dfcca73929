# SPDX-License-Identifier: Apache-2.0
"""bellperson's SHA-256 gadget: the compression function over 512 message
Booleans and eight UInt32 state words (the IV as constants for a message's
first block), its message schedule and rounds with the additions deferred
and batched by one MultiEq a block, exactly as bellperson allocates them.

padded_blocks(bits) pads a message of whole bytes with constants and
returns the padded blocks; compress(cs, block, state) is one block (what a
template holds: traced once per pattern of constant message bits and
constant state).
"""
from __future__ import annotations

from typing import Sequence

from .boolean import Boolean, MultiEq, UInt32, constant
from .system import TraceCS


def _root_bits(n: int, degree: int) -> int:
    """The first 32 bits of the fractional part of n's root of this degree (FIPS 180-4's
    constants: square roots of the first 8 primes for the IV, cube roots of the
    first 64 for the rounds), by integer Newton iteration."""
    target = n << (32 * degree)
    x = 1 << (target.bit_length() // degree + 1)
    while True:
        y = ((degree - 1) * x + target // x ** (degree - 1)) // degree
        if y >= x:
            return x & 0xFFFFFFFF
        x = y


def _primes(count: int) -> list[int]:
    out: list[int] = []
    n = 2
    while len(out) < count:
        if all(n % p for p in out):
            out.append(n)
        n += 1
    return out


ROUND_CONSTANTS = tuple(_root_bits(p, 3) for p in _primes(64))
IV = tuple(_root_bits(p, 2) for p in _primes(8))


def iv() -> list[UInt32]:
    return [UInt32.constant(v) for v in IV]


def padded_blocks(bits: Sequence[Boolean]) -> list[list[Boolean]]:
    """The message (a whole number of bytes) with SHA-256's padding, as constants,
    cut into 512-bit blocks."""
    assert len(bits) % 8 == 0
    padded = list(bits) + [constant(True)]
    while (len(padded) + 64) % 512:
        padded.append(constant(False))
    padded += [constant(bool(len(bits) >> i & 1)) for i in reversed(range(64))]
    return [padded[i:i + 512] for i in range(0, len(padded), 512)]


class _Deferred:
    """A sum not yet added (bellperson's Maybe::Deferred), or a word (Concrete)."""

    def __init__(self, word: UInt32 | None = None, terms: list[UInt32] | None = None):
        self.word, self.terms = word, terms

    def compute(self, cs: TraceCS, eq: MultiEq, others: Sequence[UInt32] = ()) -> UInt32:
        if self.word is not None:
            return self.word
        return UInt32.addmany(cs, eq, list(self.terms or ()) + list(others))


def compress(cs: TraceCS, block: Sequence[Boolean], state: Sequence[UInt32]) -> list[UInt32]:
    """One compression of a 512-bit block (big-endian words) into the state."""
    assert len(block) == 512 and len(state) == 8
    w = [UInt32.from_bits_be(cs, block[i:i + 32]) for i in range(0, 512, 32)]
    eq = MultiEq(cs)
    for i in range(16, 64):
        s0 = w[i - 15].rotr(7).xor(cs, w[i - 15].rotr(18)).xor(cs, w[i - 15].shr(3))
        s1 = w[i - 2].rotr(17).xor(cs, w[i - 2].rotr(19)).xor(cs, w[i - 2].shr(10))
        w.append(UInt32.addmany(cs, eq, [w[i - 16], s0, w[i - 7], s1]))
    a, e = _Deferred(state[0]), _Deferred(state[4])
    b, c, d, f, g, h = state[1], state[2], state[3], state[5], state[6], state[7]
    for i in range(64):
        new_e = e.compute(cs, eq)
        s1 = new_e.rotr(6).xor(cs, new_e.rotr(11)).xor(cs, new_e.rotr(25))
        ch = UInt32.sha256_ch(cs, new_e, f, g)
        temp1 = [h, s1, ch, UInt32.constant(ROUND_CONSTANTS[i]), w[i]]
        new_a = a.compute(cs, eq)
        s0 = new_a.rotr(2).xor(cs, new_a.rotr(13)).xor(cs, new_a.rotr(22))
        maj = UInt32.sha256_maj(cs, new_a, b, c)
        h, g, f = g, f, new_e
        e = _Deferred(terms=temp1 + [d])
        d, c, b = c, b, new_a
        a = _Deferred(terms=temp1 + [s0, maj])
    out = [a.compute(cs, eq, [state[0]]),
           UInt32.addmany(cs, eq, [state[1], b]),
           UInt32.addmany(cs, eq, [state[2], c]),
           UInt32.addmany(cs, eq, [state[3], d]),
           e.compute(cs, eq, [state[4]]),
           UInt32.addmany(cs, eq, [state[5], f]),
           UInt32.addmany(cs, eq, [state[6], g]),
           UInt32.addmany(cs, eq, [state[7], h])]
    eq.finish()
    return out


def digest_bits(state: Sequence[UInt32]) -> list[Boolean]:
    """The digest's 256 bits, big-endian (each word's bits most significant first)."""
    return [b for word in state for b in word.into_bits_be()]
