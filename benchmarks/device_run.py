#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One device run: on a fresh GPU host, the package built (nothing installed
that the host already has), then in order the device lane, the porep-shaped
scale-1 inputs, bench_partition at the card's budget and 16/24/32 GiB, the
engine at scale 1 under 16 GiB and the card's budget, the engine on
Filecoin's real 32 GiB partition circuit (a commit-phase-1 output made on
sparse trees) at the card's budget and 16 GiB, a 32 GiB WinningPoSt, a
full WindowPoSt partition and a SnapDeals update through the engine (sparse
inputs), bench_peers' check, and supraseal-c2 beside ours on one scale-1 partition (bench_c2_peer:
the proofs compared byte for byte); each step a subprocess with its own
time limit.

Usage:
    python3 benchmarks/device_run.py [--out DIR] [--quick] [--steps a,b,...] [--dry-run]
                                     [--wheels DIR] [--concurrency 2] [--count 2]

Each step's output (stdout and stderr together) is copied to the terminal
and to OUT/STEP.log as it comes; a step that writes a report writes it to
OUT/STEP.json, row by row as it measures. OUT/summary.md (and summary.json)
hold the step table (each step's state, seconds, limit and a figure from
its report or the last line of its log) and are rewritten as each step
starts and ends, so a run cut off anywhere keeps them. --out defaults to
$OUT where it is set, else benchmarks/work/device-run. --quick runs the
same steps at scale 1/16 with a part of the lane and the real circuit at
512 MiB and the other kinds at 2 KiB, in under 12 minutes.
--steps picks steps by name (--dry-run prints the plan: each step's name,
limit and command). Exit status: 0 when every step run passed, else 1.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import pathlib
import shlex
import signal
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# what the steps import, beyond the standard library; each one the host lacks is installed from --wheels
NEEDED = ("numpy", "pluggy", "rich", "matplotlib", "grpc", "google.protobuf", "prometheus_client", "cuda.bindings",
          "py_arkworks_bls12381", "Cython", "setuptools", "pytest", "hypothesis")
GRACE_S = 10                 # between a step's SIGTERM at its limit and its SIGKILL
LANE = "tests/backend tests/msm tests/cuda"
# the quick lane: the device tests of what the steps after it rely on (fixed-base products, setup, proofs)
QUICK_LANE = "tests/backend/test_gpu.py -k 'fixed_base or insecure_setup or proof_on_gpu'"


@dataclasses.dataclass(frozen=True)
class Step:
    """One step of the run: a shell command run from the repository's root
    with a limit in seconds; report: the JSON it writes in the out folder."""
    name: str
    command: str
    limit_s: float
    what: str
    report: str | None = None


def missing_modules() -> list[str]:
    """The modules of NEEDED this Python cannot import."""
    out = []
    for name in NEEDED:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            out.append(name)
    return out


def install_command(python: str, wheels: pathlib.Path, missing: list[str]) -> str:
    """The package and the porep and porep-shaped plugins, editable, built here without
    build isolation or dependencies; the wheels in `wheels` first when a
    module is missing (all of them, without an index), or a failure naming
    what is missing where there are none."""
    py = shlex.quote(python)
    build = (f"{py} -m pip install -q --no-deps --no-build-isolation -e . && "
             f"{py} -m pip install -q --no-deps --no-build-isolation -e plugins/porep-prover-porep-shaped && "
             f"{py} -m pip install -q --no-deps --no-build-isolation -e plugins/porep-prover-porep")
    if not missing:
        return build
    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if not found:
        text = f"missing {', '.join(missing)}: carry their wheels in {wheels}"
        return f"echo {shlex.quote(text)} >&2; exit 1"
    return (f"{py} -m pip install -q --no-index --no-deps --no-compile " + " ".join(shlex.quote(str(w)) for w in found)
            + " && " + build)


