# SPDX-License-Identifier: Apache-2.0
import pytest
from hypothesis import settings

settings.register_profile("default", max_examples=60, deadline=None)
settings.load_profile("default")


@pytest.fixture(scope="module")
def gpu():
    """The process's GPU backend (for tests marked gpu, skipped without a device)."""
    from porep_prover.backend import get_backend
    return get_backend("gpu")


@pytest.fixture(scope="session")
def benchmark_builds():
    """benchmarks/gpu_builds.py, loaded from its place: the GPU builds only the
    benchmarks compile (add_builds() hands them to the backend's compiler)."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_builds.py"
    spec = importlib.util.spec_from_file_location("gpu_builds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def benchmark_modules(benchmark_builds):
    """The benchmarks' GPU builds among the backend's modules (GpuBackend.kernel finds them)."""
    benchmark_builds.add_builds()
