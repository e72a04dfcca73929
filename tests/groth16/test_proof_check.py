# SPDX-License-Identifier: Apache-2.0
"""No invalid proof leaves with success: every prove path verifies its proof,
and a failed check names what is at fault (the witness, the device or the
key), through the Python API, the engine and the command line."""
import dataclasses
import random
import re
import struct

import pytest

from porep_prover import FrArray, G1Point, G2Point, snarkjs
from porep_prover import backend as backends
from porep_prover.backend import Capabilities, CpuBackend
from porep_prover.cli import main
from porep_prover.curve.points import G1Array, G2Array
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine.devices import ProvingDevice
from porep_prover.engine.timeline import analyze
from porep_prover.errors import (DeviceResultError, JobFailedError, KeyIntegrityError, UnsatisfiedError,
                                 WitnessOrKeyError)
from porep_prover.field.constants import R
from porep_prover.groth16 import R1CS, Proof, insecure_setup, prove, save_witness, verify, write_mapped, write_params
from porep_prover.groth16.proof_check import Query, bellman_queries, key_findings
from porep_prover.snarkjs import CircomR1CS
from porep_prover.snarkjs.groth16 import zkey_queries

GENERIC = "damaged or was not made for this circuit"


def chain(m: int, x0: int, zero_coeff: int = 1, out_coeff: int = 1):
    """x_{i+1} = x_i^2 from x0 (m squares, the last one public as out, over
    out_coeff * out), with a wire z = 0 (z * z = z) that the first row's A
    also reads (coefficient zero_coeff: any value keeps it satisfied)."""
    xs = [x0]
    for _ in range(m):
        xs.append(xs[-1] * xs[-1] % R)
    z = m + 2
    cons = []
    for i in range(m):
        a = {2 + i: 1, z: zero_coeff} if i == 0 else {2 + i: 1}
        out = {1: out_coeff} if i == m - 1 else {3 + i: 1}
        cons.append((a, {2 + i: 1}, out))
    cons.append(({z: 1}, {z: 1}, {z: 1}))
    out = xs[m] * pow(out_coeff, -1, R) % R
    return R1CS.from_constraints(2, m + 1, cons), FrArray.from_ints([1, out] + xs[:m] + [0]), [out]


@pytest.fixture(scope="module")
def circuit():
    r1cs, w, public = chain(150, random.SystemRandom().randrange(2, R))
    return r1cs, w, public, insecure_setup(r1cs, warn=False)


@pytest.fixture(scope="module")
def zkey(circuit):
    r1cs = circuit[0]
    return snarkjs.insecure_zkey(CircomR1CS(r1cs, 1, 0, 0, 0), warn=False)


def other_point(points, rng):
    """A valid point of points' group that is none of points' own."""
    g = (G2Point if isinstance(points, G2Array) else G1Point).generator()
    return g * rng.randrange(2, R)


def damaged(points, index: int, how: str, rng):
    """A copy of points with point index replaced by another valid point, set
    to infinity, or swapped with a point of another (non-zero) scalar."""
    out = type(points)(points.limbs.copy())
    if how == "other":
        out.limbs[index] = other_point(points, rng).limbs[0]
    elif how == "infinity":
        out.limbs[index] = 0
    else:
        out.limbs[[index, index + 1]] = points.limbs[[index + 1, index]]
    return out


def write_circom_r1cs(path, r1cs: R1CS, n_public: int) -> None:
    """circom's .r1cs layout (see snarkjs.circom_files), from an R1CS."""
    head = struct.pack("<I", 32) + R.to_bytes(32, "little") + struct.pack(
        "<IIIIQI", r1cs.num_variables, n_public, 0, 0, r1cs.num_variables, r1cs.num_constraints)
    mats = [(m.indptr, m.col, m.coefficients().to_bytes()) for m in (r1cs.a, r1cs.b, r1cs.c)]
    body = bytearray()
    for row in range(r1cs.num_constraints):
        for indptr, col, coeff in mats:
            lo, hi = int(indptr[row]), int(indptr[row + 1])
            body += struct.pack("<I", hi - lo)
            for e in range(lo, hi):
                body += struct.pack("<I", int(col[e])) + coeff[32 * e:32 * e + 32]
    with open(path, "wb") as f:
        f.write(b"r1cs" + struct.pack("<II", 1, 2))
        for kind, payload in ((1, head), (2, bytes(body))):
            f.write(struct.pack("<IQ", kind, len(payload)) + payload)


