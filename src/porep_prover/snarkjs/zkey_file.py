# SPDX-License-Identifier: Apache-2.0
"""snarkjs Groth16 proving keys (.zkey, magic "zkey", version 1).

Sections (snarkjs zkey_new.js / zkey_utils.js):
  1  u32 protocol (1 = groth16)
  2  u32 n8q, q, u32 n8r, r, u32 nVars, u32 nPublic, u32 domainSize, then
     alpha1 beta1 beta2 gamma2 delta1 delta2                      (964 bytes)
  3  IC: nPublic + 1 G1
  4  u32 nCoeffs, then nCoeffs x {u32 matrix (0 A, 1 B), u32 row, u32 wire,
     32-byte value = coef * 2^512 mod r}; the r1cs A and B terms row by row,
     then one A row per public wire s (row nConstraints + s, coef 1). No C.
  5  A: nVars G1     6  B1: nVars G1     7  B2: nVars G2
  8  C ("L"): nVars - nPublic - 1 G1
  9  H: domainSize G1, [L^(2n)_(2j+1)(tau) / delta]_1 over snarkjs's 5-based roots
  10 MPC transcript (a 64-byte circuit hash and the contributions)
Points are affine, each coordinate 48 bytes little-endian in Montgomery form,
infinity all zero: the package's own layout, so sections 5-9 are used in place
(zero-copy views of the mapped file) after a canonical + on-curve check.
"""
from __future__ import annotations

import dataclasses
import os
import struct

import numpy as np

from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import ParamsFormatError, ScalarRangeError
from ..field import _field
from ..field.constants import P, R
from ..field.fr_array import FrArray
from ..groth16.keys import VerifyingKey
from ..r1cs.system import SparseMatrix
from .binfile import BinFile, Reader, write_binfile

COEFF = np.dtype([("matrix", "<u4"), ("row", "<u4"), ("wire", "<u4"), ("value", "<u8", (4,))])
HEADER_POINTS = (("alpha_g1", G1Point), ("beta_g1", G1Point), ("beta_g2", G2Point), ("gamma_g2", G2Point),
                 ("delta_g1", G1Point), ("delta_g2", G2Point))


@dataclasses.dataclass
class ZKey:
    """A snarkjs Groth16 proving key. a_matrix / b_matrix are CSR over domain_size rows."""

    n_vars: int
    n_public: int
    domain_size: int
    vk: VerifyingKey
    a_matrix: SparseMatrix
    b_matrix: SparseMatrix
    a: G1Array
    b_g1: G1Array
    b_g2: G2Array
    c: G1Array
    h: G1Array
    transcript: bytes = b"\0" * 64 + b"\0\0\0\0"

    def summary(self) -> dict:
        return {"vars": self.n_vars, "public": self.n_public, "domain": self.domain_size,
                "coeffs": self.a_matrix.nnz + self.b_matrix.nnz}


def _point_sections(n_vars: int, n_public: int, domain: int) -> tuple:
    """(section, name, class, count) of every point section, the counts the header's."""
    return ((3, "IC", G1Array, n_public + 1), (5, "A", G1Array, n_vars), (6, "B1", G1Array, n_vars),
            (7, "B2", G2Array, n_vars), (8, "C", G1Array, n_vars - n_public - 1), (9, "H", G1Array, domain))


def _view(f: BinFile, kind: int, name: str, cls, count: int) -> np.ndarray:
    """Section kind's points as a zero-copy (count, WIDTH) view of the file;
    ParamsFormatError unless it holds exactly count points."""
    buf = f.section(kind, name)
    width = cls.WIDTH * 8
    if len(buf) != width * count:
        raise ParamsFormatError(f"{f.path}: section {kind} ({name}) has {len(buf)} bytes, expected {count} points "
                                f"of {width} = {width * count}")
    return np.frombuffer(buf, dtype="<u8").reshape(count, cls.WIDTH)


