# SPDX-License-Identifier: Apache-2.0
"""Every GPU kernel module of the package: the packages that own kernel
sources (msm, ntt, r1cs) loaded, so that each has registered its modules
with cuda.modules; what `porep-prover gpu warm` and the NVRTC lane build."""
from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..cuda import modules
from ..msm import gpu as _msm_gpu          # noqa: F401 - registers msm_g1, msm_g2, fixed_base_g1, fixed_base_g2
from ..ntt import gpu as _ntt_gpu          # noqa: F401 - registers ntt
from ..r1cs import gpu as _r1cs_gpu        # noqa: F401 - registers r1cs

if TYPE_CHECKING:
    from ..cuda.cache import KernelCache


def kernel_modules() -> dict[str, tuple[pathlib.Path, tuple[str, ...]]]:
    """Logical name -> (source, defines) of every kernel module the package has."""
    return dict(modules.MODULES)


def build_all(arch: str, cache: KernelCache, progress: Callable[[str, int, int], object] | None = None
              ) -> dict[str, bytes]:
    """Every kernel module compiled for arch (cuda.modules.build_modules)."""
    return modules.build_modules(arch, cache, progress)
