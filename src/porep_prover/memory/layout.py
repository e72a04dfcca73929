# SPDX-License-Identifier: Apache-2.0
"""What a device plan asks of a device's memory during a kernel region: a
Layout, handed to the region with the plan (backend.region(plan, ...))
and laid out by the device's memory as the region starts
(cuda.device_memory.DeviceMemory.lay_out). Nothing of it is kept for the
next region to read: each region lays the memory out by its own.

    budget      what the region's plan may hold on the device; the driver
                refuses an allocation past budget less MARGIN, as a card of
                that size would (so a large card stands in for a small one)
    streamed    the limbs arrays streamed through the chunk ring (all others
                resident), in chunks of chunk_bytes (a ring of RING)
    pass_points the most points an MSM pass sorts (0: no limit)
    resident    the bytes resident arrays may take (None: the device's own
                default, what was free at its start less a reserve)
    compact_twiddles  the NTT's twiddles as two small tables a direction
    planned     the plan's peak, for the device's status (None: no plan)

A region without a plan runs unplanned: the card's memory, nothing
streamed, an MSM in one pass.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from .sizes import MARGIN
from .workload import PointSets

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .device_plan import DevicePlan


@dataclasses.dataclass(frozen=True, eq=False)
class Layout:
    """How a device's memory is laid out for a kernel region (see the
    module). Two layouts are equal when they stream the same arrays (by
    identity) and agree on every figure."""
    budget: int
    streamed: tuple[NDArray[np.uint64], ...] = ()
    chunk_bytes: int = 0
    pass_points: int = 0
    resident: int | None = None
    compact_twiddles: bool = False
    planned: int | None = None

    @property
    def limit(self) -> int:
        """The bytes the driver lets the process allocate: the budget less MARGIN."""
        return self.budget - MARGIN

    @property
    def key(self) -> tuple[object, ...]:
        return (self.budget, tuple(id(a) for a in self.streamed), self.chunk_bytes, self.pass_points, self.resident,
                self.compact_twiddles, self.planned)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def layout_of(plan: DevicePlan, params: PointSets) -> Layout:
    """The layout plan gives params' arrays (the set it was made for): what
    it streams, its chunks and passes, and for the resident arrays what it
    keeps resident and the slack the budget leaves beside its peak."""
    resident = plan.resident_bytes + max(0, plan.budget - plan.planned_bytes)
    return Layout(plan.budget, tuple(getattr(params, name).limbs for name in plan.streamed), plan.chunk_bytes,
                  plan.pass_points, resident, plan.compact_twiddles, plan.planned_bytes)


def unplanned(card_bytes: int) -> Layout:
    """The layout of a region without a plan on a card of card_bytes: the
    card's memory, nothing streamed, an MSM in one pass, the resident
    arrays under the device's own budget."""
    return Layout(card_bytes)
