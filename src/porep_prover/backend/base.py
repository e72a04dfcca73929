# SPDX-License-Identifier: Apache-2.0
"""The interface every compute backend implements, and the names its calls take.

Every backend has every method of `Backend`: what one cannot do faster than
the host it does as the host would (CpuBackend: take is a gather, msm_shared
one MSM per set, prepare stages nothing, h_and_witness evaluates on the
host). What differs between backends and changes what a caller does is
declared in `Capabilities`, never found out by looking for methods. Flavor,
the H scalars' flavor, is defined beside the transforms (ntt.flavor).
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Generic, Protocol, TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..field.fr_array import FrArray
from ..ntt.flavor import Flavor

if TYPE_CHECKING:
    from ..cuda.arrays import DeviceScalars
    from ..cuda.pinned import Arena, PinnedPool as ArenaPool
    from ..memory.device_plan import DevicePlan
    from ..memory.workload import PointSets, Workload
    from ..r1cs.system import R1CS

NO_ROW = 0xFFFFFFFF        # a row map's entry for a scalar without a point (msm_shared)

# Scalars a backend's msm reads: an FrArray, or what its h_scalars / h_and_witness / take return (an FrArray
# on the host, DeviceScalars on a GPU). Each backend reads its own kind; the protocol names their union.
Scalars: TypeAlias = "FrArray | DeviceScalars"


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What a backend declares about itself.

    evaluates_witness: A w, B w and C w are best left to the backend (its copy
        of the circuit's matrices resident, only the witness sent): synthesis
        then hands it a WitnessAssignment instead of evaluating them.
    reference: its sums are the reference others are checked against (the
        CPU's); a failed proof made by any other backend is made again here
        to tell a device fault from a bad key.
    stops_between_steps: a kernel region on it ends early, between its
        steps, once its job's stop flag is set (backend.stop); the host's
        kernels read the flag within theirs too. A device's region runs to
        its end unless POREP_PROVER_GPU_REGION_STOP=1 (unmeasured on a GPU)."""
    evaluates_witness: bool = False
    reference: bool = False
    stops_between_steps: bool = True


@dataclasses.dataclass(frozen=True)
class MsmOptions:
    """MSM settings of one user of a backend (an engine), given to its kernel
    regions' lanes (Backend.region) rather than set on the backend every
    user shares.

    tables: window tables for resident points (GPU: shifted copies kept beside
        the points where they fit; the CPU has none).
    table_copies: the most shifted copies a table holds (None: one a window)."""
    tables: bool = False
    table_copies: int | None = None


class Assignment(Protocol):
    """An assignment a backend stages (Backend.prepare: groth16.prover's
    HostAssignment, WitnessAssignment): a dataclass whose arrays() are the
    host arrays a device uploads, by field name."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]

    def arrays(self) -> dict[str, FrArray]: ...


AssignmentT = TypeVar("AssignmentT", bound=Assignment)


@dataclasses.dataclass
class Prepared(Generic[AssignmentT]):
    """An assignment staged for a backend's kernel region (Backend.prepare),
    given back with release_prepared once the region is over.

    assignment: what the region takes: a copy in the backend's staging memory,
        or the assignment itself where there is nothing to stage.
    arena: the staging memory (None: none). ahead: the (address, bytes) of
        the arrays also copied to the device ahead of the region."""
    assignment: AssignmentT
    arena: Arena | None = None
    ahead: list[tuple[int, int]] = dataclasses.field(default_factory=list)


class Lane(Protocol):
    """One stream of a kernel region's work on a backend (Backend.region):
    its MSMs (with the region's MSM options), H's scalars and the gathers
    from the witness's copy. A backend is itself a lane (its own options,
    outside any region).

    Scalars: an FrArray, or what h_scalars / h_and_witness / take return
    (device memory on a GPU), which the lanes of the same backend read and
    release_scalars gives back."""

    def msm(self, points: G1Array | G2Array, scalars: Scalars, threads: int
            ) -> tuple[G1Point | G2Point, dict[str, int]]:
        """sum scalars[i] * points[i], and how the scalars were split."""

    def msm_many(self, parts: Sequence[tuple[G1Array | G2Array, Scalars]], threads: int) -> G1Point | G2Point:
        """sum of msm(points, scalars) over parts (all of one group)."""

    def msm_shared(self, sets: Sequence[tuple[G1Array | G2Array, NDArray[np.uint32] | None]], scalars: Scalars,
                   threads: int) -> list[G1Point | G2Point]:
        """[sum_i scalars[i] P_i for each (points, rows) of sets]: rows None,
        P_i = points[i]; else rows (uint32, one a scalar) names P_i =
        points[rows[i]], no term where rows[i] is NO_ROW. A GPU sorts the
        scalars once for every set."""

    def h_scalars(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN
                  ) -> Scalars:
        """h_poly's scalars where this backend's msm reads them (a GPU's: left
        on the device); a, b, c are consumed; give them back with release_scalars."""

    def h_and_witness(self, r1cs: R1CS, witness: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN,
                      check: bool = True) -> tuple[Scalars, Scalars]:
        """(H's scalars, the backend's copy of the witness, which take and
        slices read) with A w, B w, C w evaluated by the backend (bellman's
        layout: the inputs at rows m .. m + k - 1 of A w); check raises
        UnsatisfiedError naming the first failing constraint."""

    def take(self, values: Scalars, index: NDArray[np.uint32]) -> Scalars:
        """values[index] (index: a 1-D uint32 array of rows of values), as scalars of this backend."""

    def upload_scalars(self, values: FrArray) -> Scalars:
        """values where this backend's msm, msm_shared and take read them (a
        GPU's device copy, on the lane's stream; the host's as they are); give
        them back with release_scalars."""

    def release_scalars(self, values: Scalars) -> None:
        """Give back what h_scalars / h_and_witness / take returned (device
        memory; nothing for host arrays). Releasing twice is harmless."""


class Region(Protocol):
    """A kernel region's lanes (Backend.region): main, on the backend's
    stream; side, beside it where the region overlaps and the backend has a
    second stream (a GPU), else None. With side, H's transforms queued on
    main are left running while side's MSMs run; join (also run when the
    region's block ends) orders main's later work, and the reads of every
    result, after side's."""

    @property
    def main(self) -> Lane: ...

    @property
    def side(self) -> Lane | None: ...

    def join(self) -> None: ...


