# SPDX-License-Identifier: Apache-2.0
"""The check every proof passes before it leaves the prover, and, when it
fails, what is at fault.

    check_proof(vk, public, proof, suspects)   returns, or raises the attributed error

A proof that verifies costs one multi-pairing and the decoding of the vk and
the proof (about 7 ms of one core, against 0.4 to 0.8 s for a 2^16-constraint
proof on two cores). One that does not is examined, cheapest cause first (the
cost is on the failure path only):

  the witness   with the circuit at hand, the witness is checked against it:
                UnsatisfiedError names the first failing constraint
  the device    when a backend other than the CPU made the sums, they are made
                again on the CPU; if the CPU's proof verifies, DeviceResultError
                names the sums that differ (A, L + H, B_1, B_2)
  the key       what is left: KeyIntegrityError, the key damaged or made for
                another circuit, with what a few tests of its points find
                (off the curve; at infinity where the circuit needs a point, or
                finite where it needs none; B_1 and B_2 not the same multiples,
                by one random combination and one pairing equation; the vk's
                beta and delta pairs)
A .zkey proved without its circuit cannot tell a witness from a key (the key
stores no C): WitnessOrKeyError says either may be at fault.
"""
from __future__ import annotations

import dataclasses
import secrets
from typing import Callable, Generic, Sequence, TypeVar, cast

import numpy as np
from py_arkworks_bls12381 import GT, G1Point as ArkG1, G2Point as ArkG2

from ..backend import Backend, get_backend
from ..config import resolve_threads
from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import DeviceResultError, KeyIntegrityError, PorepProverError, UnsatisfiedError, WitnessOrKeyError
from ..field.fr_array import FrArray
from .keys import Parameters, VerifyingKey
from .proof import Proof
from .prover import MsmSums, Stopwatch, assemble, prove_device, synthesize
from ..r1cs.system import R1CS, SparseMatrix
from .verifier import PreparedVerifyingKey, verify

FINITE, INFINITY, EITHER = 1, 0, -1      # what a key's point must be, by what the circuit uses
SUMS = (("a_acc", "A"), ("lh_acc", "L + H"), ("b1_acc", "B_1"), ("b2_acc", "B_2"))
MAX_LISTED = 3                            # points named per finding
PointsT = TypeVar("PointsT", G1Array, G2Array)
CircuitT = TypeVar("CircuitT", bound=R1CS | None)     # the circuit a check has at hand (None: none)


@dataclasses.dataclass
class Query(Generic[PointsT]):
    """One array of the key's points and where each must be finite: FINITE,
    INFINITY or EITHER for all, or an int8 array of them, one a point."""
    name: str
    points: PointsT
    expect: int | np.ndarray = FINITE


KeyQuery = Query[G1Array] | Query[G2Array]      # a query of either group


@dataclasses.dataclass
class Suspects(Generic[CircuitT]):
    """What a failed check examines; none of it is computed unless a proof fails.

    circuit(): the circuit (None where none is at hand) and the witness.
    device: the sums a backend other than the reference (the CPU) made
        (b2_acc included), or None when the reference made them.
    redo(r1cs, witness, threads): the same sums on the CPU (b2_acc included).
    queries(r1cs): the key's point arrays with their expectations.
    pairs: (G1 query, G2 query) pairs that hold the same multiples (B_1, B_2).
    """
    circuit: Callable[[], tuple[CircuitT, FrArray]]
    queries: Callable[[CircuitT], list[KeyQuery]]
    pairs: list[tuple[Query[G1Array], Query[G2Array]]]
    device: MsmSums | None = None
    redo: Callable[[CircuitT, FrArray, int], MsmSums] | None = None


def check_proof(vk: VerifyingKey, public: Sequence[int] | FrArray, proof: Proof, suspects: Suspects[CircuitT],
                threads: int | None = None) -> None:
    """Return when proof verifies for public (the inputs after the constant
    one) under vk; else raise what is at fault: UnsatisfiedError (the witness,
    at its first failing constraint), DeviceResultError (the device: the CPU's
    proof verifies), KeyIntegrityError (the key: the witness satisfies the
    circuit, the CPU agrees), WitnessOrKeyError (no circuit to tell the two)."""
    pvk = prepared(vk)
    if proof_verifies(pvk, public, proof):
        return
    threads = resolve_threads(threads)
    r1cs, witness = suspects.circuit()
    if r1cs is not None:
        try:
            r1cs.check(witness, threads)
        except UnsatisfiedError as exc:
            raise UnsatisfiedError(f"the proof does not verify: {exc}", exc.constraint) from None
    differ = device_differs(pvk, vk, public, suspects, r1cs, witness, threads)
    findings = key_findings(vk, suspects.queries(r1cs), suspects.pairs, threads)
    also = f" (the device's {', '.join(differ)} also differ from the CPU's)" if differ else ""
    if findings:
        raise KeyIntegrityError("the proving key is damaged: " + "; ".join(findings) + also, findings)
    if r1cs is None:
        raise WitnessOrKeyError("the proof fails verification: either the witness does not satisfy the circuit "
                                "or the proving key is damaged; give the circuit (r1cs=, --r1cs) to tell which"
                                + also)
    agrees = "" if suspects.device is None or differ else " and the CPU's sums agree with the device's"
    raise KeyIntegrityError(f"the proof does not verify although the witness satisfies the circuit{agrees}: "
                            f"the proving key is damaged or was not made for this circuit{also}")


