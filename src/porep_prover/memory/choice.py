# SPDX-License-Identifier: Apache-2.0
"""The choice among the ways a parameter set can be proved: where the
queries' scalars are gathered (prover.gather) and how a partition reaches
the devices (prover.stage), each weighed by the host plan it gives
(memory.host_plan) beside the devices' plans (memory.device_plan).

    Ways.of(prover.gather, prover.stage, devices)   -- "auto": both ways, where there are devices
    plan_set(workload, workers, host budget, ways, devices, matvec)
        -> each device planned under its budget for each way, then
           choose_plan: the way whose host plan admits the most partitions, then the quickest

The engine (engine.planning, as a set loads) and `porep-prover plan` (by a
workload's statistics or its provider's shape) both plan through plan_set,
each device by its Planner (a GPU backend, or the command's DeviceModel:
the same model), so that the command shows the engine's choice for the
same settings. Pure arithmetic on plans.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from ..errors import HostMemoryError
from .device_plan import DevicePlan
from .host_plan import NO_SCRATCH, MemoryPlan, Refusal, Synthesis, Workers, plan_or_refusal
from .workload import Workload

AUTO = "auto"
GATHERS = (AUTO, "host", "device")         # prover.gather's choices
STAGES = (AUTO, "prepare", "arena")        # prover.stage's choices


class Variant(NamedTuple):
    """One way to prove a set, as make_plan takes it: the devices' plans;
    matvec: they evaluate A w, B w, C w; gathers: they gather the queries'
    scalars; arenas: partitions are synthesized into page-locked arenas
    (None: as the workers say)."""
    devices: tuple[DevicePlan, ...]
    matvec: bool
    gathers: bool
    arenas: bool | None = None

    @classmethod
    def of(cls, plans: Iterable[DevicePlan], matvec: bool) -> Variant:
        """The devices' plans and what they do: A w, B w, C w on them where
        matvec asks it and every plan keeps the circuit's matrices; the
        queries' scalars gathered there where the host evaluates A w, B w,
        C w and every plan says so."""
        plans = tuple(plans)
        on_device = matvec and all(p.matrices for p in plans)
        return cls(plans, on_device, not on_device and bool(plans) and all(p.gathers for p in plans))


@dataclasses.dataclass(frozen=True)
class Ways:
    """The ways weighed: gathers, what the devices' plans are asked (True:
    they may gather the queries' scalars, False: the host gathers them);
    arenas, whether partitions are synthesized into page-locked arenas
    (True) or copied into staging buffers before their kernel regions
    (False). The first of each is the measured path: a tie keeps it."""
    gathers: tuple[bool, ...] = (False,)
    arenas: tuple[bool, ...] = (False,)

    @classmethod
    def of(cls, gather: str, stage: str, devices: int, arenas_lent: bool = True) -> Ways:
        """The ways of the settings prover.gather and prover.stage ("auto":
        both; a named one: that one alone) for an engine of `devices` GPUs
        (none: one way, as the CPU proves; neither setting applies);
        arenas_lent: the devices lend page-locked arenas (without, "auto"
        stages by copies)."""
        if not devices:
            return cls()
        staged = (False, True) if arenas_lent else (False,)
        return cls((False, True) if gather == AUTO else (gather == "device",),
                   staged if stage == AUTO else (stage == "arena",))


@dataclasses.dataclass(frozen=True)
class Choice:
    """The way chosen: its plan, what its devices' plans were asked
    (gathers), whether its partitions are laid out in arenas, and its
    devices' plans by the identity plan_set was given them under."""
    plan: MemoryPlan
    gathers: bool
    arenas: bool
    by_device: Mapping[str, DevicePlan] = dataclasses.field(default_factory=dict)


class Planner(Protocol):
    """A device as plan_set plans it (a backend; DeviceModel for the command)."""

    def device_plan(self, workload: Workload, budget: int, workers: int, g2: bool, gathers: bool
                    ) -> DevicePlan | None:
        """The device's plan of workload under budget bytes for workers
        device workers, B's G2 MSM on it or not (g2), the queries' scalars
        gathered on it where the plan finds it best (gathers); None where
        the device plans no memory (the host)."""


