# SPDX-License-Identifier: Apache-2.0
"""`porep-prover plan` (also `gpu plan`): the memory plan an engine makes for
a workload, host and device side (engine.memory_plan.MemoryPlan, with the
devices' backend.device_plan.DevicePlan), without a GPU: the workload by its
statistics (a 32 GiB PoRep partition's, scaled), or (-t porep) the real
PoRep circuit of a sector size as the "porep" provider says it before its
parameters exist (srs_shape, circuit_stats, circuit_bytes, synthesis_bytes:
its matrices, witness program and synthesis scratch counted, nothing made),
the budgets and the workers as the engine's settings would give them."""
from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, TypedDict, cast

from . import arguments

if TYPE_CHECKING:
    from ..backend.device_plan import SrsArrays
    from ..engine.memory_plan import HostWorkload, Synthesis
    from ..engine.plan_choice import Choice
    from ..engine.srs_shape import SrsShape


class CircuitStats(TypedDict):
    """A circuit by its statistics (backend.device_plan.Workload.estimated's arguments)."""
    constraints: int
    inputs: int
    aux: int
    a_density: float
    b_density: float
    nonzeros: tuple[float, float, float]


# A 32 GiB PoRep partition's statistics (bellperson's StackedCircuit; the porep-shaped circuit mimics them):
# constraints, inputs with the constant one, aux variables, A's and B's shares of the aux, nonzeros a row
POREP_32G: CircuitStats = {"constraints": 130_278_869, "inputs": 329, "aux": 130_169_893, "a_density": 0.997,
                           "b_density": 0.254, "nonzeros": (2.4, 1.0, 2.2)}
GIB = 1 << 30
GATHERS = ("auto", "host", "device")          # prover.gather's choices (engine.plan_choice.GATHERS)
STAGES = ("auto", "prepare", "arena")         # prover.stage's choices (engine.plan_choice.STAGES)
SCRATCH_A_VARIABLE = 26      # bytes the porep-shaped witness program holds a variable while it runs (its bits, words,
#                              slots and indices, and its full elements twice)


def cmd_plan(args) -> int:
    """The memory plan of a workload under the budgets, host and device, the
    way chosen as the engine chooses it (choose): exit 0; the refusal the
    engine would make (one line, exit 2) when it does not fit."""
    stats, chosen = choose(args)
    named = f"a partition of {args.sector_size:,}-byte sectors, its circuit counted by its provider" \
        if args.workload == "porep" else f"scale {args.scale:g}"
    print(f"workload: {args.workload} at {named}: {stats['constraints']:,} constraints, "
          f"{stats['aux']:,} aux variables")
    if args.devices:
        print(f"chosen: the queries' scalars gathered on the {'device' if chosen.plan.gathers else 'host'}, "
              f"partitions {'synthesized into arenas' if chosen.arenas else 'staged by copies'} "
              f"(prover.gather = {args.gather}, prover.stage = {args.stage})")
    for line in chosen.plan.describe():
        print(line)
    return 0


