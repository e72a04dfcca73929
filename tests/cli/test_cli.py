# SPDX-License-Identifier: Apache-2.0
"""The porep-prover command, through main() and as an installed script."""
import json
import shutil
import subprocess

import pytest

from porep_prover.cli import main


def run(*args) -> int:
    return main([str(a) for a in args])


def test_demo(capsys):
    assert run("demo", "--constraints", 2000, "--proofs", 2, "--backend", "cpu") == 0
    out = capsys.readouterr().out
    assert "OK: every proof verifies" in out and "prove/h_poly" in out


def test_generate_setup_prove_verify(tmp_path, capsys):
    c, w, pub, p, vk = (tmp_path / n for n in ("c.npz", "w.bin", "pub.json", "p.params", "vk.json"))
    assert run("circuit", "generate", "--kind", "square-chain", "--constraints", 300, "-o", c, "--witness", w,
               "--public", pub) == 0
    assert run("setup", c, "-o", p, "--vk", vk) == 0
    assert "insecure" in capsys.readouterr().err
    proof, proof_json, pub2 = tmp_path / "proof.bin", tmp_path / "proof.json", tmp_path / "pub2.json"
    assert run("prove", p, c, w, "-o", proof, "--json", proof_json, "--public", pub2, "--progress") == 0
    assert json.loads(pub2.read_text()) == json.loads(pub.read_text())
    assert proof.stat().st_size == 192
    for key in (p, vk):
        for pf in (proof, proof_json):
            assert run("verify", key, pub, pf) == 0
            assert "OK!" in capsys.readouterr().out
    (tmp_path / "wrong.json").write_text(json.dumps([str(int(json.loads(pub.read_text())[0]) + 1)]))
    assert run("verify", vk, tmp_path / "wrong.json", proof) == 1
    assert run("params", "info", p, "--check-subgroup") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["domain"] == 512 and info["l"] == 300 and not info["mapped"]
    pmap, proof2 = tmp_path / "p.pmap", tmp_path / "proof2.bin"
    assert run("params", "map", p, pmap, "--check-subgroup") == 0
    capsys.readouterr()
    assert run("params", "info", pmap, "--check-subgroup") == 0
    mapped = json.loads(capsys.readouterr().out)
    assert mapped["mapped"] and {k: mapped[k] for k in ("h", "l", "a")} == {k: info[k] for k in ("h", "l", "a")}
    assert run("prove", pmap, c, w, "-o", proof2) == 0
    assert proof2.read_bytes() != proof.read_bytes()           # fresh r, s
    assert run("verify", pmap, pub, proof2) == 0 and run("verify", p, pub, proof2) == 0


def test_errors_exit_2_with_a_named_error(tmp_path, capsys):
    (tmp_path / "short.params").write_bytes(b"\0" * 2000)
    assert run("params", "info", tmp_path / "short.params") == 2
    assert "ParamsFormatError" in capsys.readouterr().err
    assert run("params", "info", tmp_path / "missing.params") == 2
    (tmp_path / "bad.json").write_text("[1, 2")
    assert run("verify", tmp_path / "missing", tmp_path / "bad.json", tmp_path / "x") == 2
    with pytest.raises(SystemExit):
        run("demo", "--backend", "tpu")


def test_console_script_installed():
    exe = shutil.which("porep-prover")
    if exe is None:
        pytest.skip("porep-prover is not on PATH (package not installed as a script)")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("porep-prover ")
