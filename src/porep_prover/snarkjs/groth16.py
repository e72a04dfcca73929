# SPDX-License-Identifier: Apache-2.0
"""Groth16 in snarkjs's flavour: proving from a .zkey, and an insecure .zkey setup.

Differences from the bellman flavour (groth16.prover), as snarkjs's
groth16_prove.js does it:
  * roots of unity from 5 (not 7); domain n >= constraints + public + 1
  * A_T, B_T = (A w, B w) over the key's coefficient rows; C_T = A_T o B_T
    (the key stores no C: valid for a satisfying witness)
  * H scalars are (A B - C) on the odd coset omega_2n <omega_n>, no division
    by Z, paired with H_j = [L^(2n)_(2j+1)(tau) / delta]_1
  * queries cover every wire (points at infinity where a wire is unused)
Proof assembly is the same as bellman's.
"""
from __future__ import annotations

import secrets
import warnings
from typing import cast

import numpy as np

from ..backend import Flavor, get_backend
from ..config import resolve_threads
from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import KeyIntegrityError, WitnessError
from ..field.constants import R
from ..field.fr_array import FrArray
from ..r1cs import _r1cs
from ..groth16.insecure_setup import InsecureSetupWarning, lagrange_basis
from ..groth16.keys import VerifyingKey
from ..groth16.proof_check import (EITHER, FINITE, INFINITY, Query, Suspects, check_proof, columns_used,
                                   random_scalars)
from ..groth16.prover import MsmSums, Stopwatch, assemble
from ..groth16.region import HStep, MsmStep, Ref, Step, SumStep, run_region
from ..groth16.proof import Proof
from ..r1cs.system import R1CS, SparseMatrix
from .circom_files import CircomR1CS
from .zkey_file import ZKey


def domain_size(num_constraints: int, n_public: int) -> int:
    """snarkjs's domain: the smallest 2^p >= constraints + public + 1."""
    need = num_constraints + n_public + 1
    return 1 << max(0, (need - 1).bit_length())


def prove(zkey: ZKey, witness: FrArray, backend: str = "cpu", threads: int | None = None, rng=None,
          r1cs: R1CS | None = None, check: bool = True, timings: dict | None = None,
          verify: bool = True) -> tuple[Proof, list[int]]:
    """A proof for witness (every wire, w[0] = 1) under zkey, and its public signals.

    check: with r1cs, the witness is checked against it first (UnsatisfiedError
        names the failing constraint), and the key's A and B against the
        circuit's (KeyIntegrityError names the first row that differs).
    verify: verify the proof against zkey.vk before returning it (one pairing
        check); a proof that fails is never returned, the error says what is at
        fault (groth16.proof_check): UnsatisfiedError (the witness; needs
        r1cs), DeviceResultError (the backend's sums differ from the CPU's),
        KeyIntegrityError (the key), or without r1cs WitnessOrKeyError (the
        key stores no C, so the witness cannot be told from the key).
        verify=False opts out.
    Raises WitnessError (the witness does not fit the key) too.
    """
    threads = resolve_threads(threads)
    be = get_backend(backend)
    clock = Stopwatch(timings)
    if not isinstance(witness, FrArray) or len(witness) != zkey.n_vars:
        got = len(witness) if isinstance(witness, FrArray) else type(witness).__name__
        raise WitnessError(f"the witness has {got} values, the key's circuit has {zkey.n_vars} wires")
    if witness[0] != 1:
        raise WitnessError("witness[0] must be the constant one")
    if r1cs is not None and r1cs.num_variables != zkey.n_vars:
        raise WitnessError(f"the r1cs has {r1cs.num_variables} wires, the key {zkey.n_vars}")
    if check and r1cs is not None:
        r1cs.check(witness, threads)
        check_circuit(zkey, r1cs, threads)
    sums = device_part(be, zkey, witness, threads, clock)
    b2_acc, _ = be.msm(zkey.b_g2, witness, threads)
    assert isinstance(b2_acc, G2Point)      # the sum of G2 points
    sums.b2_acc = b2_acc
    clock.lap("msm_g2")
    proof = assemble(zkey.vk, sums, rng, clock)
    public = witness[1:zkey.n_public + 1].to_ints()
    if verify:
        check_proof(zkey.vk, public, proof, zkey_suspects(zkey, r1cs, witness, be, sums), threads)
        clock.lap("verify")
    return proof, public


