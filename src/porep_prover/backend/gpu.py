# SPDX-License-Identifier: Apache-2.0
"""The GPU backend: one CUDA device (cuda.device.Device: its context and
streams, the kernels compiled by NVRTC for the device's own arch and cached
on disk, and its memory, one object: cuda.device_memory.DeviceMemory) with the
kernels' host code composed on it: msm/gpu/msm.py (MSMs, batch sums), msm/gpu/fixed_base.py (fixed-base
products), ntt/gpu.py (NTTs, the H pipeline) and r1cs/gpu.py (A w, B w, C w
on the device). Results equal the CPU backend's bit for bit.

A kernel region's lanes (GpuBackend.region), the typed context the kernels'
host code runs in: GpuLane, one stream of work with its user's MSM options
(the device it launches on: the backend's own, or cuda.second_stream.
SecondStream, the device seen from its second stream; the MSM and R1CS
host code made on that device); GpuRegion, a region's lanes, main on the
kernel region's stream and, in overlap mode, side on the second. H's
transforms queued on main are then left running (their other buffers kept
until join), the witness's upload on main is waited for by side (an event,
no host wait), and join orders main's later work after side's. The
backend's own MSM, H and gather methods run on its lane: its stream, the
MSM side's settings, no region.

Device memory: a device-memory plan (device_plan: a value its caller
makes once under a budget of its own, an engine when it loads a parameter
set) decides what stays resident and what is streamed and bounds all the
region holds; a region given it lays the memory out by it as it starts
(memory.layout, cuda/device_memory.py), a region without one runs
unplanned, at the card's memory. The backend keeps no budget or plan of
its own between regions. Point arrays given to msm / batch_sum stay resident, or are
streamed, and must not be modified in place meanwhile (cuda/resident.py);
work buffers are allocated per call. A partition's uploads are staged in
pinned arenas before its kernel region (prepare; cuda/pinned.py).
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

from ..cuda.arrays import DeviceScalars
from ..cuda.device import Device
from ..cuda.kernel_host import KernelHost
from ..cuda.pinned import PinnedPool
from ..cuda.second_stream import SecondStream
from ..errors import InvalidInputError
from ..field.fr_array import FrArray
from ..memory.budgets import device_budget
from ..memory.device_plan import DeviceModel
from ..memory.layout import layout_of, unplanned
from ..memory.sizes import aligned
from ..msm.gpu import GpuMsm
from ..msm.gpu import GpuFixedBase
from ..msm.gpu.plan import table_copies, table_plan
from ..ntt.flavor import Flavor
from ..ntt.gpu import GpuNtt
from ..r1cs.gpu import GpuR1cs
from .base import AssignmentT, Capabilities, MsmOptions, Prepared, Scalars

LOG = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..config import GpuEnvironment
    from ..cuda import DeviceInfo, _driver
    from ..curve.points import G1Array, G1Point, G2Array, G2Point
    from ..memory.device_plan import DevicePlan
    from ..memory.workload import PointSets, Workload
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
        total += aligned(arr.limbs.nbytes)
    arena = pool.acquire(max(total, 1))
    staged: dict[str, FrArray] = {}
    for f, arr in held.items():
        limbs = arr.limbs
        dst = arena.view[offsets[f]:offsets[f] + limbs.nbytes]
        pool.copy(dst, np.ascontiguousarray(limbs).reshape(-1).view(np.uint8))
        staged[f] = FrArray(dst.view(np.uint64).reshape(limbs.shape))
    return Prepared(dataclasses.replace(assignment, **staged), arena)


class GpuBackend:
    """`Backend` on one CUDA device (device: its cuda.device.Device, whose
    memory is one object, cuda.device_memory.DeviceMemory), the kernels' host code
    composed on it. environment: what the process's environment sets for it
    (config.gpu_environment(), read once per process by backend.gpu_backend,
    which makes one backend per device)."""

    name = "gpu"
    capabilities = Capabilities(evaluates_witness=True, reference=False, stops_between_steps=False)

    def __init__(self, ordinal: int, environment: GpuEnvironment) -> None:
        self.device = device = Device(ordinal, environment)
        if environment.region_stop:
            self.capabilities = dataclasses.replace(GpuBackend.capabilities, stops_between_steps=True)
        self.memory = device.memory
        self.ntt_ops = GpuNtt(device)
        self.msm_ops = GpuMsm(device, tables=environment.msm_tables, table_copies=environment.msm_table_copies,
                              onto=environment.msm_onto)
        self.fixed_base_ops = GpuFixedBase(device)
        self.r1cs_ops = GpuR1cs(device)

    @property
    def info(self) -> DeviceInfo:
        return self.device.info

    @functools.cached_property
    def lane(self) -> GpuLane:
        """What its own Lane methods run on: its stream, the MSM side's settings, no region."""
        return GpuLane(self, self.device, None)

    # ------------------------------------------------------------ memory

    def device_budget(self, nbytes: int = 0) -> int:
        """The budget nbytes asks on this device: memory.budgets.device_budget
        on its card (0, or more than the card: the card's memory)."""
        return device_budget(nbytes, self.memory.card_bytes)

    def device_plan(self, workload: Workload, budget: int, workers: int = 2, g2: bool = True,
                    gathers: bool = False) -> DevicePlan:
        """The plan of workload under budget bytes (see Backend.device_plan),
        by the device model with the H points' window-table copies the MSM
        side wants: a value, nothing is applied. DeviceMemoryError when the
        budget is too small for the set's domain."""
        return DeviceModel(self.wanted_table_copies(workload)).device_plan(workload, budget, workers, g2, gathers)

    def wanted_table_copies(self, workload: Workload) -> int:
        """The H points' window-table copies the MSM side would make for workload (0: tables off)."""
        h = workload.array("h")
        if not self.msm_ops.tables or h.count < 2:
            return 0
        c, sets = table_plan(h.count, h.group, self.msm_ops.table_copies, self.msm_ops.tuning.table_bits)
        return table_copies(c, sets)

    def release_plan(self) -> None:
        """The memory laid out unplanned (see Backend.release_plan), whatever
        it was set to since the last layout."""
        self._lay_out(None, None, again=True)

    def _lay_out(self, plan: DevicePlan | None, arrays: PointSets | None, again: bool = False) -> None:
        """The device's memory laid out by plan for arrays (unplanned without
        a plan: the card's memory), and the NTT's twiddles as it chose;
        nothing where they are already, unless again (the lock held: a new
        layout re-places what kernels read)."""
        if plan is not None and arrays is None:
            raise InvalidInputError("a kernel region's plan needs the parameter set it was made for (arrays=)")
        layout = unplanned(self.memory.card_bytes) if plan is None else layout_of(plan, cast("PointSets", arrays))
        with self.device.lock:
            if self.memory.lay_out(layout, again):
                self.ntt_ops.set_compact_twiddles(layout.compact_twiddles)
                for line in plan.describe() if plan is not None else ():
                    LOG.info("device %s: %s", self.info.ordinal, line)

    def memory_status(self) -> dict[str, int | None]:
        """Bytes: total and free on the card, and cuda.device_memory.DeviceMemory.status's."""
        free, total = self.device.ctx.mem_info()
        status: dict[str, int | None] = {"total": total, "free": free}
        status.update(self.memory.status())
        return status

    def host_arenas(self) -> PinnedPool:
        return self.memory.pinned

    def release_points(self, points: G1Array | G2Array) -> None:
        self.memory.resident.release_points(points)

    def release_resident(self) -> None:
        self.memory.resident.release_resident()

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

    def upload_scalars(self, values: FrArray) -> DeviceScalars:
        return self.lane.upload_scalars(values)

    def release_scalars(self, values: Scalars) -> None:
        self.lane.release_scalars(values)

    def prepare(self, assignment: AssignmentT, ahead: bool = False) -> Prepared[AssignmentT]:
        """Host work for a partition's kernel region, done outside the device's lock:
        its uploaded arrays copied into page-locked memory, unless they are in
        an arena already (host_arenas') (give it back with release_prepared
        once the region is over). ahead: also copy them to the
        device now, on the copy stream, while another worker's kernels run (upload
        then hands these copies over; the caller's plan says whether it leaves room
        for them, DevicePlan.ahead); an array that does not fit is left to the
        region. The copies are on the device when prepare returns."""
        raw = [arr.limbs.reshape(-1).view(np.uint8) for arr in assignment.arrays().values()]
        if all(PinnedPool.contains(r) for r in raw):       # laid out in an arena already (synthesize's)
            prepared: Prepared[AssignmentT] = Prepared(assignment)
        else:
            prepared = prepare(self.memory.pinned, assignment)
        if ahead:
            try:
                for arr in prepared.assignment.arrays().values():
                    key = self.memory.copy_ahead(arr.limbs.reshape(-1).view(np.uint8), self.device.copy_stream)
                    if key is not None:
                        prepared.ahead.append(key)
                self.device.copy_stream.synchronize()
            except BaseException:
                self.release_prepared(prepared)
                raise
        return prepared

    def release_prepared(self, prepared: Prepared[AssignmentT]) -> None:
        """The arena back to the pool; the copies made ahead that the region did not take, freed."""
        keys, prepared.ahead = prepared.ahead, []
        self.memory.drop_ahead(keys, self.device.copy_stream)
        if prepared.arena is not None:
            self.device.stream.synchronize()
            self.memory.pinned.release(prepared.arena)
            prepared.arena = None

    def msm(self, points: G1Array | G2Array, scalars: Scalars, threads: int
            ) -> tuple[G1Point | G2Point, dict[str, int]]:
        return self.lane.msm(points, scalars, threads)

    def msm_many(self, parts: Sequence[tuple[G1Array | G2Array, Scalars]], threads: int) -> G1Point | G2Point:
        return self.lane.msm_many(parts, threads)

    def msm_shared(self, sets: Sequence[tuple[G1Array | G2Array, NDArray[np.uint32] | None]],
                   scalars: Scalars, threads: int) -> list[G1Point | G2Point]:
        return self.lane.msm_shared(sets, scalars, threads)

    def region(self, plan: DevicePlan | None = None, arrays: PointSets | None = None,
               options: MsmOptions | None = None, overlap: bool = False
               ) -> contextlib.AbstractContextManager[GpuRegion]:
        """A kernel region's lanes (GpuRegion), the device's memory laid out
        by plan for arrays (the parameter set it was made for; no plan:
        unplanned) as the region starts: with overlap, H's transforms on the
        kernel region's stream and the MSMs that do not depend on H on the
        second, joined when the block ends."""
        self._lay_out(plan, arrays)
        return _region(self, options, overlap)

    def batch_sum(self, points: G1Array | G2Array, threads: int) -> G1Point | G2Point:
        return self.msm_ops.batch_sum(points)

    def fixed_base(self, base: G1Array | G2Array, scalars: FrArray, threads: int) -> G1Array | G2Array:
        return self.fixed_base_ops.fixed_base(base, scalars)

    def close(self) -> None:
        """Free everything this backend holds on the device."""
        self.release_resident()
        with self.device.lock:
            self.ntt_ops.close()
            self.fixed_base_ops.close()
        self.device.close()