def run(*args) -> int:
    return main([str(a) for a in args])


# ------------------------------------------------------------ the key, in memory

# a point whose scalar is not zero and not the next point's (for the swap):
# a[2] is x_0's (after the two inputs), b_g1[2] x_2's, l[0] x_0's; h's all count
INDEX = {"h": 7, "l": 0, "a": 2, "b_g1": 2, "b_g2": 2}


@pytest.mark.parametrize("how", ["other", "infinity", "swap"])
@pytest.mark.parametrize("query", sorted(INDEX))
def test_damaged_params_give_no_proof_and_a_key_error(circuit, query, how, rng):
    r1cs, w, public, params = circuit
    i = INDEX[query]
    bad = dataclasses.replace(params, **{query: damaged(getattr(params, query), i, how, rng)})
    with pytest.raises(KeyIntegrityError) as info:
        prove(bad, r1cs, w)
    assert not isinstance(info.value, WitnessOrKeyError)
    msg = str(info.value)
    if how == "infinity":
        assert f"{query}[{i}] is at infinity where the circuit needs a point" in msg
    if query.startswith("b_"):
        assert f"b_g1[{i}] and b_g2[{i}] are not the same multiple" in msg
    if not info.value.findings:
        assert GENERIC in msg
    proof = prove(bad, r1cs, w, verify=False)          # the opt-out hands out what it made
    assert not verify(params.vk, public, proof) and not verify(bad.vk, public, proof)


VK_CASES = {
    ("alpha_g1", "other"): None, ("gamma_g2", "other"): None, ("ic", "other"): None,
    ("beta_g1", "other"): "vk.beta_g1 and vk.beta_g2 are not the same multiple",
    ("delta_g2", "other"): "vk.delta_g1 and vk.delta_g2 are not the same multiple",
    ("alpha_g1", "infinity"): "vk.alpha_g1 is the point at infinity",
    ("delta_g1", "infinity"): "vk.delta_g1 is the point at infinity",
    ("beta_g2", "infinity"): "vk.beta_g2 is the point at infinity",
    ("ic", "infinity"): "vk.ic[1] is at infinity",
    ("ic", "swap"): None,
    ("alpha_g1/beta_g1", "swap"): "vk.beta_g1 and vk.beta_g2 are not the same multiple",
}


@pytest.mark.parametrize("field,how", sorted(VK_CASES))
def test_damaged_verifying_key_gives_no_proof(circuit, field, how, rng):
    r1cs, w, public, params = circuit
    vk = params.vk
    if field == "ic":
        vk = dataclasses.replace(vk, ic=damaged(vk.ic, 0 if how == "swap" else 1, how, rng))
    elif how == "swap":
        vk = dataclasses.replace(vk, alpha_g1=vk.beta_g1, beta_g1=vk.alpha_g1)
    else:
        point = getattr(vk, field)
        new = type(point).identity() if how == "infinity" else other_point(point, rng)
        vk = dataclasses.replace(vk, **{field: type(point)(new.limbs)})
    with pytest.raises(KeyIntegrityError, match=re.escape(VK_CASES[field, how] or GENERIC)):
        prove(dataclasses.replace(params, vk=vk), r1cs, w)


def test_an_undamaged_key_has_no_findings(circuit, zkey):
    """The key's tests accuse no sound key (with or without the circuit)."""
    r1cs, _, _, params = circuit
    assert key_findings(params.vk, bellman_queries(params, r1cs),
                        [(Query("b_g1", params.b_g1), Query("b_g2", params.b_g2))], 1) == []
    for circuit_ in (r1cs, None):
        assert key_findings(zkey.vk, zkey_queries(zkey, circuit_), [(Query("B1", zkey.b_g1), Query("B2", zkey.b_g2))],
                            1) == []


def test_point_off_the_curve_is_named(circuit, rng):
    r1cs, w, _, params = circuit
    h = G1Array(params.h.limbs.copy())
    h.limbs[11, 3] ^= 1 << rng.randrange(64)               # one limb bit: off the curve
    assert h.first_not_on_curve() == 11
    with pytest.raises(KeyIntegrityError, match=r"h\[11\] is not on the curve"):
        prove(dataclasses.replace(params, h=h), r1cs, w)


