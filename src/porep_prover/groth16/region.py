# SPDX-License-Identifier: Apache-2.0
"""The kernel region as one list of steps, and the one runner of such lists.

A region (prove_device's, and snarkjs's device part) is: H's scalars, then
MSMs over point arrays (resident or streamed: the device's plan decides,
cuda/ carries it out), each step on the region's main lane or on its side
lane (Backend.region: a GPU's second stream, beside H's transforms), with
gathers from the witness's device copy between them. Where the backend has
no side lane (the CPU, or overlap off) the side's steps run on main, in
the list's order, and every list is correct either way.

Steps name the scalars they read: a host array, or a Ref to what an
earlier step left in a slot (H's scalars "h", the witness's copy "w", a
gather's), from a row on. Each MSM adds its sums into named accumulators
(run_region's result), so C's L + H is one name however it was summed.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING, Protocol, TypeAlias

import numpy as np
from numpy.typing import NDArray

from ..backend.stop import current_stop, raise_if_stopped, stop_scope
from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import InvalidInputError
from ..field.fr_array import FrArray
from ..ntt.flavor import Flavor

if TYPE_CHECKING:
    from ..backend.base import Backend, Lane, MsmOptions, Region, Scalars
    from ..memory.device_plan import DevicePlan
    from ..memory.workload import PointSets
    from ..r1cs.system import R1CS


class Clock(Protocol):
    """Where a step's lap goes (groth16.prover.Stopwatch)."""

    def lap(self, name: str) -> None: ...


class On(enum.Enum):
    """The lane a step runs on: the region's main, or its side (beside H's transforms)."""
    MAIN = "main"
    SIDE = "side"
    HOST = "host"          # the host's backend (a few rows cheaper there than uploaded)


@dataclasses.dataclass(frozen=True)
class Ref:
    """The scalars an earlier step left in slot, from row start on."""
    slot: str
    start: int = 0


Source: TypeAlias = "Ref | FrArray"
PointSet: TypeAlias = "tuple[G1Array | G2Array, NDArray[np.uint32] | None]"


@dataclasses.dataclass(frozen=True)
class HStep:
    """H's scalars into slot "h", always on main: from a, b, c (abc,
    consumed), or from the witness with A w, B w, C w evaluated by the
    backend (r1cs, witness; its device copy into slot "w")."""
    flavor: Flavor
    abc: tuple[FrArray, FrArray, FrArray] | None = None
    r1cs: R1CS | None = None
    witness: FrArray | None = None
    check: bool = True
    lap: str | None = "h_poly"


@dataclasses.dataclass(frozen=True)
class TakeStep:
    """source[index] gathered into slot out (Lane.take)."""
    out: str
    source: Ref
    index: NDArray[np.uint32]
    on: On = On.MAIN
    lap: str | None = None


@dataclasses.dataclass(frozen=True)
class MsmStep:
    """One sort of scalars for every (points, rows) of sets (Lane.msm_shared;
    one set without rows: Lane.msm), set i's sum added into accumulator
    into[i]; release: the scalars' slot given back once it ends (its memory
    before the next step's)."""
    into: tuple[str, ...]
    sets: tuple[PointSet, ...]
    scalars: Source
    on: On = On.MAIN
    release: bool = False
    lap: str | None = None


@dataclasses.dataclass(frozen=True)
class SumStep:
    """sum of the MSMs of parts (points, scalars) added into accumulator into
    (Lane.msm_many: on the CPU one MSM over the concatenation); release: the
    slots its parts read given back once it ends."""
    into: str
    parts: tuple[tuple[G1Array | G2Array, Source], ...]
    on: On = On.MAIN
    release: bool = False
    lap: str | None = None


@dataclasses.dataclass(frozen=True)
class UploadStep:
    """values (a host array) into slot out where the lane's MSMs and gathers
    read them (Lane.upload_scalars: a GPU's device copy)."""
    out: str
    values: FrArray
    on: On = On.MAIN
    lap: str | None = None


Step: TypeAlias = "HStep | TakeStep | UploadStep | MsmStep | SumStep"


