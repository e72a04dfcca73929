# SPDX-License-Identifier: Apache-2.0
"""porep_prover: a Groth16 proving engine over BLS12-381.

Public surface (each module's __all__; anything else may change):

    porep_prover            scalar vectors and point arrays (FrArray, G1Array, G2Array,
                            G1Point, G2Point), the kernels (msm, ntt, batch_sum), and the
                            names a script starts from: Engine, Job, load_config, prove,
                            verify, load_params, hookimpl
    porep_prover.groth16    constraint systems, parameters and their files, proving, verifying
    porep_prover.engine     the engine, jobs, and what plugins implement (SynthesisProvider,
                            Scheduler and the PartitionTask it orders, ResultSink)
    porep_prover.hooks      the plugin manager and hookimpl
    porep_prover.snarkjs    circom and snarkjs files, snarkjs-flavour proving
    porep_prover.circuits   demo circuits
    porep_prover.errors     the exceptions (every one a PorepProverError)

Every name is imported when it is first used (numpy, the native kernels,
groth16, the engine, pluggy), so that `import porep_prover` and the commands
that use none of them stay light: `porep-prover --help` loads no numpy.
Importing the package does load the OpenMP runtime, under its wait policy
(config.openmp_wait_policy), through the one native module that needs no
numpy.
"""
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from typing import TYPE_CHECKING

from ._version import __version__ as __version__
from . import config_schema, errors
from .config import openmp_wait_policy

# name -> the module it is loaded from on first use
_LAZY = {
    "Engine": "porep_prover.engine",
    "Job": "porep_prover.engine",
    "load_config": "porep_prover.engine",
    "prove": "porep_prover.groth16",
    "verify": "porep_prover.groth16",
    "load_params": "porep_prover.groth16",
    "hookimpl": "porep_prover.hooks",
    "get_backend": "porep_prover.backend",
    "gpu_available": "porep_prover.backend",
    "batch_sum": "porep_prover.backend.api",
    "msm": "porep_prover.backend.api",
    "ntt": "porep_prover.backend.api",
    "G1Array": "porep_prover.curve",
    "G1Point": "porep_prover.curve",
    "G2Array": "porep_prover.curve",
    "G2Point": "porep_prover.curve",
    "FrArray": "porep_prover.field",
}

if TYPE_CHECKING:
    from .backend import get_backend, gpu_available
    from .backend.api import batch_sum, msm, ntt
    from .curve import G1Array, G1Point, G2Array, G2Point
    from .engine import Engine, Job, load_config
    from .field import FrArray
    from .groth16 import load_params, prove, verify
    from .hooks import hookimpl


def _load_openmp_runtime() -> None:
    """Load porep_prover.field._field, and with it the OpenMP runtime, under
    the wait policy: the runtime reads its settings once, when it loads, and
    every native module shares it. The module is loaded from its file, not
    through porep_prover.field (whose __init__ imports numpy); the later
    `from ..field import _field` finds it in sys.modules."""
    name = __name__ + ".field._field"
    if name in sys.modules:
        return
    machinery = importlib.machinery
    extensions = (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES)
    spec = machinery.FileFinder(os.path.join(__path__[0], "field"), extensions).find_spec(name)
    if spec is None or spec.loader is None:      # not built: the import that needs it says so
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


def _declare_daemon_settings(settings) -> None:
    """The daemon's [daemon] section, its module imported when a config is read."""
    from .daemon.settings import declare_settings
    declare_settings(settings)


with openmp_wait_policy():
    _load_openmp_runtime()

# msm and ntt are both functions of this module and subpackages: the
# subpackages (nothing in their __init__) load now, so that a first import of
# them later cannot bind porep_prover.msm to the package over the function.
for _name in ("msm", "ntt"):
    importlib.import_module(f"{__name__}.{_name}")
    del globals()[_name]
del _name

# The daemon sits above the engine, yet every config (the engine's load_config
# too) knows its [daemon] section: registered here, where every layer is in reach.
config_schema.add_built_in("daemon", _declare_daemon_settings)


def __getattr__(name: str):
    """A name of __all__, or a subpackage (porep_prover.snarkjs), imported on first use."""
    module = _LAZY.get(name)
    if module is None:
        if name.startswith("__"):
            raise AttributeError(f"module 'porep_prover' has no attribute {name!r}")
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'porep_prover' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Engine",
    "FrArray",
    "G1Array",
    "G1Point",
    "G2Array",
    "G2Point",
    "Job",
    "batch_sum",
    "errors",
    "get_backend",
    "gpu_available",
    "hookimpl",
    "load_config",
    "load_params",
    "msm",
    "ntt",
    "prove",
    "verify",
]