# ------------------------------------------------------------ the witness


def test_unchecked_unsatisfying_witness_is_named_at_its_constraint(circuit, zkey):
    r1cs, w, _, params = circuit
    bad = w.copy()
    j = random.randrange(10, 100)
    bad.limbs[2 + j] = FrArray.from_ints([5]).limbs[0]       # x_j: rows j - 1 and j now fail, j - 1 first
    with pytest.raises(UnsatisfiedError, match=f"constraint {j - 1} is not satisfied") as info:
        prove(params, r1cs, bad, check=False)
    assert info.value.constraint == j - 1 and not isinstance(info.value, KeyIntegrityError)
    with pytest.raises(UnsatisfiedError, match=f"constraint {j - 1}") as info:
        snarkjs.prove(zkey, bad, r1cs=r1cs, check=False)
    assert not isinstance(info.value, KeyIntegrityError)
    with pytest.raises(WitnessOrKeyError, match="fails verification.*give the circuit"):
        snarkjs.prove(zkey, bad)                             # the key stores no C: either may be at fault


# ------------------------------------------------------------ .zkey keys


@pytest.mark.parametrize("how", ["other", "infinity", "swap"])
@pytest.mark.parametrize("section", ["a", "b_g1", "b_g2", "c", "h"])
def test_damaged_zkey_gives_no_proof(circuit, zkey, section, how, rng):
    r1cs, w, public, _ = circuit
    i = {"c": 1, "h": 5}.get(section, 3)                      # wires x_1 (c counts from the aux), x_1; h's 5th
    bad = dataclasses.replace(zkey, **{section: damaged(getattr(zkey, section), i, how, rng)})
    name = {"a": "A", "b_g1": "B1", "b_g2": "B2", "c": "C", "h": "H"}[section]
    with pytest.raises(KeyIntegrityError) as info:
        snarkjs.prove(bad, w, r1cs=r1cs)
    assert not isinstance(info.value, WitnessOrKeyError)
    if how == "infinity":
        assert f"{name}[{i}] is at infinity" in str(info.value)
    with pytest.raises(KeyIntegrityError) as info:          # without the circuit: the key or the witness
        snarkjs.prove(bad, w)
    if not info.value.findings:
        assert isinstance(info.value, WitnessOrKeyError) and isinstance(info.value, UnsatisfiedError)
    proof, _ = snarkjs.prove(bad, w, verify=False)
    assert not verify(zkey.vk, public, proof)


def test_zkey_for_another_circuit(circuit, zkey, tmp_path, capsys):
    """A changed .r1cs whose sizes match: in A on the zero wire (the witness
    still satisfies it), the key's A differs; in C with a witness made for the
    change, the proof fails and the key is blamed; a change the witness does
    not satisfy names the constraint."""
    r1cs, w, _, _ = circuit
    m = r1cs.num_constraints - 1
    x0 = w.to_ints()[2]
    zero_a, _, _ = chain(m, x0, zero_coeff=5)
    assert zero_a.is_satisfied(w)
    with pytest.raises(KeyIntegrityError, match="the key's A differs from the circuit's at constraint 0"):
        snarkjs.prove(zkey, w, r1cs=zero_a)
    r1cs_c, w_c, _ = chain(m, x0, out_coeff=2)                 # 2 out = x^2: the key's circuit says out = x^2
    assert r1cs_c.is_satisfied(w_c) and not r1cs.is_satisfied(w_c)
    with pytest.raises(KeyIntegrityError, match=GENERIC) as info:
        snarkjs.prove(zkey, w_c, r1cs=r1cs_c)
    assert not isinstance(info.value, WitnessOrKeyError)
    unsat, _, _ = chain(m, x0, out_coeff=3)
    with pytest.raises(UnsatisfiedError, match=f"constraint {m - 1} is not satisfied"):
        snarkjs.prove(zkey, w, r1cs=unsat)
    # the same through groth16 prove --r1cs: no files, exit 2, the key's file named
    key_path, wtns = tmp_path / "c.zkey", tmp_path / "w.wtns"
    snarkjs.write_zkey(key_path, zkey)
    capsys.readouterr()
    named = f"KeyIntegrityError: {key_path}: "
    for changed, witness, expect in ((zero_a, w, named + "the key's A differs from the circuit's at constraint 0"),
                                     (r1cs_c, w_c, named),
                                     (unsat, w, f"UnsatisfiedError: constraint {m - 1} is not satisfied")):
        write_circom_r1cs(tmp_path / "c.r1cs", changed, 1)
        snarkjs.write_wtns(wtns, witness)
        assert run("groth16", "prove", key_path, wtns, tmp_path / "p.json", tmp_path / "pub.json",
                   "--r1cs", tmp_path / "c.r1cs") == 2
        assert not (tmp_path / "p.json").exists() and not (tmp_path / "pub.json").exists()
        err = capsys.readouterr().err
        assert err.startswith(f"porep-prover: error: {expect}") and err.count("\n") == 1, err   # one line, named


