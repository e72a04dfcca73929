# SPDX-License-Identifier: Apache-2.0
"""The MSMs on the GPU: the host side of msm/kernels/msm.cu (GpuMsm: the
sort, the buckets, the window tables; their plan) and of fixed_base.cu
(GpuFixedBase, the test setup's fixed-base products). Loading the package
registers its kernel modules with cuda.modules: msm_g1 and msm_g2 (one
source, G2 with MSM_G2), fixed_base_g1 and fixed_base_g2."""
from __future__ import annotations

import pathlib

from ...cuda.modules import register_module
from .fixed_base import GpuFixedBase
from .msm import GpuMsm

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "kernels"
# the Fq product as a call: 1.6x faster MSMs on an H200 than inlined (fewer registers, smaller code)
register_module("msm_g1", KERNELS / "msm.cu", ("FQ_MUL_CALL",))
register_module("msm_g2", KERNELS / "msm.cu", ("MSM_G2", "FQ_MUL_CALL"))
register_module("fixed_base_g1", KERNELS / "fixed_base.cu", ("FQ_MUL_CALL",))
register_module("fixed_base_g2", KERNELS / "fixed_base.cu", ("MSM_G2", "FQ_MUL_CALL"))

__all__ = ["GpuFixedBase", "GpuMsm"]