# ------------------------------------------------------------ a kernel region's lanes


class GpuLane:
    """One stream of a GpuBackend's kernel region (backend.base.Lane).

    backend: the GpuBackend (H's transforms, the witness's upload); device:
    what this lane's kernels launch on and take memory from (the backend's
    Device, or a SecondStream of it); options: its MSMs' options (None: the MSM side's
    own settings); region: the GpuRegion it belongs to (None: the backend's
    own lane, outside any region)."""

    def __init__(self, backend: GpuBackend, device: KernelHost, options: MsmOptions | None,
                 region: GpuRegion | None = None) -> None:
        self.backend, self.device, self.options, self.region = backend, device, options, region
        # on another stream, the MSM and R1CS host code made on it; on the backend's, the backend's own (read
        # at each call: what the backend has then)
        self._ops = None if device is backend.device else (backend.msm_ops.on(device), GpuR1cs(device))

    @property
    def msm_ops(self) -> GpuMsm:
        return self.backend.msm_ops if self._ops is None else self._ops[0]

    @property
    def r1cs_ops(self) -> GpuR1cs:
        return self.backend.r1cs_ops if self._ops is None else self._ops[1]

    # ------------------------------------------------------------ MSMs

    def msm(self, points: G1Array | G2Array, scalars: Scalars, threads: int
            ) -> tuple[G1Point | G2Point, dict[str, int]]:
        return self.msm_ops.msm(points, scalars, self.options)

    def msm_many(self, parts: Sequence[tuple[G1Array | G2Array, Scalars]], threads: int) -> G1Point | G2Point:
        """sum of msm(points, scalars) over parts (each its own resident array)."""
        total: G1Point | G2Point | None = None
        for points, scalars in parts:
            got, _ = self.msm(points, scalars, threads)
            total = got if total is None else total + got
        if total is None:
            raise InvalidInputError("msm_many: no parts")
        return total

    def msm_shared(self, sets: Sequence[tuple[G1Array | G2Array, NDArray[np.uint32] | None]],
                   scalars: Scalars, threads: int) -> list[G1Point | G2Point]:
        """GpuMsm.msm_shared: one sort of the scalars for every (points, rows)
        of sets; where the arrays cannot be resident at once, each MSM apart
        (an array with rows takes its scalars scattered to its rows first)."""
        got = self.msm_ops.msm_shared(sets, scalars)
        if got is not None:
            return got
        out: list[G1Point | G2Point] = []
        on_device = scalars                # the scatter reads them on the device: uploaded once
        if not isinstance(scalars, DeviceScalars) and any(rows is not None for _, rows in sets):
            on_device = DeviceScalars(self.device.memory, self.device.memory.upload(scalars.limbs), len(scalars))
        try:
            for points, rows in sets:
                if rows is None:
                    out.append(self.msm(points, scalars, threads)[0])
                    continue
                # with rows, on_device is on the device: scalars were, or were uploaded above
                put = self.r1cs_ops.put(cast(DeviceScalars, on_device), rows, len(points))
                try:
                    out.append(self.msm(points, put, threads)[0])
                finally:
                    put.close()
        finally:
            if on_device is not scalars:
                cast(DeviceScalars, on_device).close()      # the copy uploaded above
        return out

    def take(self, values: Scalars, index: NDArray[np.uint32]) -> DeviceScalars:
        """values[index] gathered on the device (values: the witness's device
        copy, h_and_witness's; index: uint32 rows of values, resident once
        per array, e.g. R1CS.query_index(q, np.uint32)); owned."""
        if not isinstance(values, DeviceScalars):
            raise InvalidInputError("take on a GPU reads the witness's device copy (h_and_witness's)")
        return self.r1cs_ops.take(values, index)

    def upload_scalars(self, values: FrArray) -> DeviceScalars:
        """values' device copy, uploaded on this lane's stream (the copy made
        ahead where prepare made one); owned."""
        return DeviceScalars(self.device.memory, self.device.memory.upload(values.limbs), len(values))

    def release_scalars(self, values: Scalars) -> None:
        if isinstance(values, DeviceScalars):     # h_scalars' of a domain of 1 are on the host
            values.close()

    # ------------------------------------------------------------ H (on the backend's stream)

    def h_scalars(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN
                  ) -> FrArray | DeviceScalars:
        """h_poly's result left on the device (a domain of 1's on the host);
        in an overlap region its transforms are left running."""
        return self.backend.ntt_ops.h_scalars(a, b, c, Flavor.of(flavor), self._held())

    def h_and_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN,
                      check: bool = True) -> tuple[DeviceScalars, DeviceScalars]:
        """(H, the witness's device copy) with A w, B w, C w evaluated on the
        device (the circuit's matrices resident, only the witness uploaded);
        check raises UnsatisfiedError naming the first failing constraint.
        Bellman's layout. In an overlap region the transforms are left
        running and the side lane waits for the witness's upload."""
        backend, n = self.backend, r1cs.domain_size
        if n < 2:
            raise InvalidInputError("h_and_witness needs a domain of at least 2")
        r1cs.check_witness(witness)
        w = DeviceScalars(backend.memory, backend.memory.upload(witness.limbs), len(witness))
        if self.region is not None:
            self.region.after_main()
        try:
            h = backend.ntt_ops.h_owned(backend.r1cs_ops.evaluate(r1cs, w, n, check), n, Flavor.of(flavor),
                                        self._held())
        except BaseException:
            w.close()
            raise
        return h, w

    def _held(self) -> list[_driver.DeviceBuffer] | None:
        """Where H's other buffers wait for the region's join (None: freed as H ends)."""
        return self.region.held if self.region is not None and self.region.side is not None else None