def prepared(vk: VerifyingKey) -> PreparedVerifyingKey:
    """vk for the pairings; KeyIntegrityError when one of its points is not in its group."""
    try:
        return PreparedVerifyingKey(vk)
    except PorepProverError:
        raise
    except ValueError as exc:          # arkworks' decoder: a point off the curve or outside the subgroup
        found = vk_findings(vk) or [f"the verifying key does not decode ({exc})"]
        raise KeyIntegrityError("the proving key is damaged: " + "; ".join(found), found) from None


def proof_verifies(pvk: PreparedVerifyingKey, public: Sequence[int] | FrArray, proof: Proof) -> bool:
    """verify(), with a proof point off the curve or outside its subgroup
    (garbage from a damaged key or device) a failure rather than an exception."""
    try:
        return verify(pvk, public, proof)
    except PorepProverError:
        raise
    except ValueError:                 # arkworks' decoder refused a point of the proof
        return False


def device_differs(pvk: PreparedVerifyingKey, vk: VerifyingKey, public: Sequence[int] | FrArray,
                   suspects: Suspects[CircuitT], r1cs: CircuitT, witness: FrArray, threads: int) -> list[str]:
    """The sums the device made that differ from the CPU's ([] when the CPU
    made them); DeviceResultError when they differ and the CPU's proof verifies."""
    dev = suspects.device
    if dev is None or suspects.redo is None:
        return []
    cpu = suspects.redo(r1cs, witness, threads)
    differ = [f"{label} ({field})" for field, label in SUMS
              if getattr(dev, field) is not None and getattr(dev, field) != getattr(cpu, field)]
    if not differ:
        return []
    proof = assemble(vk, cpu, None, Stopwatch(None))
    if proof_verifies(pvk, public, proof):
        raise DeviceResultError(f"the device's {', '.join(differ)} differ from the CPU's, whose proof verifies: "
                                f"a device fault (nothing it computed was handed out)")
    return differ


# ------------------------------------------------------------ the key's own tests


def key_findings(vk: VerifyingKey, queries: list[KeyQuery], pairs: list[tuple[Query[G1Array], Query[G2Array]]],
                 threads: int) -> list[str]:
    """What the key's points show of damage: points off the curve, at infinity
    where the circuit needs a point (or finite where it needs none), the vk's
    beta and delta pairs and each pair of queries disagreeing. [] when none."""
    found = vk_findings(vk)
    for q in queries:
        found += point_findings(q, threads)
    for g1, g2 in pairs:
        if len(g1.points) == len(g2.points) and g1.points.first_not_on_curve(threads) < 0 \
                and g2.points.first_not_on_curve(threads) < 0:
            found += pair_findings(g1, g2, threads)
    return found


def vk_findings(vk: VerifyingKey) -> list[str]:
    """The vk's points: in their groups, not at infinity, beta and delta the same multiples in G1 and G2."""
    found = []
    for name in ("alpha_g1", "beta_g1", "beta_g2", "gamma_g2", "delta_g1", "delta_g2"):
        point = getattr(vk, name)
        if point.is_zero():
            found.append(f"vk.{name} is the point at infinity")
        elif point.first_not_in_subgroup(1) >= 0:
            found.append(f"vk.{name} is not in the prime-order subgroup")
    bad = vk.ic.first_not_in_subgroup(1)
    if bad >= 0:
        found.append(f"vk.ic[{bad}] is not in the prime-order subgroup")
    if found:
        return found
    for name in ("beta", "delta"):
        g1, g2 = getattr(vk, f"{name}_g1"), getattr(vk, f"{name}_g2")
        if not same_multiple(g1, g2):
            found.append(f"vk.{name}_g1 and vk.{name}_g2 are not the same multiple of their generators")
    return found


