# SPDX-License-Identifier: Apache-2.0
"""A GPU backend's memory plans: the DevicePlan of a parameter set under
the device's budget (backend/device_plan.py, pure arithmetic: made by a
caller once, an engine when it loads the set), and the Layout a plan gives
the device's memory (cuda.memory.DeviceMemory.follow) for the set's arrays.

The plan's choices become the layout: the arrays it streams (pinned in
host memory, through the chunk ring in chunks of its size), the most
points an MSM pass sorts, and the resident arrays' budget (what the plan
keeps resident, and the slack the budget leaves beside its peak). The NTT's
twiddles, compact or whole, are the backend's own choice by the same plan
(GpuBackend.region).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..cuda.memory import Layout
from ..msm.gpu.plan import table_copies, table_plan
from .device_plan import DevicePlan, SrsArrays, Workload, plan

if TYPE_CHECKING:
    from ..msm.gpu import GpuMsm
    from ..r1cs.system import R1CS


def wanted_table_copies(msm: GpuMsm, params: SrsArrays) -> int:
    """The H points' window-table copies the MSM side would make (0: tables off)."""
    if not msm.tables or len(params.h) < 2:
        return 0
    c, sets = table_plan(len(params.h), params.h.GROUP, msm.table_copies, msm.tuning.table_bits)
    return table_copies(c, sets)


def device_plan(budget: int, msm: GpuMsm, params: SrsArrays, r1cs: R1CS | None = None, workers: int = 2,
                g2: bool = True, gathers: bool = False) -> DevicePlan:
    """The cheapest plan for a parameter set under budget bytes: r1cs, A w,
    B w, C w may be evaluated on the device (its matrices resident where
    they fit and pay; the plan's matrices says), else on the host; workers:
    the kernel-region workers sharing the device; g2: B's G2 MSM runs on the
    device (else b_g2 is no part of the plan); gathers: with the matrices
    off the device, the queries' scalars may be gathered there (plan's
    gathers). DeviceMemoryError when the budget is too small for the set's
    domain."""
    return plan(Workload.of(params, r1cs, workers, wanted_table_copies(msm, params), g2), budget, gathers=gathers)


def layout_of(chosen: DevicePlan, params: SrsArrays) -> Layout:
    """The memory layout chosen gives params' arrays."""
    resident_budget = chosen.resident_bytes + max(0, chosen.budget - chosen.planned_bytes)
    return Layout(tuple(getattr(params, name).limbs for name in chosen.streamed), chosen.chunk_bytes,
                  chosen.pass_points, resident_budget)
