# SPDX-License-Identifier: Apache-2.0
"""The Groth16 prover, bellman flavour (Groth 2016, https://eprint.iacr.org/2016/260;
notation and conventions of bellman / bellperson).

    a, b, c = A w, B w, C w                        one value per constraint, then
                                                   the inputs appended to a
    H       = (a b - c) / Z  on the coset 7<omega>  (backend.h_poly: 7 NTTs; 6 on the GPU)
    A = alpha + sum_j w_j a_j + r delta            G1
    B = beta  + sum_j w_j b_j + s delta            G2 (and G1 for C)
    C = sum_aux w_j l_j + sum_i H_i h_i + s A + r B_1 - r s delta
      = sum_aux w_j l_j + sum_i H_i h_i + r (sum_j w_j b1_j + beta_1) + s A

with r, s fresh uniform scalars per proof. The a and b sums run over the
variables the density keeps (bellman's density trackers). Every MSM goes to
the backend, which skips zero scalars and batch-adds the ones.

The three stages, which an engine runs on different threads (checked_prover.prove
runs them in a row and checks the proof):

    synthesize    the assignment: a HostAssignment (a, b, c evaluated on the
                  host, every query's scalars gathered) or a WitnessAssignment
                  (the witness alone, for a backend that evaluates a, b, c)
    prove_device  the kernel region (under the device's lock): H, then the
                  MSMs of A, L + H and B_1 (and B_2), as one list of steps
                  over the backend's lanes (groth16.region)
    finish        B_2 (unless the region made it), then A, B, C with r, s
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import random
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

from ..backend import Backend, Flavor
from ..backend.stop import raise_if_stopped
from ..config import resolve_threads
from ..curve.points import G1Point, G2Point
from ..errors import InvalidInputError
from ..field.constants import R
from ..field.fr_array import FrArray
from ..host_memory import copy_in_slices
from ..memory.sizes import SCALAR_BYTES, aligned
from ..r1cs import _r1cs
from .keys import Parameters, VerifyingKey
from .proof import Proof
from .region import HStep, MsmStep, On, Ref, Step, SumStep, TakeStep, UploadStep, run_region
from ..r1cs.system import R1CS

if TYPE_CHECKING:
    from ..backend.base import MsmOptions
    from ..memory.device_plan import DevicePlan


# ------------------------------------------------------------ what the stages hand each other


@dataclasses.dataclass
class HostAssignment:
    """One partition with A w, B w, C w evaluated on the host, for any backend.

    a, b, c: A w, B w, C w padded to the domain (the inputs at rows m .. m + k
    - 1 of a, bellman's input constraints): H's input, consumed by it.
    l_scalars, a_scalars, b_scalars: the MSM scalars of the aux, A and B
    queries (density applied; l_scalars a view of the witness)."""
    a: FrArray
    b: FrArray
    c: FrArray
    l_scalars: FrArray
    a_scalars: FrArray
    b_scalars: FrArray

    def arrays(self) -> dict[str, FrArray]:
        """The host arrays a device uploads, by field name."""
        return {"a": self.a, "b": self.b, "c": self.c, "l_scalars": self.l_scalars, "a_scalars": self.a_scalars,
                "b_scalars": self.b_scalars}

    @property
    def nbytes(self) -> int:
        return sum(v.limbs.nbytes for v in self.arrays().values())


@dataclasses.dataclass
class WitnessAssignment:
    """One partition for a backend that evaluates A w, B w, C w itself
    (Capabilities.evaluates_witness): the circuit's matrices are resident
    there, only the witness crosses, and every query's scalars come from the
    backend's copy of it. check: the backend checks every constraint."""
    r1cs: R1CS
    witness: FrArray
    check: bool = True

    def arrays(self) -> dict[str, FrArray]:
        """The host arrays a device uploads, by field name: the witness."""
        return {"witness": self.witness}

    @property
    def nbytes(self) -> int:
        return self.witness.limbs.nbytes


@dataclasses.dataclass
class AbcWitnessAssignment:
    """One partition with A w, B w, C w evaluated on the host and every
    query's scalars taken by the backend from its copy of the witness (a
    device that keeps no matrices but gathers: the witness crosses instead
    of the queries' scalars, and the host gathers nothing).

    a, b, c: as HostAssignment's (consumed by H); witness: the whole
    assignment; r1cs: its circuit (the queries' maps)."""
    a: FrArray
    b: FrArray
    c: FrArray
    r1cs: R1CS
    witness: FrArray

    def arrays(self) -> dict[str, FrArray]:
        """The host arrays a device uploads, by field name."""
        return {"a": self.a, "b": self.b, "c": self.c, "witness": self.witness}

    @property
    def nbytes(self) -> int:
        return sum(v.limbs.nbytes for v in self.arrays().values())


Assignment = HostAssignment | WitnessAssignment | AbcWitnessAssignment


@dataclasses.dataclass
class MsmSums:
    """What the kernel region computes: the G1 sums of A, L + H and B_1, and
    the G2 sum of B when the region did it too (else finish does).

    A backend's MSMs are typed G1Point | G2Point (a sum is of its points'
    group); the stages cast each sum to the group of the points they sum."""
    a_acc: G1Point
    lh_acc: G1Point
    b1_acc: G1Point
    b2_acc: G2Point | None = None


# ------------------------------------------------------------ the stages


def assignment_layout(params: Parameters, abc_on_device: bool, gathers: bool = False) -> list[tuple[str, int]]:
    """The arrays synthesize lays a partition out in, in order (name, rows):
    with abc_on_device the witness alone; else a, b, c over the domain, the
    witness (L's scalars are its aux rows) and, unless the backend gathers
    them (gathers), A's and B's query scalars."""
    variables = params.vk.num_inputs + len(params.l)
    if abc_on_device:
        return [("witness", variables)]
    n = len(params.h) + 1
    gathered = [] if gathers else [("a_scalars", len(params.a)), ("b_scalars", len(params.b_g1))]
    return [("a", n), ("b", n), ("c", n), ("witness", variables)] + gathered


def assignment_bytes(params: Parameters, abc_on_device: bool, gathers: bool = False) -> int:
    """Bytes of an arena a partition of these parameters is laid out in (synthesize's arena)."""
    return sum(aligned(SCALAR_BYTES * rows) for _, rows in assignment_layout(params, abc_on_device, gathers))


def arena_witness(params: Parameters, abc_on_device: bool, arena: NDArray[np.uint8], gathers: bool = False
                  ) -> FrArray:
    """Where synthesize lays the witness out in arena (a provider may write it
    there itself: synthesize then copies nothing)."""
    return _carve(arena, assignment_layout(params, abc_on_device, gathers))["witness"]


def _carve(arena: NDArray[np.uint8], layout: list[tuple[str, int]]) -> dict[str, FrArray]:
    """FrArrays over consecutive aligned stretches of arena, one for each (name, rows) of layout."""
    out, at = {}, 0
    for name, rows in layout:
        out[name] = FrArray(arena[at:at + SCALAR_BYTES * rows].view(np.uint64).reshape(rows, 4))
        at += aligned(SCALAR_BYTES * rows)
    return out


def synthesize(params: Parameters, r1cs: R1CS, witness: FrArray, threads: int | None = None,
               check: bool = True, abc_on_device: bool = False, arena: NDArray[np.uint8] | None = None,
               gathers: bool = False) -> Assignment:
    """CPU stage: a HostAssignment (the constraint evaluations a, b, c and
    every MSM's scalars); with abc_on_device, a WitnessAssignment (a, b, c,
    the check and the queries' scalars left to the backend); with gathers
    (and not abc_on_device), an AbcWitnessAssignment (a, b, c here, the
    queries' scalars left to the backend). arena: bytes (page-locked, say:
    what a device's upload reads without a copy) of at least
    assignment_bytes(params, abc_on_device, gathers), in which the
    assignment's arrays are laid out, the witness copied there (its caller
    may drop its own) unless it is there already (arena_witness's); else
    they are allocated. Raises WitnessError, UnsatisfiedError (check=True),
    ParamsMismatchError; InvalidInputError for an arena too small;
    JobCancelledError between its steps once the calling thread's stop
    flag (backend.stop) is set."""
    threads = resolve_threads(threads)
    params.check_matches(r1cs)
    n, m, k = r1cs.domain_size, r1cs.num_constraints, r1cs.num_inputs
    r1cs.check_witness(witness)
    slots: dict[str, FrArray] = {}
    if arena is not None:
        need = assignment_bytes(params, abc_on_device, gathers)
        if arena.dtype != np.uint8 or arena.ndim != 1 or len(arena) < need or not arena.flags.c_contiguous:
            raise InvalidInputError(f"synthesize: an arena of {arena.nbytes} bytes ({arena.dtype}), "
                                    f"{need} contiguous bytes needed")
        slots = _carve(arena, assignment_layout(params, abc_on_device, gathers))
        if witness.limbs.ctypes.data != slots["witness"].limbs.ctypes.data:     # not written there already
            _copy_rows(slots["witness"].limbs, witness.limbs, threads)
        witness = slots["witness"]
    if abc_on_device:
        return WitnessAssignment(r1cs, witness, check)
    abc = (slots["a"], slots["b"], slots["c"]) if slots else None
    a, b, c = _evaluate(r1cs, witness, threads, n, abc)
    raise_if_stopped("the synthesis")
    if check:
        r1cs.check(witness, threads, abc=(a, b, c))      # padding rows are 0 * 0 = 0
    a.limbs[m:m + k] = witness.limbs[:k]   # the inputs at rows m .. m + k - 1: bellman's input constraints
    if gathers:
        return AbcWitnessAssignment(a, b, c, r1cs, witness)
    a_scalars = query_scalars(r1cs, witness, "a", threads, slots.get("a_scalars"))
    raise_if_stopped("the synthesis")
    return HostAssignment(a, b, c, l_scalars=witness[k:], a_scalars=a_scalars,
                          b_scalars=query_scalars(r1cs, witness, "b", threads, slots.get("b_scalars")))


def _evaluate(r1cs: R1CS, witness: FrArray, threads: int, n: int, out: tuple[FrArray, FrArray, FrArray] | None
              ) -> tuple[FrArray, FrArray, FrArray]:
    """r1cs.evaluate (A w, B w, C w zero-padded to n rows, into out where
    given: no copies of n-row arrays), the stop flag read before each matrix."""
    got = []
    for matrix, into in zip((r1cs.a, r1cs.b, r1cs.c), out or (None, None, None)):
        raise_if_stopped("the synthesis")
        got.append(matrix.matvec(witness, threads, n, into))
    return got[0], got[1], got[2]


def _copy_rows(dst: NDArray[np.uint64], src: NDArray[np.uint64], threads: int) -> None:
    """dst[:] = src (rows of limbs, dst contiguous) in slices on threads."""
    flat_dst, flat_src = dst.reshape(-1).view(np.uint8), np.ascontiguousarray(src).reshape(-1).view(np.uint8)
    if threads <= 1:
        copy_in_slices(None, flat_dst, flat_src)
        return
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        copy_in_slices(pool, flat_dst, flat_src)


def prove_device(be: Backend, params: Parameters, assignment: Assignment, threads: int,
                 clock: "Stopwatch | None" = None, b_g2: bool = False, host: Backend | None = None,
                 overlap: bool = False, plan: DevicePlan | None = None, options: MsmOptions | None = None) -> MsmSums:
    """The kernel region (what a worker does while holding its device's lock):
    H, then the G1 MSMs of A, L + H and B_1; with b_g2, the G2 MSM of B as
    well (else finish does it): one list of steps (region_steps) run on the
    backend's region (groth16.region). host: the host's backend, where A's
    input rows of a WitnessAssignment (a few hundred points) are summed;
    required with one. overlap: the MSMs that do not depend on H (L, A, B_1,
    B_2) run beside H's transforms where the backend can (a GPU's second
    stream), H's MSM after them; the same sums. plan: the device's memory
    plan for params (Backend.device_plan, made by the caller once: an
    engine when it loads the set), which the region runs by (None: none,
    every array resident and an MSM in one pass). options: the MSMs'
    options (an engine's). InvalidInputError for anything but the two
    assignments."""
    clock = clock or Stopwatch(None)
    if not isinstance(assignment, (HostAssignment, WitnessAssignment, AbcWitnessAssignment)):
        raise InvalidInputError(f"prove_device: a HostAssignment, WitnessAssignment or AbcWitnessAssignment, not "
                                f"{type(assignment).__name__}")
    if isinstance(assignment, (WitnessAssignment, AbcWitnessAssignment)) and host is None:
        raise InvalidInputError(f"prove_device: a {type(assignment).__name__} needs the host's backend (host=)")
    steps = region_steps(params, assignment, b_g2, overlap)
    got = run_region(be, steps, threads, clock, options, overlap, host, plan, params)
    return MsmSums(cast(G1Point, got["a"]), cast(G1Point, got["lh"]), cast(G1Point, got["b1"]),
                   cast("G2Point | None", got.get("b2")))


def finish(be: Backend, params: Parameters, assignment: Assignment, sums: MsmSums,
           threads: int, rng: random.Random | None = None, clock: "Stopwatch | None" = None, *,
           blinding: tuple[int, int] | None = None) -> Proof:
    """After the lock: the B_2 MSM on be (unless the region did it; kept in
    sums, which a failed check compares with the CPU's), then the proof's
    assembly with fresh r, s (or the given ones: see assemble)."""
    clock = clock or Stopwatch(None)
    if sums.b2_acc is None:
        if not isinstance(assignment, HostAssignment):   # the device took B's scalars from its witness: gather here
            b_scalars = query_scalars(assignment.r1cs, assignment.witness, "b", threads)
        else:
            b_scalars = assignment.b_scalars
        b2_acc, _ = be.msm(params.b_g2, b_scalars, threads)
        sums.b2_acc = cast(G2Point, b2_acc)
        clock.lap("msm_g2")
    return assemble(params.vk, sums, rng, clock, blinding=blinding)


# ------------------------------------------------------------ the kernel region's steps


def region_steps(params: Parameters, assignment: Assignment, b_g2: bool, overlap: bool) -> list[Step]:
    """prove_device's region as steps (groth16.region), into the sums a, lh
    (L + H), b1 and b2 (with b_g2); H's step first. Overlapped, the MSMs
    that do not depend on H run on the side lane, beside H's transforms,
    and H's MSM last (after the join); the laps then H's queueing (h_poly)
    and the rest (msm_g1)."""
    side = On.SIDE if overlap else On.MAIN

    def lap(name: str) -> str | None:
        return None if overlap else name

    if isinstance(assignment, HostAssignment):
        steps = _host_steps(params, assignment, b_g2, overlap, side, lap)
    else:
        steps = _witness_steps(params, assignment, b_g2, overlap, side, lap)
    return steps + [MsmStep(("lh",), ((params.h, None),), Ref("h"), lap="msm_g1")] if overlap else steps


def _host_steps(params: Parameters, assignment: HostAssignment, b_g2: bool, overlap: bool, side: On,
                lap: Callable[[str], str | None]) -> list[Step]:
    """From a, b, c: H, then A, L + H as one sum (one MSM on the CPU; H's
    scalars given back after it), B_1 and B_2; overlapped, L alone (H's
    comes last)."""
    steps: list[Step] = [HStep(Flavor.BELLMAN, abc=(assignment.a, assignment.b, assignment.c))]
    steps.append(MsmStep(("a",), ((params.a, None),), assignment.a_scalars, side))
    if overlap:
        steps.append(MsmStep(("lh",), ((params.l, None),), assignment.l_scalars, side))
    else:
        steps.append(SumStep("lh", ((params.l, assignment.l_scalars), (params.h, Ref("h"))), release=True))
    steps.append(MsmStep(("b1",), ((params.b_g1, None),), assignment.b_scalars, side, lap=lap("msm_g1")))
    if b_g2:
        steps.append(MsmStep(("b2",), ((params.b_g2, None),), assignment.b_scalars, side, lap=lap("msm_g2")))
    return steps


def _witness_steps(params: Parameters, assignment: WitnessAssignment | AbcWitnessAssignment, b_g2: bool,
                   overlap: bool, side: On, lap: Callable[[str], str | None]) -> list[Step]:
    """From the witness: H with A w, B w, C w on the backend (or, for an
    AbcWitnessAssignment, from a, b, c, the witness uploaded after), H's
    MSM (its scalars' memory back before the rest; overlapped, it comes
    last), L and A's aux rows over w's aux values in one sort (A's points
    through R1CS.query_rows: where A reads an aux variable, almost all do,
    its scalar is L's), A's input rows on the host, B's scalars taken from w
    for B_1 and B_2 in one sort."""
    r1cs, k = assignment.r1cs, assignment.r1cs.num_inputs
    steps: list[Step]
    if isinstance(assignment, WitnessAssignment):
        steps = [HStep(Flavor.BELLMAN, r1cs=r1cs, witness=assignment.witness, check=assignment.check)]
    else:
        steps = [HStep(Flavor.BELLMAN, abc=(assignment.a, assignment.b, assignment.c))]
    if not overlap:
        steps.append(MsmStep(("lh",), ((params.h, None),), Ref("h"), release=True))
    if isinstance(assignment, AbcWitnessAssignment):       # the witness crosses once H's memory is back
        steps.append(UploadStep("w", assignment.witness, side))
    steps.append(MsmStep(("lh", "a"), ((params.l, None), (params.a, r1cs.query_rows("a"))), Ref("w", k), side))
    steps += a_input_rows(params, assignment)
    # with B_2, B_1 is counted in msm_g2: one sort for both
    steps.append(TakeStep("b", Ref("w"), r1cs.query_index("b", np.uint32), side, lap=lap("msm_g1") if b_g2 else None))
    b_sets = ((params.b_g1, None), (params.b_g2, None)) if b_g2 else ((params.b_g1, None),)
    steps.append(MsmStep(("b1", "b2")[:len(b_sets)], b_sets, Ref("b"), side, lap=lap("msm_g2" if b_g2 else "msm_g1")))
    return steps


def a_input_rows(params: Parameters, assignment: WitnessAssignment | AbcWitnessAssignment) -> list[Step]:
    """A's rows of input variables (its first points) over their witness
    values, summed on the host (a few hundred points: cheaper there than
    uploaded); no step where A reads no input."""
    idx = assignment.r1cs.query_index("a")
    first = int(np.searchsorted(idx, assignment.r1cs.num_inputs))
    if not first:
        return []
    return [MsmStep(("a",), ((params.a[:first], None),), FrArray(assignment.witness.limbs[idx[:first]]), On.HOST)]


def assemble(vk: VerifyingKey, sums: MsmSums, rng: random.Random | None, clock: "Stopwatch", *,
             blinding: tuple[int, int] | None = None) -> Proof:
    """A, B, C from the sums (B_2's included) with fresh r, s, or with
    blinding = (r, s) where given (ints below the group order R): the same
    sums and blinding give the same proof as any prover's, which is how a
    proof is compared byte for byte with another prover's; never for a
    proof that leaves the process (a known r, s takes away its zero
    knowledge). InvalidInputError for a blinding that is not two ints
    below R.

    The delta terms of C cancel once B_1 is expanded:
        C = L + H + s A + r (beta_1 + B1 + s delta_1) - r s delta_1 = (L + H) + r B1 + s A + r beta_1
    so the region sums L and H into one (on the CPU one MSM over the
    concatenation: one plan, larger windows) and B_1 needs no blinding of
    its own. (B1 is not folded in as r-scaled scalars: for mostly-bit
    witnesses its sum is a cheap batch addition, which equal scalars r
    would turn into a full MSM.)"""
    if blinding is None:
        draw = rng.randrange if rng is not None else secrets.randbelow
        r, s = draw(R), draw(R)
    else:
        r, s = _blinding(blinding)
    proof_a = vk.alpha_g1 + sums.a_acc + vk.delta_g1 * r
    proof_b = vk.beta_g2 + sums.b2_acc + vk.delta_g2 * s
    proof_c = sums.lh_acc + (sums.b1_acc + vk.beta_g1) * r + proof_a * s
    clock.lap("assemble")
    return Proof(G1Point(proof_a.limbs), G2Point(proof_b.limbs), G1Point(proof_c.limbs))


def _blinding(blinding: object) -> tuple[int, int]:
    """(r, s) of assemble's blinding, checked: two ints from 0 to R - 1."""
    if (not isinstance(blinding, tuple) or len(blinding) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < R for v in blinding)):
        raise InvalidInputError(f"assemble: blinding is (r, s), two ints from 0 to the group order less one; "
                                f"got {blinding!r}")
    return blinding[0], blinding[1]


# ------------------------------------------------------------ bookkeeping


def query_scalars(r1cs: R1CS, witness: FrArray, query: str, threads: int | None, out: FrArray | None = None
                  ) -> FrArray:
    """The a or b query's scalars, witness[r1cs.query_index(query)], gathered
    on threads (into out where given: an FrArray of the query's length)."""
    idx = r1cs.query_index(query)
    rows = np.empty((len(idx), 4), dtype=np.uint64) if out is None else out.limbs
    _r1cs.gather_rows(witness.limbs, idx, rows, resolve_threads(threads))
    return FrArray(rows) if out is None else out


class Stopwatch:
    """Seconds per stage, added to a dict (or dropped when it is None)."""

    def __init__(self, sink: dict[str, float] | None) -> None:
        self.sink, self.t = sink, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.t
        self.t = now