def device_part(be, zkey: ZKey, witness: FrArray, threads: int, clock: Stopwatch | None = None,
                b_g2: bool = False) -> MsmSums:
    """The sums a backend makes: A_T, B_T (C_T = A_T o B_T) on the host, then
    the region's steps (groth16.region): H, the G1 MSMs of A, C + H (one
    sum) and B_1; with b_g2, B_2's too (else the caller does)."""
    clock = clock or Stopwatch(None)
    a_t = zkey.a_matrix.matvec(witness, threads)
    b_t = zkey.b_matrix.matvec(witness, threads)
    c_t = a_t * b_t
    clock.lap("synthesis")
    steps: list[Step] = [HStep(Flavor.SNARKJS, abc=(a_t, b_t, c_t)),
                         MsmStep(("a",), ((zkey.a, None),), witness),
                         SumStep("lh", ((zkey.c, witness[zkey.n_public + 1:]), (zkey.h, Ref("h")))),
                         MsmStep(("b1",), ((zkey.b_g1, None),), witness, lap="msm_g1")]
    if b_g2:
        steps.append(MsmStep(("b2",), ((zkey.b_g2, None),), witness, lap="msm_g2"))
    got = run_region(be, steps, threads, clock)
    return MsmSums(cast(G1Point, got["a"]), cast(G1Point, got["lh"]), cast(G1Point, got["b1"]),
                   cast("G2Point | None", got.get("b2")))


def check_circuit(zkey: ZKey, r1cs: R1CS, threads: int) -> None:
    """KeyIntegrityError unless the key's A and B are the circuit's (with
    snarkjs's public rows): both applied to one random vector, row by row (C,
    which the key does not store, cannot be compared)."""
    m, k = r1cs.num_constraints, zkey.n_public + 1
    if m + k > zkey.domain_size:
        raise KeyIntegrityError(f"the key's domain of {zkey.domain_size} rows cannot hold the circuit's {m} "
                                f"constraints and {k} public rows: the key was not made for this circuit")
    v = random_scalars(r1cs.num_variables)
    for name, key_m, circuit_m in (("A", zkey.a_matrix, r1cs.a), ("B", zkey.b_matrix, r1cs.b)):
        want = FrArray.zeros(zkey.domain_size)
        want.limbs[:m] = circuit_m.matvec(v, threads).limbs
        if name == "A":
            want.limbs[m:m + k] = v.limbs[:k]
        differ = np.flatnonzero((key_m.matvec(v, threads).limbs != want.limbs).any(axis=1))
        if len(differ):
            row = int(differ[0])
            where = f"constraint {row}" if row < m else f"row {row} (public wire {row - m})"
            raise KeyIntegrityError(f"the key's {name} differs from the circuit's at {where}: the key was not made "
                                    f"for this circuit (or one of the two is damaged)", [f"{name} row {row}"])


def zkey_suspects(zkey: ZKey, r1cs: R1CS | None, witness: FrArray, be, sums: MsmSums) -> Suspects:
    """What a failed check of a proof under zkey examines (proof_check): the
    sums be made, redone on the CPU unless be is the reference."""
    on_device = not be.capabilities.reference

    def redo(circuit, w, threads) -> MsmSums:
        return device_part(get_backend("cpu"), zkey, w, threads, b_g2=True)

    return Suspects(circuit=lambda: (r1cs, witness), queries=lambda circuit: zkey_queries(zkey, circuit),
                    pairs=[(Query("B1", zkey.b_g1), Query("B2", zkey.b_g2))],
                    device=sums if on_device else None, redo=redo if on_device else None)


def zkey_queries(zkey: ZKey, r1cs: R1CS | None) -> list[Query]:
    """The key's sections and where each point must be finite: A, B1, B2 per
    wire where the key's A or B uses it (infinity elsewhere); C where a wire
    is used (with the circuit; without it, where A or B use it, else either);
    H and IC everywhere."""
    n, k = zkey.n_vars, zkey.n_public + 1
    in_a = columns_used(zkey.a_matrix, width=n)
    in_b = columns_used(zkey.b_matrix, width=n)
    in_ab = in_a | in_b
    if r1cs is not None:
        c_expect = np.where((in_ab | columns_used(r1cs.c, width=n))[k:], FINITE, INFINITY)
    else:
        c_expect = np.where(in_ab[k:], FINITE, EITHER)
    a_expect, b_expect = np.where(in_a, FINITE, INFINITY), np.where(in_b, FINITE, INFINITY)
    return [Query("A", zkey.a, a_expect), Query("B1", zkey.b_g1, b_expect), Query("B2", zkey.b_g2, b_expect),
            Query("C", zkey.c, c_expect), Query("H", zkey.h), Query("IC", zkey.vk.ic)]


