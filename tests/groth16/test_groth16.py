# SPDX-License-Identifier: Apache-2.0
"""Groth16 end to end: prove, verify (ours and an independent arkworks check),
tampering, keys, proofs and parameter files."""
import random
import struct

import pytest
from py_arkworks_bls12381 import GT, G1Point as ArkG1, G2Point as ArkG2, Scalar

from porep_prover import FrArray, G1Point
from porep_prover.backend import get_backend
from porep_prover.circuits import porep_like, square_chain
from porep_prover.errors import (ParamsFormatError, ParamsMismatchError, ProofFormatError, UnsatisfiedError,
                                 VerifyingKeyFormatError)
from porep_prover.field.constants import FR_GENERATOR, R
from porep_prover.groth16 import (InsecureSetupWarning, Proof, R1CS, VerifyingKey, insecure_setup, prove,
                                  read_params, verify, write_params)



def ark_check(vk, public, proof):
    """The Groth16 equation, written here with arkworks only."""
    g1 = lambda p: ArkG1.from_compressed_bytes(p.to_bytes())  # noqa: E731
    g2 = lambda p: ArkG2.from_compressed_bytes(p.to_bytes())  # noqa: E731
    ic = [g1(vk.ic[i]) for i in range(len(vk.ic))]
    acc = ic[0]
    for x, p in zip(public, ic[1:]):
        acc = acc + p * Scalar(x)
    lhs = GT.pairing(g1(proof.a), g2(proof.b))
    rhs = GT.pairing(g1(vk.alpha_g1), g2(vk.beta_g2)) * GT.pairing(acc, g2(vk.gamma_g2)) * \
        GT.pairing(g1(proof.c), g2(vk.delta_g2))
    return lhs == rhs


def one_constraint():
    # x * x = y with y public
    return R1CS.from_constraints(2, 1, [({2: 1}, {2: 1}, {1: 1})]), FrArray.from_ints([1, 49, 7]), [49]


def many_inputs(k=40):
    # public x_i, and aux s_i with x_i * 1 = s_i ... and s_i * s_i = t_i
    cons, w = [], [1]
    xs = [random.Random(k).randrange(R) for _ in range(k)]
    w += xs + xs + [x * x % R for x in xs]
    for i in range(k):
        cons.append(({1 + i: 1}, {0: 1}, {1 + k + i: 1}))
        cons.append(({1 + k + i: 1}, {1 + k + i: 1}, {1 + 2 * k + i: 1}))
    return R1CS.from_constraints(1 + k, 2 * k, cons), FrArray.from_ints(w), xs


def zeros_and_ones():
    # bits b_i with b_i * b_i = b_i, and products of bits; witness only 0 and 1
    bits = [0, 1, 1, 0, 1, 0, 0, 1]
    cons, w = [], [1, 1] + bits
    for i in range(8):
        cons.append(({2 + i: 1}, {2 + i: 1}, {2 + i: 1}))
    for i in range(7):
        cons.append(({2 + i: 1}, {3 + i: 1}, {10 + i: 1}))
        w.append(bits[i] & bits[i + 1])
    cons.append(({0: 1}, {1: 1}, {0: 1}))  # public one * 1 = 1
    return R1CS.from_constraints(2, 15, cons), FrArray.from_ints(w), [1]


CIRCUITS = {
    "one_constraint": one_constraint,
    "many_inputs": many_inputs,
    "zeros_and_ones": zeros_and_ones,
    "square_chain": lambda: square_chain(300, seed=3),
    "porep_like_2^14": lambda: porep_like((1 << 14) - 5, seed=4),
}


@pytest.mark.parametrize("name", sorted(CIRCUITS))
def test_prove_verify(name, rng):
    r1cs, w, public = CIRCUITS[name]()
    params = insecure_setup(r1cs, rng=rng)
    proof = prove(params, r1cs, w)
    assert verify(params.vk, public, proof)
    assert ark_check(params.vk, public, proof)
    # a second proof is different (fresh r, s) and valid too
    proof2 = prove(params, r1cs, w)
    assert proof2 != proof and verify(params.vk, public, proof2)


