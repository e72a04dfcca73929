# SPDX-License-Identifier: Apache-2.0
# cython: boundscheck=False, wraparound=False
"""The plugin's C kernels: SHA-256, ChaCha, BLAKE2b, the SDR graph, labels, Poseidon.

Buffers are C-contiguous uint8 arrays of 32-byte elements (canonical little-endian
Fr where a field element is meant) or uint32 parent tables; every shape is checked
by the Python modules that call these, and again here where a wrong one could reach
past a buffer. The heavy loops release the GIL and run on OpenMP's threads.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

from porep_prover.errors import InvalidInputError, NativeMemoryError, ScalarRangeError


cdef extern from "sha256.h" nogil:
    void sha256_digest(const uint8_t *msg, size_t len, uint8_t *out)
    void sha256_fr32_pairs(const uint8_t *inp, size_t n, uint8_t *out)
    int sha256_accelerated()
    void sha256_use_portable(int portable)

cdef extern from "graph.h" nogil:
    void chacha_block(const uint32_t *key, const uint32_t *words12_15, int rounds, uint32_t *out)
    void blake2b_512_short(const uint8_t *msg, size_t len, uint8_t *out)
    uint64_t feistel_permute(uint64_t num_elements, uint64_t index, const uint64_t *keys)
    void drg_parents(const uint8_t *seed, uint32_t node, int api_v11, uint32_t *out)
    void expander_parents(const uint64_t *keys, uint64_t nodes, uint32_t node, int api_v11, uint32_t *out)
    void parents_table(const uint8_t *seed, const uint64_t *keys, uint64_t nodes, int api_v11, uint32_t *out)

cdef extern from "labels.h" nogil:
    int sdr_labels(const uint8_t *replica_id, uint32_t layers, uint64_t nodes, const uint32_t *parents,
                   uint8_t *labels)

cdef extern from "poseidon.h" nogil:
    int poseidon_init()
    int poseidon_arity_supported(int arity)
    size_t poseidon_round_constants(int arity, uint8_t *out, size_t capacity)
    int64_t poseidon_hash_batch(int arity, const uint8_t *inp, size_t n, uint8_t *out, int plain)
    int64_t fr_add_batch(const uint8_t *a, const uint8_t *b, size_t n, uint8_t *out)


if poseidon_init() != 0:
    raise NativeMemoryError("could not allocate Poseidon's constants")

PARENTS = 14


def _check_rows(name, size_t have, size_t want):
    if have != want:
        raise InvalidInputError(f"{name} has {have} rows, {want} expected")


def sha256(const uint8_t[::1] msg not None):
    """SHA-256 of a bytes-like object (32 bytes)."""
    cdef uint8_t out[32]
    with nogil:
        sha256_digest(&msg[0] if msg.shape[0] else NULL, msg.shape[0], out)
    return bytes(out[:32])


def sha256_pairs(const uint8_t[:, ::1] pairs not None, uint8_t[:, ::1] out not None):
    """out[i] = fr32(sha256(pairs[i])): pairs (n, 64), out (n, 32)."""
    if pairs.shape[1] != 64 or out.shape[1] != 32:
        raise InvalidInputError("sha256_pairs takes (n, 64) and (n, 32) arrays")
    _check_rows("out", out.shape[0], pairs.shape[0])
    if pairs.shape[0] == 0:
        return
    with nogil:
        sha256_fr32_pairs(&pairs[0, 0], pairs.shape[0], &out[0, 0])


def sha256_uses_extensions():
    """True when the compression runs on the CPU's SHA extensions."""
    return bool(sha256_accelerated())


def sha256_force_portable(bint portable):
    """Use the portable compression (True) or the SHA extensions where present (False)."""
    sha256_use_portable(portable)


def chacha(const uint32_t[::1] key not None, const uint32_t[::1] words12_15 not None, int rounds):
    """One ChaCha block of `rounds` rounds: 16 words from key[8] and state words 12-15."""
    if key.shape[0] != 8 or words12_15.shape[0] != 4 or rounds not in (8, 12, 20):
        raise InvalidInputError("chacha takes 8 key words, 4 state words and 8, 12 or 20 rounds")
    cdef uint32_t out[16]
    chacha_block(&key[0], &words12_15[0], rounds, out)
    return [out[i] for i in range(16)]


def blake2b_512(const uint8_t[::1] msg not None):
    """BLAKE2b-512 of at most 128 bytes."""
    if msg.shape[0] > 128:
        raise InvalidInputError("blake2b_512 takes at most 128 bytes")
    cdef uint8_t out[64]
    blake2b_512_short(&msg[0] if msg.shape[0] else NULL, msg.shape[0], out)
    return bytes(out[:64])


def feistel(uint64_t num_elements, uint64_t index, const uint64_t[::1] keys not None):
    """Feistel permutation of index in [0, num_elements) under four keys."""
    if keys.shape[0] != 4 or index >= num_elements or num_elements > (1 << 62):
        raise InvalidInputError("feistel takes four keys and an index below num_elements <= 2^62")
    return feistel_permute(num_elements, index, &keys[0])


