# SPDX-License-Identifier: Apache-2.0
"""circom's .r1cs and snarkjs's .wtns files.

.r1cs (magic "r1cs", version 1):
  section 1 header: u32 n8 (32), prime (n8 bytes), u32 nWires, u32 nPubOut,
      u32 nPubIn, u32 nPrvIn, u64 nLabels, u32 nConstraints
  section 2 constraints: per constraint three linear combinations A, B, C of
      {u32 nTerms; nTerms x (u32 wire, n8-byte canonical LE coefficient)}
  section 3 wire -> label map: one u64 label per wire (not needed to prove;
      it backs the wire count, see read_r1cs)
Wire 0 is the constant one, wires 1 .. nPubOut + nPubIn the public signals
(outputs first), then private inputs and internal signals: exactly our
variable order with num_inputs = 1 + nPublic.

.wtns (magic "wtns", version 2): section 1 {u32 n8, prime, u32 nWitness},
section 2 nWitness canonical n8-byte LE values, w[0] = 1.
"""
from __future__ import annotations

import dataclasses
import os

import numpy as np

from ..config import resolve_threads
from ..errors import CircuitFormatError, ScalarRangeError
from ..field.constants import R
from ..field.fr_array import FrArray
from ..r1cs import _r1cs
from ..r1cs.system import R1CS, SparseMatrix
from .binfile import BinFile, Reader, write_binfile

_PARSE_ERRORS = {-3: "truncated", -4: "wire index out of range", -5: "coefficient not below r"}


@dataclasses.dataclass
class CircomR1CS:
    """A circom constraint system and its signal counts."""

    r1cs: R1CS
    n_pub_out: int
    n_pub_in: int
    n_prv_in: int
    n_labels: int

    @property
    def n_public(self) -> int:
        """Public signals (outputs, then public inputs), the constant one excluded."""
        return self.n_pub_out + self.n_pub_in


def _check_prime(reader: Reader, where: str) -> None:
    n8 = reader.u32()
    if n8 != 32:
        raise CircuitFormatError(f"{where}: field elements of {n8} bytes; BLS12-381 Fr needs 32")
    prime = reader.bigint(n8)
    if prime != R:
        raise CircuitFormatError(f"{where}: prime {prime:#x} is not the BLS12-381 scalar field "
                                 f"(compile with circom --prime bls12381)")


def _check_wires(f: BinFile, n_wires: int, terms: int) -> None:
    """A wire count only as large as the file backs: with the wire -> label
    map (section 3, which circom writes) one u64 label per wire, without it
    one constraint term per wire beyond the constant one. What a prover makes
    per wire (the witness, a setup's points) then stays a multiple of the
    file's size, not 2^32 wires from a 4-byte field."""
    if 3 in f.sections:
        labels = len(f.section(3, "wire labels"))
        if labels != 8 * n_wires:
            raise CircuitFormatError(f"{f.path}: {n_wires} wires need {8 * n_wires} bytes of wire labels "
                                     f"(section 3), the file has {labels}")
    elif n_wires > 1 + terms:
        raise CircuitFormatError(f"{f.path}: {n_wires} wires, but the constraints use at most {1 + terms} and "
                                 f"there is no wire label map (section 3) to hold the others")


def read_r1cs(path: str | os.PathLike, threads: int | None = None) -> CircomR1CS:
    """Read a circom .r1cs. Raises CircuitFormatError naming what is wrong and
    where; counts the file does not back (constraints beyond its bytes, wires
    beyond its label map or terms) are errors before anything is made from
    them."""
    f = BinFile(path, b"r1cs", (1,), CircuitFormatError)
    head = Reader(f.section(1, "header"), f"{f.path} header", CircuitFormatError)
    _check_prime(head, f"{f.path} header")
    n_wires, n_pub_out, n_pub_in, n_prv_in = head.u32(), head.u32(), head.u32(), head.u32()
    n_labels, n_constraints = head.u64(), head.u32()
    head.done()
    if n_wires < 1 + n_pub_out + n_pub_in + n_prv_in:
        raise CircuitFormatError(f"{f.path}: {n_wires} wires cannot hold {n_pub_out} outputs, {n_pub_in} public "
                                 f"and {n_prv_in} private inputs and the constant one")
    body = f.section(2, "constraints")
    if n_constraints > len(body) // 12:       # three term counts of 4 bytes each at least
        raise CircuitFormatError(f"{f.path}: {n_constraints} constraints need at least {12 * n_constraints} "
                                 f"bytes, the constraints section has {len(body)}")
    rc, where, mats = _r1cs.parse_circom_constraints(body, n_constraints, n_wires, resolve_threads(threads))
    if rc:
        raise CircuitFormatError(f"{f.path}: constraints section, {_PARSE_ERRORS.get(rc, rc)} at byte "
                                 f"{f.offset(2) + where}")
    assert mats is not None                   # code 0: the three matrices
    if where != len(body):
        raise CircuitFormatError(f"{f.path}: constraints section has {len(body) - where} bytes after "
                                 f"{n_constraints} constraints")
    _check_wires(f, n_wires, sum(len(col) for _, col, _ in mats))
    matrices = [SparseMatrix(ip, col, FrArray(coeff)) for ip, col, coeff in mats]
    k = 1 + n_pub_out + n_pub_in
    try:
        r1cs = R1CS(k, n_wires - k, *matrices)
    except ValueError as exc:
        raise CircuitFormatError(f"{f.path}: {exc}") from None
    return CircomR1CS(r1cs, n_pub_out, n_pub_in, n_prv_in, n_labels)


def read_wtns(path: str | os.PathLike) -> FrArray:
    """Read a snarkjs .wtns witness (every wire, w[0] = 1). CircuitFormatError when malformed."""
    f = BinFile(path, b"wtns", (1, 2), CircuitFormatError)
    head = Reader(f.section(1, "header"), f"{f.path} header", CircuitFormatError)
    _check_prime(head, f"{f.path} header")
    count = head.u32()
    head.done()
    body = f.section(2, "values")
    if len(body) != 32 * count:
        raise CircuitFormatError(f"{f.path}: {count} values need {32 * count} bytes, the section has {len(body)}")
    try:
        w = FrArray.from_bytes(body)
    except ScalarRangeError as exc:
        raise CircuitFormatError(f"{f.path}: {exc}") from None
    if count and w[0] != 1:
        raise CircuitFormatError(f"{f.path}: witness[0] is {w[0]}, not the constant one")
    return w


def write_wtns(path: str | os.PathLike, witness: FrArray) -> None:
    """Write a .wtns file (version 2) as snarkjs does."""
    header = np.array([32], "<u4").tobytes() + R.to_bytes(32, "little") + np.array([len(witness)], "<u4").tobytes()
    write_binfile(path, b"wtns", 2, [(1, header), (2, witness.to_bytes())])
