# SPDX-License-Identifier: Apache-2.0
"""The GPU backend: one CUDA device (cuda.device.Device: its context and
streams, the kernels compiled by NVRTC for the device's own arch and cached
on disk, its memory and resident arrays) with the kernels' host code composed
on it: msm/gpu/msm.py (MSMs, batch sums), msm/gpu/fixed_base.py (fixed-base
products), ntt/gpu.py (NTTs, the H pipeline) and r1cs/gpu.py (A w, B w, C w
on the device). Results equal the CPU backend's bit for bit.

Device memory: everything held is bounded by a budget, and a device-memory
plan decides what stays resident and what is streamed (backend/gpu_memory.py).
Point arrays given to msm / batch_sum stay resident, or are streamed, and
must not be modified in place meanwhile (cuda/resident.py); work buffers
are allocated per call (cuda/device.py). A partition's uploads are
staged in pinned arenas before its kernel region (prepare; cuda/pinned.py).
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..cuda.arrays import DeviceScalars
from ..cuda.device import Device, host_key
from ..cuda.pinned import ALIGN, PinnedPool
from ..field.fr_array import FrArray
from ..msm.gpu import GpuMsm
from ..msm.gpu import GpuFixedBase
from ..ntt.flavor import Flavor
from ..ntt.gpu import GpuNtt
from ..r1cs.gpu import GpuR1cs
from .base import AssignmentT, Capabilities, MsmOptions, Prepared, Scalars
from .gpu_lanes import GpuLane, GpuRegion, gpu_region
from .gpu_memory import PlannedMemory

if TYPE_CHECKING:
    from ..config import GpuEnvironment
    from ..curve.points import G1Array, G1Point, G2Array, G2Point
    from ..r1cs.system import R1CS

def prepare(pool: PinnedPool, assignment: AssignmentT) -> Prepared[AssignmentT]:
    """Prepared with a copy of assignment whose uploaded arrays (each one it
    holds: a, b, c and the scalars of a HostAssignment, or a WitnessAssignment's
    witness alone) live in one pinned arena (Prepared.arena)."""
    held = assignment.arrays()
    offsets: dict[str, int] = {}
    total = 0
    for f, arr in held.items():
        offsets[f] = total
        total += -(-arr.limbs.nbytes // ALIGN) * ALIGN
    arena = pool.acquire(max(total, 1))
    staged: dict[str, FrArray] = {}
    for f, arr in held.items():
        limbs = arr.limbs
        dst = arena.view[offsets[f]:offsets[f] + limbs.nbytes]
        pool.copy(dst, np.ascontiguousarray(limbs).reshape(-1).view(np.uint8))
        staged[f] = FrArray(dst.view(np.uint64).reshape(limbs.shape))
    return Prepared(dataclasses.replace(assignment, **staged), arena)


class GpuBackend(PlannedMemory, Device):
    """`Backend` on one CUDA device. environment: what the process's
    environment sets for it (config.gpu_environment(), read once per process
    by backend.gpu_backend, which makes one backend per device)."""

    name = "gpu"
    capabilities = Capabilities(evaluates_witness=True, reference=False)

    def __init__(self, ordinal: int, environment: GpuEnvironment) -> None:
        super().__init__(ordinal, environment)
        self.ntt_ops = GpuNtt(self)
        self.msm_ops = GpuMsm(self, tables=environment.msm_tables, table_copies=environment.msm_table_copies)
        self.fixed_base_ops = GpuFixedBase(self)
        self.r1cs_ops = GpuR1cs(self)

    @functools.cached_property
    def lane(self) -> GpuLane:
        """What its own Lane methods run on: its stream, the MSM side's settings, no region."""
        return GpuLane(self, self, None)

    # ------------------------------------------------------------ Backend

    def ntt(self, values: FrArray, inverse: bool, coset: bool, threads: int) -> FrArray:
        return self.ntt_ops.ntt(values, inverse, coset)

    def h_poly(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN) -> FrArray:
        return self.ntt_ops.h_poly(a, b, c, Flavor.of(flavor))

    def h_scalars(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN
                  ) -> FrArray | DeviceScalars:
        """h_poly's result left on the device, for this backend's msm (close it after); a domain of 1's on the host."""
        return self.lane.h_scalars(a, b, c, threads, flavor)

    def h_and_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN,
                      check: bool = True) -> tuple[DeviceScalars, DeviceScalars]:
        return self.lane.h_and_witness(r1cs, witness, threads, flavor, check)

    def take(self, values: Scalars, index: NDArray[np.uint32]) -> DeviceScalars:
        return self.lane.take(values, index)

    def release_scalars(self, values: Scalars) -> None:
        self.lane.release_scalars(values)

    def prepare(self, assignment: AssignmentT, ahead: bool = False) -> Prepared[AssignmentT]:
        """Host work for a partition's kernel region, done outside the device's lock:
        its uploaded arrays copied into page-locked memory (give it back with
        release_prepared once the region is over). ahead: also copy them to the
        device now, on the copy stream, while another worker's kernels run (upload
        then hands these copies over); an array that does not fit is left to the
        region. The copies are on the device when prepare returns."""
        prepared = prepare(self.pinned, assignment)
        if ahead and (self.plan is None or self.plan.ahead):    # the plan may leave no room for a copy ahead
            try:
                self._copy_ahead(prepared)
            except BaseException:
                self.release_prepared(prepared)
                raise
        return prepared

    def _copy_ahead(self, prepared: Prepared[AssignmentT]) -> None:
        for arr in prepared.assignment.arrays().values():
            raw = arr.limbs.reshape(-1).view(np.uint8)
            key = host_key(raw)
            buf = self.try_alloc(raw.nbytes)   # never alloc(): evicting resident points could pull them
            if buf is None:                    # from under the other worker's running kernels
                continue
            with self.lock:
                self._ahead[key] = buf
            prepared.ahead.append(key)
            buf.upload(raw, 0, self.copy_stream)
        self.copy_stream.synchronize()

    def release_prepared(self, prepared: Prepared[AssignmentT]) -> None:
        """The arena back to the pool; the copies made ahead that the region did not take, freed."""
        with self.lock:
            unused = [self._ahead.pop(key, None) for key in prepared.ahead]
        prepared.ahead = []
        if any(buf is not None for buf in unused):
            self.copy_stream.synchronize()   # a copy cut short by an error may still be running
            self.free(*unused)
        if prepared.arena is not None:
            self.stream.synchronize()
            self.pinned.release(prepared.arena)
            prepared.arena = None

    def msm(self, points: G1Array | G2Array, scalars: Scalars, threads: int
            ) -> tuple[G1Point | G2Point, dict[str, int]]:
        return self.lane.msm(points, scalars, threads)

    def msm_many(self, parts: Sequence[tuple[G1Array | G2Array, Scalars]], threads: int) -> G1Point | G2Point:
        return self.lane.msm_many(parts, threads)

    def msm_shared(self, sets: Sequence[tuple[G1Array | G2Array, NDArray[np.uint32] | None]],
                   scalars: Scalars, threads: int) -> list[G1Point | G2Point]:
        return self.lane.msm_shared(sets, scalars, threads)

    def region(self, options: MsmOptions | None = None, overlap: bool = False
               ) -> contextlib.AbstractContextManager[GpuRegion]:
        """A kernel region's lanes (gpu_lanes.GpuRegion): with overlap, H's
        transforms on the kernel region's stream and the MSMs that do not
        depend on H on the second, joined when the block ends."""
        return gpu_region(self, options, overlap)

    def batch_sum(self, points: G1Array | G2Array, threads: int) -> G1Point | G2Point:
        return self.msm_ops.batch_sum(points)

    def fixed_base(self, base: G1Array | G2Array, scalars: FrArray, threads: int) -> G1Array | G2Array:
        return self.fixed_base_ops.fixed_base(base, scalars)

    def close(self) -> None:
        """Free everything this backend holds on the device."""
        self.release_resident()
        with self.lock:
            self.ntt_ops.close()
            self.fixed_base_ops.close()
        super().close()
