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
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast, overload

import numpy as np
from numpy.typing import NDArray

from ..cuda.arrays import DeviceScalars
from ..cuda.device import Device, host_key
from ..cuda.pinned import ALIGN, PinnedPool
from ..cuda.second_stream import SecondStream
from ..errors import InvalidInputError
from ..field.fr_array import FrArray
from ..msm.gpu import GpuMsm
from ..msm.gpu import GpuFixedBase
from ..ntt.flavor import Flavor
from ..ntt.gpu import GpuNtt
from ..r1cs.gpu import GpuR1cs
from .base import AssignmentT, Capabilities, MsmOptions, Prepared, Scalars
from .gpu_memory import PlannedMemory

if TYPE_CHECKING:
    from ..config import GpuEnvironment
    from ..cuda import _driver
    from ..curve.points import G1Array, G1Point, G2Array, G2Point
    from ..r1cs.system import R1CS

# what GpuBackend's MSM methods run on: the backend, its options view and its overlap block's value (GpuOptionsView
# and GpuBeside take them over as their own), each with msm_ops, msm_options, r1cs_ops, upload and free
MsmSide: TypeAlias = "GpuBackend | GpuOptionsView | GpuBeside"


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
    msm_options: MsmOptions | None = None    # None: the MSM side's own settings (GpuMsm.tables ...)

    def __init__(self, ordinal: int, environment: GpuEnvironment) -> None:
        super().__init__(ordinal, environment)
        self.ntt_ops = GpuNtt(self)
        self.msm_ops = GpuMsm(self, tables=environment.msm_tables, table_copies=environment.msm_table_copies)
        self.fixed_base_ops = GpuFixedBase(self)
        self.r1cs_ops = GpuR1cs(self)

    # ------------------------------------------------------------ Backend

    def ntt(self, values: FrArray, inverse: bool, coset: bool, threads: int) -> FrArray:
        return self.ntt_ops.ntt(values, inverse, coset)

    def h_poly(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN) -> FrArray:
        return self.ntt_ops.h_poly(a, b, c, Flavor.of(flavor))

    def h_scalars(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN
                  ) -> FrArray | DeviceScalars:
        """h_poly's result left on the device, for this backend's msm (close it after); a domain of 1's on the host."""
        return self.ntt_ops.h_scalars(a, b, c, Flavor.of(flavor))

    @overload
    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = ..., check: bool = ...,
                       keep_witness: Literal[False] = ...) -> DeviceScalars: ...

    @overload
    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = ..., check: bool = ...,
                       *, keep_witness: Literal[True]) -> tuple[DeviceScalars, DeviceScalars]: ...

    @overload
    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = ..., check: bool = ...,
                       keep_witness: bool = ...) -> DeviceScalars | tuple[DeviceScalars, DeviceScalars]: ...

    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN,
                       check: bool = True, keep_witness: bool = False
                       ) -> DeviceScalars | tuple[DeviceScalars, DeviceScalars]:
        """H for a witness with A w, B w, C w evaluated on the device (the
        circuit's matrices resident, only the witness uploaded); check raises
        UnsatisfiedError naming the first failing constraint. Bellman's layout.
        keep_witness: return (H, the witness's device copy) instead of H, so the
        queries' scalars come from it (its slices, take) without uploads."""
        return self._witness_h(r1cs, witness, Flavor.of(flavor), check, keep_witness)

    def _witness_h(self, r1cs: R1CS, witness: FrArray, flavor: Flavor, check: bool, keep_witness: bool,
                   side: GpuBeside | None = None) -> DeviceScalars | tuple[DeviceScalars, DeviceScalars]:
        """h_from_witness; side (a GpuBeside): the second stream waits for the
        witness's upload, and H's other buffers are left to it (GpuNtt.h_owned's hold)."""
        n = r1cs.domain_size
        if n < 2:
            raise InvalidInputError("h_from_witness needs a domain of at least 2")
        r1cs.check_witness(witness)
        w = DeviceScalars(self, self.upload(witness.limbs), len(witness))
        if side is not None:
            side.after_first_stream()
        try:
            h = self.ntt_ops.h_owned(self.r1cs_ops.evaluate(r1cs, w, n, check), n, flavor,
                                     None if side is None else side.held)
        except BaseException:
            w.close()
            raise
        if keep_witness:
            return h, w
        w.close()
        return h

    def take(self: GpuBackend | GpuBeside, values: Scalars, index: NDArray[np.uint32]) -> DeviceScalars:
        """values[index] gathered on the device (index: uint32 rows of values,
        resident once per array, e.g. R1CS.query_index(q, np.uint32)); owned."""
        # values: the witness's device copy (h_from_witness(keep_witness=True)), what this backend takes from
        return self.r1cs_ops.take(cast(DeviceScalars, values), index)

    def release_scalars(self, values: Scalars) -> None:
        if isinstance(values, DeviceScalars):     # h_scalars' of a domain of 1 are on the host
            values.close()

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

    def msm(self: MsmSide, points: G1Array | G2Array, scalars: Scalars, threads: int
            ) -> tuple[G1Point | G2Point, dict[str, int]]:
        return self.msm_ops.msm(points, scalars, self.msm_options)

    def msm_many(self: MsmSide, parts: Sequence[tuple[G1Array | G2Array, Scalars]], threads: int
                 ) -> G1Point | G2Point:
        """sum of msm(points, scalars) over parts (each its own resident array)."""
        total: G1Point | G2Point | None = None
        for points, scalars in parts:
            got, _ = self.msm(points, scalars, threads)
            total = got if total is None else total + got
        return cast("G1Point | G2Point", total)     # a sum: parts is never empty (the prover's L and H)

    def msm_shared(self: MsmSide, sets: Sequence[tuple[G1Array | G2Array, NDArray[np.uint32] | None]],
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
            on_device = DeviceScalars(self, self.upload(scalars.limbs), len(scalars))
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

    def with_options(self, options: MsmOptions) -> GpuOptionsView:
        return GpuOptionsView(self, options)

    @contextlib.contextmanager
    def beside(self: GpuBackend | GpuOptionsView) -> Iterator[GpuBeside]:
        """A GpuBeside: H's transforms on the kernel region's stream, the MSMs
        that do not depend on H on the second, joined when the block ends."""
        side = GpuBeside(self)
        try:
            yield side
        finally:
            side.join()

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


class GpuOptionsView:
    """A GpuBackend with MSM options of its own (with_options): everything else,
    with_options too, is the backend's (device, lock, resident points, pools);
    the methods that run GpuMsm.msm run with the view as self."""

    msm, msm_many, msm_shared, beside = GpuBackend.msm, GpuBackend.msm_many, GpuBackend.msm_shared, GpuBackend.beside

    def __init__(self, gpu: GpuBackend, options: MsmOptions) -> None:
        self.gpu, self.msm_options = gpu, options

    def __getattr__(self, name: str) -> Any:      # the backend's attribute, whichever it is (its type is the name's)
        return getattr(self.gpu, name)


class GpuBeside:
    """The prover's overlap mode on a GpuBackend (GpuBackend.beside): H's
    transforms queued on the kernel region's stream and left running
    (h_scalars, h_from_witness), while msm, msm_many, msm_shared and take
    run on the device's second stream (cuda.second_stream.SecondStream),
    the sort's fill of each beside it on a third. join (at the block's end)
    makes the first stream wait for the second (an event) and frees H's
    other buffers, which the transforms read until they end: after it, H's
    MSM and the reads of every result are ordered after both.

    backend: the GpuBackend or its options view (whose MSM options apply)."""

    msm, msm_many, msm_shared, take = GpuBackend.msm, GpuBackend.msm_many, GpuBackend.msm_shared, GpuBackend.take
    held: list[_driver.DeviceBuffer]          # H's other buffers, freed by join
    msm_ops: GpuMsm

    def __init__(self, backend: GpuBackend | GpuOptionsView) -> None:
        self.backend, self.held = backend, []
        self.device = SecondStream(backend)
        self.msm_options = backend.msm_options
        self.msm_ops = backend.msm_ops.on(self.device)
        self.r1cs_ops = GpuR1cs(self.device)
        self.upload, self.free = self.device.upload, self.device.free
        self.after_first_stream()          # what the region queued before (its uploads) comes first

    def after_first_stream(self) -> None:
        """Work queued on the second stream from now on waits for what the first has queued so far."""
        self.device.stream.wait(self._event(self.backend.stream))

    def _event(self, stream: _driver.Stream) -> _driver.Event:
        ev = self.backend.drv.Event(self.backend.ctx)
        ev.record(stream)
        return ev

    def h_scalars(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN
                  ) -> FrArray | DeviceScalars:
        """GpuBackend.h_scalars, its transforms left running."""
        return self.backend.ntt_ops.h_scalars(a, b, c, Flavor.of(flavor), self.held)

    @overload
    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = ..., check: bool = ...,
                       keep_witness: Literal[False] = ...) -> DeviceScalars: ...

    @overload
    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = ..., check: bool = ...,
                       *, keep_witness: Literal[True]) -> tuple[DeviceScalars, DeviceScalars]: ...

    @overload
    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = ..., check: bool = ...,
                       keep_witness: bool = ...) -> DeviceScalars | tuple[DeviceScalars, DeviceScalars]: ...

    def h_from_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN,
                       check: bool = True, keep_witness: bool = False
                       ) -> DeviceScalars | tuple[DeviceScalars, DeviceScalars]:
        """GpuBackend.h_from_witness, its transforms left running; the witness's
        copy is read on the second stream after its upload."""
        return self.backend._witness_h(r1cs, witness, Flavor.of(flavor), check, keep_witness, side=self)

    def join(self) -> None:
        """The first stream waits for the second (the third is joined into
        the second by each MSM's accumulation); H's other buffers and those
        the second stream kept (SecondStream.free_later) freed (Device.free
        waits for the device: the transforms have ended)."""
        self.backend.stream.wait(self._event(self.device.stream))
        held, self.held = self.held, []
        self.backend.free(*held)
        self.device.free_later()