def choose(args) -> tuple[CircuitStats, Choice]:
    """The workload's statistics (a 32 GiB PoRep partition's, scaled, or the
    porep provider's circuit) and the way the engine would choose for it
    under the plan's arguments, by the engine's own choice
    (engine.plan_choice.choose_plan, --gather and --stage as prover.gather
    and prover.stage), every device planned by one model; HostMemoryError,
    the engine's refusal, when none fits."""
    from ..backend.device_plan import UPLOAD_RATE, Workload, plan
    from ..engine.memory import default_host_budget
    from ..engine.memory_plan import Workers
    from ..engine.plan_choice import Variant, Ways, choose_plan
    rate = UPLOAD_RATE if args.upload_gbps is None else args.upload_gbps * 1e9
    stats, host, synthesis, shape = provider_workload(args) if args.workload == "porep" \
        else statistics_workload(args)
    g2 = args.b_g2 == "device"
    workers = Workers(args.synthesis_workers or max(1, (os.cpu_count() or 2) // 2), args.devices, args.workers, g2,
                      args.stage == "arena")
    device = Workload.estimated(**stats, on_device=args.matvec == "device", workers=args.workers,
                                table_copies=args.table_copies, g2=g2)
    if shape is not None:       # the arrays as the provider counts them, not as the statistics round them
        # (a shape's arrays stand for the set's points, as the engine's plans read them: engine.planning)
        device = dataclasses.replace(device, arrays=Workload.of(cast("SrsArrays", shape.arrays()), g2=g2).arrays)

    def device_side(gathers: bool) -> Variant:
        if not args.devices:
            return Variant((), False, False)
        made = plan(device, int(args.device_memory_gib * GIB), rate=rate, pairs=args.pairs, gathers=gathers)
        return Variant.of((made,) * args.devices, args.matvec == "device")
    if args.circuit_gib is not None:
        host = dataclasses.replace(host, circuit_bytes=int(args.circuit_gib * GIB))
    budget = int(args.host_memory_gib * GIB) if args.host_memory_gib else default_host_budget()
    what = f"{args.workload} at {args.sector_size} bytes" if args.workload == "porep" \
        else f"{args.workload} at scale {args.scale:g}"
    return stats, choose_plan(host, workers, budget, Ways.of(args.gather, args.stage, args.devices), device_side,
                              what, synthesis)


def statistics_workload(args) -> tuple[CircuitStats, HostWorkload, Synthesis, None]:
    """A 32 GiB PoRep partition's statistics scaled, its host workload (the
    circuit its matrices' estimate) and what a porep-shaped synthesis holds."""
    from ..backend.device_plan import Workload
    from ..engine.memory_plan import HostWorkload, Synthesis
    stats = POREP_32G.copy()
    stats["constraints"] = max(1, round(stats["constraints"] * args.scale))
    stats["aux"] = max(1, round(stats["aux"] * args.scale))
    circuit = Workload.estimated(**stats, on_device=True).matrix_bytes
    host = HostWorkload.estimated(stats["constraints"], stats["inputs"], stats["aux"], stats["a_density"],
                                  stats["b_density"], args.mapped, circuit)
    # the porep-shaped provider writes each witness into its arena, its witness program holding ~26 bytes a variable
    return stats, host, Synthesis(SCRATCH_A_VARIABLE * (stats["inputs"] + stats["aux"]), into_arena=True), None


def provider_workload(args) -> tuple[CircuitStats, HostWorkload, Synthesis, SrsShape]:
    """The "porep" provider's partition circuit of --sector-size as it says it
    before its parameters exist: their shape (srs_shape), the circuit's
    statistics (circuit_stats), the host bytes it keeps for the circuit
    (circuit_bytes: its matrices and witness program, at least the matrices'
    estimate) and what a synthesis holds (synthesis_bytes, synthesize_into).
    InvalidInputError when --scale is given or no provider says them."""
    from ..backend.device_plan import Workload
    from ..engine import Job
    from ..engine.memory_plan import HostWorkload, Synthesis
    from ..errors import InvalidInputError
    from ..hooks import collect_registry, plugin_manager
    if args.scale != 1:
        raise InvalidInputError("-t porep plans the real circuit of a sector size (--sector-size), not a scale")
    provider = collect_registry(plugin_manager()).provider("porep")
    needed = ("srs_shape", "circuit_stats", "circuit_bytes", "synthesis_bytes")
    missing = [name for name in needed if not callable(getattr(provider, name, None))]
    if missing:
        raise InvalidInputError(f"the porep provider {type(provider).__name__} does not say {', '.join(missing)}")
    job = Job("porep", 1, {"sector_size": args.sector_size})
    p = cast(Any, provider)
    shape, stats = p.srs_shape(job), cast(CircuitStats, p.circuit_stats(job))
    circuit = max(p.circuit_bytes(job), Workload.estimated(**stats, on_device=True).matrix_bytes)
    host = dataclasses.replace(HostWorkload.of_shape(dataclasses.replace(shape, mapped=args.mapped)),
                               circuit_bytes=circuit)
    synthesis = Synthesis(p.synthesis_bytes(job), callable(getattr(provider, "synthesize_into", None)))
    return stats, host, synthesis, shape


def add_arguments(pl) -> None:
    """The plan's arguments (the same for `plan` and `gpu plan`)."""
    pl.add_argument("-t", "--workload", choices=("porep-shaped", "porep-32g", "porep"), default="porep-shaped",
                    help="a 32 GiB PoRep partition's statistics (the porep-shaped circuit's), or porep: the real "
                         "circuit of --sector-size as the porep provider counts it (no parameters made)")
    pl.add_argument("--scale", type=arguments.fraction, default=1.0,
                    help="the statistics' partition scaled (above 0, at most 1)")
    pl.add_argument("--sector-size", type=arguments.integer(1, 1 << 40), default=32 << 30,
                    help="-t porep: the sector size in bytes (default 34359738368, 32 GiB)")
    pl.add_argument("--device-memory-gib", type=arguments.number(1, 1 << 20), default=80.0,
                    help="the device budget in GiB (1 to 2^20; default 80)")
    pl.add_argument("--host-memory-gib", type=arguments.number(1, 1 << 20), default=None,
                    help="the host budget in GiB (engine.memory_budget_gib; default: this host's memory, or its "
                         "cgroup's limit, less the margin)")
    pl.add_argument("--devices", type=arguments.integer(0, 64), default=1,
                    help="GPUs (0 to 64; 0: the CPU proves; default 1)")
    pl.add_argument("--matvec", choices=("device", "host"), default="device",
                    help="where A w, B w, C w are evaluated (device: the matrices resident if they fit)")
    pl.add_argument("--stage", choices=STAGES, default="auto",
                    help="a partition copied into page-locked memory before its region, or synthesized there "
                         "(prover.stage; auto: the way that admits more partitions)")
    pl.add_argument("--gather", choices=GATHERS, default="auto",
                    help="where the queries' scalars are gathered when A w, B w, C w run on the host (prover.gather; "
                         "auto: the way that admits more partitions)")
    pl.add_argument("--b-g2", choices=("device", "host"), default="device",
                    help="where B's G2 MSM runs (prover.b_g2; host: its points are no part of the device plan)")
    pl.add_argument("--workers", type=arguments.integer(1, 16), default=2,
                    help="device workers a device (1 to 16; engine.gpu_workers_per_device)")
    pl.add_argument("--synthesis-workers", type=arguments.integer(0, 256), default=0,
                    help="synthesis workers (0 to 256; engine.partition_workers; 0: half this host's cores)")
    pl.add_argument("--mapped", action="store_true",
                    help="the parameters mapped from a .pmap file (streamed arrays read into page-locked memory, "
                         "the rest page cache) rather than held in anonymous memory")
    pl.add_argument("--circuit-gib", type=arguments.number(0, 1 << 20), default=None,
                    help="the circuit's host bytes in GiB (default: its matrices' estimate from the statistics)")
    pl.add_argument("--table-copies", type=arguments.integer(0, 64), default=0,
                    help="H window-table copies wanted (0 to 64)")
    pl.add_argument("--upload-gbps", type=arguments.number(0.1, 1000), default=None,
                    help="pinned upload rate for the plan and its transfer floor, GB/s (default: the model's, "
                         "an H100 host's measured rate)")
    pl.add_argument("--pairs", action="store_true",
                    help="also weigh two partitions a region sharing each streamed pass (on paper: the engine "
                         "runs one partition a region)")
    pl.set_defaults(func=cmd_plan)


def register(sub, common) -> None:
    pl = sub.add_parser("plan", help="the memory plan of a workload, host and device (no GPU needed)")
    add_arguments(pl)
