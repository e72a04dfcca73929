# SPDX-License-Identifier: Apache-2.0
"""What the device tests ask of the GPU backend, checked where CI runs: no
device. A test marked gpu is skipped without a CUDA device, so a member it
reads of the `gpu` fixture (the GPU backend) that a change removed or
renamed would fail only on a device. Every `gpu.<name>` read in a test or
fixture that takes the fixture (or a fixture of its module that hands the
backend on: `yield gpu`, `return gpu`, under its own name) must name a
member of GpuBackend: a class attribute, method or property of it or its
bases, a member those classes declare, or an attribute their methods set
on self; and a read through the parts it is composed of
(gpu.device.<name>, gpu.memory.<name>, gpu.memory.resident.<name>) a
member of that part's class. The device owns its context, streams and
kernels, its memory the buffers: gpu.device.upload is no read at all."""
import ast
import functools
import inspect
import pathlib
import textwrap

from porep_prover.backend.gpu import GpuBackend
from porep_prover.cuda.device import Device
from porep_prover.cuda.device_memory import DeviceMemory
from porep_prover.cuda.resident import ResidentStore

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


# the classes of the parts a GpuBackend is composed of, by the path of attributes that reaches them
PARTS = {(): GpuBackend, ("device",): Device, ("memory",): DeviceMemory, ("device", "memory"): DeviceMemory,
         ("memory", "resident"): ResidentStore, ("device", "memory", "resident"): ResidentStore}


@functools.cache
def members(cls: type) -> frozenset[str]:
    names = set(dir(cls))
    for base in cls.__mro__:
        names |= set(getattr(base, "__annotations__", {})) | self_attributes(base)
    return frozenset(names)


def chain(node: ast.Attribute, names_of_gpu: set[str]) -> list[str] | None:
    """The names of gpu.a.b.c as [a, b, c]; None when it does not start at
    gpu (or at another of names_of_gpu: the backend under a fixture's name)."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return names[::-1] if isinstance(node, ast.Name) and node.id in names_of_gpu else None


def handing_on(tree: ast.Module) -> set[str]:
    """gpu, and the fixtures of a module that take gpu and hand it on as they are (yield gpu, return gpu)."""
    names = {"gpu"}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and "gpu" in {a.arg for a in fn.args.args} \
                and any(isinstance(node, (ast.Yield, ast.Return)) and isinstance(node.value, ast.Name)
                        and node.value.id == "gpu" for node in ast.walk(fn)):
            names.add(fn.name)
    return names


def fixture_reads(path: pathlib.Path) -> list[tuple[int, str, str]]:
    """(line, function, read) for each gpu.<member>, or gpu.<part>.<member>
    through the backend's parts, read in a function of path that takes gpu
    (or a fixture that hands it on): read is the dotted path whose last
    name must be a member (the first name not a part, and the parts before
    it)."""
    reads = []
    tree = ast.parse(path.read_text(), str(path))
    names_of_gpu = handing_on(tree)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        taken = names_of_gpu & {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        if not taken:
            continue
        for node in ast.walk(fn):
            names = chain(node, taken) if isinstance(node, ast.Attribute) else None
            if names is None:
                continue
            cut = 1
            while cut < len(names) and tuple(names[:cut]) in PARTS:
                cut += 1
            # only the longest chain is read (gpu.memory.resident is also walked as gpu.memory: the same read)
            if cut == len(names) or tuple(names[:cut]) not in PARTS:
                reads.append((node.lineno, fn.name, ".".join(names[:cut])))
    return sorted(set(reads))


def resolves(read: str) -> bool:
    *parts, name = read.split(".")
    cls = PARTS.get(tuple(parts))
    return cls is not None and name in members(cls)


def test_device_tests_read_only_members_the_backend_has():
    files = sorted(TESTS.rglob("test_*.py"))
    reads = [(path, *read) for path in files for read in fixture_reads(path)]
    assert len(reads) > 100          # the device tests were found (they read the backend everywhere)
    missing = [f"{path.relative_to(TESTS)}:{line} {fn}: gpu.{read}" for path, line, fn, read in reads
               if not resolves(read)]
    assert not missing, "device tests read what GpuBackend and its parts no longer have:\n" + "\n".join(missing)


def test_a_removed_member_is_found(tmp_path):
    test = tmp_path / "test_sample.py"
    test.write_text("import pytest\n\n\n@pytest.fixture\ndef planned(gpu):\n    yield gpu\n\n\n"
                    "def test_x(gpu):\n    assert gpu.msm_options is None and gpu.msm_ops.tables\n"
                    "    gpu.device.stream.synchronize(), gpu.memory.resident.resident_bytes(), gpu.device.gone\n\n\n"
                    "def test_y(planned):\n    planned.device.upload(None), planned.memory.upload(None)\n")
    reads = sorted({read for _, _, read in fixture_reads(test)})
    assert reads == ["device", "device.gone", "device.stream", "device.upload", "memory", "memory.resident",
                     "memory.resident.resident_bytes", "memory.upload", "msm_ops", "msm_options"]
    assert [read for read in reads if not resolves(read)] == ["device.gone", "device.upload", "msm_options"]
    # set in __init__, declared, or a property
    assert {"device", "memory", "lane", "msm_ops"} <= members(GpuBackend) and "plan" not in members(GpuBackend)
    assert {"ctx", "stream", "memory"} <= members(Device) and {"pins", "pinned", "resident"} <= members(DeviceMemory)
