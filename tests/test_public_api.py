# SPDX-License-Identifier: Apache-2.0
"""The public surface, the backend names, and importability without CUDA."""
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
