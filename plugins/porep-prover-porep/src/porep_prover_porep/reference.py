# SPDX-License-Identifier: Apache-2.0
"""Plain Python references for the native primitives: evident, slow, for tests.

Each follows its source's description directly (Python ints, bit by bit where the
source is): ChaCha (RFC 8439's quarter round, rand_chacha's word order), the
Feistel network and bucket sampling of rust-fil-proofs, SDR labels with hashlib,
Poseidon's plain round schedule with Grain-generated constants (neptune's
round_constants.rs), fr32 padding by integer arithmetic, and Merkle roots.
"""
from __future__ import annotations

import functools
import hashlib
import math

from .fr32 import R, truncate

MASK32 = 0xFFFFFFFF

# ---------------------------------------------------------------- ChaCha


def chacha_block(key: bytes, words12_15: list[int], rounds: int) -> list[int]:
    """One ChaCha block as 16 words."""
    state = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    state += [int.from_bytes(key[4 * i:4 * i + 4], "little") for i in range(8)] + list(words12_15)
    x = list(state)

    def rotl(v: int, n: int) -> int:
        return (v << n | v >> (32 - n)) & MASK32

    def quarter(a: int, b: int, c: int, d: int) -> None:
        x[a] = (x[a] + x[b]) & MASK32
        x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & MASK32
        x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & MASK32
        x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & MASK32
        x[b] = rotl(x[b] ^ x[c], 7)

    for _ in range(rounds // 2):
        for q in ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                  (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14)):
            quarter(*q)
    return [(x[i] + state[i]) & MASK32 for i in range(16)]


def chacha8_u64s(seed: bytes, count: int) -> list[int]:
    """rand_chacha's ChaCha8Rng: the first `count` u64 draws (two keystream words each, low first)."""
    words: list[int] = []
    block = 0
    while len(words) < 2 * count:
        words += chacha_block(seed, [block & MASK32, block >> 32, 0, 0], 8)
        block += 1
    return [words[2 * i] | words[2 * i + 1] << 32 for i in range(count)]

# ---------------------------------------------------------------- graph


def drg_parents(seed28: bytes, node: int, api_v11: bool) -> list[int]:
    if node < 2:
        return [0] * 6
    draws = iter(chacha8_u64s(seed28 + node.to_bytes(4, "little"), 10))
    metagraph_node = node * 5
    buckets = math.ceil(math.log2(metagraph_node))
    drawn = []
    for _ in range(5):
        bucket = next(draws) % buckets + 1
        largest = min(metagraph_node, 1 << bucket)
        smallest = max(2, largest >> 1)
        distance = smallest + next(draws) % (largest - smallest + 1)
        parent = (metagraph_node - distance) // 5
        drawn.append(node - 1 if parent == node else parent)
    return [node - 1] + drawn if api_v11 else drawn + [node - 1]


def feistel_permute(num_elements: int, index: int, keys: list[int]) -> int:
    log4 = 1
    while 4 ** log4 < num_elements:
        log4 += 1
    right_mask = (1 << log4) - 1

    def encode(value: int) -> int:
        left, right = value >> log4 & right_mask, value & right_mask
        for key in keys[:3]:
            digest = hashlib.blake2b(right.to_bytes(8, "big") + key.to_bytes(8, "big")).digest()
            left, right = right, left ^ (int.from_bytes(digest[:8], "big") & right_mask)
        return left << log4 | right

    value = encode(index)
    while value >= num_elements:
        value = encode(value)
    return value


