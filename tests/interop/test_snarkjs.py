# SPDX-License-Identifier: Apache-2.0
"""circom + snarkjs as the external judge: their files in, our proofs out to
`snarkjs groth16 verify`, their proofs in to our verifier, and bad files
rejected with named errors. Needs the pinned toolchain (npm ci in this folder;
the README's test command does it); skipped without it."""
import json
import pathlib
import shutil
import subprocess

import pytest

from porep_prover import FrArray, snarkjs
from porep_prover.cli import main as cli
from porep_prover.errors import (CircuitFormatError, ParamsFormatError, ProofFormatError, PublicInputsError,
                                 UnsatisfiedError, WitnessError)
from porep_prover.field.constants import R

HERE = pathlib.Path(__file__).parent
BIN = HERE / "node_modules" / ".bin"
CIRCUITS = {"multipub": {"pa": ["3", "5", "7", "11"], "w": ["2", "4", "6", "8"]}, "square_chain": {"x0": "12345"}}

pytestmark = pytest.mark.skipif(not (BIN / "snarkjs").exists() or shutil.which("node") is None,
                                reason="snarkjs/circom2 not installed: npm ci --prefix tests/interop")


def run(*args, cwd=None, check=True):
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=check)


def snarkjs_cli(*args, cwd=None, check=True):
    return run(BIN / "snarkjs", *args, cwd=cwd, check=check)


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    """Compiled circuits, witnesses, a power-8 ceremony and snarkjs zkeys, made once."""
    d = tmp_path_factory.mktemp("snarkjs")
    # circom2 (WASI) only opens paths at or below its working directory
    for name, inputs in CIRCUITS.items():
        shutil.copy(HERE / "circuits" / f"{name}.circom", d)
        run(BIN / "circom2", f"{name}.circom", "--r1cs", "--wasm", "--sym", "--prime", "bls12381", "-o", ".", cwd=d)
        (d / f"{name}_input.json").write_text(json.dumps(inputs))
        run("node", f"{name}_js/generate_witness.js", f"{name}_js/{name}.wasm", f"{name}_input.json",
            f"{name}.wtns", cwd=d)
    snarkjs_cli("powersoftau", "new", "bls12381", "8", "pot0.ptau", cwd=d)
    snarkjs_cli("powersoftau", "contribute", "pot0.ptau", "pot1.ptau", "-e=porep prover tests", cwd=d)
    snarkjs_cli("powersoftau", "prepare", "phase2", "pot1.ptau", "pot.ptau", cwd=d)
    for name in CIRCUITS:
        snarkjs_cli("groth16", "setup", f"{name}.r1cs", "pot.ptau", f"{name}_0.zkey", cwd=d)
        snarkjs_cli("zkey", "contribute", f"{name}_0.zkey", f"{name}.zkey", "-e=more entropy", cwd=d)
        snarkjs_cli("zkey", "export", "verificationkey", f"{name}.zkey", f"{name}_vk.json", cwd=d)
    return d


@pytest.mark.parametrize("name", sorted(CIRCUITS))
def test_our_proof_passes_snarkjs(work, name, tmp_path):
    circuit = snarkjs.read_r1cs(work / f"{name}.r1cs")
    witness = snarkjs.read_wtns(work / f"{name}.wtns")
    circuit.r1cs.check(witness)
    zkey = snarkjs.read_zkey(work / f"{name}.zkey", check_subgroup=True)
    assert zkey.n_vars == len(witness) and zkey.n_public == circuit.n_public
    proof, public = snarkjs.prove(zkey, witness, r1cs=circuit.r1cs)
    snarkjs.write_proof(tmp_path / "proof.json", proof)
    snarkjs.write_public(tmp_path / "public.json", public)
    out = snarkjs_cli("groth16", "verify", work / f"{name}_vk.json", tmp_path / "public.json",
                      tmp_path / "proof.json")
    assert "OK!" in out.stdout
    # tampered public input: snarkjs must reject
    bad = list(public)
    bad[0] = (bad[0] + 1) % R
    snarkjs.write_public(tmp_path / "bad.json", bad)
    res = snarkjs_cli("groth16", "verify", work / f"{name}_vk.json", tmp_path / "bad.json", tmp_path / "proof.json",
                      check=False)
    assert res.returncode != 0 and "Invalid proof" in res.stdout + res.stderr


