#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The proving daemon against the engine in the same process, on the CPU
backend, side by side in one run: demo jobs of one partition (the PoRep-like
circuit of --constraints constraints, the daemon's INSECURE test parameters
read by both paths from its state folder, the same seeds; every proof
verified by the engine on both paths, and the daemon's again here after the
timing).

  overhead     --jobs jobs one at a time, alternating: through
               porep_prover.Engine in this process (the daemon's own demo
               provider) and through a `porep-prover daemon` process with
               porep_prover.client.Client.prove (submit + await in one call:
               the job journaled, its proof written to disk and read back, the
               answer sent over gRPC). ms a job each; the difference is what
               the service costs a job, split into the daemon's own time of a
               job (accepted to ended: the answer's total_ms, whole ms) and
               what lies outside it; and, --calls times each against one
               ended job: a call's round trip (GetJob), an ended job's answer
               (AwaitProof: its rows and proof file read, sent) and its
               decoding in the client (ProofResult: the proof's points
               checked).
  throughput   --clients threads, each with its own Client, submit
               --per-client jobs each, then await them in order (a job's
               latency: its submit to its await's return): jobs a second and
               the latency's p50 / p95 / p99; the engine in this process
               given the same jobs at once (latency: submit to its end);
               --rounds rounds on each path, alternating which goes first,
               pooled (jobs over seconds; the latencies together).
  journal      the daemon's journal calls of a job, timed directly (the
               Journal over a temporary state folder, the daemon's order):
               accept (the row committed: WAL, synchronous=FULL), the
               partition (its proof file written and synced, then its row),
               finish (the row, then the metrics' read), fetch (the rows, the
               proof file, marked fetched); ms a job, and the share of the
               overhead above that it explains.

The daemon listens on 127.0.0.1 only, ports picked free (port 0, read back
from its state folder); it is stopped at the end (SIGTERM, killed after a
bounded wait), also on an error. The state folder is a temporary folder in
--dir (default: the system's), removed at the end; the file system it is
on is printed (the journal's fsyncs cost what that disk makes them cost).

Usage:
    python benchmarks/bench_daemon.py [--constraints 300] [--jobs 100] [--clients 16] [--per-client 8]
        [--rounds 3] [--journal-jobs 400] [--calls 200] [--set KEY=VALUE ...] [--dir DIR] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc
import numpy as np

import porep_prover as pp
from porep_prover.bench.machine import cpu_busy
from porep_prover.client import Client, ProofResult
from porep_prover.daemon.demo import DemoProvider, params_path
from porep_prover.daemon.journal import PROOF_BYTES, JobRecord, Journal
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.daemon.v1.proving_pb2_grpc import ProvingEngineStub
from porep_prover.engine.config import parse_override
from porep_prover.hooks import collect_registry, plugin_manager

BASE_SETTINGS = ["engine.devices=cpu", "engine.scheduler=priority", "logging.level=WARNING"]
START_SECONDS = 60.0           # the daemon's start, at most
STOP_SECONDS = 30.0            # SIGTERM to its exit, at most; then it is killed
JOB_SECONDS = 300.0            # one job, or one batch of them, at most
WARM_UP_JOBS = 3


def file_system(path: str) -> str:
    """The type of the file system path is on (the longest mount point above it), from /proc/mounts."""
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                fields = line.split()
                point = fields[1]
                if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
                    best, kind = point, fields[2]
    except OSError:
        pass
    return kind


def percentiles(seconds: list[float]) -> dict:
    """ms: median, mean, p95, p99 of the durations (seconds)."""
    ms = np.asarray(seconds) * 1e3
    return {"median": float(np.median(ms)), "mean": float(ms.mean()), "p50": float(np.percentile(ms, 50)),
            "p95": float(np.percentile(ms, 95)), "p99": float(np.percentile(ms, 99)), "n": len(ms)}


# ------------------------------------------------------------------ the daemon


class DaemonProcess:
    """`porep-prover daemon` with state folder `state` and settings (section.key=value texts)."""

    def __init__(self, state: pathlib.Path, settings: list[str]):
        self.state = state
        self.settings = ["daemon.listen=127.0.0.1:0", "daemon.status_listen=127.0.0.1:0",
                         f"daemon.state_dir={state}", *settings]
        self.log_path = state.parent / "daemon.log"
        self.proc: subprocess.Popen | None = None
        self.address = ""

    def start(self) -> "DaemonProcess":
        self.state.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "porep_prover.cli", "daemon"]
        for setting in self.settings:
            argv += ["--set", setting]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        info_path, deadline = self.state / "daemon.json", time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the daemon ended with {self.proc.returncode} at start:\n{self.log()}")
            try:
                info = json.loads(info_path.read_text())
                if info["pid"] == self.proc.pid:
                    self.address = info["listen"]
                    return self
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        raise RuntimeError(f"the daemon did not listen within {START_SECONDS} s:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def stop(self) -> int | None:
        """SIGTERM, then its exit status; killed when it has not ended within STOP_SECONDS."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            print(f"# the daemon did not end within {STOP_SECONDS} s of SIGTERM: killed", flush=True)
            self.proc.kill()
            return self.proc.wait(STOP_SECONDS)


# ------------------------------------------------------------------ the two paths


class Paths:
    """The same demo jobs through the engine in this process and through the daemon."""

    def __init__(self, engine, registry, address: str, constraints: int):
        self.engine, self.registry, self.address, self.n = engine, registry, address, constraints
        self.client = Client(address, timeout=30.0)
        self.results = []          # the daemon's answers, checked after the timing

    def payload(self, seed: int) -> dict:
        return {"constraints": self.n, "seed": seed}

    def engine_job(self, seed: int):
        return pp.Job("demo", 1, self.registry.payload_from_json("demo", self.payload(seed), 1))

    def prove_engine(self, seed: int) -> float:
        t = time.perf_counter()
        self.engine.submit(self.engine_job(seed)).result(JOB_SECONDS)
        return time.perf_counter() - t

    def prove_daemon(self, seed: int) -> float:
        t = time.perf_counter()
        result = self.client.prove("demo", self.payload(seed), timeout=JOB_SECONDS)
        elapsed = time.perf_counter() - t
        self.results.append(result)
        return elapsed


def run_overhead(paths: Paths, jobs: int) -> dict:
    """jobs jobs on each path, one at a time, alternating (the order swapped every job)."""
    for seed in range(WARM_UP_JOBS):
        paths.prove_engine(seed)
        paths.prove_daemon(seed)
    paths.results.clear()
    engine, daemon = [], []
    for i in range(jobs):
        seed = 1000 + i
        if i % 2:
            daemon.append(paths.prove_daemon(seed))
            engine.append(paths.prove_engine(seed))
        else:
            engine.append(paths.prove_engine(seed))
            daemon.append(paths.prove_daemon(seed))
    inside = [r.timings.total_ms for r in paths.results]
    return {"engine": percentiles(engine), "daemon": percentiles(daemon),
            "daemon_job_total_ms": float(np.median(inside))}


def run_calls(address: str, job_id: str, calls: int) -> dict:
    """ms (median over calls) of a GetJob and an AwaitProof of the ended job
    job_id, and of decoding that answer in the client."""
    request = pb.AwaitProofRequest(job_id=job_id)
    get_job, answer, decode = [], [], []
    with Client(address, timeout=30.0) as client, grpc.insecure_channel(address) as channel:
        stub = ProvingEngineStub(channel)
        for _ in range(calls):
            t0 = time.perf_counter()
            client.job(job_id)
            t1 = time.perf_counter()
            message = stub.AwaitProof(request, timeout=30.0)
            t2 = time.perf_counter()
            ProofResult.from_message(message)
            t3 = time.perf_counter()
            get_job.append(t1 - t0)
            answer.append(t2 - t1)
            decode.append(t3 - t2)
    return {name: percentiles(v)["median"] for name, v in
            (("get_job", get_job), ("await_ended", answer), ("decode", decode))}


def run_clients(address: str, n: int, clients: int, per_client: int) -> dict:
    """clients threads, each its own Client: submit per_client jobs, then await each."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[str] = []
    results = []
    start = threading.Barrier(clients + 1, timeout=START_SECONDS)

    def client_thread(c: int) -> None:
        try:
            with Client(address, timeout=30.0) as client:
                start.wait()
                sent = []
                for k in range(per_client):
                    sent.append((time.perf_counter(), client.submit(
                        "demo", {"constraints": n, "seed": 100_000 + c * per_client + k}).job_id))
                for t, job_id in sent:
                    result = client.await_proof(job_id, timeout=JOB_SECONDS)
                    latencies[c].append(time.perf_counter() - t)
                    results.append(result)
        except Exception as exc:  # noqa: BLE001 - reported with the figures, and the run fails
            errors.append(f"client {c}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=client_thread, args=(c,), daemon=True) for c in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    t = time.perf_counter()
    deadline = time.monotonic() + JOB_SECONDS
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    span = time.perf_counter() - t
    if any(thread.is_alive() for thread in threads):
        errors.append(f"clients still waiting after {JOB_SECONDS} s")
    done = [x for per in latencies for x in per]
    return {"jobs": len(done), "seconds": span, "latencies": done, "errors": errors, "results": results}


def run_engine_batch(paths: Paths, count: int) -> dict:
    """count jobs submitted to the engine at once; latency: submit to the job's end."""
    ended: dict[int, float] = {}
    t = time.perf_counter()
    handles = []
    for i in range(count):
        handle = paths.engine.submit(paths.engine_job(100_000 + i))
        handle.future.add_done_callback(lambda _f, i=i: ended.__setitem__(i, time.perf_counter()))
        handles.append(handle)
    for handle in handles:
        handle.result(JOB_SECONDS)
    span = time.perf_counter() - t
    return {"jobs": count, "seconds": span, "latencies": [ended[i] - t for i in range(count)]}


def pooled(runs: list[dict]) -> dict:
    """Rounds of run_clients or run_engine_batch as one: jobs over seconds, latencies pooled."""
    jobs, seconds = sum(r["jobs"] for r in runs), sum(r["seconds"] for r in runs)
    return {"jobs": jobs, "seconds": seconds, "jobs_per_second": jobs / seconds,
            "rounds": [r["jobs"] / r["seconds"] for r in runs],
            "latency": percentiles([x for r in runs for x in r["latencies"]]),
            "errors": [e for r in runs for e in r.get("errors", ())]}


# ------------------------------------------------------------------ the journal


def run_journal(folder: pathlib.Path, jobs: int) -> dict:
    """The daemon's journal calls of a one-partition job, jobs times: ms a job by step."""
    journal = Journal(str(folder))
    steps = {"accept": [], "partition": [], "finish": [], "fetch": []}
    proof = os.urandom(PROOF_BYTES)
    public = [int.from_bytes(os.urandom(31), "little") for _ in range(4)]
    timings = {"queue_wait": 0.001, "srs_load": 0.0, "synthesis": 0.01, "gpu_compute": 0.02, "total": 0.03,
               "started": time.time()}
    try:
        for i in range(jobs):
            record = JobRecord(os.urandom(16).hex(), None, "demo", 1, 2, json.dumps({"constraints": 300, "seed": i}),
                               submitted=time.time())
            t0 = time.perf_counter()
            journal.add(record)
            t1 = time.perf_counter()
            journal.add_partition(record.id, 0, proof, public, timings)
            t2 = time.perf_counter()
            journal.finish(record.id, "completed")
            journal.get(record.id)                               # the metrics' read of the ended job
            journal.partitions(record.id, with_proofs=False)
            t3 = time.perf_counter()
            journal.get(record.id)                               # the wait's read, then the answer's
            fetched = journal.partitions(record.id)
            journal.mark_fetched(record.id)
            t4 = time.perf_counter()
            if fetched[0].proof != proof or fetched[0].public != public:
                raise RuntimeError(f"the journal gave back another proof for job {record.id}")
            for step, seconds in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                steps[step].append(seconds)
    finally:
        journal.close()
    out = {step: float(np.mean(v)) * 1e3 for step, v in steps.items()}
    out["total"] = sum(out.values())
    out["jobs"] = jobs
    return out


# ------------------------------------------------------------------ the report


def check(results, vk) -> int:
    """How many of the daemon's answers did not complete or do not verify here."""
    return sum(1 for r in results if not r.verify(vk))


def table(o: dict, calls: dict, tp: dict, eng: dict, j: dict, clients: int, per_client: int) -> str:
    e, d = o["engine"], o["daemon"]
    extra = d["median"] - e["median"]
    lat_d, lat_e = tp["latency"], eng["latency"]
    share = j["total"] / extra if extra > 0 else float("nan")
    rows = [
        "| measure | in-process engine | daemon (Client) | daemon - engine |",
        "| --- | ---: | ---: | ---: |",
        f"| one job at a time: ms a job, median (mean; p95) | {e['median']:.1f} ({e['mean']:.1f}; {e['p95']:.1f}) | "
        f"{d['median']:.1f} ({d['mean']:.1f}; {d['p95']:.1f}) | **{extra:+.1f} ms** ({extra / e['median']:+.0%}) |",
        f"| ... the daemon's own time of a job (accepted to ended: total_ms) | {e['median']:.1f} | "
        f"{o['daemon_job_total_ms']:.1f} | {o['daemon_job_total_ms'] - e['median']:+.1f} ms |",
        f"| ... outside it (the call, the answer read, sent and decoded) | | | "
        f"{d['median'] - o['daemon_job_total_ms']:+.1f} ms |",
        f"| ... a call's round trip (GetJob); an ended job's answer (AwaitProof); its decoding, ms | | "
        f"{calls['get_job']:.2f}; {calls['await_ended']:.2f}; {calls['decode']:.2f} | |",
        f"| {clients} clients x {per_client} jobs at once: jobs / s, {len(tp['rounds'])} rounds (slowest-fastest) | "
        f"{eng['jobs_per_second']:.1f} ({min(eng['rounds']):.1f}-{max(eng['rounds']):.1f}) | "
        f"{tp['jobs_per_second']:.1f} ({min(tp['rounds']):.1f}-{max(tp['rounds']):.1f}) | "
        f"{tp['jobs_per_second'] / eng['jobs_per_second'] - 1:+.0%} |",
        f"| ... latency p50 / p95 / p99, ms | {lat_e['p50']:.0f} / {lat_e['p95']:.0f} / {lat_e['p99']:.0f} | "
        f"{lat_d['p50']:.0f} / {lat_d['p95']:.0f} / {lat_d['p99']:.0f} | |",
        f"| journal, ms a job: accept / partition / finish / fetch | | {j['accept']:.2f} / {j['partition']:.2f} / "
        f"{j['finish']:.2f} / {j['fetch']:.2f} | |",
        f"| journal, ms a job in all (share of the overhead) | | {j['total']:.2f} | {share:.0%} of {extra:.1f} ms |",
    ]
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--constraints", type=int, default=300, help="the demo circuit's constraints")
    ap.add_argument("--jobs", type=int, default=100, help="jobs one at a time, on each path")
    ap.add_argument("--clients", type=int, default=16, help="client threads at once")
    ap.add_argument("--per-client", type=int, default=8, help="jobs each client submits")
    ap.add_argument("--rounds", type=int, default=3, help="throughput rounds on each path, alternating")
    ap.add_argument("--journal-jobs", type=int, default=400, help="jobs through the journal alone")
    ap.add_argument("--calls", type=int, default=200, help="calls of each kind against an ended job")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for both the engine here and the daemon")
    ap.add_argument("--dir", help="where the temporary state folder goes (default: the system's)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    for name in ("constraints", "jobs", "clients", "per_client", "rounds", "journal_jobs", "calls"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    settings = [*BASE_SETTINGS, *args.set]
    overrides = dict(parse_override(s) for s in settings)
    busy = cpu_busy()
    print(f"# porep_prover {pp.__version__} daemon benchmark, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}")
    print(f"# other load before: {busy:.2f} CPUs", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-daemon-", dir=args.dir) as tmp:
        folder = pathlib.Path(tmp)
        print(f"# state folder {folder} on {file_system(str(folder.resolve()))}", flush=True)
        daemon = DaemonProcess(folder / "state", settings)
        engine = paths = None
        try:
            t = time.perf_counter()
            daemon.start()
            print(f"# daemon at {daemon.address} ({time.perf_counter() - t:.1f} s to listen)", flush=True)
            with Client(daemon.address, timeout=30.0) as first:      # the daemon makes the parameters once
                made = first.prove("demo", {"constraints": args.constraints, "seed": 0}, timeout=JOB_SECONDS)
            if not made.ok:
                raise RuntimeError(f"the daemon's first job ended {made.status}: {made.error_message}")
            pm = plugin_manager()
            registry = collect_registry(pm)
            demo_folder = str(folder / "state" / "params-cache")
            registry.add_provider(DemoProvider(demo_folder))
            vk = pp.load_params(params_path(demo_folder, args.constraints)).vk
            engine = pp.Engine(pp.load_config(overrides=overrides), registry=registry, plugins=pm)
            paths = Paths(engine, registry, daemon.address, args.constraints)

            t = time.perf_counter()
            over = run_overhead(paths, args.jobs)
            print(f"[overhead: {time.perf_counter() - t:.1f} s] engine {over['engine']['median']:.1f} ms, "
                  f"daemon {over['daemon']['median']:.1f} ms a job (median)", flush=True)
            failed = check(paths.results, vk)
            calls = run_calls(daemon.address, paths.results[-1].job_id, args.calls)

            t = time.perf_counter()
            count = args.clients * args.per_client
            by_daemon, by_engine = [], []
            for r in range(args.rounds):          # alternating which goes first
                for which in ("daemon", "engine") if r % 2 == 0 else ("engine", "daemon"):
                    if which == "engine":
                        by_engine.append(run_engine_batch(paths, count))
                        continue
                    run = run_clients(daemon.address, args.constraints, args.clients, args.per_client)
                    failed += check(run.pop("results"), vk) + (count - run["jobs"])
                    by_daemon.append(run)
            clients, batch = pooled(by_daemon), pooled(by_engine)
            print(f"[throughput: {time.perf_counter() - t:.1f} s] daemon "
                  f"{', '.join(f'{x:.1f}' for x in clients['rounds'])}, engine "
                  f"{', '.join(f'{x:.1f}' for x in batch['rounds'])} jobs / s by round", *clients["errors"],
                  sep="\n  ", flush=True)
        finally:
            if paths is not None:
                paths.client.close()
            if engine is not None:
                engine.shutdown(wait=True, timeout=STOP_SECONDS)
            code = daemon.stop()
            if code not in (0, None):
                print(f"# the daemon ended with {code}:\n{daemon.log()}", flush=True)

        t = time.perf_counter()
        journal = run_journal(folder / "journal", args.journal_jobs)
        print(f"[journal: {time.perf_counter() - t:.1f} s] {journal['total']:.2f} ms a job", flush=True)
    after = cpu_busy()
    print(f"# other load after: {after:.2f} CPUs; proofs that failed or did not verify: {failed}\n")
    print(table(over, calls, clients, batch, journal, args.clients, args.per_client))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "cores": os.cpu_count(), "args": vars(args),
                       "load_before": busy, "load_after": after, "overhead": over, "calls": calls, "clients": clients,
                       "engine_batch": batch, "journal": journal, "failed": failed, "daemon_exit": code}, f, indent=1)
    return 1 if failed or clients["errors"] or code != 0 else 0


if __name__ == "__main__":
    raise SystemExit(main())
