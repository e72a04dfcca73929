# SPDX-License-Identifier: Apache-2.0
"""INSECURE test-only Groth16 parameter generation.

The toxic waste (tau, alpha, beta, gamma, delta) is drawn here, used and then
dropped, but this process knew it: anyone who can read this process's memory
or who controls `rng` can forge proofs for these parameters. Use the result
for tests, demos and benchmarks only; real deployments use parameters from a
multi-party ceremony (e.g. Filecoin's, read with read_params).

All heavy work is native and on every thread: the Lagrange basis at tau,
the column evaluations (entries bucketed by column in parallel), the queries'
scalars in one pass (beta A + alpha B + C, its ic / l split over gamma and
delta, the a and b queries' density gathers), the powers for h, and the
fixed-base products (signed windows, batch-affine on the CPU; window tables
on the GPU).
"""
from __future__ import annotations

import random
import secrets
import warnings
from typing import TYPE_CHECKING, Callable, NamedTuple, overload

import numpy as np

from ..backend import Backend, get_backend
from ..config import resolve_threads
from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import NativeMemoryError
from ..field.constants import R
from ..field.fr_array import FrArray
from ..ntt import _cpu as ntt_cpu
from ..r1cs import _r1cs
from .keys import Parameters, VerifyingKey
from .prover import Stopwatch
from ..r1cs.system import R1CS

if TYPE_CHECKING:
    from ..msm.gpu.fixed_base import GpuFixedBase


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


class QueryScalars(NamedTuple):
    """The scalars of each query's fixed-base products."""
    ic: FrArray
    l: FrArray       # noqa: E741 - the query's name
    a: FrArray
    b: FrArray


def query_scalars(r1cs: R1CS, columns: list[FrArray], waste: tuple[int, int, int, int], threads: int) -> QueryScalars:
    """ic = (beta A + alpha B + C) / gamma over the inputs, l = the same over delta
    for the aux variables, a = A over the inputs and the aux variables A reads,
    b = B over the variables B reads (bellman's density), from the columns
    (A, B, C at tau) and waste = (alpha, beta, 1/gamma, 1/delta): one native
    pass on every thread. NativeMemoryError when memory runs out."""
    d, k, ncols = r1cs.density(), r1cs.num_inputs, r1cs.num_variables
    a_keep = np.concatenate([np.ones(k, np.uint8), d.a_aux.astype(np.uint8, copy=False)])
    b_keep = np.concatenate([d.b_input, d.b_aux]).astype(np.uint8, copy=False)
    out = QueryScalars(FrArray.zeros(k), FrArray.zeros(ncols - k), FrArray.zeros(int(np.count_nonzero(a_keep))),
                       FrArray.zeros(int(np.count_nonzero(b_keep))))
    at, bt, ct = columns
    try:
        _r1cs.query_scalars(at.limbs, bt.limbs, ct.limbs, a_keep, b_keep, FrArray.from_ints(waste).limbs,
                            out.ic.limbs, out.l.limbs, out.a.limbs, out.b.limbs, threads)
    except MemoryError as e:
        raise NativeMemoryError(f"the queries' scalars: {e}") from None
    return out


CHUNK = 1 << 22      # scalars per fixed-base call when progress is reported


