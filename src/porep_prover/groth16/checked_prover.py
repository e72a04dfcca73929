# SPDX-License-Identifier: Apache-2.0
"""The prover in one call: prove runs the three stages of prover in a row
and hands out a proof only after proof_check has passed it.

Its own module because the check re-runs the stages on the CPU when a proof
fails (proof_check imports prover), so the one call that does both sits
above the two.
"""
from __future__ import annotations

import random

from ..backend import get_backend
from ..config import resolve_threads
from ..errors import InvalidInputError
from ..field.fr_array import FrArray
from ..memory.workload import Workload
from .keys import Parameters
from .proof import Proof
from .proof_check import bellman_suspects, check_proof
from .prover import Stopwatch, finish, prove_device, synthesize
from ..r1cs.system import R1CS

MATVEC = ("host", "device")


def prove(params: Parameters, r1cs: R1CS, witness: FrArray, backend: str = "cpu", threads: int | None = None,
          rng: random.Random | None = None, check: bool = True, timings: dict[str, float] | None = None,
          matvec: str = "host", verify: bool = True) -> Proof:
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
        the circuit's matrices stay resident there, only the witness crosses;
        on the host after all where the device's memory plan has no room for
        the matrices).
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
    be, host = get_backend(backend), get_backend("cpu")
    if matvec not in MATVEC:
        raise InvalidInputError(f"matvec {matvec!r}: 'host' or 'device'")
    if matvec == "device" and not be.capabilities.evaluates_witness:
        raise InvalidInputError(f"matvec='device': backend {be.name!r} does not evaluate A, B, C")
    clock = Stopwatch(timings)
    # the device's memory plan for these parameters at its card's memory (one worker; B's G2 MSM in finish, on
    # the host)
    budget = be.device_budget()
    plan = None if budget is None else \
        be.device_plan(Workload.of(params, r1cs, on_device=matvec == "device"), budget, workers=1, g2=False)
    on_device = matvec == "device" and (plan is None or plan.matrices)
    assignment = synthesize(params, r1cs, witness, threads, check, abc_on_device=on_device)
    clock.lap("synthesis")
    sums = prove_device(be, params, assignment, threads, clock, host=host, plan=plan)
    proof = finish(be, params, assignment, sums, threads, rng, clock)
    if verify:
        check_proof(params.vk, witness[1:r1cs.num_inputs], proof,
                    bellman_suspects(params, lambda: (r1cs, witness), be, sums), threads)
        clock.lap("verify")
    return proof