@dataclasses.dataclass
class OneLane:
    """A Region of one lane: a backend with one stream of work (the CPU)
    runs the side lane's work on main, in the order it comes."""
    main: Lane
    side: Lane | None = None

    def join(self) -> None:
        pass                       # one stream: nothing to order


class Backend(Lane, Protocol):
    """Kernels the prover needs. Inputs are validated by the caller
    (backend.api); implementations may assume matching lengths and sizes.

    Its Lane methods run on its own stream with its own MSM settings;
    a kernel region runs on region()'s lanes."""

    name: str
    capabilities: Capabilities

    def batch_sum(self, points: G1Array | G2Array, threads: int) -> G1Point | G2Point:
        """sum points[i]."""

    def ntt(self, values: FrArray, inverse: bool, coset: bool, threads: int) -> FrArray:
        """Transform of a copy of values (length a power of two)."""

    def h_poly(self, a: FrArray, b: FrArray, c: FrArray, threads: int, flavor: Flavor = Flavor.BELLMAN) -> FrArray:
        """The H scalars (see Flavor) from A, B, C evaluated on the size-n domain; a, b, c are consumed."""

    def prepare(self, assignment: AssignmentT, ahead: bool = False) -> Prepared[AssignmentT]:
        """Host work for an assignment's kernel region, done before the device's
        lock is taken (staging copies; ahead: device copies too, where the
        caller's plan leaves room for them: DevicePlan.ahead)."""

    def release_prepared(self, prepared: Prepared[AssignmentT]) -> None:
        """What prepare staged, back once the kernel region is over."""

    def release_points(self, points: G1Array | G2Array) -> None:
        """Drop the backend's resident copy of one point array (none on the host)."""

    def release_resident(self) -> None:
        """Drop every resident copy not in use (none on the host)."""

    def device_budget(self, nbytes: int = 0) -> int | None:
        """The device-memory budget nbytes asks on the backend's device
        (memory.budgets.device_budget: 0, or more than the card, the card's);
        None where the backend plans no device memory (the host).
        InvalidInputError for a budget at or below the margin."""

    def device_plan(self, workload: Workload, budget: int, workers: int = 2, g2: bool = True,
                    gathers: bool = False) -> DevicePlan | None:
        """The device-memory plan (memory.device_plan.DevicePlan) of
        workload under budget bytes (device_budget's), as a value: nothing is
        applied, a region given it runs by it. The workload's matrix_bytes:
        A w, B w, C w may run on the device (the plan's matrices says whether
        they do); workers: the kernel-region workers sharing it; g2: B's G2
        MSM runs on the device (else its points are no part of the plan);
        gathers: the plan may have the queries' scalars gathered on the
        device (DevicePlan.gathers). None on the host."""

    def release_plan(self) -> None:
        """The device's memory laid out as no plan asks, between regions
        (its caller holds the device's interlock): what the last region's
        plan placed (its streamed arrays' pins, its pass size, its resident
        budget, its limit) let go; what a caller whose regions ran by plans
        calls as it stops. Nothing on the host."""

    def host_arenas(self) -> ArenaPool | None:
        """Page-locked host memory a partition's arrays can be laid out in
        (groth16.prover.synthesize's arena), which prepare then stages without
        a copy: a GPU's pool of portable arenas (cuda.pinned.PinnedPool); None
        where there is nothing to stage (the host)."""

    def memory_status(self) -> dict[str, int | None] | None:
        """The device's budget, plan and use in bytes (GpuBackend's keys); None on the host."""

    def region(self, plan: DevicePlan | None = None, arrays: PointSets | None = None,
               options: MsmOptions | None = None, overlap: bool = False
               ) -> contextlib.AbstractContextManager[Region]:
        """A kernel region's lanes (Region): the device's memory laid out by
        plan (device_plan's, for the parameter set arrays; None: unplanned)
        as the region starts, by it alone (memory.layout),
        their MSMs run with options (None: the backend's own settings);
        overlap: a side lane beside main where the backend has a second
        stream. Joined when the block ends."""

    def fixed_base(self, base: G1Array | G2Array, scalars: FrArray, threads: int) -> G1Array | G2Array:
        """scalars[i] * base[0] for every i."""
