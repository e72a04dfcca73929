# SPDX-License-Identifier: Apache-2.0
"""The import rules of pyproject.toml's [tool.importlinter]: the layers (each
imports only those below it), cuda/ below the algorithms, no plugin imported
by the package, no cycle between the modules of one package. Also, that the
rules bite: the same contracts with two floors swapped are broken, and an
import inside a function counts as much as one at the top of a module."""
import pathlib
import textwrap
import tomllib

from importlinter.cli import lint_imports

PYPROJECT = pathlib.Path(__file__).resolve().parents[1] / "pyproject.toml"
CONTRACT_IDS = {"layers", "cuda-below-algorithms", "no-plugin-imports", "acyclic"}


def contracts() -> list[dict]:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]


def lint(config: pathlib.Path) -> int:
    """lint-imports on config: 0 when every contract is kept (the report goes to stdout)."""
    return lint_imports(config_filename=str(config), no_cache=True, no_logo=True)


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
    assert lint(PYPROJECT) == 0, "an import breaks a contract of pyproject.toml (the report is above)"


def test_a_floor_out_of_order_is_reported(tmp_path):
    """groth16 moved below backend: backend's importers in groth16 break the contract."""
    layers = list(next(c for c in contracts() if c["id"] == "layers")["layers"])
    i, j = layers.index("groth16"), layers.index("backend")
    layers[i], layers[j] = layers[j], layers[i]
    assert lint(write_config(tmp_path / "swapped.toml", "porep_prover", layers_toml(layers, "porep_prover"))) == 1


def test_an_import_inside_a_function_counts(tmp_path, monkeypatch):
    package = tmp_path / "lazy_layers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("")
    (package / "low.py").write_text(textwrap.dedent("""\
        def later():
            from . import high     # upward, but only when called
            return high
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    config = write_config(tmp_path / "lazy.toml", "lazy_layers", layers_toml(["high", "low"], "lazy_layers"))
    assert lint(config) == 1