def insecure_zkey(circuit: CircomR1CS, rng=None, backend: str = "cpu", threads: int | None = None,
                  warn: bool = True) -> ZKey:
    """A .zkey for circuit from fresh toxic waste, as snarkjs's setup would lay
    it out (gamma = 1, an empty contribution transcript). FOR TESTING AND
    BENCHMARKS ONLY: this process knew tau, alpha, beta and delta."""
    if warn:
        warnings.warn("insecure_zkey: a proving key from known toxic waste; never use it to secure anything",
                      InsecureSetupWarning, stacklevel=2)
    threads = resolve_threads(threads)
    be = get_backend(backend)
    r1cs = circuit.r1cs
    draw = (lambda: rng.randrange(2, R)) if rng is not None else (lambda: 2 + secrets.randbelow(R - 2))
    n = domain_size(r1cs.num_constraints, circuit.n_public)
    log_n = n.bit_length() - 1
    tau, alpha, beta, delta = (draw() for _ in range(4))
    while pow(tau, 2 * n, R) == 1:
        tau = draw()
    a_m, b_m = _public_rows(r1cs, circuit.n_public, n)
    lag = lagrange_basis(tau, log_n, snarkjs=True, threads=threads)
    cols = []
    for m in (a_m, b_m, r1cs.c):
        out = FrArray.zeros(r1cs.num_variables)
        _r1cs.eval_columns(m.indptr, m.col, m.coeff.limbs, lag.limbs, out.limbs, threads, m.coeff_id)
        cols.append(out)
    at, bt, ct = cols
    lin = at * beta + bt * alpha + ct
    k = circuit.n_public + 1
    delta_inv = pow(delta, -1, R)
    lag2 = lagrange_basis(tau, log_n + 1, snarkjs=True, threads=threads)
    h_scalars = FrArray(np.ascontiguousarray(lag2.limbs[1::2])) * delta_inv
    g1, g2 = G1Array.generator(), G2Array.generator()

    def g1_mul(s: FrArray) -> G1Array:
        if not len(s):
            return G1Array.zeros(0)
        out = be.fixed_base(g1, s, threads)
        assert isinstance(out, G1Array)     # multiples of a G1 point
        return out

    def g2_mul(s: FrArray) -> G2Array:
        out = be.fixed_base(g2, s, threads)
        assert isinstance(out, G2Array)     # multiples of a G2 point
        return out

    vk = VerifyingKey(alpha_g1=G1Point((g1 * alpha).limbs), beta_g1=G1Point((g1 * beta).limbs),
                      beta_g2=G2Point((g2 * beta).limbs), gamma_g2=G2Point(g2.limbs),
                      delta_g1=G1Point((g1 * delta).limbs), delta_g2=G2Point((g2 * delta).limbs),
                      ic=g1_mul(lin[:k]))
    return ZKey(n_vars=r1cs.num_variables, n_public=circuit.n_public, domain_size=n, vk=vk, a_matrix=a_m,
                b_matrix=b_m, a=g1_mul(at), b_g1=g1_mul(bt), b_g2=g2_mul(bt),
                c=g1_mul(lin[k:] * delta_inv), h=g1_mul(h_scalars))


def _public_rows(r1cs: R1CS, n_public: int, n: int) -> tuple[SparseMatrix, SparseMatrix]:
    """A and B over the n domain rows: the constraints, then one A row per public
    wire s <= n_public (row m + s, coefficient 1), as snarkjs lays them out."""
    m = r1cs.num_constraints
    extra = np.arange(n_public + 1, dtype=np.int64)

    def coo(mat: SparseMatrix):
        rows = np.repeat(np.arange(mat.rows, dtype=np.int64), np.diff(mat.indptr))
        return rows, mat.col.astype(np.int64), mat.coefficients()

    rows, cols, coeff = coo(r1cs.a)
    ones = FrArray(np.ascontiguousarray(np.broadcast_to(FrArray.from_ints([1]).limbs, (n_public + 1, 4))))
    a_m = SparseMatrix.from_arrays(np.concatenate([rows, m + extra]), np.concatenate([cols, extra]),
                                   FrArray.concat([coeff, ones]), n)
    rows, cols, coeff = coo(r1cs.b)
    return a_m, SparseMatrix.from_arrays(rows, cols, coeff, n)