def expander_parents(keys: list[int], nodes: int, node: int, api_v11: bool) -> list[int]:
    out = []
    for i in range(8):
        t = feistel_permute(nodes * 8, node * 8 + i, keys)
        out.append(t // 8 if api_v11 else (t & MASK32) // 8)
    return out


def labels(replica_id: bytes, layers: int, nodes: int, porep_id: bytes, api_v11: bool) -> list[list[bytes]]:
    """labels[layer - 1][node], hashing each node's 37 parent labels with hashlib."""
    seed = hashlib.sha256(b"Filecoin_DRSample" + porep_id).digest()[:28]
    raw = hashlib.sha256(b"Filecoin_Feistel" + porep_id).digest()
    keys = [int.from_bytes(raw[8 * i:8 * i + 8], "little") for i in range(4)]
    parents = [drg_parents(seed, n, api_v11) + expander_parents(keys, nodes, n, api_v11) for n in range(nodes)]
    out: list[list[bytes]] = []
    for layer in range(1, layers + 1):
        cur: list[bytes] = []
        for node in range(nodes):
            msg = replica_id + layer.to_bytes(4, "big") + node.to_bytes(8, "big") + bytes(20)
            if node:
                data = [cur[p] for p in parents[node][:6]]
                if layer > 1:
                    data += [out[-1][p] for p in parents[node][6:]]
                msg += b"".join(data[k % len(data)] for k in range(37))
            cur.append(truncate(hashlib.sha256(msg).digest()))
        out.append(cur)
    return out

# ---------------------------------------------------------------- Poseidon


@functools.cache
def grain_constants(t: int, partial_rounds: int, full_rounds: int = 8) -> tuple[int, ...]:
    """Round constants by the Grain LFSR in self-shrinking mode, as neptune generates them."""
    bits = []
    for width, value in ((2, 1), (4, 1), (12, 255), (12, t), (10, full_rounds), (10, partial_rounds),
                         (30, (1 << 30) - 1)):
        bits += [(value >> i) & 1 for i in reversed(range(width))]

    def step() -> int:
        bit = bits[62] ^ bits[51] ^ bits[38] ^ bits[23] ^ bits[13] ^ bits[0]
        bits.pop(0)
        bits.append(bit)
        return bit

    for _ in range(160):
        step()

    def shrunk() -> int:
        while True:
            first, second = step(), step()
            if first:
                return second

    out: list[int] = []
    while len(out) < (full_rounds + partial_rounds) * t:
        value = 0
        for _ in range(255):
            value = value << 1 | shrunk()
        if value < R:
            out.append(value)
    return tuple(out)


def mds(t: int) -> list[list[int]]:
    """neptune's Cauchy matrix: 1 / (x_i + y_j), x_i = i, y_j = t + j."""
    return [[pow(i + t + j, -1, R) for j in range(t)] for i in range(t)]


def poseidon(inputs: list[int], constants: tuple[int, ...], partial_rounds: int, full_rounds: int = 8) -> int:
    """The plain schedule: each round adds its constants, applies x^5 (to all, or to
    element 0 in a partial round) and multiplies by the MDS matrix; the Merkle tag
    2^arity - 1 in element 0; the digest element 1."""
    t = len(inputs) + 1
    state, m = [(1 << len(inputs)) - 1] + list(inputs), mds(t)
    for r in range(full_rounds + partial_rounds):
        state = [(s + constants[r * t + i]) % R for i, s in enumerate(state)]
        full = r < full_rounds // 2 or r >= full_rounds // 2 + partial_rounds
        state = [pow(s, 5, R) if full or i == 0 else s for i, s in enumerate(state)]
        state = [sum(m[i][j] * state[j] for j in range(t)) % R for i in range(t)]
    return state[1]

# ---------------------------------------------------------------- fr32 and trees


def fr32_pad(raw: bytes) -> bytes:
    """Each 127 bytes as a 1016-bit little-endian integer, cut into four 254-bit nodes."""
    out = bytearray()
    for start in range(0, len(raw), 127):
        value = int.from_bytes(raw[start:start + 127], "little")
        for i in range(4):
            out += (value >> (254 * i) & ((1 << 254) - 1)).to_bytes(32, "little")
    return bytes(out)


def merkle_root(leaves: list[bytes], arity: int, node_hash) -> bytes:
    """The root over leaves, each parent node_hash(list of its children)."""
    row = list(leaves)
    while len(row) > 1:
        row = [node_hash(row[i:i + arity]) for i in range(0, len(row), arity)]
    return row[0]
