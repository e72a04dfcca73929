# SPDX-License-Identifier: Apache-2.0
"""What the device tests ask of the GPU backend, checked where CI runs: no
device. A test marked gpu is skipped without a CUDA device, so a member it
reads of the `gpu` fixture (the GPU backend) that a change removed or
renamed would fail only on a device. Every `gpu.<name>` read in a test or
fixture that takes the fixture must name a member of GpuBackend: a class
attribute, method or property of it or its bases, a member those classes
declare, or an attribute their methods set on self."""
import ast
import functools
import inspect
import pathlib
import textwrap

from porep_prover.backend.gpu import GpuBackend

TESTS = pathlib.Path(__file__).resolve().parents[1]


def self_attributes(cls) -> set[str]:
    """The names cls's own methods assign on self (self.x = ..., self.x, self.y = ...)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return set()
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name) and node.value.id == "self"}


@functools.cache
def backend_members() -> frozenset[str]:
    names = set(dir(GpuBackend))
    for cls in GpuBackend.__mro__:
        names |= set(getattr(cls, "__annotations__", {})) | self_attributes(cls)
    return frozenset(names)


def fixture_reads(path: pathlib.Path) -> list[tuple[int, str, str]]:
    """(line, function, member) for each gpu.<member> read in a function of path that takes gpu."""
    reads = []
    for fn in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if "gpu" not in {a.arg for a in fn.args.args + fn.args.kwonlyargs}:
            continue
        reads += [(node.lineno, fn.name, node.attr) for node in ast.walk(fn)
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "gpu"]
    return reads


def test_device_tests_read_only_members_the_backend_has():
    files = sorted(TESTS.rglob("test_*.py"))
    reads = [(path, *read) for path in files for read in fixture_reads(path)]
    assert len(reads) > 100          # the device tests were found (they read the backend everywhere)
    missing = [f"{path.relative_to(TESTS)}:{line} {fn}: gpu.{name}" for path, line, fn, name in reads
               if name not in backend_members()]
    assert not missing, "device tests read what GpuBackend no longer has:\n" + "\n".join(missing)


def test_a_removed_member_is_found(tmp_path):
    test = tmp_path / "test_sample.py"
    test.write_text("def test_x(gpu):\n    assert gpu.msm_options is None and gpu.msm_ops.tables\n")
    names = [name for _, _, name in fixture_reads(test)]
    assert names == ["msm_options", "msm_ops"]
    assert "msm_ops" in backend_members() and "msm_options" not in backend_members()
    assert {"ctx", "stream", "pins", "lane"} <= backend_members()     # set in __init__, declared, or a property