def plan(quick: bool, python: str, out: pathlib.Path, wheels: pathlib.Path, missing: list[str],
         count: int = 2, concurrency: int = 2) -> list[Step]:
    """The run's steps in order. quick: scale 1/16, a part of the lane, one
    repetition, the budgets 0 and 16 GiB, the real circuit at 512 MiB, no
    direct setup and no peers, the other kinds at 2 KiB; its limits after the install add up to 12 minutes."""
    py, scale = shlex.quote(python), "0.0625" if quick else "1"
    peers = f"PEERS=${{PEERS:-{shlex.quote(str(ROOT / '.peers'))}}}"
    budgets = "0,16" if quick else "0,16,24,32"
    # Filecoin's own circuit, from a commit-phase-1 output made on sparse trees (a 32 GiB one in seconds)
    sector = "StackedDrg512MiBV1_1" if quick else "StackedDrg32GiBV1_1"
    size = "2KiB" if quick else "32GiB"          # the other kinds' inputs
    work = ROOT / "benchmarks" / "work"         # not under OUT: not sent back
    c1 = shlex.quote(str(work / f"c1-{'512m' if quick else '32g'}.json"))

    def report(name: str) -> str:
        return shlex.quote(str(out / f"{name}.json"))

    def engine(gib: int) -> str:
        name = f"engine-{gib or 'card'}"
        return (f"{py} -m porep_prover.cli bench batch -t porep-shaped --scale {scale} --partitions 10 -c {count} "
                f"-j {concurrency} --payload save=false --set engine.device_memory_gib={gib} --progress "
                f"--json {report(name)}")

    def other(name: str, make: str, proof: str) -> str:
        """The engine on a 32 GiB (quick: 2 KiB) input of another kind: the
        command its input's maker prints, run with -c 2 -j 2 and a report; the
        parameters cache held to 60 GiB, so one kind's set gives way to the next on a 64 GiB disk."""
        made = shlex.quote(str(work / f"{name}.bin"))
        return (f"mkdir -p {shlex.quote(str(work))} && cmd=$({py} -m porep_prover_porep {make} {made} --proof {proof} "
                f"| tail -1) && export POREP_PROVER_PARAMS_CACHE_GIB=60 && "
                f"eval \"{py} -m porep_prover.cli ${{cmd#porep-prover }} -c 2 -j 2 --no-progress "
                f"--json {report(name)}\"")

    def real(gib: int) -> str:
        name = f"real-{gib or 'card'}"
        return (f"{py} -m porep_prover.cli bench batch -t porep --c1 {c1} -c {count} -j {concurrency} "
                f"--set engine.device_memory_gib={gib} --progress --json {report(name)}")
    steps = [
        Step("install", install_command(python, wheels, missing), 300 if quick else 600,
             "the package and the porep-shaped plugin built here (wheels only for what the host lacks)"),
        Step("warm", f"{py} benchmarks/gpu_builds.py", 60 if quick else 300,
             "every kernel build compiled at once, a process each, into the cache the later steps read"),
        Step("lane", f"{py} -m pytest -m gpu {QUICK_LANE if quick else LANE} -q -p no:cacheprovider",
             45 if quick else 300, "the device lane" + (" (fixed base, setup, proofs)" if quick else "")),
        Step("inputs", f"{py} benchmarks/bench_inputs.py --scale {scale} --json {report('inputs')}",
             30 if quick else 300, f"scale {scale}: circuit, INSECURE parameters, witness; a proof verified",
             "inputs"),
        Step("inputs-direct", f"{py} benchmarks/bench_inputs.py --scale {scale} --direct --no-prove "
                              f"--json {report('inputs-direct')}", 300,
             "the same, the GPU's products downloaded straight into the parameters (insecure_setup direct)",
             "inputs-direct"),
        Step("partition", f"{py} benchmarks/bench_partition.py --scale {scale} --reps {1 if quick else 2} "
                          f"--payload save=false --device-memory-gib {budgets} --no-phases --profile-budgets "
                          f"--json {report('partition')}",
             60 if quick else 600, f"the kernel region under the budgets {budgets} GiB (0: the card's)",
             "partition"),
        Step("engine-16", engine(16), 45 if quick else 600, f"the engine at scale {scale} under 16 GiB",
             "engine-16"),
        Step("engine-card", engine(0), 45 if quick else 600, f"the engine at scale {scale}, the card's budget",
             "engine-card"),
        Step("real-c1", f"mkdir -p {shlex.quote(str(work))} && "
                        f"{py} -m porep_prover_porep synth-c1 {c1} --proof {sector}", 60,
             f"a commit-phase-1 output of {sector} on sparse trees (an input for benchmarks, never a sector)"),
        # on a fresh host: the circuit built, INSECURE parameters made on the GPU and kept in the parameters
        # cache (44 GiB at 32 GiB), a warm-up job, then the jobs measured
        Step("real-card", real(0), 90 if quick else 600, f"the engine on {sector}'s real circuit, the card's budget",
             "real-card"),
        Step("real-16", real(16), 90 if quick else 600, f"the engine on {sector}'s real circuit under 16 GiB",
             "real-16"),
        Step("winning", other("winning", "post-vanilla", f"StackedDrgWinning{size}V1"), 60 if quick else 300,
             f"the engine on a {size} WinningPoSt of sparse sectors", "winning"),
        Step("window", other("window", "post-vanilla", f"StackedDrgWindow{size}V1"), 60 if quick else 600,
             f"the engine on a full {size} WindowPoSt partition of sparse sectors", "window"),
        Step("snap", other("snap", "snap-vanilla", "0" if quick else "3"), 60 if quick else 600,
             f"the engine on a {size} SnapDeals update of a sparse replica (its partitions)", "snap"),
        Step("peers", f"{peers} sh benchmarks/peers/build.sh && "
                      f"{py} benchmarks/bench_peers.py --sections check --json {report('peers')}", 300,
             "sppark's MSMs beside ours, checked (sppark and blst carried in .peers)", "peers"),
        # on a fresh host the step's time goes to the build (35-72 s), the circuit, the parameters made and
        # written as a .params file (47 GB, kept for later runs; a smaller scale where the disk cannot hold
        # them) and supraseal-c2's load of them into pinned memory; the proofs themselves take seconds
        Step("c2", f"{peers} sh benchmarks/peers/build.sh c2 && {py} benchmarks/bench_c2_peer.py --scale {scale} "
                   f"--shrink-to-disk --reps 2 --device-memory-gib 0,16 --json {report('c2')}", 600,
             "supraseal-c2 (cuzk fork) beside ours on one partition, same r and s: the proofs compared byte for "
             "byte (supraseal-c2, sppark and blst carried in .peers)", "c2"),
    ]
    return [s for s in steps if not quick or s.name not in ("inputs-direct", "peers", "c2")]


