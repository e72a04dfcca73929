# SPDX-License-Identifier: Apache-2.0
"""The daemon's generated gRPC code is what its .proto files make today
(tools/gen_proto.py: the daemon's own service, v1/, and the reference
engine's, cuzk/), and pyproject.toml pins the versions it needs at run time."""
import fnmatch
import importlib.metadata
import importlib.util
import pathlib
import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[2]
V1 = ROOT / "src" / "porep_prover" / "daemon" / "v1"
CUZK = ROOT / "src" / "porep_prover" / "daemon" / "cuzk"


def gen_proto():
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "tools" / "gen_proto.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grpc_generated_version(folder=V1) -> Version:
    return Version(re.search(r"GRPC_GENERATED_VERSION = '([^']+)'", (folder / "proving_pb2_grpc.py").read_text())[1])


def protobuf_gencode_version(folder=V1) -> Version:
    text = (folder / "proving_pb2.py").read_text()
    major, minor, patch = re.search(r"Domain\.PUBLIC,\s*(\d+),\s*(\d+),\s*(\d+),", text).groups()
    return Version(f"{major}.{minor}.{patch}")


def requirements() -> dict[str, list[Requirement]]:
    """Every requirement of pyproject.toml (dependencies and extras), by package name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found: dict[str, list[Requirement]] = {}
    for line in project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]:
        req = Requirement(line)
        found.setdefault(req.name.lower(), []).append(req)
    return found


def lowest_allowed(req: Requirement) -> Version:
    """The lowest version a requirement's >=, ~= or == clause allows (none: AssertionError)."""
    floors = [Version(s.version) for s in req.specifier if s.operator in (">=", "~=", "==")]
    assert floors, f"{req}: no lower bound"
    return max(floors)


def test_the_generated_code_is_current(tmp_path):
    pytest.importorskip("grpc_tools.protoc", reason="grpcio-tools (the test extra) is not installed")
    installed = Version(importlib.metadata.version("grpcio-tools"))
    if installed != grpc_generated_version():
        pytest.skip(f"grpcio-tools {installed} is installed; the committed code was generated with "
                    f"{grpc_generated_version()} (the test extra's pin), whose output alone is comparable")
    tool = gen_proto()
    made = tool.generate(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in made) == sorted(
        f"porep_prover/daemon/{folder}/{name}" for folder in ("v1", "cuzk") for name in tool.GENERATED)
    assert tool.stale(tmp_path) == [], "the committed generated code differs from the .proto's: run tools/gen_proto.py"
    (tmp_path / "porep_prover" / "daemon" / "cuzk" / "proving_pb2.pyi").write_text("# not what protoc makes\n")
    assert tool.stale(tmp_path) == ["porep_prover/daemon/cuzk/proving_pb2.pyi"]
    assert tool.main(["--check"]) == 0


def test_both_services_were_generated_by_the_same_tools():
    assert grpc_generated_version(CUZK) == grpc_generated_version()
    assert protobuf_gencode_version(CUZK) == protobuf_gencode_version()


def test_pyproject_pins_what_the_generated_code_needs():
    reqs = requirements()
    grpc_version, protobuf_version = grpc_generated_version(), protobuf_gencode_version()
    for name, needed in (("grpcio", grpc_version), ("protobuf", protobuf_version)):
        assert name in reqs, f"pyproject.toml does not require {name} (the generated code needs >= {needed})"
        for req in reqs[name]:
            assert lowest_allowed(req) >= needed, f"{req}: the generated code needs {name} >= {needed}"
            assert req.specifier.contains(needed), f"{req} excludes {needed}, which the code was generated for"
    tools = reqs.get("grpcio-tools", [])
    assert [str(r.specifier) for r in tools] == [f"=={grpc_version}"], \
        "the test extra pins grpcio-tools to the version that generated the code"
    for name in ("grpcio", "protobuf"):       # and this interpreter runs within the pins
        installed = Version(importlib.metadata.version(name))
        assert all(r.specifier.contains(installed) for r in reqs[name]), f"{name} {installed} installed"


def test_the_proto_ships_in_the_package():
    """The .proto (from which a client in any language is made) and the type stubs are package data."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = ROOT / "src" / "porep_prover"
    for path in (V1 / "proving.proto", V1 / "proving_pb2.pyi", CUZK / "proving.proto", CUZK / "proving_pb2.pyi"):
        rel = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(rel, p) for p in patterns["porep_prover"]), f"{rel} is not package data"