def test_rejects_tampering(rng):
    r1cs, w, public = many_inputs(5)
    params = insecure_setup(r1cs, rng=rng)
    proof = prove(params, r1cs, w)
    g = G1Point.generator()
    bad = [Proof(proof.a + g, proof.b, proof.c), Proof(proof.a, proof.b, proof.c + g),
           Proof(proof.a, proof.b + proof.b, proof.c), Proof(proof.c, proof.b, proof.a)]
    for p in bad:
        assert not verify(params.vk, public, p)
        assert not ark_check(params.vk, public, p)
    wrong = list(public)
    wrong[2] = (wrong[2] + 1) % R
    assert not verify(params.vk, wrong, proof)
    other = insecure_setup(r1cs, rng=rng)
    assert not verify(other.vk, public, proof)
    raw = bytearray(proof.to_bytes())
    raw[10] ^= 0x40
    with pytest.raises(ProofFormatError):
        Proof.from_bytes(bytes(raw))
    with pytest.raises(ProofFormatError):
        Proof.from_bytes(proof.to_bytes()[:-1])


def test_unsatisfied_witness(rng):
    r1cs, w, public = square_chain(50)
    params = insecure_setup(r1cs, rng=rng)
    ints = w.to_ints()
    ints[20] = (ints[20] + 1) % R
    with pytest.raises(UnsatisfiedError, match="constraint 17"):
        prove(params, r1cs, FrArray.from_ints(ints))
    with pytest.raises(UnsatisfiedError, match="does not verify: constraint 17"):   # unchecked: the proof's check
        prove(params, r1cs, FrArray.from_ints(ints), check=False)
    assert not verify(params.vk, public, prove(params, r1cs, FrArray.from_ints(ints), check=False, verify=False))


def test_matvec_choice_is_checked(rng):
    from porep_prover.errors import InvalidInputError
    r1cs, w, _ = square_chain(20)
    params = insecure_setup(r1cs, rng=rng)
    with pytest.raises(InvalidInputError, match="does not evaluate"):
        prove(params, r1cs, w, backend="cpu", matvec="device")
    with pytest.raises(InvalidInputError, match="'host' or 'device'"):
        prove(params, r1cs, w, matvec="gpu")


def test_insecure_setup_warns(rng):
    r1cs, _, _ = one_constraint()
    with pytest.warns(InsecureSetupWarning, match="toxic waste"):
        insecure_setup(r1cs, rng=rng)


def test_params_mismatch(rng):
    r1cs, w, _ = square_chain(50)
    other, _, _ = square_chain(70)
    with pytest.raises(ParamsMismatchError, match="l has"):
        prove(insecure_setup(other, rng=rng), r1cs, w)


