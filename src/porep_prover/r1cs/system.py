# SPDX-License-Identifier: Apache-2.0
"""Rank-1 constraint systems and their evaluation.

Variables are numbered inputs first, then aux: index 0 is the constant one,
1 .. num_inputs-1 the public inputs, num_inputs .. num_inputs+num_aux-1 the
private (aux) variables. A witness is the full assignment as an FrArray of
num_inputs + num_aux elements whose first element is 1. Constraint i holds when
<A_i, w> * <B_i, w> = <C_i, w>.

Matrices are CSR over constraints (SparseMatrix) in canonical form: within a
row, columns strictly increase and no coefficient is zero. Everything heavy
(the MatVecs, the satisfaction check) runs natively without the GIL.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray

from ..atomic import atomic_write
from ..config import resolve_threads
from ..errors import CircuitFormatError, InvalidInputError, R1CSError, UnsatisfiedError, WitnessError
from ..field.constants import R
from ..field.fr_array import FrArray
from . import _r1cs
from .npz_archive import read_npz


@dataclasses.dataclass(frozen=True)
class SparseMatrix:
    """CSR matrix over Fr: indptr (int64, rows + 1), col (uint32, nnz), coeff
    (FrArray, nnz); or, tabled, coeff a table of distinct values and coeff_id
    (uint32, nnz) each entry's index into it: 8 bytes an entry instead of 36,
    for circuits whose coefficients are few (small constants, powers of two)."""

    indptr: np.ndarray
    col: np.ndarray
    coeff: FrArray
    coeff_id: np.ndarray | None = None

    def coefficients(self) -> FrArray:
        """One coefficient per entry (the table expanded when tabled)."""
        if self.coeff_id is None:
            return self.coeff
        return FrArray(np.take(self.coeff.limbs, self.coeff_id, axis=0))

    def tabled(self) -> "SparseMatrix":
        """The same matrix with its coefficients as a table and indices."""
        if self.coeff_id is not None:
            return self
        values, ids = np.unique(self.coeff.limbs, axis=0, return_inverse=True)
        return SparseMatrix(self.indptr, self.col, FrArray(np.ascontiguousarray(values)),
                            ids.reshape(-1).astype(np.uint32))

    @property
    def rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return len(self.col)

    @property
    def host_bytes(self) -> int:
        """Host bytes of its arrays."""
        ids = self.coeff_id.nbytes if self.coeff_id is not None else 0
        return self.indptr.nbytes + self.col.nbytes + self.coeff.limbs.nbytes + ids

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[int, int]]) -> "SparseMatrix":
        """From one {variable: coefficient} mapping per constraint (ints, any sign, reduced mod r)."""
        indptr, cols, coeffs = [0], [], []
        for row in rows:
            for var, k in sorted(row.items()):
                if k % R:
                    cols.append(var)
                    coeffs.append(k % R)
            indptr.append(len(cols))
        if any(c < 0 or c >= 1 << 32 for c in cols):
            raise R1CSError("variable index outside [0, 2^32)")
        return cls(np.array(indptr, dtype=np.int64), np.array(cols, dtype=np.uint32), FrArray.from_ints(coeffs))

    @classmethod
    def from_arrays(cls, rows: np.ndarray, cols: np.ndarray, coeff: FrArray, nrows: int) -> "SparseMatrix":
        """From COO triplets in any order; duplicates are summed, zeros dropped."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        if not (len(rows) == len(cols) == len(coeff)):
            raise R1CSError(f"COO arrays of lengths {len(rows)}, {len(cols)}, {len(coeff)} differ")
        if len(rows) and (rows.min() < 0 or rows.max() >= nrows or cols.min() < 0 or cols.max() >= 1 << 32):
            raise R1CSError("COO entry with a row or column index out of range")
        key = (rows << 32) | cols
        if len(key) > 1 and not np.all(key[1:] > key[:-1]):
            order = np.argsort(key, kind="stable")
            rows, cols, coeff = rows[order], cols[order], coeff[order]
        else:       # sorted and distinct already (a file's usual order): no sort; the matrix still owns its copy
            coeff = coeff.copy()
        dup: NDArray[np.intp] | list[int] = (np.flatnonzero((rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1])) + 1
                                             if len(rows) else [])
        if len(dup):
            coeff = cls._merge_duplicates(rows, cols, coeff)
            keep = np.ones(len(rows), dtype=bool)
            keep[dup] = False
            rows, cols, coeff = rows[keep], cols[keep], coeff[np.flatnonzero(keep)]
        nonzero = ~coeff.is_zero()
        if not nonzero.all():
            rows, cols, coeff = rows[nonzero], cols[nonzero], coeff[np.flatnonzero(nonzero)]
        indptr = np.zeros(nrows + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=nrows), out=indptr[1:])
        return cls(indptr, cols.astype(np.uint32), coeff)

    @staticmethod
    def _merge_duplicates(rows, cols, coeff: FrArray) -> FrArray:
        """Sum each run of equal (row, col) into its first entry."""
        values = coeff.to_ints()
        start = 0
        for i in range(1, len(rows) + 1):
            if i == len(rows) or rows[i] != rows[start] or cols[i] != cols[start]:
                values[start] = sum(values[start:i]) % R
                start = i
        return FrArray.from_ints(values)

    def validate(self, nrows: int, ncols: int, name: str) -> None:
        """Raise R1CSError unless this is a well-formed nrows x ncols CSR matrix."""
        ip = self.indptr
        if not isinstance(ip, np.ndarray) or not isinstance(self.col, np.ndarray):
            raise R1CSError(f"matrix {name}: indptr and col must be numpy arrays")
        if ip.dtype != np.int64 or ip.ndim != 1 or len(ip) != nrows + 1 or nrows < 0:
            raise R1CSError(f"matrix {name}: indptr must be int64 of length {max(nrows, 0) + 1} (rows + 1)")
        # compared, not differenced: np.diff wraps around on offsets near 2^63
        if ip[0] != 0 or ip[-1] != self.nnz or np.any(ip[1:] < ip[:-1]):
            raise R1CSError(f"matrix {name}: indptr is not a monotone offset table over {self.nnz} entries")
        if self.col.ndim != 1 or not self.col.flags.c_contiguous or not ip.flags.c_contiguous:
            raise R1CSError(f"matrix {name}: indptr and col must be contiguous one-dimensional arrays")
        if self.coeff_id is None:
            if self.col.dtype != np.uint32 or len(self.coeff) != self.nnz:
                raise R1CSError(f"matrix {name}: col (uint32) and coeff must both have {self.nnz} entries")
        else:
            ids = self.coeff_id
            if not isinstance(ids, np.ndarray) or self.col.dtype != np.uint32 or ids.dtype != np.uint32 \
                    or ids.ndim != 1 or not ids.flags.c_contiguous or len(ids) != self.nnz:
                raise R1CSError(f"matrix {name}: col and coeff_id must both be uint32 with {self.nnz} entries")
            if self.nnz and int(ids.max()) >= len(self.coeff):
                raise R1CSError(f"matrix {name}: a coefficient index is past the table of {len(self.coeff)}")
        if self.nnz and int(self.col.max()) >= ncols:
            bad = int(np.argmax(self.col >= ncols))
            row = int(np.searchsorted(ip, bad, side="right")) - 1
            raise R1CSError(f"matrix {name}: constraint {row} uses variable {int(self.col[bad])} "
                            f"but there are only {ncols}")

    def column_mask(self, ncols: int) -> np.ndarray:
        """Which variables appear in this matrix."""
        mask = np.zeros(ncols, dtype=bool)
        mask[self.col] = True
        return mask

    def matvec(self, w: FrArray, threads: int | None, length: int | None = None, out: FrArray | None = None
               ) -> FrArray:
        """M w, zero-padded to length rows (default: the matrix's rows); into
        out where given (an FrArray of that many rows: its memory, page-locked
        say, is the result's). InvalidInputError for an out of another length."""
        rows = max(self.rows, length or 0)
        if out is None:
            out = FrArray.zeros(rows)
        elif len(out) != rows:
            raise InvalidInputError(f"matvec: out has {len(out)} rows, the result {rows}")
        else:
            out.limbs[self.rows:] = 0
        _r1cs.matvec(self.indptr, self.col, self.coeff.limbs, w.limbs, out.limbs, resolve_threads(threads),
                     self.coeff_id)
        return out