@pytest.mark.parametrize("name", sorted(CIRCUITS))
def test_snarkjs_proof_passes_ours(work, name, tmp_path, capsys):
    snarkjs_cli("groth16", "prove", work / f"{name}.zkey", work / f"{name}.wtns", tmp_path / "proof.json",
                tmp_path / "public.json")
    vk = snarkjs.read_verification_key(work / f"{name}_vk.json")
    public = snarkjs.read_public(tmp_path / "public.json")
    proof = snarkjs.read_proof(tmp_path / "proof.json")
    assert snarkjs.verify(vk, public, proof)
    assert public == snarkjs.read_wtns(work / f"{name}.wtns")[1:len(public) + 1].to_ints()
    assert cli(["groth16", "verify", str(work / f"{name}_vk.json"), str(tmp_path / "public.json"),
                str(tmp_path / "proof.json")]) == 0
    assert capsys.readouterr().out.strip() == "OK!"
    public[-1] = (public[-1] + 1) % R
    assert not snarkjs.verify(vk, public, proof)
    snarkjs.write_public(tmp_path / "bad.json", public)
    assert cli(["groth16", "verify", str(work / f"{name}_vk.json"), str(tmp_path / "bad.json"),
                str(tmp_path / "proof.json")]) == 1


def test_files_written_exactly_as_snarkjs(work, tmp_path):
    zkey = snarkjs.read_zkey(work / "multipub.zkey")
    snarkjs.write_verification_key(tmp_path / "vk.json", zkey.vk)
    assert (tmp_path / "vk.json").read_bytes() == (work / "multipub_vk.json").read_bytes()
    assert cli(["zkey", "export", "verificationkey", str(work / "multipub.zkey"), str(tmp_path / "vk2.json")]) == 0
    assert (tmp_path / "vk2.json").read_bytes() == (work / "multipub_vk.json").read_bytes()
    snarkjs_cli("groth16", "prove", work / "multipub.zkey", work / "multipub.wtns", tmp_path / "sp.json",
                tmp_path / "spub.json")
    # their proof re-serialised by us is byte-identical: same keys, order, layout
    snarkjs.write_proof(tmp_path / "rp.json", snarkjs.read_proof(tmp_path / "sp.json"))
    assert (tmp_path / "rp.json").read_bytes() == (tmp_path / "sp.json").read_bytes()
    snarkjs.write_public(tmp_path / "rpub.json", snarkjs.read_public(tmp_path / "spub.json"))
    assert (tmp_path / "rpub.json").read_bytes() == (tmp_path / "spub.json").read_bytes()


def test_cli_prove_in_snarkjs_argument_order(work, tmp_path):
    args = ["groth16", "prove", work / "square_chain.zkey", work / "square_chain.wtns", tmp_path / "proof.json",
            tmp_path / "public.json"]
    assert cli([str(a) for a in args]) == 0
    assert cli([str(a) for a in args + ["--r1cs", work / "square_chain.r1cs"]]) == 0
    snarkjs_cli("groth16", "verify", work / "square_chain_vk.json", tmp_path / "public.json", tmp_path / "proof.json")


def test_insecure_zkey_is_accepted_by_snarkjs(work, tmp_path):
    """Our own .zkey layout: snarkjs proves with it and exports the same key."""
    circuit = snarkjs.read_r1cs(work / "square_chain.r1cs")
    key = snarkjs.insecure_zkey(circuit)
    snarkjs.write_zkey(tmp_path / "ours.zkey", key)
    snarkjs.write_verification_key(tmp_path / "vk.json", key.vk)
    snarkjs_cli("zkey", "export", "verificationkey", tmp_path / "ours.zkey", tmp_path / "vk_theirs.json")
    assert (tmp_path / "vk.json").read_bytes() == (tmp_path / "vk_theirs.json").read_bytes()
    snarkjs_cli("groth16", "prove", tmp_path / "ours.zkey", work / "square_chain.wtns", tmp_path / "p.json",
                tmp_path / "pub.json")
    snarkjs_cli("groth16", "verify", tmp_path / "vk.json", tmp_path / "pub.json", tmp_path / "p.json")
    proof, public = snarkjs.prove(snarkjs.read_zkey(tmp_path / "ours.zkey"),
                                  snarkjs.read_wtns(work / "square_chain.wtns"))
    snarkjs.write_proof(tmp_path / "p2.json", proof)
    snarkjs.write_public(tmp_path / "pub2.json", public)
    snarkjs_cli("groth16", "verify", tmp_path / "vk.json", tmp_path / "pub2.json", tmp_path / "p2.json")


