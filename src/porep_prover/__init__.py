# SPDX-License-Identifier: Apache-2.0
"""porep_prover: a Groth16 proving engine over BLS12-381.

Public surface: scalar vectors and point arrays (FrArray, G1Array, G2Array,
G1Point, G2Point), the kernels (msm, ntt, batch_sum) and, in
porep_prover.groth16, constraint systems, parameters, proving and verifying.
"""
from .config import openmp_wait_policy

with openmp_wait_policy():           # the first native module loads the OpenMP runtime: its settings now
    from . import errors
    from .field import _field        # noqa: F401  (the first native module)
    from .backend import get_backend, gpu_available
    from .backend.api import batch_sum, msm, ntt
    from .curve import G1Array, G1Point, G2Array, G2Point
    from .field import FrArray

__version__ = "0.1.0"

__all__ = [
    "FrArray",
    "G1Array",
    "G1Point",
    "G2Array",
    "G2Point",
    "batch_sum",
    "errors",
    "get_backend",
    "gpu_available",
    "msm",
    "ntt",
]