@dataclasses.dataclass(frozen=True)
class Density:
    """Which variables have points in the a and b queries (bellman's density trackers)."""

    a_aux: np.ndarray     # aux variables appearing in A
    b_input: np.ndarray   # inputs appearing in B
    b_aux: np.ndarray     # aux variables appearing in B


class R1CS:
    """A constraint system A w o B w = C w with num_inputs inputs (the constant one
    included) and num_aux aux variables."""

    def __init__(self, num_inputs: int, num_aux: int, a: SparseMatrix, b: SparseMatrix, c: SparseMatrix):
        if not isinstance(num_inputs, int) or num_inputs < 1:
            raise R1CSError(f"num_inputs must count the constant one (>= 1), got {num_inputs!r}")
        if not isinstance(num_aux, int) or num_aux < 0:
            raise R1CSError(f"num_aux must be >= 0, got {num_aux!r}")
        self.num_inputs, self.num_aux = num_inputs, num_aux
        self.a, self.b, self.c = a, b, c
        rows = a.rows
        for name, m in (("A", a), ("B", b), ("C", c)):
            m.validate(rows, self.num_variables, name)
        self._density: Density | None = None
        self._query_index: dict[tuple[str, str], np.ndarray] = {}

    @classmethod
    def from_constraints(cls, num_inputs: int, num_aux: int,
                         constraints: Iterable[tuple[Mapping[int, int], Mapping[int, int], Mapping[int, int]]]):
        """From (A_i, B_i, C_i) triples of {variable: coefficient} mappings."""
        constraints = list(constraints)
        return cls(num_inputs, num_aux, *(SparseMatrix.from_rows(t[k] for t in constraints) for k in range(3)))

    @property
    def num_constraints(self) -> int:
        return self.a.rows

    @property
    def num_variables(self) -> int:
        return self.num_inputs + self.num_aux

    @property
    def domain_size(self) -> int:
        """n: the smallest power of two >= constraints + inputs (one extra
        constraint input_i * 0 = 0 per input, as bellman adds)."""
        return 1 << max(0, (self.num_constraints + self.num_inputs - 1).bit_length())

    @property
    def host_bytes(self) -> int:
        """Host bytes of its matrices and of the query maps made so far (a
        circuit a provider keeps counts them once, however many partitions
        read it)."""
        density = self._density
        masks = density.a_aux.nbytes + density.b_input.nbytes + density.b_aux.nbytes if density is not None else 0
        maps = sum(v.nbytes for v in self._query_index.values())
        return self.a.host_bytes + self.b.host_bytes + self.c.host_bytes + masks + maps

    @property
    def device_bytes(self) -> int:
        """Device bytes its evaluation on a device keeps resident (r1cs.gpu):
        each matrix's CSR arrays and the queries' uint32 maps (made here if
        not yet)."""
        maps = 4 * (len(self.query_index("a")) + len(self.query_index("b")))
        return self.a.host_bytes + self.b.host_bytes + self.c.host_bytes + maps

    def density(self) -> Density:
        if self._density is None:
            a_mask = self.a.column_mask(self.num_variables)
            b_mask = self.b.column_mask(self.num_variables)
            k = self.num_inputs
            self._density = Density(a_aux=a_mask[k:], b_input=b_mask[:k], b_aux=b_mask[k:])
        return self._density

    def query_index(self, query: str, dtype=np.int64) -> np.ndarray:
        """The witness positions whose values are the scalars of the a or b
        query, in the query's order (the inputs A or B reads, then the aux
        variables it reads): a_scalars = witness[query_index("a")]. Cached
        per dtype, so a device keeps one resident copy per circuit."""
        key = (query, np.dtype(dtype).str)
        if key not in self._query_index:
            if query not in ("a", "b"):
                raise ValueError(f"query must be 'a' or 'b', got {query!r}")
            d, k = self.density(), self.num_inputs
            inputs = np.arange(k) if query == "a" else np.flatnonzero(d.b_input)
            aux = np.flatnonzero(d.a_aux if query == "a" else d.b_aux) + k
            if self.num_variables > np.iinfo(dtype).max:
                raise R1CSError(f"{self.num_variables} variables do not fit a {np.dtype(dtype)} index")
            self._query_index[key] = np.concatenate([inputs, aux]).astype(dtype)
        return self._query_index[key]

    def query_rows(self, query: str) -> np.ndarray:
        """For each aux variable, its row in the a or b query's points (the
        order of query_index), or 2^32 - 1 where the query skips it: uint32,
        cached. A device that adds up the query over the aux witness (sharing
        L's sort of it) finds each scalar's point through it."""
        key = (query, "rows")
        if key not in self._query_index:
            idx, k = self.query_index(query), self.num_inputs
            first = int(np.searchsorted(idx, k))      # the query's rows of inputs come first
            if len(idx) >= 0xFFFFFFFF:
                raise R1CSError(f"{len(idx)} rows do not fit a uint32 row map")
            rows = np.full(self.num_aux, 0xFFFFFFFF, dtype=np.uint32)
            rows[idx[first:] - k] = np.arange(first, len(idx), dtype=np.uint32)
            self._query_index[key] = rows
        return self._query_index[key]

    def check_witness(self, witness: FrArray) -> None:
        """Raise WitnessError unless witness is an FrArray of num_variables with w[0] = 1."""
        if not isinstance(witness, FrArray):
            raise WitnessError(f"witness must be an FrArray, got {type(witness).__name__}")
        if len(witness) != self.num_variables:
            raise WitnessError(f"witness has {len(witness)} values, the circuit has {self.num_variables} variables "
                               f"({self.num_inputs} inputs with the one, {self.num_aux} aux)")
        if witness[0] != 1:
            raise WitnessError("witness[0] must be the constant one")

    def evaluate(self, witness: FrArray, threads: int | None = None, length: int | None = None,
                 out: tuple[FrArray, FrArray, FrArray] | None = None) -> tuple[FrArray, FrArray, FrArray]:
        """(A w, B w, C w), one value per constraint, zero-padded to length rows
        (into out's three arrays where given: see SparseMatrix.matvec)."""
        self.check_witness(witness)
        t = resolve_threads(threads)
        a, b, c = out if out is not None else (None, None, None)
        return (self.a.matvec(witness, t, length, a), self.b.matvec(witness, t, length, b),
                self.c.matvec(witness, t, length, c))

    def check(self, witness: FrArray, threads: int | None = None, abc=None) -> None:
        """Raise UnsatisfiedError naming the first failing constraint (abc: a
        precomputed evaluate() result)."""
        a, b, c = abc if abc is not None else self.evaluate(witness, threads)
        bad = _r1cs.first_unsatisfied(a.limbs, b.limbs, c.limbs, resolve_threads(threads))
        if bad >= 0:
            raise UnsatisfiedError(f"constraint {bad} is not satisfied: A.w * B.w != C.w "
                                   f"({a[bad]:#x} * {b[bad]:#x} != {c[bad]:#x})", constraint=bad)

    def is_satisfied(self, witness: FrArray, threads: int | None = None) -> bool:
        try:
            self.check(witness, threads)
        except UnsatisfiedError:
            return False
        return True

    # ------------------------------------------------------------ files

    def save(self, path: str | os.PathLike) -> None:
        """Write the circuit as a numpy .npz archive (see load), whole or not at all."""
        arrays = {"format": np.array([1, self.num_inputs, self.num_aux], dtype=np.int64)}
        for name, m in (("a", self.a), ("b", self.b), ("c", self.c)):
            arrays[f"{name}_indptr"], arrays[f"{name}_col"], arrays[f"{name}_coeff"] = m.indptr, m.col, m.coeff.limbs
            if m.coeff_id is not None:
                arrays[f"{name}_coeff_id"] = m.coeff_id
        with atomic_write(path) as f:
            # the keywords are the arrays' names in the archive, never savez's allow_pickle: a dict's
            # keys cannot be typed apart from the keyword parameters it could fill
            np.savez(f, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str | os.PathLike) -> "R1CS":
        """Read a circuit written by save(). CircuitFormatError naming the file
        when it is not one (not a .npz archive, a missing array) or is
        malformed: an array of the wrong dtype or shape, indptr / col / coeff
        that disagree, a variable or coefficient index out of range, a
        coefficient not below r. Never unpickles; the arrays take no more
        memory than the file's size (npz_archive.read_npz)."""
        z = read_npz(path, CircuitFormatError, "porep_prover circuit")
        try:
            num_inputs, num_aux = _npz_sizes(z)
            return cls(num_inputs, num_aux, *(_npz_matrix(z, n) for n in "abc"))
        except InvalidInputError as exc:      # R1CSError, and FrArray's shape and dtype checks
            raise CircuitFormatError(f"{path}: {exc}") from None


