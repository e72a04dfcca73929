# SPDX-License-Identifier: Apache-2.0
"""The built-in synthesis provider for circuits already in memory (job kind "inline")."""
from __future__ import annotations

import dataclasses
from typing import Callable, Sequence, cast, overload

from ..field.fr_array import FrArray
from ..groth16.keys import Parameters
from ..r1cs.system import R1CS
from .jobs import Job
from .registry import Registry


@dataclasses.dataclass
class InlineCircuit:
    """A job's payload: one circuit and its parameters, and each partition's
    witness (a sequence, or a function of the partition index)."""
    params: Parameters
    r1cs: R1CS
    witnesses: Sequence[FrArray] | Callable[[int], FrArray]


class InlineProvider:
    kinds = ("inline",)

    def srs_key(self, job: Job) -> str:
        return f"inline:{id(job.payload.params):x}"

    def load_srs(self, job: Job) -> Parameters:
        payload: InlineCircuit = job.payload
        return payload.params

    def circuit(self, job: Job) -> R1CS:
        """The job's circuit, before any partition (the engine plans its memory by it)."""
        payload: InlineCircuit = job.payload
        return payload.r1cs

    def synthesize(self, job: Job, partition: int, threads: int) -> tuple[R1CS, FrArray]:
        payload: InlineCircuit = job.payload
        w = payload.witnesses
        return payload.r1cs, (w(partition) if callable(w) else w[partition])


@overload
def inline_job(params: Parameters, r1cs: R1CS, witnesses: Sequence[FrArray], partitions: int | None = None,
               priority: int = 0) -> Job: ...


@overload
def inline_job(params: Parameters, r1cs: R1CS, witnesses: Callable[[int], FrArray], partitions: int,
               priority: int = 0) -> Job: ...


def inline_job(params: Parameters, r1cs: R1CS, witnesses: Sequence[FrArray] | Callable[[int], FrArray],
               partitions: int | None = None, priority: int = 0) -> Job:
    """A Job proving r1cs under params once per witness (partitions: how
    many, given with a function of the partition index)."""
    # without partitions the witnesses are a sequence (the overloads above)
    count = partitions if partitions is not None else len(cast("Sequence[FrArray]", witnesses))
    return Job("inline", count, InlineCircuit(params, r1cs, witnesses), priority=priority)


def default_registry() -> Registry:
    """A registry with the built-ins: the "inline" provider and the "builtin" FIFO scheduler."""
    registry = Registry()
    registry.add_provider(InlineProvider())
    return registry
