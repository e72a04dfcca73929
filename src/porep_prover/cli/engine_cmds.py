# SPDX-License-Identifier: Apache-2.0
"""`porep-prover timeline` and `porep-prover bench batch | sweep` (the engine's commands).

Engine commands take --config FILE (TOML, see contrib/porep-prover.example.toml)
and --set section.key=value (repeatable) to override any setting, before the
command (global) or after it; bench's --threads N is --set engine.threads=N.
timeline reads the log named by logging.timeline when no LOG is given."""
from __future__ import annotations

import json
import os
import tempfile

from ..errors import InvalidInputError
from . import arguments

# The engine (toml, pluggy, threads), numpy and rich are imported by these
# commands only, when they run: the other commands start without them.

def cmd_timeline(args) -> int:
    from ..bench.plots import gantt
    from ..engine.timeline import analyze, format_report, read_log
    log = args.log or read_config(args).get("logging.timeline")
    if not log:
        raise InvalidInputError("timeline: name the LOG, or give --config with logging.timeline set")
    events = read_log(log)
    if not events:
        print(f"{log}: no timeline events (TIMELINE lines, or JSON records with an event)")
        return 1
    stats = analyze(events)
    print(json.dumps(stats, indent=1) if args.json else format_report(stats))
    if args.gantt:
        gantt(events, args.gantt)
        print(f"gantt chart: {args.gantt}")
    return 0


def read_config(args, extra: dict | None = None):
    """The settings of --config and --set, read against every section
    installed (the engine's, the daemon's, the plugins')."""
    from ..engine import load_config
    from ..hooks import installed_settings
    overrides = list(args.set or [])
    if getattr(args, "threads", None) is not None:
        overrides.append(f"engine.threads={args.threads}")
    cfg = load_config(args.config, overrides, sections=installed_settings())
    return cfg.replace(**extra) if extra else cfg


def _workload(args):
    """-t demo: the built-in demo circuit; -t KIND: jobs for the provider of that kind."""
    from ..bench import DemoWorkload, KindWorkload
    from ..engine.config import parse_entry
    from . import progress
    if args.type == "demo":
        with progress.display(args) as shown:
            return DemoWorkload(args.circuit, args.constraints, args.partitions or 4, args.witnesses,
                                progress=shown.callback(prefix="setup "))
    payload = {"seed": args.seed} | ({"scale": args.scale} if args.scale is not None else {})
    payload |= {"c1": args.c1} if args.c1 is not None else {}
    payload.update(parse_entry(item) for item in args.payload or [])
    partitions = args.partitions or _kind_partitions(args.type, payload)
    print(f"workload: {args.type} jobs of {partitions} partitions, payload {payload}")
    return KindWorkload(args.type, partitions, payload)


def _kind_partitions(kind: str, payload: dict) -> int:
    """A job's partitions as its provider counts them from the payload (its
    optional partitions(payload), e.g. a commit-phase-1 output's), else 4."""
    from ..hooks import collect_registry, plugin_manager
    count = getattr(collect_registry(plugin_manager()).provider(kind), "partitions", None)
    return count(payload) if count is not None else 4


def _engine(cfg):
    from ..engine import Engine
    from ..hooks import collect_registry, plugin_manager
    pm = plugin_manager()
    return Engine(cfg, registry=collect_registry(pm), plugins=pm)


def _with_logging(cfg, fn):
    """fn(cfg) with the logging cfg sets up. Without logging.timeline the
    events go to a temporary file (off the console), removed at the end: the
    run's report already holds what they say."""
    from ..engine.logs import configure_logging, remove_handlers
    timeline = cfg.get("logging.timeline")
    tmp = None
    if not timeline:
        fd, tmp = tempfile.mkstemp(prefix="porep-prover-timeline-", suffix=".log")
        os.close(fd)
        cfg = cfg.replace(**{"logging.timeline": tmp})
    handlers = []
    try:
        handlers = configure_logging(cfg)
        return fn(cfg)
    finally:
        remove_handlers(handlers)
        if tmp is not None:
            os.unlink(tmp)
        else:
            print(f"timeline log: {timeline}")


