# SPDX-License-Identifier: Apache-2.0
"""A circuit with the statistics of one 32 GiB PoRep partition, scaled.

The real partition (bellperson's StackedCircuit for 32 GiB sectors) has
130,278,869 constraints, 328 public inputs and 130,169,893 aux variables;
nonzeros per constraint about 2.4 in A, 1.0 in B and 2.2 in C; 99.7 % of the
aux variables appear in A and 25.4 % in B; its witness is mostly bits (SHA-256)
with a minority of full field elements (Poseidon, the public commitments).

This circuit reproduces those numbers with gates whose witness is computed,
not guessed, so every partition is satisfiable:

    XOR   (2 a) * b = a + b - c        c = a xor b   (bits)    A 1, B 1, C 3
    AND   a * b = c                                  (bits)    A 1, B 1, C 1
    PACK  (sum_i<7 2^i b_i + w) * 1 = p              (words)   A 8, B 1, C 1
    MUL   x * y = z                                  (full)    A 1, B 1, C 1
    CHECK x * 1 = x                    (no new variable)       A 1, B 1, C 1

60 % XOR rows give C 2.2 per row, 20 % PACK rows A 2.4, every row has one B
term. Sources (free bits and full elements, the replica's data) come first,
then LAYERS layers of gates, each reading only earlier variables, so a
witness is evaluated one vectorised layer at a time. Gate inputs are drawn so
that every variable is read in A at least once (except 0.3 %, left unread)
and a pool of 25.4 % of them in B. The structure depends on the circuit seed
only; a partition's witness on its own seed (sources and public inputs).
"""
from __future__ import annotations

import dataclasses
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from porep_prover import FrArray
from porep_prover.circuits import fr_small
from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import R1CS, SparseMatrix

PARTITION = {"constraints": 130_278_869, "public": 328, "aux": 130_169_893}
TARGET = {"nnz_a": 2.4, "nnz_b": 1.0, "nnz_c": 2.2, "a_density": 0.997, "b_density": 0.254}
LAYERS = 16
PACK_BITS = 7
XOR_SHARE, PACK_SHARE, MUL_SHARE = 0.6, 0.2, 0.04     # of the rows
FULL_SOURCE_SHARE = 0.01                              # of the aux variables
MIN_CONSTRAINTS = 20_000
WINDOW = 1 << 16         # extra reads come from this many most recent variables of a kind
BLOCK = 256              # gate inputs are shuffled within blocks of this many slots
SHUFFLE_STRETCH = BLOCK << 12     # slots a thread shuffles at a time
BIT, WORD, FULL = 0, 1, 2
ONE = 0


@dataclasses.dataclass
class Gates:
    """One layer's gates: output variables and input variables per kind."""
    xor: np.ndarray      # (n, 3): a, b, out
    and_: np.ndarray     # (n, 3): a, b, out
    pack: np.ndarray     # (n, PACK_BITS + 2): bits..., carry word, out
    mul: np.ndarray      # (n, 3): x, y, out


@dataclasses.dataclass
class Shape:
    """Everything but the witness: the R1CS and how to evaluate its variables."""
    scale: float
    r1cs: R1CS
    num_public: int
    bit_sources: np.ndarray
    full_sources: np.ndarray
    layers: list[Gates]
    kind: np.ndarray          # per variable: BIT, WORD or FULL


def shape_bytes(shape: Shape) -> int:
    """Host bytes a circuit holds: its R1CS (R1CS.host_bytes) and the arrays its witness is evaluated by."""
    gates = sum(getattr(layer, f.name).nbytes for layer in shape.layers for f in dataclasses.fields(layer))
    return shape.r1cs.host_bytes + gates + shape.bit_sources.nbytes + shape.full_sources.nbytes + shape.kind.nbytes


def counts(scale: float) -> dict:
    """Constraints, public inputs and aux variables of a partition at this scale."""
    if not 0 < scale <= 1:
        raise InvalidInputError(f"scale must be in (0, 1], got {scale}")
    m = round(PARTITION["constraints"] * scale)
    if m < MIN_CONSTRAINTS:
        raise InvalidInputError(f"scale {scale} gives {m} constraints; at least {MIN_CONSTRAINTS} are needed")
    return {"constraints": m, "public": PARTITION["public"], "aux": round(PARTITION["aux"] * scale)}


