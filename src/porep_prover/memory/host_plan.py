# SPDX-License-Identifier: Apache-2.0
"""The host plan: what proving a parameter set's partitions holds in host
memory, item by item, beside each device's plan (memory.device_plan), against
one host budget; with them, one plan for host and device memory.

    MemoryPlan = make_plan(Workload, Workers, host budget, device plans)

The engine makes one when a parameter set is first loaded (an immutable
value kept with the set, shown in its log and by `porep-prover plan`), and
admits partitions by it (engine.memory): no synthesis starts that the plan
has no room for. Held while the set is loaded:

    SRS        its points: anonymous memory (decoded or made: the streamed
               arrays pinned in place), or, mapped from a file, the streamed
               arrays read once into page-locked memory and the rest page
               cache (counted where the host reads it every partition:
               B's G2 points for a G2 MSM on the host, every array on the CPU)
    circuit    the provider's circuit (its R1CS, as R1CS.host_bytes counts it)
    B_2        the B scalars a finalizer gathers for B's G2 MSM on the host
               (one a finalizer, with a device that evaluates A w, B w, C w)

and a partition in flight holds its assignment (the witness where the
devices evaluate A w, B w, C w; a, b, c, the witness and the queries'
scalars where the host does) from its synthesis's start to its
finalization's end: with devices, laid out in a page-locked arena (what
their uploads read without a copy; groth16.prover.synthesize's arena),
beside which a synthesis holds the provider's own witness until it is
copied in. The process's own bytes (the interpreter, the libraries, each
CUDA context's host side) come off the budget once, however many sets are
loaded. Pure arithmetic on sizes: no device, no allocation.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..errors import HostMemoryError
from .sizes import CONTEXT_BYTES, GIB, PROCESS_BYTES, SCALAR_BYTES
from .workload import ARRAYS, Workload

if TYPE_CHECKING:
    from .device_plan import DevicePlan


@dataclasses.dataclass(frozen=True)
class Synthesis:
    """What a synthesis of a provider holds while it runs: scratch, its
    bytes beside the witness (the provider's synthesis_bytes; 0: none said);
    into_arena: the provider writes the witness into the partition's arena
    itself (synthesize_into), so it holds no witness of its own."""
    scratch: int = 0
    into_arena: bool = False


NO_SCRATCH = Synthesis()       # a provider that says nothing of what its synthesis holds


@dataclasses.dataclass(frozen=True)
class Workers:
    """The engine's workers a plan counts: synthesis workers, devices (GPUs;
    0 where the CPU proves), device workers a device, finalizers (one a
    device worker), whether B's G2 MSM runs on the devices, and whether a
    partition is laid out in a device's page-locked arena as it is
    synthesized (prover.stage = "arena"), else copied into a device
    worker's staging arena before its kernel region."""
    synthesis: int
    devices: int
    per_device: int
    b_g2_on_device: bool = False
    arenas: bool = True

    @property
    def device_workers(self) -> int:
        return max(1, self.devices) * self.per_device

    @property
    def pipeline(self) -> int:
        """Partitions the workers can hold at once: one a synthesis worker,
        a device worker and a finalizer, and those waiting between them."""
        return self.synthesis + 2 * self.device_workers + self.device_workers


@dataclasses.dataclass(frozen=True)
class HostItem:
    """One line of a host plan: what it is, its bytes (each), how many, and
    whether they are page-locked."""
    name: str
    nbytes: int
    count: int = 1
    pinned: bool = False
    note: str = ""

    @property
    def total(self) -> int:
        return self.nbytes * self.count

    def line(self) -> str:
        each = f"{self.count} x {self.nbytes / GIB:.2f} GiB = " if self.count != 1 else ""
        tags = ", ".join(t for t in ("page-locked" if self.pinned else "", self.note) if t)
        return f"  {self.name:<28} {each}{self.total / GIB:7.2f} GiB" + (f"  ({tags})" if tags else "")