def cmd_bench_batch(args) -> int:
    from ..bench import ReportFile, gantt, run_batch, warm_up
    from ..bench.batch import describe_row
    from ..bench.memory_watch import MemoryWatch
    from . import progress
    cfg = read_config(args)
    work = _workload(args)
    # every job's row written as it ends (a run stopped by a limit keeps them), the report's figures at the end
    report_file = ReportFile(args.json, "jobs", config=cfg.values, done=False)

    watch: list[MemoryWatch] = []

    def told(count: int, warm: bool = False):
        def on_job(row: dict) -> None:
            if watch:
                row |= watch[0].row()         # the host's memory at its highest so far
            if warm:
                report_file.set(warm_up=row)
            else:
                report_file.add(row)
            print(("warm-up " if warm else "") + describe_row(row, count), flush=True)     # once in the file
        return on_job

    def run(cfg):
        engine = _engine(cfg)
        try:
            with progress.display(args) as shown, MemoryWatch(engine) as memory:
                watch.append(memory)
                if args.warmup:
                    warm_up(engine, work, shown.callback("jobs", prefix="warm-up "), told(1, warm=True))
                report = run_batch(engine, work.job, args.count, args.concurrency,
                                   progress=shown.callback("jobs", prefix="batch "), on_job=told(args.count))
                figures = memory.figures()
            events = engine.timeline.events()
        finally:
            engine.shutdown(wait=True)
        for line in report.lines():
            print(line)
        print(f"host memory: planned peak {figures['host_planned_peak_gib']:.1f} GiB, measured peak in use "
              f"{figures['host_peak_gib']:.1f} GiB (process {figures['rss_peak_gib']:.1f} GiB, page-locked "
              f"{figures['pinned_peak_gib']:.1f} GiB), budget {figures['host_budget_gib']:.1f} GiB, "
              f"{figures['partitions_admitted']} partitions admitted in flight")
        for label, d in figures["devices"].items():
            print(f"device {label} memory: planned peak {d.get('planned') or 0:.1f} GiB, measured peak "
                  f"{d.get('peak') or 0:.1f} GiB, budget {d.get('budget') or 0:.1f} GiB, "
                  f"dropped {d.get('dropped') or 0:.2f} GiB")
        if args.gantt:
            gantt(events, args.gantt)
            print(f"gantt chart: {args.gantt}")
        report_file.set(done=True, seconds_per_proof=report.seconds_per_proof,
                        steady_seconds_per_proof=report.steady_seconds_per_proof, wall=report.wall,
                        latency=report.latency, queue_wait=report.queue_wait, devices=report.devices,
                        failed=report.failed, memory=figures)
        return 1 if report.failed else 0

    return _with_logging(cfg, run)


def cmd_bench_sweep(args) -> int:
    from ..bench import plot_sweep, sweep, warm_up, write_csv
    from ..bench.sweep import table
    from ..engine.config import parse_sweep
    from . import progress
    base = read_config(args)
    key, values = parse_sweep(args.sweep, base.sections)
    for v in values:  # every point is a valid configuration before anything runs
        base.replace(**{key: v})
    work = _workload(args)

    def run(cfg):
        with progress.display(args) as shown:
            def make_engine(change):
                engine = _engine(cfg.replace(**change))
                if args.warmup:
                    warm_up(engine, work, shown.callback("jobs", prefix=f"warm-up {_setting(change)} "))
                return engine
            # the CSV written again after every batch: a run stopped by a limit keeps every batch it finished
            written = (lambda so_far: write_csv(key, so_far, args.csv)) if args.csv else None
            rows = sweep(key, values, make_engine, work.job, args.count, args.concurrency, args.repeats,
                         shown.callback("jobs"), written)
        for line in table(key, rows):
            print(line)
        if args.csv:
            write_csv(key, rows, args.csv)
            print(f"csv: {args.csv}")
        if args.plot:
            plot_sweep(key, rows, args.plot)
            print(f"plot: {args.plot}")
        return 1 if any(r.failed for _, reports in rows for r in reports) else 0

    return _with_logging(base, run)


def _setting(change: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in change.items())


def engine_options(p) -> None:
    p.add_argument("--config", help="engine settings (TOML; replaces a --config given before the command)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a setting (repeatable; after those given before the command)")