class _Picker:
    """Variables of one kind available to later layers: those not yet read
    (handed out first, so every one is read once) and all of them."""

    def __init__(self):
        self.unread: list[np.ndarray] = []
        self.all: list[np.ndarray] = []

    def add(self, v: np.ndarray, unread: bool = True) -> None:
        self.all.append(v)
        if unread:
            self.unread.append(v)

    def recent(self) -> np.ndarray:
        """The last WINDOW variables made (without joining all of them)."""
        parts, size = [], 0
        for v in reversed(self.all):
            parts.append(v[-(WINDOW - size):])
            size += len(parts[-1])
            if size >= WINDOW:
                break
        return np.concatenate(parts[::-1]) if parts else np.zeros(0, np.int64)

    def pending(self) -> int:
        return sum(len(u) for u in self.unread)

    def take(self, count: int, rng, pool: ThreadPoolExecutor) -> np.ndarray:
        """count variables: unread ones first, in the order they were made, then
        draws from the most recent WINDOW; shuffled only within blocks of BLOCK
        slots. Like a real circuit's wiring (SHA-256 rounds read the words just
        computed) the reads stay local, so evaluating A w streams through
        memory instead of missing the cache on every term. The blocks are
        shuffled on pool's threads."""
        out = np.empty(count, np.int64)
        first = 0
        while self.unread and first < count:      # the unread pieces in order, never joined whole
            head = self.unread[0]
            size = min(len(head), count - first)
            out[first:first + size] = head[:size]
            first += size
            if size == len(head):
                self.unread.pop(0)
            else:
                self.unread[0] = head[size:]
        if count > first:
            recent = self.recent()
            if not len(recent):
                raise InvalidInputError("no variables of this kind to read yet")
            out[first:] = np.sort(recent[rng.integers(0, len(recent), count - first)])
        return _shuffled_in_blocks(out, rng.random(count), pool)


