# SPDX-License-Identifier: Apache-2.0
"""INSECURE test-only Groth16 parameter generation.

The toxic waste (tau, alpha, beta, gamma, delta) is drawn here, used and then
dropped, but this process knew it: anyone who can read this process's memory
or who controls `rng` can forge proofs for these parameters. Use the result
for tests, demos and benchmarks only; real deployments use parameters from a
multi-party ceremony (e.g. Filecoin's, read with read_params).

All heavy work is native: Lagrange basis at tau, column evaluation (CSR -> CSC),
and fixed-base scalar multiplication (signed windows, batch-affine).
"""
from __future__ import annotations

import random
import secrets
import warnings
from typing import Callable, overload

import numpy as np

from ..backend import get_backend
from ..config import resolve_threads
from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import NativeMemoryError
from ..field.constants import R
from ..field.fr_array import FrArray
from ..ntt import _cpu as ntt_cpu
from ..r1cs import _r1cs
from .keys import Parameters, VerifyingKey
from ..r1cs.system import R1CS


class InsecureSetupWarning(UserWarning):
    """Emitted by insecure_setup: the parameters are for testing only."""


def lagrange_basis(tau: int, log_n: int, snarkjs: bool, threads: int | None) -> FrArray:
    """L_i(tau) for i < 2^log_n over the domain of bellman's (7-based) or snarkjs's (5-based) roots."""
    omega = FrArray.zeros(1)
    ntt_cpu.root_of_unity(log_n, snarkjs, omega.limbs)
    out = FrArray.zeros(1 << log_n)
    if _r1cs.lagrange_at(FrArray.from_ints([tau]).limbs, omega.limbs, out.limbs, log_n, resolve_threads(threads)):
        raise NativeMemoryError("Lagrange basis: out of memory")
    return out


def _column_evals(r1cs: R1CS, lagrange: FrArray, threads: int) -> list[FrArray]:
    """A_j(tau), B_j(tau), C_j(tau) for every variable j, including bellman's
    extra constraints input_k * 1 = 0 at rows m + k (they add L_{m+k} to A_k)."""
    out = []
    for matrix in (r1cs.a, r1cs.b, r1cs.c):
        col = FrArray.zeros(r1cs.num_variables)
        rc = _r1cs.eval_columns(matrix.indptr, matrix.col, matrix.coeff.limbs, lagrange.limbs, col.limbs, threads,
                                matrix.coeff_id)
        if rc:
            raise NativeMemoryError("column evaluation: out of memory")
        out.append(col)
    k, m = r1cs.num_inputs, r1cs.num_constraints
    out[0].limbs[:k] = (out[0][:k] + lagrange[m:m + k]).limbs
    return out


CHUNK = 1 << 22      # scalars per fixed-base call when progress is reported


def insecure_setup(r1cs: R1CS, rng: random.Random | None = None, backend: str = "cpu", threads: int | None = None,
                   warn: bool = True, progress: Callable[[str, int, int], None] | None = None) -> Parameters:
    """Parameters for r1cs from fresh random toxic waste. FOR TESTING ONLY.

    rng: a random.Random-like object for reproducible parameters (default: secrets).
    progress: called as progress(query, done, total) as each query's points
        are made (queries ic, h, l, a, b_g1, b_g2), in chunks of CHUNK.
    """
    if warn:
        warnings.warn("insecure_setup: these Groth16 parameters come from known toxic waste; "
                      "never use them to secure anything", InsecureSetupWarning, stacklevel=2)
    threads = resolve_threads(threads)
    be = get_backend(backend)
    draw: Callable[[], int] = ((lambda: rng.randrange(2, R)) if rng is not None
                               else (lambda: 2 + secrets.randbelow(R - 2)))
    n = r1cs.domain_size
    log_n = n.bit_length() - 1
    tau, alpha, beta, gamma, delta = (draw() for _ in range(5))
    while pow(tau, n, R) == 1:  # tau must lie outside the domain
        tau = draw()
    lagrange = lagrange_basis(tau, log_n, snarkjs=False, threads=threads)
    at, bt, ct = _column_evals(r1cs, lagrange, threads)

    gamma_inv, delta_inv = pow(gamma, -1, R), pow(delta, -1, R)
    k = r1cs.num_inputs
    lin = at * beta + bt * alpha + ct
    ic_scalars = lin[:k] * gamma_inv
    l_scalars = lin[k:] * delta_inv
    z_over_delta = (pow(tau, n, R) - 1) * delta_inv % R
    h_scalars = FrArray.zeros(max(n - 1, 0))
    if n > 1:
        _r1cs.powers(FrArray.from_ints([z_over_delta]).limbs, FrArray.from_ints([tau]).limbs, h_scalars.limbs, threads)
    d = r1cs.density()
    a_scalars = FrArray.concat([at[:k], at[k:][np.flatnonzero(d.a_aux)]])
    b_scalars = FrArray.concat([bt[:k][np.flatnonzero(d.b_input)], bt[k:][np.flatnonzero(d.b_aux)]])

    g1, g2 = G1Array.generator(), G2Array.generator()

    @overload
    def mul(name: str, base: G1Array, s: FrArray) -> G1Array: ...

    @overload
    def mul(name: str, base: G2Array, s: FrArray) -> G2Array: ...

    def mul(name: str, base: G1Array | G2Array, s: FrArray) -> G1Array | G2Array:
        if not len(s):
            return type(base).zeros(0)
        if progress is None:
            return be.fixed_base(base, s, threads)
        parts = []
        for start in range(0, len(s), CHUNK):
            parts.append(be.fixed_base(base, s[start:start + CHUNK], threads))
            progress(name, min(start + CHUNK, len(s)), len(s))
        return type(base)(np.concatenate([p.limbs for p in parts]))

    vk = VerifyingKey(
        alpha_g1=G1Point((g1 * alpha).limbs), beta_g1=G1Point((g1 * beta).limbs),
        beta_g2=G2Point((g2 * beta).limbs), gamma_g2=G2Point((g2 * gamma).limbs),
        delta_g1=G1Point((g1 * delta).limbs), delta_g2=G2Point((g2 * delta).limbs),
        ic=mul("ic", g1, ic_scalars))
    return Parameters(vk=vk, h=mul("h", g1, h_scalars), l=mul("l", g1, l_scalars), a=mul("a", g1, a_scalars),
                      b_g1=mul("b_g1", g1, b_scalars), b_g2=mul("b_g2", g2, b_scalars))
