# SPDX-License-Identifier: Apache-2.0
"""`porep-prover plan` (also `gpu plan`): the memory plan an engine makes for
a workload, host and device side (memory.host_plan.MemoryPlan, with the
devices' memory.device_plan.DevicePlan), made by the engine's own planning
(memory.plan_set), without a GPU: the workload by its
statistics (a 32 GiB PoRep partition's, scaled), or (-t porep) the real
PoRep circuit of a sector size as the "porep" provider says it before its
parameters exist (srs_shape, circuit_stats, circuit_bytes, synthesis_bytes:
its matrices, witness program and synthesis scratch counted, nothing made),
the budgets and the workers as the engine's settings would give them."""
from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, TypedDict, cast

from ..memory.sizes import GIB
from . import arguments

if TYPE_CHECKING:
    from ..memory.choice import Choice
    from ..memory.host_plan import Synthesis
    from ..memory.workload import Workload


class CircuitStats(TypedDict):
    """A circuit by its statistics (memory.workload.Workload.estimated's arguments)."""
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
GATHERS = ("auto", "host", "device")          # prover.gather's choices (memory.choice.GATHERS)
STAGES = ("auto", "prepare", "arena")         # prover.stage's choices (memory.choice.STAGES)
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
    under the plan's arguments, by the engine's own planning
    (memory.plan_set: --gather and --stage as prover.gather and
    prover.stage, each of --devices planned by the device model a GPU
    backend plans by); HostMemoryError, the engine's refusal, when none
    fits."""
    from ..memory.budgets import default_host_budget
    from ..memory.choice import DeviceAsk, Ways, plan_set
    from ..memory.costs import UPLOAD_RATE
    from ..memory.device_plan import DeviceModel
    from ..memory.host_plan import Workers
    rate = UPLOAD_RATE if args.upload_gbps is None else args.upload_gbps * 1e9
    stats, workload, synthesis = provider_workload(args) if args.workload == "porep" else statistics_workload(args)
    if args.circuit_gib is not None:
        workload = dataclasses.replace(workload, circuit_bytes=int(args.circuit_gib * GIB))
    workers = Workers(args.synthesis_workers or max(1, (os.cpu_count() or 2) // 2), args.devices, args.workers,
                      args.b_g2 == "device", args.stage == "arena")
    model = DeviceModel(args.table_copies, rate, args.pairs)
    devices = [DeviceAsk(f"gpu{i}", model, int(args.device_memory_gib * GIB)) for i in range(args.devices)]
    budget = int(args.host_memory_gib * GIB) if args.host_memory_gib else default_host_budget()
    what = f"{args.workload} at {args.sector_size} bytes" if args.workload == "porep" \
        else f"{args.workload} at scale {args.scale:g}"
    return stats, plan_set(workload, workers, budget, Ways.of(args.gather, args.stage, args.devices), devices,
                           args.matvec == "device" and args.devices > 0, what, synthesis)


def statistics_workload(args) -> tuple[CircuitStats, Workload, Synthesis]:
    """A 32 GiB PoRep partition's statistics scaled, its workload (the
    circuit its matrices' estimate, on the devices where --matvec device)
    and what a porep-shaped synthesis holds."""
    from ..memory.host_plan import Synthesis
    from ..memory.workload import Workload
    stats = POREP_32G.copy()
    stats["constraints"] = max(1, round(stats["constraints"] * args.scale))
    stats["aux"] = max(1, round(stats["aux"] * args.scale))
    circuit = Workload.estimated(**stats).matrix_bytes
    workload = Workload.estimated(**stats, on_device=args.matvec == "device", mapped=args.mapped,
                                  circuit_bytes=circuit)
    # the porep-shaped provider writes each witness into its arena, its witness program holding ~26 bytes a variable
    return stats, workload, Synthesis(SCRATCH_A_VARIABLE * (stats["inputs"] + stats["aux"]), into_arena=True)


def provider_workload(args) -> tuple[CircuitStats, Workload, Synthesis]:
    """The "porep" provider's partition circuit of --sector-size as it says it
    before its parameters exist: their shape (srs_shape), the circuit's
    statistics (circuit_stats), the host bytes it keeps for the circuit
    (circuit_bytes: its matrices and witness program, at least the matrices'
    estimate) and what a synthesis holds (synthesis_bytes, synthesize_into).
    InvalidInputError when --scale is given or no provider says them."""
    from ..engine import Job
    from ..errors import InvalidInputError
    from ..hooks import collect_registry, plugin_manager
    from ..memory.host_plan import Synthesis
    from ..memory.workload import Workload
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
    matrices = Workload.estimated(**stats).matrix_bytes
    # the arrays as the provider counts them (not as the statistics round them), as the engine plans them
    workload = Workload(dataclasses.replace(shape, mapped=args.mapped), max(p.circuit_bytes(job), matrices),
                        matrices if args.matvec == "device" else 0)
    synthesis = Synthesis(p.synthesis_bytes(job), callable(getattr(provider, "synthesize_into", None)))
    return stats, workload, synthesis


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