def _shuffled_in_blocks(values: np.ndarray, keys: np.ndarray, pool: ThreadPoolExecutor) -> np.ndarray:
    """values reordered within each block of BLOCK slots by their keys (random,
    distinct): the order of one sort of block * 2 + key, made a block at a
    time (sorts of BLOCK keys, not one of them all), stretches of blocks on
    pool's threads (NumPy sorts and gathers without the GIL)."""
    full = len(values) // BLOCK * BLOCK
    out = np.empty_like(values)

    def stretch(lo: int, hi: int) -> None:
        rows = np.argsort(keys[lo:hi].reshape(-1, BLOCK), axis=1)
        rows += np.arange(lo, hi, BLOCK)[:, None]
        np.take(values, rows.reshape(-1), out=out[lo:hi], mode="clip")     # "raise" would buffer out
    bounds = np.append(np.arange(0, full, SHUFFLE_STRETCH), full)
    for f in [pool.submit(stretch, int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]:
        f.result()
    out[full:] = values[full:][np.argsort(keys[full:])]
    return out


def build(scale: float, seed: int = 0, threads: int | None = None) -> Shape:
    """The scaled partition circuit (deterministic in scale and seed, whatever
    threads: the NumPy threads its shuffles and matrices use, default one a core)."""
    with ThreadPoolExecutor(max(1, threads or os.cpu_count() or 1), thread_name_prefix="circuit") as pool:
        return _build(scale, seed, pool)


def _build(scale: float, seed: int, pool: ThreadPoolExecutor) -> Shape:
    c = counts(scale)
    m, npub, aux = c["constraints"], c["public"], c["aux"]
    k = 1 + npub
    unread_target = round((1 - TARGET["a_density"]) * aux)
    n_full_src = round(FULL_SOURCE_SHARE * aux)
    # left unread by the gates: the last layer's outputs and as many full
    # variables as there are full sources (MUL reads one per output); the
    # CHECK rows read all but unread_target of them
    creating = int((m + unread_target - npub - n_full_src) / (1 + 1 / LAYERS))
    sources = aux - creating
    n_xor, n_pack, n_mul = round(XOR_SHARE * m), round(PACK_SHARE * m), round(MUL_SHARE * m)
    n_and = creating - n_xor - n_pack - n_mul
    if n_and < 0 or sources < n_full_src + 1:
        raise InvalidInputError(f"scale {scale}: the gate mix does not fit {m} constraints")
    rng = np.random.default_rng([seed, 0x9E3779B9])
    kind = np.zeros(k + aux, np.uint8)
    kind[:k] = FULL
    nxt = k
    full_src = np.arange(nxt, nxt + n_full_src)
    bit_src = np.arange(nxt + n_full_src, nxt + sources)
    nxt += sources
    kind[full_src] = FULL
    # B reads come from a pool of 25.4 % of the variables (bits and full ones, not the last layer's)
    eligible = sources + (n_xor + n_and + n_mul) * (LAYERS - 1) / LAYERS
    p_pool = min(1.0, TARGET["b_density"] * aux / eligible)
    a_pick = {BIT: _Picker(), WORD: _Picker(), FULL: _Picker()}
    b_pick = {BIT: _Picker(), FULL: _Picker()}

    def created(v: np.ndarray, kd: int, last: bool) -> None:
        kind[v] = kd
        a_pick[kd].add(v)
        if kd in b_pick and not last:
            b_pick[kd].add(v[rng.random(len(v)) < p_pool])

    created(full_src, FULL, False)
    created(bit_src, BIT, False)
    layers = []
    split = [np.array_split(np.arange(n), LAYERS) for n in (n_xor, n_and, n_pack, n_mul)]
    for j in range(LAYERS):
        nx, na, np_, nm = (len(s[j]) for s in split)
        bits_a = a_pick[BIT].take(nx + na + PACK_BITS * np_, rng, pool)
        carry = a_pick[WORD].take(np_, rng, pool) if j else np.full(np_, ONE)
        x = a_pick[FULL].take(nm, rng, pool)
        bits_b = b_pick[BIT].take(nx + na, rng, pool)
        y = b_pick[FULL].take(nm, rng, pool)
        outs = np.arange(nxt, nxt + nx + na + np_ + nm)
        nxt += len(outs)
        o_x, o_a, o_p, o_m = np.split(outs, np.cumsum([nx, na, np_]))
        layers.append(Gates(np.stack([bits_a[:nx], bits_b[:nx], o_x], 1),
                            np.stack([bits_a[nx:nx + na], bits_b[nx:], o_a], 1),
                            np.concatenate([bits_a[nx + na:].reshape(np_, PACK_BITS), carry[:, None],
                                            o_p[:, None]], 1),
                            np.stack([x, y, o_m], 1)))
        last = j == LAYERS - 1
        created(np.concatenate([o_x, o_a]), BIT, last)
        created(o_p, WORD, last)
        created(o_m, FULL, last)
    checks = m - creating
    unread = sum(p.pending() for p in a_pick.values())
    cover = max(0, min(checks - npub, unread - unread_target))
    pending = np.concatenate([np.concatenate(p.unread) for p in a_pick.values() if p.unread] or [np.zeros(0, int)])
    extra = checks - npub - cover
    check_vars = np.concatenate([np.arange(1, k), pending[rng.permutation(len(pending))[:cover]],
                                 rng.integers(k, k + aux, extra)])
    r1cs = _matrices(k, aux, layers, check_vars, pool)
    return Shape(scale, r1cs, npub, bit_src, full_src, layers, kind)


class _Csr:
    """Rows appended in blocks of equal length; each block's coefficients are
    a short pattern (per column of the block), entered in one small table,
    so an entry costs a uint32 column and a uint32 table index. The blocks
    are kept as given and written once, into arrays of their final size."""

    def __init__(self):
        self.blocks: list[tuple[np.ndarray | int, int, np.ndarray]] = []
        self.table: dict[int, int] = {}

    def block(self, cols: np.ndarray | int, coeffs, rows: int | None = None) -> None:
        """Rows of the columns cols (rows x width, or a vector: width 1; an int: that
        column in each of rows rows) with coefficients coeffs (one, or one a column)."""
        if isinstance(cols, np.ndarray):
            cols = cols.reshape(len(cols), -1)
            rows, width = cols.shape
        else:
            width = 1
        pattern = np.broadcast_to(np.asarray(coeffs, np.int64), (width,))
        ids = np.array([self.table.setdefault(int(v), len(self.table)) for v in pattern], np.uint32)
        self.blocks.append((cols, int(rows or 0), ids))

    def matrix(self) -> SparseMatrix:
        rows = sum(n for _, n, _ in self.blocks)
        nnz = sum(n * len(ids) for _, n, ids in self.blocks)
        indptr, col, coeff_id = np.empty(rows + 1, np.int64), np.empty(nnz, np.uint32), np.empty(nnz, np.uint32)
        indptr[0] = row = entry = 0
        for cols, n, ids in self.blocks:
            width, end = len(ids), entry + n * len(ids)
            indptr[row + 1:row + n + 1] = np.arange(entry + width, end + 1, width)
            col[entry:end].reshape(n, width)[:] = cols
            coeff_id[entry:end].reshape(n, width)[:] = ids
            row, entry = row + n, end
        values = sorted(self.table, key=self.table.get)
        return SparseMatrix(indptr, col, fr_small(values), coeff_id)


def _matrices(k: int, aux: int, layers: list[Gates], check_vars: np.ndarray, pool: ThreadPoolExecutor) -> R1CS:
    a, b, c = _Csr(), _Csr(), _Csr()
    packing = [1 << i for i in range(PACK_BITS)] + [1]
    for g in layers:
        a.block(g.xor[:, 0], 2), b.block(g.xor[:, 1], 1), c.block(g.xor, [1, 1, -1])
        a.block(g.and_[:, 0], 1), b.block(g.and_[:, 1], 1), c.block(g.and_[:, 2], 1)
        a.block(g.pack[:, :-1], packing), b.block(ONE, 1, len(g.pack)), c.block(g.pack[:, -1], 1)
        a.block(g.mul[:, 0], 1), b.block(g.mul[:, 1], 1), c.block(g.mul[:, 2], 1)
    a.block(check_vars, 1), b.block(ONE, 1, len(check_vars)), c.block(check_vars, 1)
    ma, mb, mc = pool.map(_Csr.matrix, (a, b, c))       # filled at once: their copies run without the GIL
    return R1CS(k, aux, ma, mb, mc)


def random_full(rng, n: int) -> FrArray:
    """n full field elements (random limbs below 2^254 < r, read as Montgomery forms)."""
    limbs = np.frombuffer(rng.bytes(32 * n), dtype=np.uint64).reshape(n, 4).copy()
    limbs[:, 3] &= np.uint64((1 << 62) - 1)
    return FrArray(limbs)


def witness_scratch_bytes(shape: Shape) -> int:
    """Host bytes witness holds while it runs, beside the witness itself:
    a bit, a word, a slot and an index a variable, the full elements twice."""
    full = shape.num_public + len(shape.full_sources) + sum(len(g.mul) for g in shape.layers)
    return shape.r1cs.num_variables * (1 + 8 + 8 + 8) + 2 * 32 * full


def witness(shape: Shape, seed: int, threads: int = 1, out: FrArray | None = None) -> FrArray:
    """A satisfying assignment: fresh sources and public inputs from seed,
    then every layer evaluated in order, each layer's gates split over
    threads (NumPy's gathers and the field products run without the GIL).
    The result does not depend on threads. out: where it is written (an
    FrArray of the circuit's variables; page-locked memory, say), else a
    new array; InvalidInputError for an out of another length."""
    rng = np.random.default_rng([seed, 0x5EED])
    r1cs, k = shape.r1cs, 1 + shape.num_public
    nvars = r1cs.num_variables
    bits = np.zeros(nvars, np.uint8)
    words = np.zeros(nvars, np.uint64)
    words[ONE] = 1
    full_slot = np.full(nvars, -1, np.int64)
    full_vars = np.concatenate([np.arange(1, k), shape.full_sources] + [g.mul[:, 2] for g in shape.layers])
    full_slot[full_vars] = np.arange(len(full_vars))
    full = FrArray.zeros(len(full_vars))
    n0 = k - 1 + len(shape.full_sources)
    full.limbs[:n0] = random_full(rng, n0).limbs
    bits[shape.bit_sources] = rng.integers(0, 2, len(shape.bit_sources), dtype=np.uint8)
    with ThreadPoolExecutor(max(1, threads), thread_name_prefix="witness") as pool:
        split = _Split(pool, max(1, threads))
        for g in shape.layers:
            split(len(g.xor), lambda s, g=g: _xor(bits, g.xor[s]))
            split(len(g.and_), lambda s, g=g: _and(bits, g.and_[s]))
            split(len(g.pack), lambda s, g=g: _pack(bits, words, g.pack[s]))
            split(len(g.mul), lambda s, g=g: _mul(full.limbs, full_slot, g.mul[s]))
        # One gather builds the witness from its values (the small integers up
        # to the largest word, 0 and 1 among them, then the full elements):
        # row-masked stores of 32-byte rows cost several times more.
        word_vars = np.flatnonzero(shape.kind == WORD)
        small = int(words[word_vars].max(initial=1)) + 1
        values = np.concatenate([fr_small(range(small)).limbs, full.limbs])
        index = (bits & (shape.kind == BIT)).astype(np.int64)
        index[word_vars] = words[word_vars]
        index[full_vars] = small + np.arange(len(full_vars))
        index[ONE] = 1
        if out is not None and (len(out) != nvars or not out.limbs.flags.c_contiguous):
            raise InvalidInputError(f"a witness of {nvars} variables written into {len(out)} rows")
        rows = np.empty((nvars, 4), np.uint64) if out is None else out.limbs
        # mode "raise" would buffer its output
        split(nvars, lambda s: np.take(values, index[s], axis=0, out=rows[s], mode="clip"))
    return FrArray(rows) if out is None else out


class _Split:
    """split(n, fn): fn(slice) over `parts` slices of range(n) on the pool,
    waiting for all (slices of gates write disjoint outputs)."""

    MIN = 1 << 14        # rows per slice worth a thread

    def __init__(self, pool, parts: int):
        self.pool, self.parts = pool, parts

    def __call__(self, n: int, fn) -> None:
        parts = max(1, min(self.parts, n // self.MIN))
        if parts == 1:
            fn(slice(0, n))
            return
        bounds = np.linspace(0, n, parts + 1).astype(np.int64)
        for f in [self.pool.submit(fn, slice(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]:
            f.result()


def _xor(bits, g) -> None:
    bits[g[:, 2]] = bits[g[:, 0]] ^ bits[g[:, 1]]


def _and(bits, g) -> None:
    bits[g[:, 2]] = bits[g[:, 0]] & bits[g[:, 1]]


def _pack(bits, words, g) -> None:
    packed = words[g[:, PACK_BITS]]
    for i in range(PACK_BITS):
        packed += bits[g[:, i]].astype(np.uint64) << np.uint64(i)
    words[g[:, -1]] = packed


def _mul(limbs, slot, g) -> None:
    prod = FrArray(limbs[slot[g[:, 0]]]) * FrArray(limbs[slot[g[:, 1]]])
    limbs[slot[g[:, 2]]] = prod.limbs


def statistics(r1cs: R1CS, witness_: FrArray | None = None) -> dict:
    """The numbers the target is stated in (and, with a witness, its make-up)."""
    m, k = r1cs.num_constraints, r1cs.num_inputs
    d = r1cs.density()
    out = {"constraints": m, "public": k - 1, "aux": r1cs.num_aux,
           "nnz_a": r1cs.a.nnz / m, "nnz_b": r1cs.b.nnz / m, "nnz_c": r1cs.c.nnz / m,
           "a_density": float(d.a_aux.mean()), "b_density": float(d.b_aux.mean())}
    if witness_ is not None:
        limbs = witness_.limbs[k:]
        one = fr_small([1]).limbs[0]
        zero_or_one = (limbs == 0).all(1) | (limbs == one).all(1)
        out["bit_share"] = float(zero_or_one.mean())
    return out