def _workload_options(p) -> None:
    engine_options(p)
    p.add_argument("--threads", type=arguments.THREADS, default=None,
                   help=f"CPU threads of each native kernel call, 1 to {arguments.MAX_THREADS} "
                        "(--set engine.threads=N; default: the setting's)")
    p.add_argument("-c", "--count", type=arguments.JOBS, default=4,
                   help=f"jobs (proofs) to run, 1 to {arguments.MAX_JOBS}")
    p.add_argument("-j", "--concurrency", type=arguments.PARTITIONS, default=2,
                   help=f"jobs in flight at once, 1 to {arguments.MAX_PARTITIONS}")
    p.add_argument("--partitions", type=arguments.PARTITIONS, default=None,
                   help=f"partitions per job, 1 to {arguments.MAX_PARTITIONS} (default 4, or for -t KIND what its "
                        "provider counts in the payload, e.g. a commit-phase-1 output's)")
    p.add_argument("--constraints", type=arguments.CONSTRAINTS, default=1 << 14,
                   help=f"constraints per partition, 1 to {arguments.MAX_CONSTRAINTS}")
    p.add_argument("-t", "--type", default="demo",
                   help='job kind: "demo" (the --circuit below, in memory) or a provider\'s kind, '
                        'e.g. porep-shaped (plugin porep-prover-porep-shaped)')
    p.add_argument("--scale", type=arguments.fraction, default=None,
                   help="payload scale, above 0 and at most 1 (porep-shaped: of a 32 GiB partition)")
    p.add_argument("--seed", type=arguments.SEED, default=0,
                   help="payload seed, 0 to 2^64 - 1 (the circuit's, for porep-shaped)")
    p.add_argument("--c1", metavar="PATH", help="a commit-phase-1 output for -t porep (payload c1=PATH; plugin "
                                                "porep-prover-porep)")
    p.add_argument("--payload", action="append", metavar="KEY=VALUE",
                   help="another payload entry for -t KIND (value read as TOML, e.g. save=false)")
    p.add_argument("--circuit", choices=arguments.CIRCUITS, default="porep-like")
    p.add_argument("--witnesses", type=arguments.PARTITIONS, default=None,
                   help="distinct witnesses the partitions cycle through, 1 to "
                        f"{arguments.MAX_PARTITIONS} (default: one per partition)")
    p.add_argument("--no-warmup", dest="warmup", action="store_false",
                   help="do not run one job first (kernel compilation, parameter upload; its id starts with "
                        "warm-up-, and Gantt charts leave it out)")
    arguments.progress_option(p)


def register(sub, common) -> None:
    p = sub.add_parser("timeline", help="GPU efficiency, gaps, lock wait/hold and stages from an engine log")
    p.add_argument("log", nargs="?", help="a log holding TIMELINE lines or JSON records (logging.format); default: the "
                   "setting logging.timeline")
    p.add_argument("--gantt", metavar="PNG", help="also draw the workers' Gantt chart")
    p.add_argument("--json", action="store_true", help="the numbers as JSON")
    engine_options(p)
    p.set_defaults(func=cmd_timeline)

    b = sub.add_parser("bench", help="engine throughput benchmarks").add_subparsers(dest="action", required=True)
    p = b.add_parser("batch", help="COUNT jobs, CONCURRENCY in flight: seconds per proof, latency, GPU efficiency")
    _workload_options(p)
    p.add_argument("--gantt", metavar="PNG", help="draw the run's Gantt chart")
    p.add_argument("--json", metavar="OUT", help="write the numbers as JSON")
    p.set_defaults(func=cmd_bench_batch)
    p = b.add_parser("sweep", help="one batch per value of a setting, each on a fresh engine")
    p.add_argument("sweep", metavar="KEY=V1,V2,...", help="e.g. engine.partition_workers=2,4,8")
    _workload_options(p)
    p.add_argument("--repeats", type=arguments.REPEATS, default=3,
                   help=f"batches per value, on its engine one after another, 1 to {arguments.MAX_REPEATS} "
                        "(default 3; the plot shows each and their spread)")
    p.add_argument("--csv", metavar="OUT", help="write every batch as a CSV row")
    p.add_argument("--plot", metavar="PNG", help="plot seconds per proof and GPU efficiency")
    p.set_defaults(func=cmd_bench_sweep)
