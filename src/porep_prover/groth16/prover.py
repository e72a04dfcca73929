# SPDX-License-Identifier: Apache-2.0
"""The Groth16 prover, bellman flavour (Groth 2016, https://eprint.iacr.org/2016/260;
notation and conventions of bellman / bellperson).

    a, b, c = A w, B w, C w                        one value per constraint, then
                                                   the inputs appended to a
    H       = (a b - c) / Z  on the coset 7<omega>  (backend.h_poly: 7 NTTs)
    A = alpha + sum_j w_j a_j + r delta            G1
    B = beta  + sum_j w_j b_j + s delta            G2 (and G1 for C)
    C = sum_aux w_j l_j + sum_i H_i h_i + s A + r B_1 - r s delta
      = sum_aux w_j l_j + sum_i H_i h_i + r (sum_j w_j b1_j + beta_1) + s A

with r, s fresh uniform scalars per proof. The a and b sums run over the
variables the density keeps (bellman's density trackers). Every MSM goes to
the backend, which skips zero scalars and batch-adds the ones.
"""
from __future__ import annotations

import secrets
import time

import numpy as np

from ..backend import get_backend
from ..config import resolve_threads
from ..curve.points import G1Point, G2Point
from ..field.constants import R
from ..field.fr_array import FrArray
from .keys import Parameters
from .proof import Proof
from .r1cs import R1CS


class Stopwatch:
    def __init__(self, sink: dict | None):
        self.sink, self.t = sink, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.t
        self.t = now


def prove(params: Parameters, r1cs: R1CS, witness: FrArray, backend: str = "cpu", threads: int | None = None,
          rng=None, check: bool = True, timings: dict | None = None) -> Proof:
    """A proof that witness satisfies r1cs, under params.

    witness: the full assignment (the constant one, the public inputs, then aux).
    check: verify the witness satisfies every constraint first (cheap; raises
        UnsatisfiedError naming the first failing one). With check=False an
        unsatisfying witness gives a proof that does not verify.
    rng: random.Random-like source of r and s, for reproducible tests only
        (default: the secrets module).
    timings: if a dict is given, seconds per stage are added to it.

    Raises WitnessError, UnsatisfiedError, ParamsMismatchError and the backend's errors.
    """
    threads = resolve_threads(threads)
    be = get_backend(backend)
    clock = Stopwatch(timings)
    params.check_matches(r1cs)
    abc = r1cs.evaluate(witness, threads)
    if check:
        r1cs.check(witness, threads, abc=abc)
    clock.lap("synthesis")

    h = _h_scalars(r1cs, witness, abc, be, threads)
    clock.lap("h_poly")

    k = r1cs.num_inputs
    inputs, aux = witness[:k], witness[k:]
    d = r1cs.density()
    a_scalars = FrArray.concat([inputs, aux[np.flatnonzero(d.a_aux)]])
    b_scalars = FrArray.concat([inputs[np.flatnonzero(d.b_input)], aux[np.flatnonzero(d.b_aux)]])
    proof = msm_and_assemble(be, params.vk, threads, rng, clock, h=(params.h, h), l=(params.l, aux),
                             a=(params.a, a_scalars), b=(params.b_g1, params.b_g2, b_scalars))
    return proof


def _h_scalars(r1cs: R1CS, witness: FrArray, abc, be, threads: int) -> FrArray:
    """The n - 1 coefficients of H, from a, b, c padded to the domain (the inputs
    go into a at rows m .. m + k - 1: bellman's input constraints)."""
    n, m, k = r1cs.domain_size, r1cs.num_constraints, r1cs.num_inputs
    padded = []
    for i, v in enumerate(abc):
        full = FrArray.zeros(n)
        full.limbs[:m] = v.limbs
        if i == 0:
            full.limbs[m:m + k] = witness.limbs[:k]
        padded.append(full)
    return be.h_poly(*padded, threads)


def msm_and_assemble(be, vk, threads: int, rng, clock: "Stopwatch", h, l, a, b) -> Proof:
    """The MSMs and the proof, shared by both flavours. h, l, a are (points,
    scalars) and b is (b_g1 points, b_g2 points, scalars).

    The delta terms of C cancel once B_1 is expanded:
        C = L + H + s A + r (beta_1 + B1 + s delta_1) - r s delta_1 = (L + H) + r B1 + s A + r beta_1
    so L and H go through one msm_many (on the CPU one MSM over the
    concatenation: one plan, larger windows) and B_1 needs no blinding of its own. (B1 is not folded
    in as r-scaled scalars: for mostly-bit witnesses its sum is a cheap batch
    addition, which equal scalars r would turn into a full MSM.)"""
    draw = rng.randrange if rng is not None else secrets.randbelow
    r, s = draw(R), draw(R)
    (h_pts, h_sc), (l_pts, l_sc), (a_pts, a_sc), (b1_pts, b2_pts, b_sc) = h, l, a, b
    a_acc, _ = be.msm(a_pts, a_sc, threads)
    lh_acc = be.msm_many([(l_pts, l_sc), (h_pts, h_sc)], threads)
    b1_acc, _ = be.msm(b1_pts, b_sc, threads)
    clock.lap("msm_g1")
    b2_acc, _ = be.msm(b2_pts, b_sc, threads)
    clock.lap("msm_g2")
    proof_a = vk.alpha_g1 + a_acc + vk.delta_g1 * r
    proof_b = vk.beta_g2 + b2_acc + vk.delta_g2 * s
    proof_c = lh_acc + (b1_acc + vk.beta_g1) * r + proof_a * s
    clock.lap("assemble")
    return Proof(G1Point(proof_a.limbs), G2Point(proof_b.limbs), G1Point(proof_c.limbs))