def run_region(be: Backend, steps: list[Step], threads: int, clock: Clock, options: MsmOptions | None = None,
               overlap: bool = False, host: Backend | None = None, plan: DevicePlan | None = None,
               arrays: PointSets | None = None) -> dict[str, G1Point | G2Point]:
    """Run steps on be's region (plan: the device's memory plan for arrays,
    the parameter set the steps read; options: its MSMs'; overlap: side
    steps on the side lane where be has one), host steps on host. The first
    main step after side steps joins the lanes first (its reads and its
    memory come after theirs). Every slot is given back when the region
    ends, whichever way. Returns the accumulators. JobCancelledError once
    the calling thread's stop flag (backend.stop) is set, where be stops
    between steps (its capabilities): checked before each step, and by the
    host's kernels within theirs; where it does not, the region runs to its
    end outside the flag's scope, its host steps too."""
    sums: dict[str, G1Point | G2Point] = {}
    flag = current_stop() if be.capabilities.stops_between_steps else None
    with stop_scope(flag), Slots(be) as slots, be.region(plan, arrays, options, overlap) as region:
        beside = False                    # side work queued since the last join
        for step in steps:
            raise_if_stopped("the kernel region")
            on = step.on if not isinstance(step, HStep) else On.MAIN
            if on is On.MAIN and beside and not isinstance(step, HStep):
                region.join()
                beside = False
            lane = _lane(region, on, host)
            _run(step, lane, slots, sums, threads)
            beside |= on is On.SIDE and region.side is not None
            if step.lap:
                clock.lap(step.lap)
    return sums


def _lane(region: Region, on: On, host: Backend | None) -> Lane:
    if on is On.HOST:
        if host is None:
            raise InvalidInputError("a kernel region step on the host needs the host's backend (host=)")
        return host
    return region.side if on is On.SIDE and region.side is not None else region.main


def _run(step: Step, lane: Lane, slots: Slots, sums: dict[str, G1Point | G2Point], threads: int) -> None:
    match step:
        case HStep(abc=(a, b, c)):
            slots.put("h", lane.h_scalars(a, b, c, threads, step.flavor))
        case HStep(r1cs=r1cs, witness=witness) if r1cs is not None and witness is not None:
            h, w = lane.h_and_witness(r1cs, witness, threads, step.flavor, check=step.check)
            slots.put("w", w)
            slots.put("h", h)
        case TakeStep():
            slots.put(step.out, lane.take(slots.get(step.source), step.index))
        case UploadStep():
            slots.put(step.out, lane.upload_scalars(step.values))
        case MsmStep(sets=((points, None),)):
            _add(sums, step.into[0], lane.msm(points, slots.get(step.scalars), threads)[0])
        case MsmStep():
            got = lane.msm_shared(list(step.sets), slots.get(step.scalars), threads)
            for name, each in zip(step.into, got, strict=True):
                _add(sums, name, each)
        case SumStep():
            _add(sums, step.into, lane.msm_many([(p, slots.get(s)) for p, s in step.parts], threads))
        case _:
            raise InvalidInputError(f"a kernel region step without its inputs: {step!r:.200}")
    if isinstance(step, MsmStep) and step.release:
        slots.release_read(step.scalars)
    if isinstance(step, SumStep) and step.release:
        for _, scalars in step.parts:
            slots.release_read(scalars)


def _add(sums: dict[str, G1Point | G2Point], name: str, got: G1Point | G2Point) -> None:
    sums[name] = got if name not in sums else sums[name] + got


class Slots:
    """The scalars a region's steps leave on its backend (H's, the witness's
    copy, a gather's) by name, given back to it (release_scalars) when the
    region ends, whichever way, or one early with release."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.held: dict[str, Scalars] = {}

    def put(self, slot: str, scalars: Scalars) -> None:
        if slot in self.held:
            self.release(slot)
        self.held[slot] = scalars

    def get(self, source: Source) -> Scalars:
        if not isinstance(source, Ref):
            return source
        if source.slot not in self.held:
            raise InvalidInputError(f"a kernel region step reads slot {source.slot!r} before a step fills it")
        held = self.held[source.slot]
        return held[source.start:] if source.start else held

    def release(self, slot: str) -> None:
        self.backend.release_scalars(self.held.pop(slot))

    def release_read(self, source: Source) -> None:
        """The slot source reads given back (nothing for a host array)."""
        if isinstance(source, Ref):
            self.release(source.slot)

    def __enter__(self) -> Slots:
        return self

    def __exit__(self, *exc: object) -> None:
        held, self.held = self.held, {}
        for scalars in held.values():
            self.backend.release_scalars(scalars)