def insecure_setup(r1cs: R1CS, rng: random.Random | None = None, backend: str = "cpu", threads: int | None = None,
                   warn: bool = True, progress: Callable[[str, int, int], None] | None = None,
                   laps: dict[str, float] | None = None, direct: bool = False) -> Parameters:
    """Parameters for r1cs from fresh random toxic waste. FOR TESTING ONLY.

    rng: a random.Random-like object for reproducible parameters (default: secrets).
    progress: called as progress(query, done, total) as each query's points
        are made (queries ic, h, l, a, b_g1, b_g2), in chunks of CHUNK.
    laps: when given, the seconds of each step are added to it: lagrange,
        columns, scalars, h powers, then one a query (ic, h, l, a, b_g1, b_g2).
    direct: on a GPU backend, each query's points go from the device straight
        into the parameters' array (fixed_base.GpuFixedBase.fixed_base_into)
        rather than a chunk at a time made apart and copied in; off until a
        device has measured it. The points are the same either way.
    NativeMemoryError when host memory runs out.
    """
    if warn:
        warnings.warn("insecure_setup: these Groth16 parameters come from known toxic waste; "
                      "never use them to secure anything", InsecureSetupWarning, stacklevel=2)
    threads = resolve_threads(threads)
    be = get_backend(backend)
    lap = Stopwatch(laps).lap
    draw: Callable[[], int] = ((lambda: rng.randrange(2, R)) if rng is not None
                               else (lambda: 2 + secrets.randbelow(R - 2)))
    n = r1cs.domain_size
    log_n = n.bit_length() - 1
    tau, alpha, beta, gamma, delta = (draw() for _ in range(5))
    while pow(tau, n, R) == 1:  # tau must lie outside the domain
        tau = draw()
    lagrange = lagrange_basis(tau, log_n, snarkjs=False, threads=threads)
    lap("lagrange")
    columns = _column_evals(r1cs, lagrange, threads)
    del lagrange
    lap("columns")
    gamma_inv, delta_inv = pow(gamma, -1, R), pow(delta, -1, R)
    scalars = query_scalars(r1cs, columns, (alpha, beta, gamma_inv, delta_inv), threads)
    del columns
    lap("scalars")
    z_over_delta = (pow(tau, n, R) - 1) * delta_inv % R
    h_scalars = FrArray.zeros(max(n - 1, 0))
    if n > 1:
        _r1cs.powers(FrArray.from_ints([z_over_delta]).limbs, FrArray.from_ints([tau]).limbs, h_scalars.limbs, threads)
    lap("h powers")
    g1, g2 = G1Array.generator(), G2Array.generator()
    products = _Products(be, threads, progress, direct)

    def g1_query(name: str, s: FrArray) -> G1Array:
        out = products(name, g1, s)
        lap(name)
        return out

    vk = VerifyingKey(
        alpha_g1=G1Point((g1 * alpha).limbs), beta_g1=G1Point((g1 * beta).limbs),
        beta_g2=G2Point((g2 * beta).limbs), gamma_g2=G2Point((g2 * gamma).limbs),
        delta_g1=G1Point((g1 * delta).limbs), delta_g2=G2Point((g2 * delta).limbs),
        ic=g1_query("ic", scalars.ic))
    g1_queries = {name: g1_query(name, s) for name, s in (("h", h_scalars), ("l", scalars.l), ("a", scalars.a),
                                                           ("b_g1", scalars.b))}
    b_g2 = products("b_g2", g2, scalars.b)
    lap("b_g2")
    return Parameters(vk=vk, b_g2=b_g2, **g1_queries)


class _Products:
    """A query's fixed-base products on the backend: one call without
    progress; with it, chunks of CHUNK written into one array as they are
    made (never joined after: a scale-1 query is up to 13 GB); direct, from
    the GPU straight into that array."""

    def __init__(self, be: Backend, threads: int, progress: Callable[[str, int, int], None] | None, direct: bool):
        self.be, self.threads, self.progress = be, threads, progress
        # a GPU backend's fixed-base side: the Backend protocol's fixed_base returns a new array a call
        self.device: GpuFixedBase | None = getattr(be, "fixed_base_ops", None) if direct else None

    @overload
    def __call__(self, name: str, base: G1Array, s: FrArray) -> G1Array: ...

    @overload
    def __call__(self, name: str, base: G2Array, s: FrArray) -> G2Array: ...

    def __call__(self, name: str, base: G1Array | G2Array, s: FrArray) -> G1Array | G2Array:
        n, progress = len(s), self.progress
        if not n:
            return type(base).zeros(0)
        if self.device is not None:
            return self.device.fixed_base_into(base, s, None if progress is None
                                               else lambda done: progress(name, done, n))
        if progress is None:
            return self.be.fixed_base(base, s, self.threads)
        out = type(base)(np.empty((n, base.WIDTH), np.uint64))
        for start in range(0, n, CHUNK):
            stop = min(start + CHUNK, n)
            out.limbs[start:stop] = self.be.fixed_base(base, s[start:stop], self.threads).limbs
            progress(name, stop, n)
        return out