@pytest.mark.parametrize("simd", [False, True])
def test_h_polynomial_matches_python(rng, simd):
    n, m = 16, 11
    a, b = [rng.randrange(R) for _ in range(m)], [rng.randrange(R) for _ in range(m)]
    c = [x * y % R for x, y in zip(a, b)]
    pad = lambda v: v + [0] * (n - len(v))  # noqa: E731
    w = pow(FR_GENERATOR, (R - 1) // n, R)

    def interpolate(vals):
        n_inv = pow(n, -1, R)
        return [sum(v * pow(w, -i * j, R) for i, v in enumerate(vals)) * n_inv % R for j in range(n)]

    pa, pb, pc = (interpolate(pad(v)) for v in (a, b, c))
    prod = [0] * (2 * n)
    for i, x in enumerate(pa):
        for j, y in enumerate(pb):
            prod[i + j] = (prod[i + j] + x * y) % R
    for i, z in enumerate(pc):
        prod[i] = (prod[i] - z) % R
    # divide by x^n - 1: the quotient q has q[i] = prod[i + n] + q[i + n]
    q = [0] * (2 * n)
    for i in range(2 * n - 1, n - 1, -1):
        q[i - n] = (prod[i] + q[i]) % R
    assert all((prod[i] + q[i]) % R == 0 for i in range(n))  # exact division: no remainder
    cpu = get_backend("cpu")
    before = cpu.simd()
    cpu.simd(simd)
    try:
        h = cpu.h_poly(*(FrArray.from_ints(pad(v)) for v in (a, b, c)), 2)
    finally:
        cpu.simd(before)
    assert h.to_ints() == q[:n - 1]


def test_keys_and_proof_encodings(rng):
    r1cs, w, public = many_inputs(3)
    params = insecure_setup(r1cs, rng=rng)
    vk = params.vk
    assert VerifyingKey.from_bytes(vk.to_bytes()) == vk
    assert VerifyingKey.from_json(vk.to_json()) == vk
    with pytest.raises(VerifyingKeyFormatError):
        VerifyingKey.from_bytes(vk.to_bytes()[:-5])
    with pytest.raises(VerifyingKeyFormatError):
        VerifyingKey.from_json({"protocol": "plonk"})
    proof = prove(params, r1cs, w)
    assert Proof.from_json(proof.to_json()) == proof
    assert len(proof.to_bytes()) == 192
    assert Proof.split(proof.to_bytes() * 3) == [proof] * 3
    js = proof.to_json()
    js["pi_a"][1] = str((int(js["pi_a"][1]) + 1) % R)
    with pytest.raises(ProofFormatError):
        Proof.from_json(js)


def test_params_file_roundtrip_and_corruption(tmp_path, rng):
    r1cs, w, public = porep_like(3000, seed=9)
    params = insecure_setup(r1cs, rng=rng)
    path = tmp_path / "p.params"
    write_params(path, params)
    seen = []
    back = read_params(path, check_subgroup=True, progress=lambda s, d, t: seen.append(s))
    assert back == params
    assert seen[-1] == "b_g2" and "h" in seen
    assert verify(back.vk, public, prove(back, r1cs, w))
    data = path.read_bytes()
    # file layout: 864-byte vk, ic, then five counted sections
    off = 864
    (n_ic,) = struct.unpack(">I", data[off:off + 4])
    assert n_ic == r1cs.num_inputs
    off += 4 + 96 * n_ic
    (n_h,) = struct.unpack(">I", data[off:off + 4])
    assert n_h == len(params.h) == r1cs.domain_size - 1
    for cut in (100, 900, off + 2, off + 4 + 96 * 5 + 7, len(data) - 1):
        (tmp_path / "cut").write_bytes(data[:cut])
        with pytest.raises(ParamsFormatError):
            read_params(tmp_path / "cut")
    (tmp_path / "long").write_bytes(data + b"\0")
    with pytest.raises(ParamsFormatError, match="trailing"):
        read_params(tmp_path / "long")
    bad = bytearray(data)
    bad[off + 4 + 96 * 7 + 95] ^= 1          # h[7]: y changes, point leaves the curve
    (tmp_path / "bad").write_bytes(bytes(bad))
    with pytest.raises(ParamsFormatError, match="section h, point 7"):
        read_params(tmp_path / "bad")


@pytest.mark.parametrize("simd", [False, True])
def test_snarkjs_h_matches_python(rng, simd):
    """snarkjs flavour: (A B - C) at the odd 2n-th roots of unity, 5-based."""
    from porep_prover.field.constants import FR_SNARKJS_NQR

    n, m = 16, 13
    a, b = [rng.randrange(R) for _ in range(m)], [rng.randrange(R) for _ in range(m)]
    c = [x * y % R for x, y in zip(a, b)]
    pad = lambda v: v + [0] * (n - len(v))  # noqa: E731
    w = pow(FR_SNARKJS_NQR, (R - 1) // n, R)
    w2 = pow(FR_SNARKJS_NQR, (R - 1) // (2 * n), R)
    n_inv = pow(n, -1, R)
    coeffs = [[sum(v * pow(w, -i * j, R) for i, v in enumerate(pad(vals))) * n_inv % R for j in range(n)]
              for vals in (a, b, c)]

    def at(poly, x):
        return sum(k * pow(x, j, R) for j, k in enumerate(poly)) % R

    want = []
    for j in range(n):
        x = pow(w2, 2 * j + 1, R)
        want.append((at(coeffs[0], x) * at(coeffs[1], x) - at(coeffs[2], x)) % R)
    cpu = get_backend("cpu")
    before = cpu.simd()
    cpu.simd(simd)
    try:
        h = cpu.h_poly(*(FrArray.from_ints(pad(v)) for v in (a, b, c)), 2, flavor="snarkjs")
    finally:
        cpu.simd(before)
    assert h.to_ints() == want


def test_insecure_setup_reports_progress_in_chunks(monkeypatch, rng):
    import sys

    import numpy as np
    module = sys.modules["porep_prover.groth16.insecure_setup"]
    monkeypatch.setattr(module, "CHUNK", 1000)
    r1cs, w, public = porep_like(3000)
    seed = rng.randrange(1 << 30)
    seen = []
    chunked = insecure_setup(r1cs, rng=random.Random(seed), warn=False, progress=lambda *a: seen.append(a))
    whole = insecure_setup(r1cs, rng=random.Random(seed), warn=False)
    for q in ("h", "l", "a", "b_g1", "b_g2"):
        assert np.array_equal(getattr(chunked, q).limbs, getattr(whole, q).limbs), q
        done = [d for name, d, _ in seen if name == q]
        assert done == sorted(done) and done[-1] == len(getattr(whole, q)) and len(done) == -(-done[-1] // 1000)
    assert verify(chunked.vk, public, prove(chunked, r1cs, w))