# ------------------------------------------------------------ the device


class FaultyBackend(CpuBackend):
    """The CPU backend as a device whose MSM over one array of points (target;
    "lh": the L + H sum) is off by the generator, the first `times` times (or always)."""

    name = "faulty"
    capabilities = Capabilities(reference=False)     # a device: its sums are checked against the CPU's

    def __init__(self, target, times=None):
        super().__init__()
        self.target, self.left = target, times

    def _fault(self, out):
        if self.left is not None:
            if self.left <= 0:
                return out
            self.left -= 1
        return out + type(out).generator()

    def msm(self, points, scalars, threads):
        out, stats = super().msm(points, scalars, threads)
        return (self._fault(out) if points is self.target else out), stats

    def msm_many(self, parts, threads):
        out = super().msm_many(parts, threads)
        return self._fault(out) if isinstance(self.target, str) else out


@pytest.mark.parametrize("target,label", [("a", "A (a_acc)"), ("lh", "L + H (lh_acc)"), ("b_g1", "B_1 (b1_acc)"),
                                          ("b_g2", "B_2 (b2_acc)")])
def test_device_fault_is_named(circuit, zkey, monkeypatch, target, label):
    r1cs, w, public, params = circuit
    fake = FaultyBackend(target if target == "lh" else getattr(params, target))
    monkeypatch.setitem(backends._GPU, 0, fake)                # what backend="gpu" gets
    with pytest.raises(DeviceResultError, match=re.escape(f"the device's {label} differ from the CPU's")):
        prove(params, r1cs, w, backend="gpu")
    assert not verify(params.vk, public, prove(params, r1cs, w, backend="gpu", verify=False))
    fake.target = target if target == "lh" else getattr(zkey, target)
    with pytest.raises(DeviceResultError, match=re.escape(label)):
        snarkjs.prove(zkey, w, backend="gpu")
    with pytest.raises(DeviceResultError, match=re.escape(label)):   # the device is found before the witness is missed
        snarkjs.prove(zkey, w, r1cs=r1cs, backend="gpu")


# ------------------------------------------------------------ the engine


def config(**extra):
    base = {"engine.partition_workers": 1, "engine.threads": 1, "engine.devices": ["cpu"], "prover.max_retries": 2}
    base.update(extra)
    return load_config(overrides=base)


def test_engine_key_and_witness_failures_are_attributed_and_not_retried(circuit, rng):
    r1cs, w, _, params = circuit
    bad = dataclasses.replace(params, l=damaged(params.l, 0, "other", rng))
    unsat = w.copy()
    unsat.limbs[5] = FrArray.from_ints([3]).limbs[0]          # x_3: row 2 fails first
    cases = [(bad, w, {}, KeyIntegrityError), (params, unsat, {"prover.check_witness": False}, UnsatisfiedError)]
    for key, witness, extra, cause in cases:
        with Engine(config(**extra)) as engine:
            with pytest.raises(JobFailedError, match="not retried") as info:
                engine.prove(inline_job(key, r1cs, [witness]), timeout=120)
        assert type(info.value.__cause__) is cause and analyze(engine.timeline.events())["retries"] == 0
    assert info.value.__cause__.constraint == 2