def _points(f: BinFile, kind: int, name: str, cls, view: np.ndarray, check_subgroup: bool):
    pts = cls(view) if len(view) else cls.zeros(0)
    bad = pts.first_not_in_subgroup() if check_subgroup else pts.first_not_on_curve()
    if bad >= 0:
        what = "not in the subgroup" if check_subgroup else "not a canonical point on the curve"
        raise ParamsFormatError(f"{f.path}: section {kind} ({name}), point {bad} (offset "
                                f"{f.offset(kind) + cls.WIDTH * 8 * bad}): {what}", index=bad)
    return pts


def _header(f: BinFile) -> tuple[int, int, int, dict]:
    proto = Reader(f.section(1, "protocol"), f"{f.path} section 1", ParamsFormatError)
    protocol = proto.u32()
    if protocol != 1:
        raise ParamsFormatError(f"{f.path}: protocol {protocol} is not Groth16 (1)")
    rd = Reader(f.section(2, "header"), f"{f.path} header", ParamsFormatError)
    n8q = rd.u32()
    if n8q != 48 or rd.bigint(48) != P:
        raise ParamsFormatError(f"{f.path}: base field is not BLS12-381's")
    n8r = rd.u32()
    if n8r != 32 or rd.bigint(32) != R:
        raise ParamsFormatError(f"{f.path}: scalar field is not BLS12-381's")
    n_vars, n_public, domain = rd.u32(), rd.u32(), rd.u32()
    if domain & (domain - 1) or domain < n_public + 1 or n_vars < n_public + 1:
        raise ParamsFormatError(f"{f.path}: inconsistent sizes: {n_vars} vars, {n_public} public, domain {domain} "
                                f"(the domain must be a power of two of at least public + 1 rows, and there "
                                f"must be at least public + 1 vars)")
    raw = {}
    for name, cls in HEADER_POINTS:
        data = rd.take(cls.WIDTH * 8)
        pts = cls(np.frombuffer(data, dtype="<u8").reshape(1, cls.WIDTH).copy())
        if pts.first_not_on_curve() >= 0:
            raise ParamsFormatError(f"{f.path}: header point {name} is not a canonical point on the curve")
        raw[name] = cls(pts.limbs)
    rd.done()
    return n_vars, n_public, domain, raw


def _coeffs(f: BinFile, n_vars: int, domain: int) -> tuple[SparseMatrix, SparseMatrix]:
    buf = f.section(4, "coefficients")
    if len(buf) < 4:
        raise ParamsFormatError(f"{f.path}: coefficients section truncated")
    (count,) = struct.unpack("<I", buf[:4])
    if len(buf) != 4 + COEFF.itemsize * count:
        raise ParamsFormatError(f"{f.path}: {count} coefficients need {4 + 44 * count} bytes, section has {len(buf)}")
    rec = np.frombuffer(buf[4:], dtype=COEFF, count=count)
    bad = np.flatnonzero((rec["matrix"] > 1) | (rec["row"] >= domain) | (rec["wire"] >= n_vars))
    if len(bad):
        i = int(bad[0])
        raise ParamsFormatError(f"{f.path}: coefficient {i} (matrix {rec['matrix'][i]}, row {rec['row'][i]}, "
                                f"wire {rec['wire'][i]}) is outside the key's {domain} rows and {n_vars} wires")
    try:
        values = FrArray.from_bytes(np.ascontiguousarray(rec["value"]).tobytes())
    except ScalarRangeError as exc:
        raise ParamsFormatError(f"{f.path}: coefficients: {exc}") from None
    # stored v = coef R^2 (R = 2^256); from_bytes made v R, two Montgomery
    # reductions leave coef R, which is coef in Montgomery form
    _field.fr_montgomery(values.limbs, False, 1)
    _field.fr_montgomery(values.limbs, False, 1)
    matrix, mats = rec["matrix"], []
    # snarkjs writes A's terms, then B's: two slices then, no gathers
    split = int(np.searchsorted(matrix, 1)) if count and np.all(matrix[1:] >= matrix[:-1]) else None
    for m in (0, 1):
        sel = (slice(0, split) if m == 0 else slice(split, None)) if split is not None else np.flatnonzero(matrix == m)
        mats.append(SparseMatrix.from_arrays(rec["row"][sel], rec["wire"][sel], values[sel], domain))
    return mats[0], mats[1]


