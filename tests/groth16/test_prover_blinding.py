# SPDX-License-Identifier: Apache-2.0
"""finish / assemble with a fixed blinding (r, s): the proof Groth16's
formula gives, computed here apart from the prover (H by plain polynomial
arithmetic over bellman's domain, every sum point by point over the
queries as bellman's density keeps them), the same bytes every time, and
verified; without it, r and s drawn from the rng in that order as before;
a blinding that is not two ints below the group order refused."""
import random

import pytest

from porep_prover.backend import get_backend
from porep_prover.circuits import porep_like
from porep_prover.curve.points import G1Point, G2Point
from porep_prover.errors import InvalidInputError
from porep_prover.field.constants import FR_GENERATOR, R
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.groth16.prover import finish, prove_device, synthesize

CPU = get_backend("cpu")


@pytest.fixture(scope="module")
def partition():
    seed = random.SystemRandom().randrange(1 << 20)
    r1cs, witness, public = porep_like(45 + seed % 13, num_public=3, seed=seed)   # a domain of 64, not full
    return r1cs, witness, public, insecure_setup(r1cs, rng=random.Random(seed), warn=False)


def sums_of(params, r1cs, witness):
    assignment = synthesize(params, r1cs, witness, 1)
    return assignment, prove_device(CPU, params, assignment, 1, b_g2=True)


def rows(matrix, w):
    """One value per constraint: the row's coefficients times w."""
    coeff = matrix.coefficients().to_ints()
    return [sum(coeff[e] * w[int(matrix.col[e])] for e in range(matrix.indptr[i], matrix.indptr[i + 1])) % R
            for i in range(matrix.rows)]


def interpolate(values, n):
    """Coefficients of the polynomial taking values[i] at omega^i (omega of order n, bellman's root)."""
    omega_inv = pow(pow(FR_GENERATOR, (R - 1) // n, R), -1, R)
    n_inv = pow(n, -1, R)
    return [n_inv * sum(v * pow(omega_inv, i * j, R) for i, v in enumerate(values)) % R for j in range(n)]


def h_coefficients(r1cs, w):
    """H = (A B - C) / (X^n - 1) from A w, B w, C w with bellman's input constraints (inputs at rows m + i of a)."""
    n, m, k = r1cs.domain_size, r1cs.num_constraints, r1cs.num_inputs
    a, b, c = (rows(mat, w) + [0] * (n - m) for mat in (r1cs.a, r1cs.b, r1cs.c))
    a[m:m + k] = w[:k]
    pa, pb, pc = (interpolate(v, n) for v in (a, b, c))
    p = [0] * (2 * n - 1)
    for i, x in enumerate(pa):
        for j, y in enumerate(pb):
            p[i + j] += x * y
    p = [(v - (pc[i] if i < n else 0)) % R for i, v in enumerate(p)]
    # p = H (X^n - 1): H_i = -p_i below n, and p_{n+i} = H_i
    h = [-p[i] % R for i in range(n - 1)]
    assert p[n - 1] == 0 and p[n:] == h, "the witness does not satisfy the circuit"
    return h


def weighted(points, scalars, identity):
    total = identity
    for point, scalar in zip(points, scalars):
        total = total + point * scalar
    return total


def groth16_proof(params, r1cs, w, r, s) -> bytes:
    """bellman's proof by its formula: A = alpha + sum w_j a_j + r delta, B likewise with beta and s,
    C = sum_aux w_j l_j + sum_i H_i h_i + s A + r B_1 - r s delta_1."""
    vk, k = params.vk, r1cs.num_inputs
    in_a = sorted(set(int(v) for v in r1cs.a.col if v >= k))
    in_b = sorted(set(int(v) for v in r1cs.b.col))
    a_vars, b_vars = list(range(k)) + in_a, in_b          # every input has an a point (its input constraint)
    g1, g2 = G1Point.identity(), G2Point.identity()
    a = vk.alpha_g1 + weighted(params.a, [w[v] for v in a_vars], g1) + vk.delta_g1 * r
    b2 = vk.beta_g2 + weighted(params.b_g2, [w[v] for v in b_vars], g2) + vk.delta_g2 * s
    b1 = vk.beta_g1 + weighted(params.b_g1, [w[v] for v in b_vars], g1) + vk.delta_g1 * s
    c = (weighted(params.l, w[k:], g1) + weighted(params.h, h_coefficients(r1cs, w), g1) + a * s + b1 * r
         + vk.delta_g1 * (-r * s % R))
    return a.to_bytes() + b2.to_bytes() + c.to_bytes()


def test_a_fixed_blinding_gives_the_formula_s_proof(partition):
    r1cs, witness, public, params = partition
    rng = random.Random(r1cs.num_constraints)
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    assignment, sums = sums_of(params, r1cs, witness)
    proof = finish(CPU, params, assignment, sums, 1, blinding=(r, s))
    assert proof.to_bytes() == groth16_proof(params, r1cs, witness.to_ints(), r, s)
    assert verify(params.vk, public, proof)
    again = finish(CPU, params, *sums_of(params, r1cs, witness), 1, blinding=(r, s))
    assert again.to_bytes() == proof.to_bytes()


def test_without_a_blinding_r_then_s_come_from_the_rng(partition):
    r1cs, witness, public, params = partition
    drawn = random.Random(7)
    r, s = drawn.randrange(R), drawn.randrange(R)
    fresh = finish(CPU, params, *sums_of(params, r1cs, witness), 1, random.Random(7))
    assert fresh.to_bytes() == finish(CPU, params, *sums_of(params, r1cs, witness), 1, blinding=(r, s)).to_bytes()
    assert verify(params.vk, public, fresh)


@pytest.mark.parametrize("blinding", [(R, 1), (1, -1), (1,), [1, 2], (1.0, 2), (True, 1), (1, 2, 3), "rs"])
def test_a_blinding_not_two_ints_below_the_order_is_refused(partition, blinding):
    r1cs, witness, _, params = partition
    with pytest.raises(InvalidInputError, match="blinding"):
        finish(CPU, params, *sums_of(params, r1cs, witness), 1, blinding=blinding)