def figure(step: Step, out: pathlib.Path) -> str:
    """One figure of a step: from its report where it wrote one, else its log's last line."""
    report = out / f"{step.report}.json" if step.report else None
    try:
        data = json.loads(report.read_text()) if report and report.exists() else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        if "inputs_s" in data:
            return f"inputs in {data['inputs_s']:.1f} s"
        if "budgets" in data:
            return ", ".join(f"{b['gib']:g} GiB {b['ms']:.0f} ms" for b in data["budgets"]) or "no budget measured"
        if "jobs" in data:
            done = f", {data['seconds_per_proof']:.2f} s per proof" if data.get("done") else " (not finished)"
            return f"{len(data['jobs'])} jobs{done}"
        if "c2" in data:        # ours a partition under each budget, the peer's call
            cells = [f"{r['prover'].split()[0]}{' ' + r['budget'] if r['prover'] == 'ours' else ''} "
                     f"{r.get('whole_ms') or r.get('call_ms') or 0:.0f} ms" for r in data["c2"]]
            shrunk = f"scale {data['scale']:g}: " if data.get("scale") != data.get("scale_asked") else ""
            return shrunk + ", ".join(cells) + f"; proofs {data.get('proofs', 'not compared')}"
        if "rows" in data:
            return f"{len(data['rows'])} rows"
    log = out / f"{step.name}.log"
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()] \
        if log.exists() else []
    return (lines[-1][:100] if lines else "").replace("|", "/")


def write_summary(out: pathlib.Path, steps: list[Step], rows: dict[str, dict]) -> None:
    """summary.md and summary.json: every step of the plan, run or not, written whole (a rename)."""
    lines = ["| step | state | seconds | limit s | figure | what |", "|---|---|---:|---:|---|---|"]
    for step in steps:
        row = rows.get(step.name, {"state": "not run"})
        seconds = f"{row['seconds']:.1f}" if "seconds" in row else ""
        lines.append(f"| {step.name} | {row['state']} | {seconds} | {step.limit_s:g} | {row.get('figure', '')} | "
                     f"{step.what} |")
    for name, text in (("summary.md", "\n".join(lines) + "\n"),
                       ("summary.json", json.dumps({"steps": [dict(dataclasses.asdict(s), **rows.get(s.name, {}))
                                                              for s in steps]}, indent=1))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text)
        os.replace(tmp, out / name)