def test_engine_device_fault_is_retried(circuit):
    r1cs, w, public, params = circuit
    dev = ProvingDevice("fake-gpu-0", "fake0", "gpu", FaultyBackend(params.b_g1, times=1))
    with Engine(config(), devices=[dev]) as engine:
        result = engine.prove(inline_job(params, r1cs, [w]), timeout=120)
    assert result.ok and verify(params.vk, public, result.proofs[0])
    assert analyze(engine.timeline.events())["retries"] == 1
    dev = ProvingDevice("fake-gpu-1", "fake1", "gpu", FaultyBackend(params.b_g1))
    with Engine(config(**{"prover.max_retries": 1}), devices=[dev]) as engine:
        with pytest.raises(JobFailedError, match="after 2 attempts") as info:
            engine.prove(inline_job(params, r1cs, [w]), timeout=120)
    assert isinstance(info.value.__cause__, DeviceResultError)


# ------------------------------------------------------------ the command line


def bad_key(circuit, rng):
    r1cs, w, public, params = circuit
    return dataclasses.replace(params, a=damaged(params.a, 2, "other", rng))


@pytest.mark.parametrize("kind", ["params", "pmap", "zkey"])
def test_prove_command_writes_no_invalid_proof(circuit, zkey, kind, tmp_path, capsys, rng):
    r1cs, w, public, params = circuit
    c, wit, key = tmp_path / "c.npz", tmp_path / "w.bin", tmp_path / f"k.{kind}"
    r1cs.save(c)
    save_witness(wit, w)
    if kind == "params":
        write_params(key, bad_key(circuit, rng))
    elif kind == "pmap":
        write_mapped(key, bad_key(circuit, rng))               # its checksums are the damaged key's
    else:
        snarkjs.write_zkey(key, dataclasses.replace(zkey, h=damaged(zkey.h, 4, "swap", rng)))
    out = [tmp_path / n for n in ("p.bin", "p.json", "pub.json")]
    args = ["prove", key, c, wit, "-o", out[0], "--json", out[1], "--public", out[2]]
    assert run(*args) == 2
    err = capsys.readouterr().err
    assert "KeyIntegrityError" in err and str(key) in err and err.count("\n") == 1
    assert not any(p.exists() for p in out)
    assert run(*args, "--no-verify") == 0                       # as asked: the bad proof is written
    proof = Proof.from_bytes(out[0].read_bytes())
    assert not verify(params.vk, public, proof)
    vk = key
    if kind == "zkey":
        vk = tmp_path / "vk.json"
        snarkjs.write_verification_key(vk, zkey.vk)
    assert run("verify", vk, out[2], out[0]) == 1


def test_groth16_prove_command_writes_no_invalid_proof(circuit, zkey, tmp_path, capsys, rng):
    r1cs, w, public, _ = circuit
    key, wit, r1cs_path = tmp_path / "k.zkey", tmp_path / "w.wtns", tmp_path / "c.r1cs"
    snarkjs.write_zkey(key, dataclasses.replace(zkey, c=damaged(zkey.c, 1, "other", rng)))
    snarkjs.write_wtns(wit, w)
    write_circom_r1cs(r1cs_path, r1cs, 1)
    out = [tmp_path / "proof.json", tmp_path / "public.json"]
    assert run("groth16", "prove", key, wit, *out) == 2       # no circuit: the key or the witness
    err = capsys.readouterr().err
    assert "WitnessOrKeyError" in err and str(key) in err and "--r1cs" in err
    assert run("groth16", "prove", key, wit, *out, "--r1cs", r1cs_path) == 2
    err = capsys.readouterr().err
    assert "KeyIntegrityError" in err and str(key) in err and GENERIC in err
    assert not any(p.exists() for p in out)
    unsat = w.copy()
    unsat.limbs[9] = FrArray.from_ints([2]).limbs[0]          # x_7: row 6 fails first
    snarkjs.write_wtns(wit, unsat)
    snarkjs.write_zkey(key, zkey)
    assert run("groth16", "prove", key, wit, *out, "--r1cs", r1cs_path, "--no-check") == 2
    err = capsys.readouterr().err
    assert "UnsatisfiedError" in err and "constraint 6 is not satisfied" in err and not any(p.exists() for p in out)
    assert run("groth16", "prove", key, wit, *out, "--no-verify") == 0
    assert not snarkjs.verify(zkey.vk, snarkjs.read_public(out[1]), snarkjs.read_proof(out[0]))
