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
"""
from __future__ import annotations

import dataclasses
import secrets
import time

import numpy as np

from ..backend import get_backend
from ..config import resolve_threads
from ..curve.points import G1Point, G2Point
from ..errors import InvalidInputError
from ..field.constants import R
from ..field.fr_array import FrArray
from . import _r1cs
from .keys import Parameters
from .proof import Proof
from .r1cs import R1CS


class Stopwatch:
    """Seconds per stage, added to a dict (or dropped when it is None)."""

    def __init__(self, sink: dict | None):
        self.sink, self.t = sink, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.t
        self.t = now


@dataclasses.dataclass
class Synthesized:
    """One partition after synthesis, ready for the device (host arrays only).

    a, b, c: A w, B w, C w padded to the domain (inputs appended to a), the H
    pipeline's input (consumed by it). l, a_scalars, b_scalars: the MSM
    scalars of the aux, A and B queries (density applied). With a, b, c
    None, r1cs and witness are kept for a device that evaluates them and
    takes every query's scalars from its own copy of the witness (the
    scalars are None then: nothing but the witness crosses to the device)."""
    a: FrArray | None
    b: FrArray | None
    c: FrArray | None
    l_scalars: FrArray | None
    a_scalars: FrArray | None
    b_scalars: FrArray | None
    flavor: str = "bellman"
    r1cs: R1CS | None = None      # a, b, c None: the device evaluates them from
    witness: FrArray | None = None  # the witness (and checks it when check)
    check: bool = True

    ARRAYS = ("a", "b", "c", "l_scalars", "a_scalars", "b_scalars", "witness")

    def arrays(self) -> dict[str, FrArray]:
        """The host arrays this partition holds, by field name."""
        return {f: getattr(self, f) for f in self.ARRAYS if getattr(self, f) is not None}

    @property
    def nbytes(self) -> int:
        """Host bytes held (the witness's own, or through l_scalars, a view of it)."""
        held = self.arrays()
        return sum(v.limbs.nbytes for f, v in held.items() if f != "witness" or "l_scalars" not in held)


@dataclasses.dataclass
class DeviceResult:
    """What the kernel region computes: the G1 sums of A, L + H and B_1, and
    the G2 sum of B when the region did it too (else assemble does)."""
    a_acc: G1Point
    lh_acc: G1Point
    b1_acc: G1Point
    b2_acc: G2Point | None = None


def synthesize(params: Parameters, r1cs: R1CS, witness: FrArray, threads: int | None = None,
               check: bool = True, abc_on_device: bool = False) -> Synthesized:
    """CPU stage: the constraint evaluations (a, b, c) and every MSM's scalars.
    abc_on_device: leave a, b, c (and the check) and the queries' scalars to
    a backend with h_from_witness and take. Raises WitnessError,
    UnsatisfiedError (check=True), ParamsMismatchError."""
    threads = resolve_threads(threads)
    params.check_matches(r1cs)
    n, m, k = r1cs.domain_size, r1cs.num_constraints, r1cs.num_inputs
    if abc_on_device:
        r1cs.check_witness(witness)
        return Synthesized(None, None, None, None, None, None, r1cs=r1cs, witness=witness, check=check)
    a, b, c = r1cs.evaluate(witness, threads, length=n)   # padded in place: no copies of n-row arrays
    if check:
        r1cs.check(witness, threads, abc=(a, b, c))      # padding rows are 0 * 0 = 0
    a.limbs[m:m + k] = witness.limbs[:k]   # the inputs at rows m .. m + k - 1: bellman's input constraints
    return Synthesized(a, b, c, l_scalars=witness[k:], a_scalars=query_scalars(r1cs, witness, "a", threads),
                       b_scalars=query_scalars(r1cs, witness, "b", threads), check=check)


def query_scalars(r1cs: R1CS, witness: FrArray, query: str, threads: int | None) -> FrArray:
    """The a or b query's scalars, witness[r1cs.query_index(query)], gathered on threads."""
    idx = r1cs.query_index(query)
    out = np.empty((len(idx), 4), dtype=np.uint64)
    _r1cs.gather_rows(witness.limbs, idx, out, resolve_threads(threads))
    return FrArray(out)


def prove_device(be, params: Parameters, synth: Synthesized, threads: int, clock: "Stopwatch | None" = None,
                 b_g2: bool = False) -> DeviceResult:
    """The kernel region (what a worker does while holding its device's lock):
    H from a, b, c (consumed; or from the witness, on a device that evaluates
    A, B, C: its copy of the witness then gives every query's scalars), then
    the G1 MSMs of A, L + H and B_1; with b_g2, the G2 MSM of B as well (else
    finish does it)."""
    clock = clock or Stopwatch(None)
    held = []          # device arrays made here, closed at the end (closing twice is harmless)
    try:
        if synth.a is None and hasattr(be, "msm_shared"):
            h_sc, w = witness_on_device(be, synth, threads, held)
            clock.lap("h_poly")
            return shared_sums(be, params, synth, threads, h_sc, w, held, clock, b_g2)
        h_sc, (l_sc, a_sc, b_sc) = region_scalars(be, synth, threads, held)
        clock.lap("h_poly")
        out = device_sums(be, threads, h_sc, h=params.h, l=(params.l, l_sc), a=(params.a, a_sc),
                          b1=(params.b_g1, b_sc), clock=clock)
        if b_g2:
            out.b2_acc, _ = be.msm(params.b_g2, b_sc, threads)
            clock.lap("msm_g2")
        return out
    finally:
        for arr in held:
            if hasattr(arr, "close"):
                arr.close()


def evaluates_witness(be) -> bool:
    """Whether a backend evaluates A, B, C from the witness and takes the
    queries' scalars from its copy (synthesize's abc_on_device)."""
    return hasattr(be, "h_from_witness") and hasattr(be, "take")


def region_scalars(be, synth: Synthesized, threads: int, held: list):
    """H's scalars and the (l, a, b) queries' scalars for the kernel region:
    H from a, b, c (consumed) and the synthesized scalars; or, with a, b, c
    None, all of them from the device's copy of the witness. Device arrays
    made here are appended to held, for the caller to close."""
    if synth.a is not None:
        h_sc = h_values(be, (synth.a, synth.b, synth.c), synth.flavor, threads)
        held.append(h_sc)
        return h_sc, (synth.l_scalars, synth.a_scalars, synth.b_scalars)
    r1cs = synth.r1cs
    h_sc, w = witness_on_device(be, synth, threads, held)
    a_sc = be.take(w, r1cs.query_index("a", np.uint32))
    held.append(a_sc)                  # before the next take, which may fail
    b_sc = be.take(w, r1cs.query_index("b", np.uint32))
    held.append(b_sc)
    return h_sc, (w[r1cs.num_inputs:], a_sc, b_sc)


def witness_on_device(be, synth: Synthesized, threads: int, held: list):
    """(H's scalars, the witness's device copy) from a device that evaluates
    A, B, C (both appended to held, for the caller to close)."""
    h_sc, w = be.h_from_witness(synth.r1cs, synth.witness, threads, flavor=synth.flavor, check=synth.check,
                                keep_witness=True)
    held += [h_sc, w]
    return h_sc, w


def shared_sums(be, params: Parameters, synth: Synthesized, threads: int, h_sc, w, held: list, clock: Stopwatch,
                b_g2: bool) -> DeviceResult:
    """The kernel region's MSMs on a backend that shares one sort of the
    scalars between arrays (msm_shared): L and the A query's aux rows over the
    aux witness (A's points through R1CS.query_rows), A's input rows on the
    host (a few hundred points), H, and B_1 beside B_2 (with b_g2) over the B
    query's scalars. L's and A's scalars are the same witness values where A
    reads an aux variable (almost all do): the second sort was the same."""
    r1cs, k = synth.r1cs, synth.r1cs.num_inputs
    idx = r1cs.query_index("a")
    first = int(np.searchsorted(idx, k))
    l_acc, a_acc = be.msm_shared([(params.l, None), (params.a, r1cs.query_rows("a"))], w[k:], threads)
    if first:
        a_acc = a_acc + get_backend("cpu").msm(params.a[:first], FrArray(synth.witness.limbs[idx[:first]]),
                                               threads)[0]
    h_acc, _ = be.msm(params.h, h_sc, threads)
    if hasattr(h_sc, "close"):
        h_sc.close()                   # its memory back before B's MSMs
    b_sc = be.take(w, r1cs.query_index("b", np.uint32))
    held.append(b_sc)
    if b_g2:
        clock.lap("msm_g1")
        b1_acc, b2_acc = be.msm_shared([(params.b_g1, None), (params.b_g2, None)], b_sc, threads)
        clock.lap("msm_g2")            # B_1 counted here: one sort with B_2
    else:
        (b1_acc, _), b2_acc = be.msm(params.b_g1, b_sc, threads), None
        clock.lap("msm_g1")
    return DeviceResult(a_acc, l_acc + h_acc, b1_acc, b2_acc)


def h_values(be, abc, flavor: str, threads: int):
    """H's scalars from a, b, c (consumed): left on the device by a backend
    that offers h_scalars (the GPU), for its MSM; else an FrArray."""
    on_device = getattr(be, "h_scalars", None)
    return (on_device or be.h_poly)(*abc, threads, flavor=flavor)


def device_sums(be, threads: int, h_sc, h, l, a, b1, clock: Stopwatch) -> DeviceResult:
    """msm_g1 with h the H query's points and h_sc its scalars (closed after,
    when they are held on a device)."""
    try:
        out = msm_g1(be, threads, h=(h, h_sc), l=l, a=a, b1=b1)
    finally:
        if hasattr(h_sc, "close"):
            h_sc.close()
    clock.lap("msm_g1")
    return out


def finish(be, params: Parameters, synth: Synthesized, dev: DeviceResult, threads: int, rng=None,
           clock: "Stopwatch | None" = None) -> Proof:
    """After the lock: the B_2 MSM (unless the region did it) and the proof's
    assembly with fresh r, s."""
    b_sc = synth.b_scalars
    if b_sc is None and dev.b2_acc is None:       # the device took them from its witness: gather here
        b_sc = query_scalars(synth.r1cs, synth.witness, "b", threads)
    return assemble(be, params.vk, params.b_g2, b_sc, dev, threads, rng, clock or Stopwatch(None))


def prove(params: Parameters, r1cs: R1CS, witness: FrArray, backend: str = "cpu", threads: int | None = None,
          rng=None, check: bool = True, timings: dict | None = None, matvec: str = "host",
          verify: bool = True) -> Proof:
    """A proof that witness satisfies r1cs, under params (synthesize, prove_device, finish).

    witness: the full assignment (the constant one, the public inputs, then aux).
    check: verify the witness satisfies every constraint first (cheap; raises
        UnsatisfiedError naming the first failing one). With check=False an
        unsatisfying witness gives a proof that does not verify (verify then
        names the constraint; with verify=False the proof is returned).
    rng: random.Random-like source of r and s, for reproducible tests only
        (default: the secrets module).
    timings: if a dict is given, seconds per stage are added to it.
    matvec: where A w, B w and C w are evaluated (and the witness checked):
        "host" (the CPU) or "device" (a backend that evaluates them, the GPU:
        the circuit's matrices stay resident there, only the witness crosses).
    verify: verify the proof against params.vk before returning it (one
        pairing check, a few ms); a proof that fails is never returned, the
        error says what is at fault (proof_check). verify=False opts out.

    Raises WitnessError, UnsatisfiedError, ParamsMismatchError, InvalidInputError
    (matvec unknown, or "device" on a backend without it) and the backend's
    errors; with verify, on a proof that does not verify, UnsatisfiedError (the
    witness), DeviceResultError (the backend's sums differ from the CPU's) or
    KeyIntegrityError (params damaged or not made for r1cs).
    """
    threads = resolve_threads(threads)
    be = get_backend(backend)
    if matvec not in ("host", "device"):
        raise InvalidInputError(f"matvec {matvec!r}: 'host' or 'device'")
    if matvec == "device" and not evaluates_witness(be):
        raise InvalidInputError(f"matvec='device': backend {be.name!r} does not evaluate A, B, C")
    clock = Stopwatch(timings)
    synth = synthesize(params, r1cs, witness, threads, check, abc_on_device=matvec == "device")
    clock.lap("synthesis")
    dev = prove_device(be, params, synth, threads, clock)
    proof = finish(be, params, synth, dev, threads, rng, clock)
    if verify:
        from .proof_check import bellman_suspects, check_proof   # it re-runs this module's stages: imported here
        check_proof(params.vk, witness[1:r1cs.num_inputs], proof,
                    bellman_suspects(params, lambda: (r1cs, witness), be, dev), threads)
        clock.lap("verify")
    return proof


def msm_g1(be, threads: int, h, l, a, b1) -> DeviceResult:
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
    return DeviceResult(a_acc, lh_acc, b1_acc)


def assemble(be, vk, b2_pts, b_sc, dev: DeviceResult, threads: int, rng, clock: Stopwatch) -> Proof:
    """The B_2 MSM, then A, B, C with fresh r, s (see msm_g1 for C)."""
    draw = rng.randrange if rng is not None else secrets.randbelow
    r, s = draw(R), draw(R)
    b2_acc = dev.b2_acc
    if b2_acc is None:
        b2_acc, _ = be.msm(b2_pts, b_sc, threads)
        dev.b2_acc = b2_acc            # kept: a failed check compares it with the CPU's
        clock.lap("msm_g2")
    proof_a = vk.alpha_g1 + dev.a_acc + vk.delta_g1 * r
    proof_b = vk.beta_g2 + b2_acc + vk.delta_g2 * s
    proof_c = dev.lh_acc + (dev.b1_acc + vk.beta_g1) * r + proof_a * s
    clock.lap("assemble")
    return Proof(G1Point(proof_a.limbs), G2Point(proof_b.limbs), G1Point(proof_c.limbs))
