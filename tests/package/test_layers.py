# SPDX-License-Identifier: Apache-2.0
"""The import rules of pyproject.toml's [tool.importlinter]: the layers (each
imports only those below it), cuda/ below the algorithms, no plugin imported
by the package, no cycle between the modules of one package. Also, that the
rules bite: the same contracts with two floors swapped are broken, and an
import inside a function counts as much as one at the top of a module."""
import pathlib
import subprocess
import sys
import textwrap
import tomllib

PYPROJECT = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
CONTRACT_IDS = {"layers", "cuda-below-algorithms", "no-plugin-imports", "acyclic"}


def contracts() -> list[dict]:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]


def lint(config: pathlib.Path, where: pathlib.Path = PYPROJECT.parent) -> str:
    """lint-imports on config, run in where (on the path of the packages it
    checks): "kept" when every contract is, "broken" when one is (its report
    is printed), AssertionError when the check itself fails. A process of its
    own: the command sets up logging for the whole process it runs in."""
    run = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                          str(config), "--no-cache", "--no-logo"], cwd=where, capture_output=True, text=True)
    print(run.stdout, run.stderr)
    if run.returncode == 0:
        return "kept"
    assert "BROKEN" in run.stdout, f"lint-imports could not check {config} (its output is above)"
    return "broken"


def write_config(path: pathlib.Path, root: str, contract_toml: str) -> pathlib.Path:
    path.write_text(f'[tool.importlinter]\nroot_packages = ["{root}"]\n\n{contract_toml}')
    return path


def layers_toml(layers: list[str], container: str) -> str:
    listed = ", ".join(f'"{layer}"' for layer in layers)
    return (f'[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\ncontainers = ["{container}"]\n'
            f"layers = [{listed}]\n")


def test_the_contracts_are_declared():
    assert {c["id"] for c in contracts()} == CONTRACT_IDS
    layers = next(c for c in contracts() if c["id"] == "layers")
    assert layers["exhaustive"] and len(layers["layers"]) >= 10


def test_the_package_keeps_its_contracts():
    assert lint(PYPROJECT) == "kept", "an import breaks a contract of pyproject.toml (the report is above)"


def test_a_floor_out_of_order_is_reported(tmp_path):
    """groth16 put below backend: its imports of backend then run upward."""
    layers = list(next(c for c in contracts() if c["id"] == "layers")["layers"])
    i, j = layers.index("groth16"), layers.index("backend")
    layers[i], layers[j] = layers[j], layers[i]
    swapped = write_config(tmp_path / "swapped.toml", "porep_prover", layers_toml(layers, "porep_prover"))
    assert lint(swapped) == "broken"


def test_an_import_inside_a_function_counts(tmp_path):
    package = tmp_path / "lazy_layers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("")
    (package / "low.py").write_text(textwrap.dedent("""\
        def later():
            from . import high     # upward, but only when called
            return high
        """))
    config = write_config(tmp_path / "lazy.toml", "lazy_layers", layers_toml(["high", "low"], "lazy_layers"))
    assert lint(config, where=tmp_path) == "broken"