@dataclasses.dataclass(frozen=True)
class MemoryPlan:
    """Host and device memory for one parameter set (see the module).

    host_budget: the process's host budget; base: the process's own bytes
    (counted once per process); held: what the set holds while loaded;
    partition: what one partition in flight holds (page-locked: an arena,
    where there are devices); synthesis: what a synthesis holds beside its
    partition while it runs (the provider's scratch, and its witness until
    copied into the arena; None: nothing); partitions: how many the budget admits at once beside base and
    held (at least 1, at most the workers' pipeline); devices: the devices'
    plans (none on the CPU); matvec_on_device: the devices evaluate A w,
    B w, C w (their plans keep the circuit's matrices); gathers: they take
    the queries' scalars from the witness themselves where the host
    evaluates A w, B w, C w (every plan's gathers)."""
    host_budget: int
    base: HostItem
    held: tuple[HostItem, ...]
    partition: HostItem
    partitions: int
    workers: Workers
    devices: tuple[DevicePlan, ...] = ()
    matvec_on_device: bool = False
    synthesis: HostItem | None = None
    gathers: bool = False

    @property
    def device(self) -> DevicePlan | None:
        """The first device's plan (None on the CPU)."""
        return self.devices[0] if self.devices else None

    @property
    def held_bytes(self) -> int:
        return sum(item.total for item in self.held)

    @property
    def peak_bytes(self) -> int:
        """Host bytes at the plan's peak: the base, what is held, every
        admitted partition, and beside as many of them as there are synthesis
        workers, a synthesis's own."""
        return self.base.total + self.held_bytes + _partitions_bytes(self.partitions, self.partition,
                                                                      self.synthesis, self.workers)

    @property
    def pinned_bytes(self) -> int:
        return sum(item.total for item in self.held if item.pinned)

    def describe(self) -> list[str]:
        """The plan in lines, for a terminal or a log: the host side, then the device's."""
        g, w = GIB, self.workers
        where = f"{w.devices} GPU(s) x {w.per_device} workers" if w.devices else "the CPU"
        g2 = "device" if w.b_g2_on_device and w.devices else "host"
        lines = [f"host budget {self.host_budget / g:.1f} GiB; planned peak {self.peak_bytes / g:.1f} GiB "
                 f"({w.synthesis} synthesis workers, {where}; B's G2 MSM on the {g2})", self.base.line()]
        lines += [item.line() for item in self.held]
        lines.append(self.partition.line())
        if self.synthesis is not None:
            lines.append(self.synthesis.line())
        room = f"{self.partitions} partitions in flight at once"
        if self.partitions >= w.pipeline:
            room += " (as many as the workers hold)"
        elif self.partitions <= w.device_workers:
            room += " (fewer than the device workers and one more: the devices may wait on synthesis)"
        lines.append(f"  admits {room}")
        for plan in dict.fromkeys(self.devices):       # each distinct device plan once
            lines += plan.describe()
        return lines


@dataclasses.dataclass(frozen=True)
class Refusal:
    """Why a plan cannot be made: the host bytes one partition in flight
    needs (need) and the one line HostMemoryError says (text)."""
    need: int
    text: str


def make_plan(workload: Workload, workers: Workers, host_budget: int, devices: tuple[DevicePlan, ...] = (),
              matvec: bool = False, what: str = "the parameter set", synthesis: Synthesis = NO_SCRATCH,
              gathers: bool = False) -> MemoryPlan:
    """The host plan of workload beside the devices' plans (none: no device
    plans its memory, as the CPU); matvec: the devices evaluate A w, B w,
    C w (a partition in flight then holds its witness alone); synthesis:
    what a synthesis holds while it runs; gathers: the devices gather the
    queries' scalars (a partition holds a, b, c and the witness alone).
    HostMemoryError, one line naming what does not fit and the options,
    when the budget leaves no room for one partition beside what the set
    holds."""
    made = plan_or_refusal(workload, workers, host_budget, devices, matvec, what, synthesis, gathers)
    if isinstance(made, Refusal):
        raise HostMemoryError(made.text)
    return made


def plan_or_refusal(workload: Workload, workers: Workers, host_budget: int, devices: tuple[DevicePlan, ...],
                    matvec: bool, what: str, synthesis: Synthesis, gathers: bool) -> MemoryPlan | Refusal:
    """make_plan's plan, or its refusal as a value (what a choice among
    plans weighs: memory.choice)."""
    base = process_item(workers)
    gathers = gathers and not matvec
    held = _held(workload, workers, devices, matvec, gathers)
    arenas = workers.devices > 0 and workers.arenas
    what_in = "its witness" if matvec else "a, b, c and the witness" if gathers \
        else "a, b, c, the witness and the queries' scalars"
    own = 0 if synthesis.into_arena or not arenas else workload.witness_bytes
    if arenas:
        partition = HostItem("a partition in flight", workload.arena_bytes(matvec, gathers), pinned=True,
                             note=f"an arena: {what_in}")
    else:
        partition = HostItem("a partition in flight", workload.witness_bytes if matvec
                             else workload.host_assignment_bytes, note=what_in)
    running: HostItem | None = None
    if own + synthesis.scratch:
        note = ("the provider's witness until copied into its arena, " if own else "") + "its scratch"
        running = HostItem("a synthesis running", own + synthesis.scratch, min(workers.synthesis, workers.pipeline),
                           note=note)
    room = host_budget - base.total - sum(item.total for item in held)
    count = 0
    while count < workers.pipeline and _partitions_bytes(count + 1, partition, running, workers) <= room:
        count += 1
    if count < 1:
        return _refusal(what, host_budget, base, held, partition, workers, devices, workload, running,
                        matvec or gathers)
    if running is not None:       # as many at once as there are synthesis workers and partitions admitted
        running = dataclasses.replace(running, count=min(count, workers.synthesis))
    return MemoryPlan(host_budget, base, held, partition, count, workers, tuple(devices), matvec, running, gathers)


