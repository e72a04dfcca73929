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

import numpy as np

from ..backend import get_backend
from ..config import resolve_threads
from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import UnsatisfiedError, WitnessError
from ..field.constants import R
from ..field.fr_array import FrArray
from ..groth16 import _r1cs
from ..groth16.insecure_setup import InsecureSetupWarning, lagrange_basis
from ..groth16.keys import VerifyingKey
from ..groth16.prover import Stopwatch, assemble, device_sums, h_values
from ..groth16.proof import Proof
from ..groth16.r1cs import R1CS, SparseMatrix
from ..groth16.verifier import verify
from .circom_files import CircomR1CS
from .zkey_file import ZKey


def domain_size(num_constraints: int, n_public: int) -> int:
    """snarkjs's domain: the smallest 2^p >= constraints + public + 1."""
    need = num_constraints + n_public + 1
    return 1 << max(0, (need - 1).bit_length())


def prove(zkey: ZKey, witness: FrArray, backend: str = "cpu", threads: int | None = None, rng=None,
          r1cs: R1CS | None = None, check: bool = True, timings: dict | None = None) -> tuple[Proof, list[int]]:
    """A proof for witness (every wire, w[0] = 1) under zkey, and its public signals.

    check: with r1cs, the witness is checked against it first (UnsatisfiedError
    names the failing constraint); without, the proof is verified against the
    key afterwards and an UnsatisfiedError raised if it fails.
    """
    threads = resolve_threads(threads)
    be = get_backend(backend)
    clock = Stopwatch(timings)
    if not isinstance(witness, FrArray) or len(witness) != zkey.n_vars:
        got = len(witness) if isinstance(witness, FrArray) else type(witness).__name__
        raise WitnessError(f"the witness has {got} values, the key's circuit has {zkey.n_vars} wires")
    if witness[0] != 1:
        raise WitnessError("witness[0] must be the constant one")
    if check and r1cs is not None:
        if r1cs.num_variables != zkey.n_vars:
            raise WitnessError(f"the r1cs has {r1cs.num_variables} wires, the key {zkey.n_vars}")
        r1cs.check(witness, threads)
    a_t = zkey.a_matrix.matvec(witness, threads)
    b_t = zkey.b_matrix.matvec(witness, threads)
    c_t = a_t * b_t
    clock.lap("synthesis")
    h_sc = h_values(be, (a_t, b_t, c_t), "snarkjs", threads)
    clock.lap("h_poly")
    dev = device_sums(be, threads, h_sc, h=zkey.h, l=(zkey.c, witness[zkey.n_public + 1:]),
                      a=(zkey.a, witness), b1=(zkey.b_g1, witness), clock=clock)
    proof = assemble(be, zkey.vk, zkey.b_g2, witness, dev, threads, rng, clock)
    public = witness[1:zkey.n_public + 1].to_ints()
    if check and r1cs is None and not verify(zkey.vk, public, proof):
        raise UnsatisfiedError("the witness does not satisfy the circuit: its proof fails verification "
                               "(give the .r1cs to find the failing constraint)", constraint=-1)
    return proof, public


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
        return be.fixed_base(g1, s, threads) if len(s) else G1Array.zeros(0)

    vk = VerifyingKey(alpha_g1=G1Point((g1 * alpha).limbs), beta_g1=G1Point((g1 * beta).limbs),
                      beta_g2=G2Point((g2 * beta).limbs), gamma_g2=G2Point(g2.limbs),
                      delta_g1=G1Point((g1 * delta).limbs), delta_g2=G2Point((g2 * delta).limbs),
                      ic=g1_mul(lin[:k]))
    return ZKey(n_vars=r1cs.num_variables, n_public=circuit.n_public, domain_size=n, vk=vk, a_matrix=a_m,
                b_matrix=b_m, a=g1_mul(at), b_g1=g1_mul(bt), b_g2=be.fixed_base(g2, bt, threads),
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

