# SPDX-License-Identifier: Apache-2.0
"""The hashes of the StackedDRG circuit as gadget calls on a Builder.

    sha256_level   one level of tree_d's path (filecoin-hashers' Sha256
                   hash_multi_leaf_circuit over the two children: their bits,
                   two compressions, the digest packed to 254 bits)
    poseidon       a Poseidon hash of 2, 8 or 11 numbers (tree and column hashes)
    tree_level     one level of tree_c's or tree_r_last's path
    create_label   a label (create_label_circuit): SHA-256 of the replica id,
                   layer, node and 37 parents' bits over 20 blocks, each block a
                   compression template (the first per layer, the 18 between
                   alike, the last), the digest packed to 254 bits
"""
from __future__ import annotations

from typing import Sequence

from .boolean import Boolean, UInt32, bit
from .builder import Builder
from .gadgets import pack_bits, path_level, poseidon_level, reverse_bit_numbering, to_bits_le
from .poseidon import poseidon_hash
from .sha256 import compress, digest_bits, iv, padded_blocks
from .system import TraceCS

WORD_BITS = 32


def _words(cs: TraceCS, bits: Sequence[Boolean]) -> list[UInt32]:
    """UInt32s of 32 Booleans each, least significant first, valued where the bits are."""
    out = []
    for i in range(0, len(bits), WORD_BITS):
        word = list(bits[i:i + WORD_BITS])
        values = [bit(cs, b) for b in word]
        known = [v for v in values if v is not None]
        out.append(UInt32(word, sum(v << k for k, v in enumerate(known)) if len(known) == len(values) else None))
    return out


def _block(cs: TraceCS, leaves: list, data: list) -> list:
    state = _words(cs, leaves[512:]) if len(leaves) > 512 else iv()
    return [b for word in compress(cs, leaves[:512], state) for b in word.bits]


def sha256(b: Builder, message: Sequence[Boolean]) -> list[Boolean]:
    """SHA-256 of a message of whole bytes: its 256 digest bits, big-endian."""
    state: list[Boolean] = []
    for block in padded_blocks(message):
        state = b.call("sha256 block", _block, block + state)
    return digest_bits([UInt32(state[i:i + WORD_BITS], None) for i in range(0, 256, WORD_BITS)])


def sha256_children(cs: TraceCS, children: Sequence[int]) -> int:
    """The SHA-256 node of children (each field element's bits in Filecoin's
    order, the digest cut to 254 bits): a binary tree's parent, in R1CS."""
    message: list[Boolean] = []
    for child in children:
        message += reverse_bit_numbering(to_bits_le(cs, child))
    state = iv()
    for block in padded_blocks(message):
        state = compress(cs, block, state)
    return pack_bits(cs, reverse_bit_numbering(digest_bits(state))[:254])


def _sha256_level(cs: TraceCS, leaves: list, data: list) -> list:
    bits, children = path_level(cs, leaves[0], data)
    return bits + [sha256_children(cs, children)]


def sha256_level(b: Builder, cur: int, index: int | None, sibling: int | None) -> tuple[Boolean, int]:
    """A level of tree_d's path: (its index bit, the parent)."""
    out = b.call("sha256 level", _sha256_level, [cur], [index, sibling])
    return out[0], out[1]


def _poseidon(cs: TraceCS, leaves: list, data: list) -> list:
    return [poseidon_hash(cs, leaves)]


def poseidon(b: Builder, preimage: Sequence[int]) -> int:
    return b.call("poseidon", _poseidon, list(preimage))[0]


def _tree_level(cs: TraceCS, leaves: list, data: list) -> list:
    bits, parent = poseidon_level(cs, leaves[0], data)
    return bits + [parent]


def tree_level(b: Builder, cur: int, arity: int, index: int | None, siblings: Sequence[int | None]
               ) -> tuple[list[Boolean], int]:
    """A level of a Poseidon tree's path of this arity: (its index bits, the parent)."""
    out = b.call("tree level", _tree_level, [cur], [index, *siblings], params=(arity,))
    return out[:-1], out[-1]


def _pack_bits(cs: TraceCS, leaves: list, data: list) -> list:
    return [pack_bits(cs, leaves)]


def create_label(b: Builder, replica_bits: Sequence[Boolean], layer: int, node_bits: Sequence[Boolean],
                 parents: Sequence[Sequence[Boolean]]) -> int:
    """create_label_circuit: the label as a number (replica_bits: 256, node_bits: the
    UInt64's 64 bits little-endian, parents: 37 lists of 256 bits)."""
    message = list(replica_bits) + UInt32.constant(layer).into_bits_be() + list(reversed(node_bits))
    message += [Boolean(None, False)] * (512 - len(message))
    for parent in parents:
        message += list(parent)
    digest = sha256(b, message)
    return b.call("pack bits", _pack_bits, reverse_bit_numbering(digest)[:254])[0]