def _partitions_bytes(count: int, partition: HostItem, synthesis: HostItem | None, workers: Workers) -> int:
    """Host bytes of count partitions in flight, as many of them synthesized at once as there are synthesis workers."""
    beside = synthesis.nbytes * min(count, workers.synthesis) if synthesis is not None else 0   # (not its count)
    return count * partition.total + beside


def process_item(workers: Workers) -> HostItem:
    """The process's own bytes: the interpreter and libraries, each device's context."""
    return HostItem("process (interpreter, contexts)", PROCESS_BYTES + CONTEXT_BYTES * workers.devices)


def _held(workload: Workload, workers: Workers, devices: tuple[DevicePlan, ...], matvec: bool,
          gathers: bool = False) -> tuple[HostItem, ...]:
    """What the set holds while loaded (see the module)."""
    items = list(_srs(workload, workers, devices))
    if workload.circuit_bytes is None:
        items.append(HostItem("circuit", 0, note="not known before its first partition: counted then"))
    else:
        items.append(HostItem("circuit", workload.circuit_bytes))
    if workers.devices and not workers.arenas:
        items.append(HostItem("staging arenas", workload.arena_bytes(matvec, gathers), workers.device_workers,
                              pinned=True, note="a device worker's copy of its partition's uploads"))
    if not workers.b_g2_on_device and matvec:
        items.append(HostItem("B_2's scalars", SCALAR_BYTES * workload.b_count, workers.device_workers,
                              note="gathered by each finalizer"))
    return tuple(items)


def _srs(workload: Workload, workers: Workers, devices: tuple[DevicePlan, ...]) -> list[HostItem]:
    """The SRS's items: its anonymous points, or a mapping's page-locked copy and the page cache it relies on."""
    streamed = {name for d in devices for name in d.streamed}
    if not workers.b_g2_on_device:
        streamed.discard("b_g2")
    streamed_bytes = sum(workload.array_bytes(n) for n in streamed)
    if not workload.mapped:
        note = f"{streamed_bytes / GIB:.2f} GiB of it pinned in place for streaming" if streamed_bytes else ""
        return [HostItem("SRS points", workload.srs_bytes, note=note)]
    items = []
    if streamed_bytes:
        items.append(HostItem("SRS streamed arrays", streamed_bytes, pinned=True,
                              note="read from the file once; its pages dropped"))
    # the host reads these every partition: the CPU's MSMs read every array, B's G2 MSM on the host its points
    hot = set(ARRAYS) if not devices else (set() if workers.b_g2_on_device else {"b_g2"})
    hot -= streamed
    if hot:
        items.append(HostItem("SRS page cache", sum(workload.array_bytes(n) for n in hot),
                              note="mapped, read every partition: " + ", ".join(n for n in ARRAYS if n in hot)))
    return items


def _refusal(what: str, budget: int, base: HostItem, held: tuple[HostItem, ...], partition: HostItem,
             workers: Workers, devices: tuple[DevicePlan, ...], workload: Workload,
             synthesis: HostItem | None, scalars_on_device: bool = False) -> Refusal:
    """What one partition needs, and one line: what does not fit, by its
    items, and the options (scalars_on_device: the queries' scalars are not
    gathered on the host)."""
    one = [partition] + ([dataclasses.replace(synthesis, count=1)] if synthesis is not None else [])
    need = base.total + sum(i.total for i in held) + sum(i.total for i in one)
    parts = ", ".join(f"{i.name} {i.total / GIB:.1f}" for i in (base, *held, *one) if i.total)
    options = []
    if workers.devices and workers.per_device > 1:
        options.append("fewer device workers (engine.gpu_workers_per_device)")
    if devices and not all(d.matrices for d in devices):
        options.append(f"a larger device budget (engine.device_memory_gib), so that the devices evaluate "
                       f"A w, B w, C w ({workload.witness_bytes / GIB:.1f} GiB a partition instead of "
                       f"{workload.host_assignment_bytes / GIB:.1f})")
    if devices and not scalars_on_device:
        options.append("the queries' scalars gathered on the device (prover.gather = \"device\")")
    if workers.devices and not workers.arenas:
        options.append("partitions synthesized into page-locked arenas (prover.stage = \"arena\")")
    if workers.devices and not workers.b_g2_on_device:
        options.append("B's G2 MSM on the device (prover.b_g2 = \"device\")")
    options.append("a larger host budget (engine.memory_budget_gib)")
    return Refusal(need, f"{what} does not fit a host budget of {budget / GIB:.1f} GiB: it needs {need / GIB:.1f} "
                         f"GiB for one partition in flight ({parts} GiB); options: " + "; ".join(options))