def _npz_sizes(z: dict) -> tuple[int, int]:
    """(num_inputs, num_aux) from a circuit file's "format" array [1, inputs, aux]."""
    fmt = z.get("format")
    if fmt is None or fmt.dtype.kind not in "iu" or fmt.shape != (3,) or fmt[0] != 1:
        raise R1CSError("not a porep_prover circuit file (no int array 'format' of [1, inputs, aux])")
    num_inputs, num_aux = int(fmt[1]), int(fmt[2])
    if num_inputs < 1 or num_aux < 0 or num_inputs + num_aux > 1 << 32:
        raise R1CSError(f"{num_inputs} inputs and {num_aux} aux: the inputs (the one included) must be >= 1, "
                        f"the aux >= 0, and the variables at most 2^32 (their indices are uint32)")
    return num_inputs, num_aux


def _npz_matrix(z: dict, name: str) -> SparseMatrix:
    """Matrix name ("a", "b" or "c") from a circuit file's arrays, its
    coefficients checked below r (R1CS.__init__ checks the rest)."""
    parts = [f"{name}_indptr", f"{name}_col", f"{name}_coeff"]
    missing = [p for p in parts if p not in z]
    if missing:
        raise R1CSError(f"no array {missing[0]!r}")
    indptr, col, coeff = (z[p] for p in parts)
    coeff = FrArray(coeff)
    bad = _first_not_below_r(coeff.limbs)
    if bad >= 0:
        raise R1CSError(f"matrix {name.upper()}: coefficient {bad} is not below r")
    return SparseMatrix(indptr, col, coeff, z.get(f"{name}_coeff_id"))


def _first_not_below_r(limbs: np.ndarray) -> int:
    """Index of the first row of 4 little-endian limbs not below r, or -1."""
    below, equal = np.zeros(len(limbs), dtype=bool), np.ones(len(limbs), dtype=bool)
    for i in (3, 2, 1, 0):
        r_i = np.uint64((R >> (64 * i)) & 0xFFFFFFFFFFFFFFFF)
        below |= equal & (limbs[:, i] < r_i)
        equal &= limbs[:, i] == r_i
    bad = np.flatnonzero(~below)
    return int(bad[0]) if len(bad) else -1


def load_witness(path: str | os.PathLike) -> FrArray:
    """A witness file: 32-byte little-endian canonical values back to back.
    CircuitFormatError naming the file when it cannot be read, its length is
    not a multiple of 32 or a value is not below r."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise CircuitFormatError(f"{path}: cannot read witness: {exc}") from None
    try:
        return FrArray.from_bytes(data)
    except ValueError as exc:
        raise CircuitFormatError(f"{path}: {exc}") from None


def save_witness(path: str | os.PathLike, witness: FrArray) -> None:
    """Write a witness (32-byte little-endian values), whole or not at all."""
    with atomic_write(path) as f:
        f.write(witness.to_bytes())