def drg(const uint8_t[::1] seed not None, uint32_t node, bint api_v11):
    """The six DRG parents of a node."""
    if seed.shape[0] != 28:
        raise InvalidInputError("the DRG seed is 28 bytes")
    cdef uint32_t out[6]
    drg_parents(&seed[0], node, api_v11, out)
    return [out[i] for i in range(6)]


def expander(const uint64_t[::1] keys not None, uint64_t nodes, uint32_t node, bint api_v11):
    """The eight expander parents of a node."""
    if keys.shape[0] != 4 or node >= nodes or nodes > (1 << 32):
        raise InvalidInputError("expander takes four keys and a node below nodes <= 2^32")
    cdef uint32_t out[8]
    expander_parents(&keys[0], nodes, node, api_v11, out)
    return [out[i] for i in range(8)]


def parents(const uint8_t[::1] seed not None, const uint64_t[::1] keys not None, bint api_v11,
            uint32_t[:, ::1] out not None):
    """Fill out (nodes, 14) with every node's DRG then expander parents."""
    if seed.shape[0] != 28 or keys.shape[0] != 4 or out.shape[1] != PARENTS:
        raise InvalidInputError("parents takes a 28-byte seed, four keys and a (nodes, 14) table")
    cdef uint64_t nodes = out.shape[0]
    if nodes < 2 or nodes > (1 << 32):
        raise InvalidInputError(f"a graph of {nodes} nodes")
    with nogil:
        parents_table(&seed[0], &keys[0], nodes, api_v11, &out[0, 0])


def labels(const uint8_t[::1] replica_id not None, const uint32_t[:, ::1] table not None,
           uint8_t[:, :, ::1] out not None):
    """Fill out (layers, nodes, 32) with the SDR labels under a parents table (nodes, 14)."""
    if replica_id.shape[0] != 32 or table.shape[1] != PARENTS or out.shape[2] != 32:
        raise InvalidInputError("labels takes a 32-byte replica id, a (nodes, 14) table, a (layers, nodes, 32) array")
    _check_rows("the labels' layer", out.shape[1], table.shape[0])
    cdef uint64_t nodes = table.shape[0], i
    cdef uint32_t layers = out.shape[0]
    cdef int j
    if layers < 1 or nodes < 2:
        raise InvalidInputError(f"{layers} layers of {nodes} nodes")
    for i in range(nodes):      # every parent inside the graph, before C reads through them
        for j in range(PARENTS):
            if table[i, j] >= nodes:
                raise InvalidInputError(f"parent {table[i, j]} of node {i} is past the graph's {nodes} nodes")
    cdef int rc
    with nogil:
        rc = sdr_labels(&replica_id[0], layers, nodes, &table[0, 0], &out[0, 0, 0])
    if rc != 0:
        raise NativeMemoryError(f"no scratch memory for {nodes} nodes' labels")


def poseidon(int arity, const uint8_t[:, :, ::1] inputs not None, uint8_t[:, ::1] out not None, bint plain=False):
    """out[i] = Poseidon_arity(inputs[i]) for inputs (n, arity, 32), out (n, 32)."""
    if not poseidon_arity_supported(arity):
        raise InvalidInputError(f"Poseidon of arity {arity}: 2, 4, 8 and 11 are built")
    if inputs.shape[1] != arity or inputs.shape[2] != 32 or out.shape[1] != 32:
        raise InvalidInputError(f"Poseidon of arity {arity} takes (n, {arity}, 32) and (n, 32) arrays")
    _check_rows("out", out.shape[0], inputs.shape[0])
    if inputs.shape[0] == 0:
        return
    cdef int64_t bad
    with nogil:
        bad = poseidon_hash_batch(arity, &inputs[0, 0, 0], inputs.shape[0], &out[0, 0], plain)
    if bad >= 0:
        raise ScalarRangeError(f"input {bad // arity} element {bad % arity} is not below r")


def round_constants(int arity):
    """The Grain round constants of an arity, canonical little-endian, concatenated."""
    if not poseidon_arity_supported(arity):
        raise InvalidInputError(f"Poseidon of arity {arity}: 2, 4, 8 and 11 are built")
    cdef size_t n = poseidon_round_constants(arity, NULL, 0)
    buf = bytearray(32 * n)
    cdef uint8_t[::1] view = buf
    poseidon_round_constants(arity, &view[0], n)
    return bytes(buf)


def fr_add(const uint8_t[:, ::1] a not None, const uint8_t[:, ::1] b not None, uint8_t[:, ::1] out not None):
    """out = a + b mod r, row by row, (n, 32) each."""
    if a.shape[1] != 32 or b.shape[1] != 32 or out.shape[1] != 32:
        raise InvalidInputError("fr_add takes (n, 32) arrays")
    _check_rows("b", b.shape[0], a.shape[0])
    _check_rows("out", out.shape[0], a.shape[0])
    if a.shape[0] == 0:
        return
    cdef int64_t bad
    with nogil:
        bad = fr_add_batch(&a[0, 0], &b[0, 0], a.shape[0], &out[0, 0])
    if bad >= 0:
        raise ScalarRangeError(f"element {bad} is not below r")