def run_step(step: Step, out: pathlib.Path, env: dict[str, str], echo=sys.stdout) -> dict:
    """The step's command in a session of its own, its output copied to the
    terminal and OUT/STEP.log as it comes; at its limit the whole session is
    sent SIGTERM, then SIGKILL GRACE_S later. {state: passed | failed (rc) |
    timed out, seconds, rc}."""
    start = time.monotonic()
    with open(out / f"{step.name}.log", "wb") as log:
        proc = subprocess.Popen(["bash", "-c", step.command], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)

        def tee() -> None:
            assert proc.stdout is not None
            for chunk in iter(lambda: proc.stdout.read1(1 << 16), b""):
                log.write(chunk)
                log.flush()
                echo.write(chunk.decode(errors="replace"))
                echo.flush()
        copier = threading.Thread(target=tee, daemon=True)
        copier.start()
        timed_out = False
        try:
            rc = proc.wait(timeout=step.limit_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(proc)
            rc = proc.wait()
        copier.join(timeout=GRACE_S)
    seconds = time.monotonic() - start
    state = f"timed out at {step.limit_s:g} s" if timed_out else "passed" if rc == 0 else f"failed ({rc})"
    return {"state": state, "seconds": seconds, "rc": rc}


def _stop(proc: subprocess.Popen) -> None:
    """The step's whole session stopped: SIGTERM, then SIGKILL after GRACE_S."""
    for sig, wait in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run(steps: list[Step], out: pathlib.Path, env: dict[str, str] | None = None, echo=sys.stdout) -> dict[str, dict]:
    """Every step in order (each one whatever the last gave); the summary
    rewritten as each starts and ends."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
    rows: dict[str, dict] = {}
    write_summary(out, steps, rows)
    for step in steps:
        rows[step.name] = {"state": "running"}
        write_summary(out, steps, rows)
        echo.write(f"== {step.name} (limit {step.limit_s:g} s): {step.command}\n")
        echo.flush()
        rows[step.name] = run_step(step, out, env, echo)
        rows[step.name]["figure"] = figure(step, out)
        write_summary(out, steps, rows)
        echo.write(f"== {step.name}: {rows[step.name]['state']} in {rows[step.name]['seconds']:.1f} s\n")
    echo.write((out / "summary.md").read_text())
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path,
                    default=pathlib.Path(os.environ.get("OUT") or ROOT / "benchmarks" / "work" / "device-run"))
    ap.add_argument("--quick", action="store_true", help="scale 1/16, a part of the lane: under 5 minutes")
    ap.add_argument("--steps", help="the steps to run, by name, comma-separated (default: all)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and run nothing")
    ap.add_argument("--wheels", type=pathlib.Path, default=ROOT / ".whl",
                    help="wheels for modules the host lacks (default .whl in the repository)")
    ap.add_argument("-c", "--count", type=int, default=2, help="jobs of each engine step")
    ap.add_argument("-j", "--concurrency", type=int, default=2, help="jobs in flight in each engine step")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    missing = missing_modules()
    steps = plan(args.quick, sys.executable, out, args.wheels, missing, args.count, args.concurrency)
    if args.steps:
        wanted = [s.strip() for s in args.steps.split(",") if s.strip()]
        unknown = sorted(set(wanted) - {s.name for s in steps})
        if unknown:
            ap.error(f"--steps: no step {', '.join(unknown)} (the steps: {', '.join(s.name for s in steps)})")
        steps = [s for s in steps if s.name in wanted]
    if args.dry_run:
        print(f"out: {out}; modules the host lacks: {', '.join(missing) or 'none'}")
        for step in steps:
            print(f"{step.name:>13} | {step.limit_s:5g} s | {step.command}")
        print(f"{len(steps)} steps, {sum(s.limit_s for s in steps) / 60:.1f} minutes at most")
        return 0
    rows = run(steps, out)
    return 0 if all(r["state"] == "passed" for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
