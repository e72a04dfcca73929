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

The engine, pluggy and groth16 are imported when one of their names is first
used, so that `import porep_prover` (and the commands that do not prove) stays light.
"""
import importlib
from typing import TYPE_CHECKING

from ._version import __version__
from .config import openmp_wait_policy

with openmp_wait_policy():           # the first native module loads the OpenMP runtime: its settings now
    from . import errors
    from .field import _field        # noqa: F401  (the first native module)
    from .backend import get_backend, gpu_available
    from .backend.api import batch_sum, msm, ntt
    from .curve import G1Array, G1Point, G2Array, G2Point
    from .field import FrArray

from . import config_schema
from .daemon.settings import declare_settings as _declare_daemon_settings

# The daemon sits above the engine, yet every config (the engine's load_config
# too) knows its [daemon] section: registered here, where every layer is in reach.
config_schema.add_built_in("daemon", _declare_daemon_settings)

# name -> the module it is loaded from on first use
_LAZY = {
    "Engine": "porep_prover.engine",
    "Job": "porep_prover.engine",
    "load_config": "porep_prover.engine",
    "prove": "porep_prover.groth16",
    "verify": "porep_prover.groth16",
    "load_params": "porep_prover.groth16",
    "hookimpl": "porep_prover.hooks",
}

if TYPE_CHECKING:
    from .engine import Engine, Job, load_config
    from .groth16 import load_params, prove, verify
    from .hooks import hookimpl


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'porep_prover' has no attribute {name!r}")
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
