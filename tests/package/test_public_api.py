# SPDX-License-Identifier: Apache-2.0
"""The public surface, the backend names, and importability without CUDA."""
import ast
import importlib
import pathlib
import subprocess
import sys

import pytest

import porep_prover as pp
from porep_prover.errors import BackendUnavailableError, PorepProverError, UnknownBackendError


def test_all_exports_exist():
    for name in pp.__all__:
        assert hasattr(pp, name), name


def test_import_needs_no_cuda():
    code = "import sys; import porep_prover; assert not any(m.startswith('cuda') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_backend_selection():
    assert pp.get_backend("cpu").name == "cpu"
    assert pp.get_backend("auto").name in ("cpu", "gpu")
    with pytest.raises(UnknownBackendError):
        pp.get_backend("metal")
    if not pp.gpu_available():
        with pytest.raises(BackendUnavailableError):
            pp.get_backend("gpu")


def test_auto_asks_for_the_driver_library_before_the_bindings(monkeypatch):
    """Without the NVIDIA driver's library, "auto" learns there is no GPU
    without importing the CUDA bindings; with it, the devices decide."""
    from porep_prover import cuda

    def no_library(name):
        raise OSError(f"{name}: cannot open shared object file")

    def no_devices():
        raise AssertionError("the bindings were asked although the driver library does not open")

    monkeypatch.setattr(cuda, "_AVAILABLE", None)
    monkeypatch.setattr(cuda.ctypes, "CDLL", no_library)
    monkeypatch.setattr(cuda, "devices", no_devices)
    assert cuda.available() is False and cuda.available() is False      # probed once, remembered
    monkeypatch.setattr(cuda, "_AVAILABLE", None)
    monkeypatch.setattr(cuda.ctypes, "CDLL", lambda name: object())
    monkeypatch.setattr(cuda, "devices", lambda: ["a device"])
    assert cuda.available() is True
    monkeypatch.setattr(cuda, "_AVAILABLE", None)
    monkeypatch.setattr(cuda, "devices", lambda: [])
    assert cuda.available() is False


def test_errors_are_named_and_rooted():
    for name in dir(pp.errors):
        obj = getattr(pp.errors, name)
        if isinstance(obj, type) and issubclass(obj, Exception) and obj.__module__ == "porep_prover.errors":
            assert issubclass(obj, PorepProverError), name


# The public surface: these modules' __all__ (and every exception of porep_prover.errors).
PUBLIC_MODULES = ("porep_prover", "porep_prover.groth16", "porep_prover.engine", "porep_prover.hooks",
                  "porep_prover.snarkjs", "porep_prover.circuits", "porep_prover.errors",
                  "porep_prover.client")
ROOT = pathlib.Path(__file__).resolve().parents[2]
TOP_LEVEL = {"Engine": "porep_prover.engine", "Job": "porep_prover.engine", "load_config": "porep_prover.engine",
             "prove": "porep_prover.groth16", "verify": "porep_prover.groth16",
             "load_params": "porep_prover.groth16", "hookimpl": "porep_prover.hooks"}


def public_names(module: str) -> set:
    mod = importlib.import_module(module)
    if module == "porep_prover.errors":
        return {n for n, obj in vars(mod).items() if isinstance(obj, type) and issubclass(obj, Exception)}
    return set(mod.__all__)


def test_public_modules_export_what_they_list():
    for module in PUBLIC_MODULES:
        mod = importlib.import_module(module)
        names = public_names(module)
        assert names, module
        for name in names:
            assert getattr(mod, name, None) is not None, f"{module}.{name}"


def test_a_script_starts_from_the_top_level():
    for name, module in TOP_LEVEL.items():
        assert name in pp.__all__ and name in dir(pp)
        assert getattr(pp, name) is getattr(importlib.import_module(module), name), name
    assert pp.__version__ == importlib.import_module("porep_prover._version").__version__
    with pytest.raises(AttributeError):
        pp.no_such_name      # noqa: B018


def test_the_light_paths_stay_light():
    """`import porep_prover` loads neither groth16, the engine nor pluggy (they
    load on first use of their names), and the command line's parser loads
    neither the engine nor pluggy."""
    code = ("import sys, porep_prover; heavy = ('porep_prover.groth16', 'porep_prover.engine', 'pluggy');"
            "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules];"
            "from porep_prover.cli import build_parser; build_parser();"
            "assert not [m for m in heavy[1:] if m in sys.modules], [m for m in heavy[1:] if m in sys.modules];"
            "porep_prover.Engine; assert 'porep_prover.engine' in sys.modules and 'pluggy' not in sys.modules;"
            "porep_prover.hookimpl; assert 'pluggy' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_only_the_command_line_takes_names_from_the_package_root():
    """Lower layers import what they need from the module that defines it (the
    version from porep_prover._version), never from porep_prover itself: the
    root imports them, so that would be a cycle."""
    pkg = ROOT / "src" / "porep_prover"
    submodules = {p.stem for p in pkg.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    for path in pkg.rglob("*.py"):
        rel = path.relative_to(pkg)
        if rel.parts[0] in ("cli", "__init__.py"):
            continue
        depth = len(rel.parts)          # the relative level that reaches the root (a/b.py and a/__init__.py: 2)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == depth and node.module is None:
                names = {a.name for a in node.names} - submodules
                assert not names, f"{rel} imports {names} from the package root"
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "porep_prover":
                raise AssertionError(f"{rel} imports from porep_prover by its absolute name")


def plugin_imports():
    """(file, module, name or None) for every import of porep_prover in the plugins' sources."""
    for path in sorted(ROOT.glob("plugins/*/src/**/*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                yield from ((path, a.name, None) for a in node.names if a.name.split(".")[0] == "porep_prover")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] == "porep_prover":
                yield from ((path, node.module, a.name) for a in node.names)


def test_first_party_plugins_use_public_names_only():
    seen = 0
    for path, module, name in plugin_imports():
        seen += 1
        where = path.relative_to(ROOT)
        if name is None or f"{module}.{name}" in PUBLIC_MODULES:
            assert module in PUBLIC_MODULES or name is not None, f"{where}: import {module} is not public"
            continue
        assert module in PUBLIC_MODULES, f"{where}: {module} is not a public module (import {name} from one)"
        assert name in public_names(module), f"{where}: {module}.{name} is not public (not in its __all__)"
    assert seen >= 10


def test_a_scheduler_author_finds_partition_task():
    from porep_prover.engine import PartitionTask, Scheduler
    doc = PartitionTask.__doc__ + Scheduler.__doc__
    for field in ("job", "index", "attempt", "push", "pop"):
        assert field in doc, field