class GpuRegion:
    """A kernel region's lanes on a GpuBackend (backend.base.Region): main on
    the backend's stream; with overlap, side on its second stream, made
    to wait for what main has queued so far (the region's uploads)."""

    def __init__(self, backend: GpuBackend, options: MsmOptions | None, overlap: bool) -> None:
        self.backend = backend
        self.held: list[_driver.DeviceBuffer] = []      # H's other buffers, freed by join
        self.main = GpuLane(backend, backend.device, options, self)
        self.second = SecondStream(backend.device) if overlap else None
        self.side = GpuLane(backend, self.second, options, self) if self.second is not None else None
        self.after_main()

    def after_main(self) -> None:
        """Work queued on the side lane from now on waits for what main has queued so far."""
        if self.second is not None:
            self.second.stream.wait(self._event(self.backend.device.stream))

    def _event(self, stream: _driver.Stream) -> _driver.Event:
        ev = self.backend.device.drv.Event(self.backend.device.ctx)
        ev.record(stream)
        return ev

    def join(self) -> None:
        """Main waits for side (the third stream is joined into the second
        by each MSM's accumulation); H's other buffers and those the second
        stream kept (SideBuffers.free_later) freed (DeviceMemory.free waits for
        the device: the transforms have ended). Joining again is harmless."""
        if self.second is None:
            return
        self.backend.device.stream.wait(self._event(self.second.stream))
        held, self.held = self.held, []
        self.backend.memory.free(*held)
        self.second.memory.free_later()


@contextlib.contextmanager
def _region(backend: GpuBackend, options: MsmOptions | None, overlap: bool) -> Iterator[GpuRegion]:
    """GpuRegion over backend, joined when the block ends, whichever way."""
    region = GpuRegion(backend, options, overlap)
    try:
        yield region
    finally:
        region.join()
    # the region's work is done (its sums were read back): its waits for chunks are timed without a stall
    backend.memory.copy_wait_seen_ms = backend.memory.resident.copy_wait_ms()
