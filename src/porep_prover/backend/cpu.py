# SPDX-License-Identifier: Apache-2.0
"""The CPU backend: native C kernels through Cython, run without the GIL."""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

from ..config import resolve_threads, simd_wanted
from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import InvalidInputError, LengthMismatchError, NativeMemoryError
from ..field.fr_array import FrArray
from ..msm import _cpu as msm_cpu
from ..ntt import _cpu as ntt_cpu
from ..ntt.flavor import Flavor
from .base import NO_ROW, AssignmentT, Capabilities, MsmOptions, OneLane, Prepared, Scalars
from .stop import check_native, raise_if_stopped, stop_array

if TYPE_CHECKING:
    from ..memory.device_plan import DevicePlan
    from ..memory.workload import PointSets, Workload
    from ..r1cs.system import R1CS


def _host(scalars: Scalars) -> FrArray:
    """Scalars as this backend has them: FrArrays (its h_scalars, h_and_witness
    and take make no others; Backend's signatures name every backend's kind)."""
    return cast(FrArray, scalars)


def _identity(points: G1Array | G2Array) -> G1Point | G2Point:
    """The point at infinity of points' group, as its one-point class (POINT:
    G1Point or G2Point; curve.points types POINT as their common base)."""
    return cast("G1Point | G2Point", type(points).POINT.identity())


JOIN_ROWS = 1 << 19         # rows a slice of _joined's copy (48 MiB of G1 points): the stop flag is read between


def _joined(arrays: list[NDArray[np.uint64]]) -> NDArray[np.uint64]:
    """The arrays' rows end to end (np.concatenate's result), copied a slice
    at a time: JobCancelledError between slices once the calling thread's
    stop flag is set (the copies of a large MSM's inputs take a second)."""
    out = np.empty((sum(len(a) for a in arrays), arrays[0].shape[1]), arrays[0].dtype)
    at = 0
    for a in arrays:
        for lo in range(0, len(a), JOIN_ROWS):
            raise_if_stopped("an MSM's inputs")
            part = a[lo:lo + JOIN_ROWS]
            out[at:at + len(part)] = part
            at += len(part)
    return out


def _check(rc: int, what: str) -> None:
    """NativeMemoryError for a native code that is not 0; JobCancelledError
    for STOPPED (the stop flag of the calling thread's scope was set)."""
    if check_native(rc, what):
        return
    if rc == -1:
        raise NativeMemoryError(f"{what}: out of memory")
    if rc:
        raise NativeMemoryError(f"{what}: native error {rc}")


