# SPDX-License-Identifier: Apache-2.0
"""The tests, in folders that mirror the package (tests/engine/ for
porep_prover/engine, ...; tests/package/ for what holds of the package as a
whole), with the helpers several folders share in tests/helpers/, importable
from every test by name (daemon_process, fake_proving_engine, gpu_inputs,
msm_model, status_samples)."""
import pathlib
import random
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "helpers"))

settings.register_profile("default", max_examples=60, deadline=None)
settings.load_profile("default")


@pytest.fixture(scope="module")
def gpu():
    """The process's GPU backend (for tests marked gpu, skipped without a device),
    unplanned at its card's memory as each module starts: a test module that
    runs a region by a plan (or sets the resident store's figures by hand)
    does not pass its layout on."""
    from porep_prover.backend import get_backend
    backend = get_backend("gpu")
    backend.release_plan()
    return backend


@pytest.fixture(scope="session")
def benchmark_builds():
    """benchmarks/gpu_builds.py, loaded from its place: the GPU builds only the
    benchmarks compile (add_builds() hands them to the backend's compiler)."""
    import importlib.util
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_builds.py"
    spec = importlib.util.spec_from_file_location("gpu_builds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session", autouse=True)
def device_kernels(request):
    """On a device host with device tests selected: every kernel build (the
    backend's modules and the benchmarks') compiled for the device at once,
    a process each, into the kernel cache the tests' backend reads, before
    the first test. Compiled one at a time as tests first launched them,
    they took most of the device lane's time."""
    if not any(item.get_closest_marker("gpu") for item in request.session.items):
        return
    from porep_prover.backend import gpu_available
    if not gpu_available():
        return
    from porep_prover import cuda
    from porep_prover.config import gpu_environment
    builds = request.getfixturevalue("benchmark_builds")
    for arch in sorted({d.arch for d in cuda.devices()}):
        builds.compile_all(arch, gpu_environment().kernel_cache_dir)


@pytest.fixture
def benchmark_modules(benchmark_builds):
    """The benchmarks' GPU builds among the backend's modules (GpuBackend.kernel finds them)."""
    benchmark_builds.add_builds()


@pytest.fixture(scope="module")
def material(request):
    """Proofs of a fresh random circuit for the fake daemon (tests/helpers/fake_proving_engine.py):
    the test module's MATERIAL_PROOFS of them (default 2); the seed is printed to replay a failure."""
    from fake_proving_engine import Material
    seed = random.SystemRandom().randrange(1 << 32)
    print(f"material seed={seed}")
    return Material.make(getattr(request.module, "MATERIAL_PROOFS", 2), random.Random(seed))


@pytest.fixture
def fake(material):
    """The fake daemon on 127.0.0.1 serving material's proofs, stopped after the test."""
    from fake_proving_engine import FakeEngine, FakeServer
    server = FakeServer(FakeEngine(material))
    yield server
    server.stop()
