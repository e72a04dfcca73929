# SPDX-License-Identifier: Apache-2.0
"""The package's types and lint, as the test command runs them: mypy over
the package (strict on cuda, msm, ntt, backend, groth16 and engine: the
settings are pyproject.toml's [tool.mypy]) and ruff's small rule set
([tool.ruff]) over the sources, the tests, the benchmarks and the plugins.
Each runs in a process of its own; its findings are the failure's message."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=1200)


def test_mypy_finds_nothing():
    pytest.importorskip("mypy")
    done = run("mypy")
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-2000:]


def test_ruff_finds_nothing():
    pytest.importorskip("ruff")
    done = run("ruff", "check", "src", "tests", "benchmarks", "plugins")
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-2000:]


def test_mypy_would_find_an_untyped_function_in_a_strict_package(tmp_path):
    """The strict settings hold where they should: a function without
    annotations under porep_prover.engine is reported."""
    pytest.importorskip("mypy")
    pkg = tmp_path / "porep_prover" / "engine"
    pkg.mkdir(parents=True)
    (tmp_path / "porep_prover" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "loose.py").write_text("def f(x):\n    return x\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           str(pkg / "loose.py")], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "no-untyped-def" in done.stdout, done.stdout