class CpuBackend:
    """Reference implementation of `Backend` and the default one.

    MSMs and NTTs use AVX-512 IFMA where the CPU has it (see `simd`), with identical results.
    Every threads argument goes through config.resolve_threads (None: the
    default; outside 1..MAX_THREADS: InvalidInputError) before native code.
    What a device does from its own memory is done here as the host does it:
    scalars are FrArrays, take a gather, msm_shared one MSM per set, nothing
    to stage, resident or release.
    """

    name = "cpu"
    capabilities = Capabilities(evaluates_witness=False, reference=True)

    def __init__(self) -> None:
        self.simd(simd_wanted())

    @staticmethod
    def simd(enable: bool | None = None) -> bool:
        """Query, or turn on/off, the AVX-512 IFMA MSM and NTT paths; returns their state."""
        if enable is None:
            return msm_cpu.simd_enabled()
        ntt_cpu.set_simd(enable)
        return msm_cpu.set_simd(enable)

    def msm(self, points: G1Array | G2Array, scalars: Scalars, threads: int
            ) -> tuple[G1Point | G2Point, dict[str, int]]:
        out = _identity(points)
        rc, stats = msm_cpu.msm(points.GROUP, points.limbs, _host(scalars).limbs, out.limbs, resolve_threads(threads),
                                stop_array())
        _check(rc, f"{points.NAME} MSM of {len(points)}")
        return out, stats

    def msm_many(self, parts: Sequence[tuple[G1Array | G2Array, Scalars]], threads: int) -> G1Point | G2Point:
        """sum of msm(points, scalars) over parts: one MSM over the concatenation
        (one plan, larger windows)."""
        points = type(parts[0][0])(_joined([p.limbs for p, _ in parts]))
        return self.msm(points, FrArray(_joined([_host(s).limbs for _, s in parts])), threads)[0]

    def msm_naive(self, points: G1Array | G2Array, scalars: FrArray) -> G1Point | G2Point:
        out = _identity(points)
        msm_cpu.msm_naive(points.GROUP, points.limbs, scalars.limbs, out.limbs)
        return out

    def batch_sum(self, points: G1Array | G2Array, threads: int) -> G1Point | G2Point:
        out = _identity(points)
        _check(msm_cpu.batch_sum(points.GROUP, points.limbs, out.limbs, resolve_threads(threads)), f"{points.NAME} sum")
        return out

    def ntt(self, values: FrArray, inverse: bool, coset: bool, threads: int) -> FrArray:
        out = values.copy()
        if len(out):
            _check(ntt_cpu.ntt(out.limbs, len(out).bit_length() - 1, inverse, coset, resolve_threads(threads)), "NTT")
        return out

    def h_poly(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN) -> FrArray:
        log_n = len(a).bit_length() - 1
        snarkjs = Flavor.of(flavor) is Flavor.SNARKJS
        _check(ntt_cpu.h_poly(a.limbs, b.limbs, c.limbs, log_n, snarkjs, resolve_threads(threads), stop_array()),
               "H polynomial")
        return FrArray(a.limbs if snarkjs else a.limbs[: len(a) - 1])

    def h_scalars(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN) -> FrArray:
        return self.h_poly(a, b, c, threads, flavor)

    def h_and_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN,
                      check: bool = True) -> tuple[FrArray, FrArray]:
        """(h_scalars of A w, B w, C w evaluated here, as synthesis does on the
        host; the witness itself, standing for a device's copy of it)."""
        r1cs.check_witness(witness)
        n, m, k = r1cs.domain_size, r1cs.num_constraints, r1cs.num_inputs
        a, b, c = r1cs.evaluate(witness, threads, length=n)
        if check:
            r1cs.check(witness, threads, abc=(a, b, c))
        a.limbs[m:m + k] = witness.limbs[:k]       # bellman's input constraints
        return self.h_scalars(a, b, c, threads, flavor), witness

    def take(self, values: Scalars, index: NDArray[np.uint32]) -> FrArray:
        if not isinstance(index, np.ndarray) or index.dtype != np.uint32 or index.ndim != 1:
            raise InvalidInputError(f"take: the index is a 1-D uint32 array, not {type(index).__name__} "
                                    f"{np.asarray(index).dtype} of {np.ndim(index)} dims")
        past = np.flatnonzero(index >= len(values))
        if len(past):
            raise InvalidInputError(f"take: index[{int(past[0])}] is past the {len(values)} values")
        return FrArray(np.take(_host(values).limbs, index, axis=0))

    def msm_shared(self, sets: Sequence[tuple[G1Array | G2Array, NDArray[np.uint32] | None]], scalars: Scalars,
                   threads: int) -> list[G1Point | G2Point]:
        out: list[G1Point | G2Point] = []
        for points, rows in sets:
            if rows is None:
                if len(points) != len(scalars):
                    raise LengthMismatchError(f"msm_shared: {len(points)} points but {len(scalars)} scalars")
                out.append(self.msm(points, scalars, threads)[0])
                continue
            if not isinstance(rows, np.ndarray) or rows.dtype != np.uint32 or rows.shape != (len(scalars),):
                raise InvalidInputError(f"msm_shared: rows is a uint32 array of {len(scalars)}")
            keep = rows != NO_ROW
            if keep.any() and int(rows[keep].max()) >= len(points):
                raise InvalidInputError(f"msm_shared: a row past the {len(points)} points")
            out.append(self.msm(points[rows[keep]], FrArray(_host(scalars).limbs[keep]), threads)[0])
        return out

    def upload_scalars(self, values: FrArray) -> FrArray:
        return values              # the host's: read where they are

    def release_scalars(self, values: Scalars) -> None:
        pass                       # host arrays: collected with their last reference

    def prepare(self, assignment: AssignmentT, ahead: bool = False) -> Prepared[AssignmentT]:
        return Prepared(assignment)

    def release_prepared(self, prepared: Prepared[AssignmentT]) -> None:
        pass

    def release_points(self, points: G1Array | G2Array) -> None:
        pass

    def release_resident(self) -> None:
        pass

    def device_budget(self, nbytes: int = 0) -> None:
        return None                # the host's memory is the engine's (memory.budgets, engine/memory.py)

    def device_plan(self, workload: Workload, budget: int, workers: int = 2, g2: bool = True,
                    gathers: bool = False) -> None:
        return None                # nothing to place: every array is where the host has it

    def release_plan(self) -> None:
        pass

    def host_arenas(self) -> None:
        return None                # the host's arrays are where its kernels read them

    def memory_status(self) -> None:
        return None

    def region(self, plan: DevicePlan | None = None, arrays: PointSets | None = None,
               options: MsmOptions | None = None, overlap: bool = False) -> contextlib.nullcontext[OneLane]:
        # one stream of work, and no window tables on the host: no option applies
        return contextlib.nullcontext(OneLane(self))

    def fixed_base(self, base: G1Array | G2Array, scalars: FrArray, threads: int) -> G1Array | G2Array:
        out = type(base).zeros(len(scalars)) if isinstance(base, (G1Array, G2Array)) else None
        _check(msm_cpu.fixed_base(base.GROUP, base.limbs, scalars.limbs, out.limbs, resolve_threads(threads)),
               "fixed-base products")
        return out