def read_zkey(path: str | os.PathLike, check_subgroup: bool = False) -> ZKey:
    """Read a Groth16 .zkey. Every point is checked canonical and on its curve
    (check_subgroup adds the subgroup test); ParamsFormatError names the first
    problem with its section and offset.

    The header's counts are checked against the file before anything is
    made from them: every point section must hold exactly the points they
    count (vars in A, B1, B2; the domain's rows in H), so the matrices over
    the domain's rows and vars are never larger than the file backs."""
    f = BinFile(path, b"zkey", (1,), ParamsFormatError)
    n_vars, n_public, domain, raw = _header(f)
    views = {name: (kind, cls, _view(f, kind, name, cls, count))
             for kind, name, cls, count in _point_sections(n_vars, n_public, domain)}
    pts = {name: _points(f, kind, name, cls, view, check_subgroup) for name, (kind, cls, view) in views.items()}
    vk = VerifyingKey(ic=G1Array(pts["IC"].limbs), **{k: v for k, v in raw.items()})
    a_m, b_m = _coeffs(f, n_vars, domain)
    key = ZKey(n_vars=n_vars, n_public=n_public, domain_size=domain, vk=vk, a_matrix=a_m, b_matrix=b_m,
               a=pts["A"], b_g1=pts["B1"], b_g2=pts["B2"], c=pts["C"], h=pts["H"])
    if 10 in f.sections:
        key.transcript = bytes(f.section(10, "contributions"))
    return key


def _coeff_records(key: ZKey) -> bytes:
    """Section 4: A then B terms of each row, rows in order."""
    parts = []
    for m, mat in ((0, key.a_matrix), (1, key.b_matrix)):
        rows = np.repeat(np.arange(mat.rows, dtype=np.uint32), np.diff(mat.indptr))
        values = mat.coefficients().copy()
        # limbs hold coef R; to_bytes() below divides by R, and the file wants
        # the integer coef R^2: multiply by R twice first
        _field.fr_montgomery(values.limbs, True, 1)
        _field.fr_montgomery(values.limbs, True, 1)
        parts.append((np.full(len(rows), m, np.uint32), rows, mat.col.astype(np.uint32), values.limbs))
    matrix, rows, wires, limbs = (np.concatenate([p[i] for p in parts]) for i in range(4))
    order = np.lexsort((matrix, rows))  # stable: terms keep their order within a row
    rec = np.zeros(len(rows), dtype=COEFF)
    rec["matrix"], rec["row"], rec["wire"] = matrix[order], rows[order], wires[order]
    canonical = FrArray(np.ascontiguousarray(limbs[order])).to_bytes()
    rec["value"] = np.frombuffer(canonical, dtype="<u8").reshape(len(rows), 4)
    return struct.pack("<I", len(rec)) + rec.tobytes()


def write_zkey(path: str | os.PathLike, key: ZKey) -> None:
    """Write a .zkey in snarkjs's layout, atomically."""
    vk = key.vk
    header = (struct.pack("<I", 48) + P.to_bytes(48, "little") + struct.pack("<I", 32) + R.to_bytes(32, "little")
              + struct.pack("<III", key.n_vars, key.n_public, key.domain_size)
              + b"".join(getattr(vk, name).limbs.astype("<u8").tobytes() for name, _ in HEADER_POINTS))
    sections = [(1, struct.pack("<I", 1)), (2, header), (3, vk.ic.limbs.astype("<u8").tobytes()),
                (4, _coeff_records(key))]
    for kind, pts in ((5, key.a), (6, key.b_g1), (7, key.b_g2), (8, key.c), (9, key.h)):
        sections.append((kind, pts.limbs.astype("<u8").tobytes()))
    sections.append((10, key.transcript))
    write_binfile(path, b"zkey", 1, sections)