class DeviceAsk(NamedTuple):
    """One device plan_set plans: its identity (what its plan is found by),
    its planner, and its budget (memory.budgets.device_budget's)."""
    identity: str
    planner: Planner
    budget: int


def plan_set(workload: Workload, workers: Workers, host_budget: int, ways: Ways, devices: Sequence[DeviceAsk],
             matvec: bool, what: str = "the parameter set", synthesis: Synthesis = NO_SCRATCH) -> Choice:
    """The memory plan of a set, host and devices, as the engine makes it
    and `porep-prover plan` shows it: for each of ways.gathers every device
    planned under its budget (its plan of workload for workers.per_device
    workers, B's G2 MSM where workers.b_g2_on_device), A w, B w, C w asked of
    the devices where matvec and the devices can (the workload's matrices
    counted, or no device plans memory, and every plan keeps them), then
    choose_plan among the ways; the chosen way's device plans by identity.
    HostMemoryError as choose_plan raises it; what a planner raises."""
    tried: dict[bool, dict[str, DevicePlan]] = {}

    def device_side(gathers: bool) -> Variant:
        by_device: dict[str, DevicePlan] = {}
        for ask in devices:
            made = ask.planner.device_plan(workload, ask.budget, workers.per_device, workers.b_g2_on_device, gathers)
            if made is not None:
                by_device[ask.identity] = made
        tried[gathers] = by_device
        # a device's plan without the circuit keeps no matrices: A w, B w, C w on the devices only with it
        return Variant.of(by_device.values(), matvec and (workload.matrix_bytes > 0 or not by_device))
    chosen = choose_plan(workload, workers, host_budget, ways, device_side, what, synthesis)
    return dataclasses.replace(chosen, by_device=tried[chosen.gathers])


def choose_plan(workload: Workload, workers: Workers, host_budget: int, ways: Ways,
                device_side: Callable[[bool], Variant], what: str = "the parameter set",
                synthesis: Synthesis = NO_SCRATCH) -> Choice:
    """The way of ways whose host plan admits the most partitions, then
    whose devices' estimates are the least (best_plan); device_side(gathers)
    gives the devices' side of a way (asked once for each of ways.gathers).
    HostMemoryError as best_plan raises it."""
    sides = {gathers: device_side(gathers) for gathers in ways.gathers}
    tried = [(gathers, arenas) for gathers in ways.gathers for arenas in ways.arenas]
    index, chosen = best_plan(workload, workers, host_budget,
                              [sides[gathers]._replace(arenas=arenas) for gathers, arenas in tried], what, synthesis)
    return Choice(chosen, *tried[index])


def best_plan(workload: Workload, workers: Workers, host_budget: int, variants: list[Variant],
              what: str = "the parameter set", synthesis: Synthesis = NO_SCRATCH) -> tuple[int, MemoryPlan]:
    """(its index, the plan) of the variant of make_plan whose host side
    admits the most partitions (where host memory is short, a partition's
    size decides), then whose devices' estimates are the least, then the
    first; where none fits, HostMemoryError for the variant that comes
    nearest (the least host memory for one partition)."""
    made: list[tuple[tuple[int, float], int, MemoryPlan]] = []
    refusals: list[Refusal] = []
    for index, variant in enumerate(variants):
        devices, matvec, gathers, arenas = Variant(*variant)
        staged = workers if arenas is None else dataclasses.replace(workers, arenas=arenas)
        got = plan_or_refusal(workload, staged, host_budget, devices, matvec, what, synthesis, gathers)
        if isinstance(got, Refusal):
            refusals.append(got)
        else:
            made.append(((got.partitions, -sum(d.seconds for d in devices)), index, got))
    if not made:
        nearest = min(refusals, key=lambda r: r.need, default=None)
        raise HostMemoryError(nearest.text if nearest is not None else f"{what}: no plan to weigh")
    _, index, chosen = max(made, key=lambda m: m[0])     # (max keeps the first of equals)
    return index, chosen
