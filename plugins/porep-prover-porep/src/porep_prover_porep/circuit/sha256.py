# SPDX-License-Identifier: Apache-2.0
"""bellperson's SHA-256 gadget: the compression function over 512 message
Booleans and eight UInt32 state words (the IV as constants for a message's
first block), its message schedule and rounds with the additions deferred
and batched by one MultiEq a block, exactly as bellperson allocates them.

sha256_padded(bits) pads a message of whole bytes with constants and
returns the padded blocks; compress(cs, block, state) is one block (what a
template holds: traced once per pattern of constant message bits and
constant state).
"""
from __future__ import annotations

from typing import Sequence

from .boolean import Boolean, MultiEq, UInt32, constant
from .system import TraceCS

ROUND_CONSTANTS = (
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
)
IV = (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)


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