def point_findings(q: KeyQuery, threads: int) -> list[str]:
    """q's points off the curve, and at infinity (or finite) against q.expect."""
    bad = q.points.first_not_on_curve(threads)
    if bad >= 0:
        return [f"{q.name}[{bad}] is not on the curve"]
    infinity = q.points.is_infinity()
    expect = np.broadcast_to(np.asarray(q.expect, dtype=np.int8), infinity.shape)
    found = []
    for what, wrong in (("at infinity where the circuit needs a point", infinity & (expect == FINITE)),
                        ("finite where the circuit uses no variable", ~infinity & (expect == INFINITY))):
        idx = np.flatnonzero(wrong)
        if len(idx):
            listed = ", ".join(str(int(i)) for i in idx[:MAX_LISTED]) + (", ..." if len(idx) > MAX_LISTED else "")
            found.append(f"{q.name}[{listed}] {'is' if len(idx) == 1 else 'are'} {what}")
    return found


def pair_findings(g1: Query[G1Array], g2: Query[G2Array], threads: int) -> list[str]:
    """Whether g1.points[j] and g2.points[j] are the same multiples of their
    generators: e(sum rho_j g1_j, G2) = e(G1, sum rho_j g2_j) for random rho,
    then halved down to the first j that differs (about two MSMs of each)."""
    cpu, n = get_backend("cpu"), len(g1.points)
    rho = random_scalars(n)

    def agree(lo: int, hi: int) -> bool:
        s1, _ = cpu.msm(g1.points[lo:hi], rho[lo:hi], threads)
        s2, _ = cpu.msm(g2.points[lo:hi], rho[lo:hi], threads)
        return same_multiple(cast(G1Point, s1), cast(G2Point, s2))     # sums of G1 points, of G2 points

    if not n or agree(0, n):
        return []
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if agree(lo, mid):
            lo = mid
        else:
            hi = mid
    return [f"{g1.name}[{lo}] and {g2.name}[{lo}] are not the same multiple of their generators"]


def random_scalars(n: int) -> FrArray:
    """n random scalars below 2^248 (fresh from the OS): enough to tell two
    sums apart but for a chance of 2^-248, and made at memory speed."""
    raw = np.frombuffer(secrets.token_bytes(32 * n), dtype=np.uint8).reshape(n, 32).copy()
    raw[:, 31] = 0
    return FrArray.from_bytes(raw.tobytes())


def same_multiple(p1: G1Point, p2: G2Point) -> bool:
    """e(p1, G2) = e(G1, p2): p1 and p2 are the same multiple of their groups'
    generators (False for a point outside its group, which is no multiple)."""
    try:
        a = ArkG1.from_compressed_bytes(p1.to_bytes())
        b = ArkG2.from_compressed_bytes(p2.to_bytes())
    except ValueError:                 # arkworks' decoder: off the curve or outside the subgroup
        return False
    return GT.pairing_check([a, -ArkG1()], [ArkG2(), b])


# ------------------------------------------------------------ bellman's parameters


def bellman_suspects(params: Parameters, circuit: Callable[[], tuple[R1CS, FrArray]], backend: Backend | None = None,
                     device: MsmSums | None = None) -> Suspects[R1CS]:
    """Suspects for a proof under bellman-flavoured params: circuit() gives the
    circuit and witness; backend and device the backend that made the sums and
    its result (redone on the CPU unless the backend is the reference)."""
    on_device = backend is not None and device is not None and not backend.capabilities.reference

    def redo(r1cs: R1CS, witness: FrArray, threads: int) -> MsmSums:
        synth = synthesize(params, r1cs, witness, threads, check=False)   # a, b, c again: H consumed the first
        return prove_device(get_backend("cpu"), params, synth, threads, b_g2=True)

    return Suspects(circuit=circuit, queries=lambda r1cs: bellman_queries(params, r1cs),
                    pairs=[(Query("b_g1", params.b_g1), Query("b_g2", params.b_g2))],
                    device=device if on_device else None, redo=redo if on_device else None)


def bellman_queries(params: Parameters, r1cs: R1CS) -> list[KeyQuery]:
    """Every query of bellman's params: all points finite (the a and b queries
    keep only the variables their matrices use) but l's, finite exactly where
    the aux variable appears in a constraint."""
    used = columns_used(r1cs.a, r1cs.b, r1cs.c, width=r1cs.num_variables)
    return [Query("h", params.h), Query("l", params.l, np.where(used[r1cs.num_inputs:], FINITE, INFINITY)),
            Query("a", params.a), Query("b_g1", params.b_g1), Query("b_g2", params.b_g2),
            Query("vk.ic", params.vk.ic)]


def columns_used(*matrices: SparseMatrix, width: int) -> np.ndarray:
    """bool[width]: the variables some row of the matrices uses."""
    used = np.zeros(width, dtype=bool)
    for m in matrices:
        used[m.col] = True
    return used

