# SPDX-License-Identifier: Apache-2.0
"""A GPU backend's device-memory budget, and the plan it runs by.

The budget bounds everything the process holds on the device: every device
buffer it allocates (resident points, window tables, the matrices of the
device MatVec, witnesses, NTT and MSM work buffers, the chunk ring) is
counted by the driver layer, and one that would pass the budget less the
margin (the context, the kernel modules) fails as the card running out
would (DeviceMemoryError, after the resident arrays not in use are
dropped). So a large card stands in for a small one.

For a parameter set the backend asks the planner (backend/device_plan.py)
what stays resident, what is streamed and how many points an MSM pass
sorts, and applies it: the resident store keeps the resident arrays (its
budget what the plan leaves them), the streamed ones are pinned in host
memory (in place; copied once where they are a file mapping) and go
through the chunk ring, the MSMs run in passes. The plan is
made when a parameter set first reaches the device and kept while the same
set comes; status reports it with what is used.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from ..errors import DeviceMemoryError, InvalidInputError
from ..msm.gpu.plan import table_copies, table_plan
from .device_plan import GIB, MARGIN, DevicePlan, SrsArrays, Workload, plan

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ..cuda import DeviceInfo
    from ..cuda import _driver
    from ..cuda.chunk_ring import ChunkRing
    from ..cuda.pinned import HostPins
    from ..msm.gpu import GpuMsm
    from ..ntt.gpu import GpuNtt
    from ..r1cs.system import R1CS

LOG = logging.getLogger(__name__)


class PlannedMemory:
    """The budget and plan side of a GpuBackend (a cuda.device.Device with
    msm_ops): set_memory_budget, plan_for, wants_matrices, memory_status."""

    memory_budget = 0            # bytes the process may hold on the device (set_memory_budget)
    plan: DevicePlan | None = None
    _plan_key: tuple[int, int, int, bool] | None = None   # (id(params), id(r1cs), workers, g2) of the plan in use

    # the Device's (cuda.device) and the backend's (GpuBackend.msm_ops)
    info: DeviceInfo
    ctx: _driver.Context
    ring: ChunkRing | None
    pins: HostPins
    pass_points: int
    resident_budget: int
    default_resident_budget: int
    dropped: int
    msm_ops: GpuMsm
    ntt_ops: GpuNtt

    if TYPE_CHECKING:   # the Device's
        def memory(self) -> tuple[int, int]: ...

        def synchronize(self) -> None: ...

        def stream_arrays(self, arrays: Sequence[NDArray[np.generic]], chunk_bytes: int = ...) -> None: ...

        def resident_bytes(self) -> int: ...

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._plan_lock = threading.Lock()
        self._matrices_choice: dict[tuple[int, int, int, bool, int], bool] = {}

    def set_memory_budget(self, nbytes: int = 0) -> None:
        """Bound what this process holds on the device to nbytes (0: the
        card's memory), and drop the plan in use: until the next parameter
        set's plan (plan_for) MSMs run in one pass, nothing is streamed and
        the resident store keeps its own budget. InvalidInputError for a
        budget below the margin."""
        total = self.memory()[1]
        if nbytes < 0 or 0 < nbytes <= MARGIN:
            raise InvalidInputError(f"a device-memory budget of {nbytes / GIB:.2f} GiB: more than "
                                    f"{MARGIN / GIB:.1f} GiB (the context's margin), or 0 for the card's")
        if nbytes > total:
            LOG.warning("a device-memory budget of %.1f GiB on a card of %.1f GiB: the card's", nbytes / GIB,
                        total / GIB)
        with self._plan_lock:
            self.memory_budget = min(nbytes, total) if nbytes else total
            self.ctx.limit = self.memory_budget - MARGIN
            self.plan, self._plan_key = None, None
            # unplanned until the next parameter set's plan: one pass an MSM, nothing streamed, the
            # resident store under its own budget (what a direct call of msm or prove meets)
            self.synchronize()
            self.pass_points, self.resident_budget = 0, self.default_resident_budget
            self.stream_arrays([])
            self.ntt_ops.set_compact_twiddles(False)

    def plan_for(self, params: SrsArrays, r1cs: R1CS | None = None, workers: int = 2,
                 g2: bool = True) -> DevicePlan:
        """The plan for a parameter set (groth16.keys.Parameters) under the
        budget, made and applied on its first call and kept while the same
        set comes; r1cs: A w, B w, C w are evaluated on the device (its
        matrices resident), else on the host; g2: B's G2 MSM runs on the
        device (else its points are not planned for). DeviceMemoryError
        when the budget is too small for the set's domain."""
        key = (id(params), id(r1cs), workers, g2)
        if not self.memory_budget:
            self.set_memory_budget(0)       # outside the lock, which setting the budget takes
        with self._plan_lock:
            if key == self._plan_key:
                return cast(DevicePlan, self.plan)     # the key is set and cleared with the plan: a plan
            workload = Workload.of(params, r1cs, workers, self._table_copies(params), g2)
            chosen = plan(workload, self.memory_budget, matrices=r1cs is not None)
        self.use_plan(params, chosen, r1cs, workers, g2)
        return chosen

    def wants_matrices(self, params: SrsArrays, r1cs: R1CS, workers: int = 2, g2: bool = True) -> bool:
        """Whether A w, B w, C w of r1cs are best evaluated here under the
        budget: the planner's choice with the matrices free to stay on the
        host (they must fit beside the parameters' plan and save more upload
        than the space they take costs). False where no plan holds them; a
        budget too small for any plan is prove_device's error to name. The
        choice is logged once per (parameters, circuit, budget); g2 as plan_for's."""
        if not self.memory_budget:
            self.set_memory_budget(0)
        key = (id(params), id(r1cs), workers, g2, self.memory_budget)
        with self._plan_lock:
            chosen = self._matrices_choice.get(key)
        if chosen is None:
            workload = Workload.of(params, r1cs, workers, self._table_copies(params), g2)
            try:
                chosen = plan(workload, self.memory_budget).matrices
            except DeviceMemoryError:
                chosen = False
            if not chosen:
                LOG.info("device %s: the circuit's matrices (%.2f GiB) are not kept under a budget of %.1f GiB: "
                         "A w, B w, C w on the host", self.info.ordinal, workload.matrix_bytes / GIB,
                         self.memory_budget / GIB)
            with self._plan_lock:
                if len(self._matrices_choice) >= 16:        # a bounded memory of past circuits
                    self._matrices_choice.clear()
                self._matrices_choice[key] = chosen
        return chosen

    def use_plan(self, params: SrsArrays, chosen: DevicePlan, r1cs: R1CS | None = None, workers: int = 2,
                 g2: bool = True) -> None:
        """Run by a plan made elsewhere (a test's, a benchmark's) for this
        parameter set from now on, as plan_for would run by its own."""
        with self._plan_lock:
            self._apply(params, chosen)
            self.plan, self._plan_key = chosen, (id(params), id(r1cs), workers, g2)
        for line in chosen.describe():
            LOG.info("device %s: %s", self.info.ordinal, line)

    def _table_copies(self, params: SrsArrays) -> int:
        """The H points' window-table copies the MSM side would make (0: tables off)."""
        msm = self.msm_ops
        if not msm.tables or len(params.h) < 2:
            return 0
        c, sets = table_plan(len(params.h), params.h.GROUP, msm.table_copies, msm.tuning.table_bits)
        return table_copies(c, sets)

    def _apply(self, params: SrsArrays, chosen: DevicePlan) -> None:
        """The plan's resident budget (what it keeps and its slack), pass size and streamed arrays."""
        self.synchronize()
        self.pass_points = chosen.pass_points
        self.resident_budget = chosen.resident_bytes + max(0, chosen.budget - chosen.planned_bytes)
        self.stream_arrays([getattr(params, name).limbs for name in chosen.streamed], chosen.chunk_bytes or 1 << 30)
        self.ntt_ops.set_compact_twiddles(chosen.compact_twiddles)
        self.ctx.reset_peak()

    def memory_status(self) -> dict[str, int | None]:
        """Bytes: budget, planned (the plan's peak; None before one), allocated
        now, peak (since the plan), resident, streamed (bytes through the
        chunk ring so far), pinned (host bytes page-locked for streaming) and
        dropped (resident bytes given up for want of memory: a plan that
        does not hold)."""
        ring = self.ring
        return {"budget": self.memory_budget, "planned": self.plan.planned_bytes if self.plan else None,
                "allocated": self.ctx.allocated, "peak": self.ctx.peak, "resident": self.resident_bytes(),
                "streamed": ring.uploaded if ring is not None else 0, "pinned": self.pins.pinned_bytes(),
                "dropped": self.dropped}