def test_bellman_flavour_from_circom_files(work, tmp_path, capsys):
    """Prove straight from .r1cs + .wtns with our own (bellperson-format) parameters."""
    params, proof = tmp_path / "c.params", tmp_path / "proof.bin"
    assert cli(["setup", str(work / "multipub.r1cs"), "-o", str(params)]) == 0
    assert cli(["prove", str(params), str(work / "multipub.r1cs"), str(work / "multipub.wtns"), "-o", str(proof),
                "--public", str(tmp_path / "public.json")]) == 0
    assert cli(["verify", str(params), str(tmp_path / "public.json"), str(proof)]) == 0
    assert "OK!" in capsys.readouterr().out


def test_witness_for_another_circuit(work):
    zkey = snarkjs.read_zkey(work / "multipub.zkey")
    other = snarkjs.read_wtns(work / "square_chain.wtns")
    with pytest.raises(WitnessError, match="wires"):
        snarkjs.prove(zkey, other)
    w = snarkjs.read_wtns(work / "multipub.wtns").to_ints()
    w[9] = (w[9] + 1) % R                       # an internal signal: now inconsistent
    bad = FrArray.from_ints(w)
    circuit = snarkjs.read_r1cs(work / "multipub.r1cs")
    with pytest.raises(UnsatisfiedError, match="constraint"):
        snarkjs.prove(zkey, bad, r1cs=circuit.r1cs)
    with pytest.raises(UnsatisfiedError, match="fails verification"):
        snarkjs.prove(zkey, bad)


def test_corrupted_files(work, tmp_path):
    zk = (work / "multipub.zkey").read_bytes()
    (tmp_path / "cut.zkey").write_bytes(zk[:len(zk) - 50])
    with pytest.raises(ParamsFormatError):
        snarkjs.read_zkey(tmp_path / "cut.zkey")
    (tmp_path / "magic.zkey").write_bytes(b"zkez" + zk[4:])
    with pytest.raises(ParamsFormatError, match="not a zkey"):
        snarkjs.read_zkey(tmp_path / "magic.zkey")
    # flip a byte inside the A section's first finite point: off the curve
    key = snarkjs.read_zkey(work / "multipub.zkey")
    first = int(next(i for i in range(len(key.a)) if not key.a.is_infinity()[i]))
    from porep_prover.snarkjs.binfile import BinFile
    pos = BinFile(work / "multipub.zkey", b"zkey", (1,), ParamsFormatError).offset(5) + 96 * first + 10
    bad = bytearray(zk)
    bad[pos] ^= 0x01
    (tmp_path / "flip.zkey").write_bytes(bytes(bad))
    with pytest.raises(ParamsFormatError, match=f"section 5 \\(A\\), point {first}"):
        snarkjs.read_zkey(tmp_path / "flip.zkey")
    r1 = (work / "multipub.r1cs").read_bytes()
    (tmp_path / "cut.r1cs").write_bytes(r1[:len(r1) - 7])
    with pytest.raises(CircuitFormatError):
        snarkjs.read_r1cs(tmp_path / "cut.r1cs")
    wt = (work / "multipub.wtns").read_bytes()
    (tmp_path / "bad.wtns").write_bytes(wt[:28] + b"\xff" * 32 + wt[60:])   # the prime (after n8 at 24)
    with pytest.raises(CircuitFormatError, match="prime"):
        snarkjs.read_wtns(tmp_path / "bad.wtns")
    (tmp_path / "bad.json").write_text('{"pi_a": [1, 2]}')
    with pytest.raises(ProofFormatError):
        snarkjs.read_proof(tmp_path / "bad.json")
    (tmp_path / "pub.json").write_text(json.dumps([str(R)]))
    with pytest.raises(PublicInputsError):
        snarkjs.read_public(tmp_path / "pub.json")


def test_prove_command_picks_the_snarkjs_flavour_for_a_zkey(work, tmp_path, capsys):
    proof = tmp_path / "proof.bin"
    assert cli(["prove", str(work / "multipub.zkey"), str(work / "multipub.r1cs"), str(work / "multipub.wtns"),
                "-o", str(proof), "--json", str(tmp_path / "proof.json"), "--public", str(tmp_path / "pub.json")]) == 0
    capsys.readouterr()
    snarkjs_cli("groth16", "verify", work / "multipub_vk.json", tmp_path / "pub.json", tmp_path / "proof.json")
