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
                  MSMs of A, L + H and B_1 (and B_2)
    finish        B_2 (unless the region made it), then A, B, C with r, s
"""
from __future__ import annotations

import dataclasses
import random
import secrets
import time
from typing import TYPE_CHECKING, cast

import numpy as np

from ..backend import Backend, Flavor
from ..config import resolve_threads
from ..curve.points import G1Array, G1Point, G2Point
from ..errors import InvalidInputError
from ..field.constants import R
from ..field.fr_array import FrArray
from ..r1cs import _r1cs
from .keys import Parameters, VerifyingKey
from .proof import Proof
from ..r1cs.system import R1CS

if TYPE_CHECKING:
    from ..backend.base import Scalars


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


def synthesize(params: Parameters, r1cs: R1CS, witness: FrArray, threads: int | None = None,
               check: bool = True, abc_on_device: bool = False) -> HostAssignment | WitnessAssignment:
    """CPU stage: a HostAssignment (the constraint evaluations a, b, c and
    every MSM's scalars); with abc_on_device, a WitnessAssignment (a, b, c,
    the check and the queries' scalars left to the backend). Raises
    WitnessError, UnsatisfiedError (check=True), ParamsMismatchError."""
    threads = resolve_threads(threads)
    params.check_matches(r1cs)
    n, m, k = r1cs.domain_size, r1cs.num_constraints, r1cs.num_inputs
    if abc_on_device:
        r1cs.check_witness(witness)
        return WitnessAssignment(r1cs, witness, check)
    a, b, c = r1cs.evaluate(witness, threads, length=n)   # padded in place: no copies of n-row arrays
    if check:
        r1cs.check(witness, threads, abc=(a, b, c))      # padding rows are 0 * 0 = 0
    a.limbs[m:m + k] = witness.limbs[:k]   # the inputs at rows m .. m + k - 1: bellman's input constraints
    return HostAssignment(a, b, c, l_scalars=witness[k:], a_scalars=query_scalars(r1cs, witness, "a", threads),
                          b_scalars=query_scalars(r1cs, witness, "b", threads))


def prove_device(be: Backend, params: Parameters, assignment: HostAssignment | WitnessAssignment, threads: int,
                 clock: "Stopwatch | None" = None, b_g2: bool = False, host: Backend | None = None,
                 overlap: bool = False, workers: int = 1) -> MsmSums:
    """The kernel region (what a worker does while holding its device's lock):
    H, then the G1 MSMs of A, L + H and B_1; with b_g2, the G2 MSM of B as
    well (else finish does it). host: the host's backend, where A's input
    rows of a WitnessAssignment (a few hundred points) are summed; required
    with one. overlap: the MSMs that do not depend on H (L, A, B_1, B_2)
    run beside H's transforms where the backend can (Backend.beside; a GPU's
    second stream), H's MSM after them; the same sums, the clock's laps then
    h_poly (H's queueing) and msm_g1 (the rest). workers: the kernel-region
    workers sharing the device, for its memory plan (Backend.plan_for, made
    here, under the lock: a new plan re-places what another region reads).
    InvalidInputError for anything but the two assignments."""
    clock = clock or Stopwatch(None)
    if isinstance(assignment, (HostAssignment, WitnessAssignment)):
        be.plan_for(params, assignment.r1cs if isinstance(assignment, WitnessAssignment) else None, workers)
    known = isinstance(assignment, HostAssignment) or isinstance(assignment, WitnessAssignment) and host is not None
    if overlap and known:
        sums = overlapped_sums(be, host, params, assignment, threads, clock, b_g2)
        if sums is not None:
            return sums
    match assignment:
        case HostAssignment():
            return sums_from_host(be, params, assignment, threads, clock, b_g2)
        case WitnessAssignment() if host is not None:
            return sums_from_witness(be, host, params, assignment, threads, clock, b_g2)
        case WitnessAssignment():
            raise InvalidInputError("prove_device: a WitnessAssignment needs the host's backend (host=)")
    raise InvalidInputError(f"prove_device: a HostAssignment or a WitnessAssignment, not {type(assignment).__name__}")


def finish(be: Backend, params: Parameters, assignment: HostAssignment | WitnessAssignment, sums: MsmSums,
           threads: int, rng: random.Random | None = None, clock: "Stopwatch | None" = None) -> Proof:
    """After the lock: the B_2 MSM on be (unless the region did it; kept in
    sums, which a failed check compares with the CPU's), then the proof's
    assembly with fresh r, s."""
    clock = clock or Stopwatch(None)
    if sums.b2_acc is None:
        if isinstance(assignment, WitnessAssignment):   # the device took B's scalars from its witness: gather here
            b_scalars = query_scalars(assignment.r1cs, assignment.witness, "b", threads)
        else:
            b_scalars = assignment.b_scalars
        b2_acc, _ = be.msm(params.b_g2, b_scalars, threads)
        sums.b2_acc = cast(G2Point, b2_acc)
        clock.lap("msm_g2")
    return assemble(params.vk, sums, rng, clock)


# ------------------------------------------------------------ the kernel region's steps


def sums_from_host(be: Backend, params: Parameters, assignment: HostAssignment, threads: int, clock: "Stopwatch",
                   b_g2: bool) -> MsmSums:
    """H from a, b, c (consumed), the G1 sums over the synthesized scalars, and B_2's with b_g2."""
    sums = h_and_g1_sums(be, (assignment.a, assignment.b, assignment.c), Flavor.BELLMAN, threads, clock,
                         h=params.h, l=(params.l, assignment.l_scalars), a=(params.a, assignment.a_scalars),
                         b1=(params.b_g1, assignment.b_scalars))
    if b_g2:
        b2_acc, _ = be.msm(params.b_g2, assignment.b_scalars, threads)
        sums.b2_acc = cast(G2Point, b2_acc)
        clock.lap("msm_g2")
    return sums


def sums_from_witness(be: Backend, host: Backend, params: Parameters, assignment: WitnessAssignment, threads: int,
                      clock: "Stopwatch", b_g2: bool) -> MsmSums:
    """H with A w, B w, C w evaluated by the backend, and the sums over its
    copy of the witness w, one sort of the scalars shared where two arrays
    read the same ones (msm_shared): H first (its scalars' memory back before
    the rest), L and A's aux rows over w's aux values (A's points through
    R1CS.query_rows: where A reads an aux variable, almost all do, its
    scalar is L's), A's input rows on the host, then B's scalars taken from
    w for B_1, beside B_2 with b_g2."""
    r1cs, k = assignment.r1cs, assignment.r1cs.num_inputs
    with DeviceArrays(be) as arrays:
        h, w = be.h_from_witness(r1cs, assignment.witness, threads, Flavor.BELLMAN, check=assignment.check,
                                 keep_witness=True)
        arrays.keep(h, w)
        clock.lap("h_poly")
        h_acc, _ = be.msm(params.h, h, threads)
        arrays.release(h)                  # its memory back before the others' (A's scattered scalars, B's)
        l_acc, a_acc = be.msm_shared([(params.l, None), (params.a, r1cs.query_rows("a"))], w[k:], threads)
        a_acc = a_acc + a_input_rows(host, params, assignment, threads)
        b = arrays.keep(be.take(w, r1cs.query_index("b", np.uint32)))
        if b_g2:
            clock.lap("msm_g1")
            b1_acc, b2_acc = be.msm_shared([(params.b_g1, None), (params.b_g2, None)], b, threads)
            clock.lap("msm_g2")            # B_1 counted here: one sort with B_2
        else:
            (b1_acc, _), b2_acc = be.msm(params.b_g1, b, threads), None
            clock.lap("msm_g1")
    return MsmSums(a_acc, l_acc + h_acc, cast(G1Point, b1_acc), cast("G2Point | None", b2_acc))


def overlapped_sums(be: Backend, host: Backend | None, params: Parameters,
                    assignment: HostAssignment | WitnessAssignment, threads: int, clock: "Stopwatch",
                    b_g2: bool) -> MsmSums | None:
    """prove_device's sums in overlap mode, or None where be has no second
    stream (Backend.beside). H's transforms are queued on be and left
    running; the MSMs of L, A, B_1 (and B_2 with b_g2) and B's gather run
    on the beside block's value meanwhile; H's MSM runs on be after the
    block, whose end orders be's work after the second stream's. The same
    MSMs as sums_from_host / sums_from_witness, each scalar kept until the
    region ends (H's memory is not given back before B's MSMs: they run
    beside its transforms)."""
    with DeviceArrays(be) as arrays:
        with be.beside() as side:
            if side is None:
                return None
            if isinstance(assignment, HostAssignment):
                h = arrays.keep(side.h_scalars(assignment.a, assignment.b, assignment.c, threads, Flavor.BELLMAN))
                clock.lap("h_poly")
                a_acc, _ = side.msm(params.a, assignment.a_scalars, threads)
                l_acc, _ = side.msm(params.l, assignment.l_scalars, threads)
                b: Scalars = assignment.b_scalars
            else:
                r1cs, k = assignment.r1cs, assignment.r1cs.num_inputs
                h, w = side.h_from_witness(r1cs, assignment.witness, threads, Flavor.BELLMAN,
                                           check=assignment.check, keep_witness=True)
                arrays.keep(h, w)
                clock.lap("h_poly")
                l_acc, a_acc = side.msm_shared([(params.l, None), (params.a, r1cs.query_rows("a"))], w[k:], threads)
                # prove_device overlaps a WitnessAssignment only with host given (its `known`)
                a_acc = a_acc + a_input_rows(cast(Backend, host), params, assignment, threads)
                b = arrays.keep(side.take(w, r1cs.query_index("b", np.uint32)))
            if b_g2 and isinstance(assignment, WitnessAssignment):      # as sums_from_witness: one sort
                b1_acc, b2_acc = side.msm_shared([(params.b_g1, None), (params.b_g2, None)], b, threads)
            else:
                (b1_acc, _), b2_acc = side.msm(params.b_g1, b, threads), None
                if b_g2:
                    b2_acc, _ = side.msm(params.b_g2, b, threads)
        h_acc, _ = be.msm(params.h, h, threads)      # after the join: H's scalars are complete
    clock.lap("msm_g1")
    return MsmSums(cast(G1Point, a_acc), l_acc + h_acc, cast(G1Point, b1_acc), cast("G2Point | None", b2_acc))


def a_input_rows(host: Backend, params: Parameters, assignment: WitnessAssignment, threads: int) -> G1Point:
    """sum of A's rows of input variables (its first points) over their witness values, on the host."""
    idx = assignment.r1cs.query_index("a")
    first = int(np.searchsorted(idx, assignment.r1cs.num_inputs))
    if not first:
        return G1Point.identity()
    return cast(G1Point, host.msm(params.a[:first], FrArray(assignment.witness.limbs[idx[:first]]), threads)[0])


def h_and_g1_sums(be: Backend, abc: tuple[FrArray, FrArray, FrArray], flavor: Flavor, threads: int,
                  clock: "Stopwatch", h: G1Array, l: tuple[G1Array, FrArray],  # noqa: E741 (callers name it l=)
                  a: tuple[G1Array, FrArray], b1: tuple[G1Array, FrArray]) -> MsmSums:
    """H's scalars of flavor from a, b, c (consumed; left on the device where
    the backend keeps them there), then g1_sums with h H's points; l, a, b1
    are (points, scalars). Both flavours' kernel region."""
    with DeviceArrays(be) as arrays:
        h_scalars = arrays.keep(be.h_scalars(*abc, threads, flavor))
        clock.lap("h_poly")
        sums = g1_sums(be, threads, h=(h, h_scalars), l=l, a=a, b1=b1)
    clock.lap("msm_g1")
    return sums


def g1_sums(be: Backend, threads: int, h: tuple[G1Array, Scalars],
            l: tuple[G1Array, Scalars], a: tuple[G1Array, Scalars],  # noqa: E741 (callers name it l=)
            b1: tuple[G1Array, Scalars]) -> MsmSums:
    """The G1 MSMs, shared by both flavours; each argument is (points, scalars).

    The delta terms of C cancel once B_1 is expanded:
        C = L + H + s A + r (beta_1 + B1 + s delta_1) - r s delta_1 = (L + H) + r B1 + s A + r beta_1
    so L and H go through one msm_many (on the CPU one MSM over the
    concatenation: one plan, larger windows) and B_1 needs no blinding of its
    own. (B1 is not folded in as r-scaled scalars: for mostly-bit witnesses its
    sum is a cheap batch addition, which equal scalars r would turn into a full MSM.)"""
    a_acc, _ = be.msm(a[0], a[1], threads)
    lh_acc = be.msm_many([l, h], threads)
    b1_acc, _ = be.msm(b1[0], b1[1], threads)
    return MsmSums(cast(G1Point, a_acc), cast(G1Point, lh_acc), cast(G1Point, b1_acc))


def assemble(vk: VerifyingKey, sums: MsmSums, rng: random.Random | None, clock: "Stopwatch") -> Proof:
    """A, B, C from the sums (B_2's included) with fresh r, s (see g1_sums for C)."""
    draw = rng.randrange if rng is not None else secrets.randbelow
    r, s = draw(R), draw(R)
    proof_a = vk.alpha_g1 + sums.a_acc + vk.delta_g1 * r
    proof_b = vk.beta_g2 + sums.b2_acc + vk.delta_g2 * s
    proof_c = sums.lh_acc + (sums.b1_acc + vk.beta_g1) * r + proof_a * s
    clock.lap("assemble")
    return Proof(G1Point(proof_a.limbs), G2Point(proof_b.limbs), G1Point(proof_c.limbs))


# ------------------------------------------------------------ bookkeeping


def query_scalars(r1cs: R1CS, witness: FrArray, query: str, threads: int | None) -> FrArray:
    """The a or b query's scalars, witness[r1cs.query_index(query)], gathered on threads."""
    idx = r1cs.query_index(query)
    out = np.empty((len(idx), 4), dtype=np.uint64)
    _r1cs.gather_rows(witness.limbs, idx, out, resolve_threads(threads))
    return FrArray(out)


class DeviceArrays:
    """The scalars a kernel region leaves on its backend (H's, the witness's
    copy, a query's), given back to it (release_scalars) when the region
    ends, whichever way, or one early with release."""

    backend: Backend
    _kept: list[Scalars]

    def __init__(self, backend: Backend) -> None:
        self.backend, self._kept = backend, []

    def keep(self, *arrays: Scalars) -> Scalars:
        """Own arrays until the region ends; returns the last one."""
        self._kept += arrays
        return arrays[-1]

    def release(self, array: Scalars) -> None:
        self._kept.remove(array)
        self.backend.release_scalars(array)

    def __enter__(self) -> "DeviceArrays":
        return self

    def __exit__(self, *exc: object) -> None:
        kept, self._kept = self._kept, []
        for array in kept:
            self.backend.release_scalars(array)


class Stopwatch:
    """Seconds per stage, added to a dict (or dropped when it is None)."""

    def __init__(self, sink: dict[str, float] | None) -> None:
        self.sink, self.t = sink, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.t
        self.t = now
