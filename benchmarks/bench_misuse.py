#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The engine and the daemon under careless and hostile plugins and
callers, measured: what each of the cases below costs the other jobs and
the caller (seconds to the other jobs' results, to a shutdown's return),
and what a cancelled job leaves behind (a parameter file, a partition
started). CPU backend, a small circuit; a table on stdout (markdown).

  provider   a synthesize that never returns, one synthesis worker, no time
             limit, engine.provider_stall_seconds = --stall: the seconds
             until 4 other jobs are proved
  sink       a result sink whose deliver never returns: the seconds until 5
             handles resolve, then shutdown(wait=False)'s and (another
             engine) leaving `with Engine`'s
  scheduler  a scheduler whose pop raises, and one whose pop never returns:
             the seconds until 3 jobs are proved, and leaving `with Engine`
  cancel     a daemon (a process of its own) given a demo job of --big
             constraints and 8 partitions, cancelled as soon as accepted:
             whether its parameter file is written and any partition
             starts, in --watch seconds after the cancel; and a submit of
             65,536 partitions of 2^20 constraints (the status it gets)

Usage: python3 benchmarks/bench_misuse.py [--stall 2] [--big 262144] [--watch 20]
"""
from __future__ import annotations

import argparse
import json
import pathlib
import sys
import tempfile
import threading
import time

from porep_prover.circuits import square_chain
from porep_prover.daemon.v1 import proving_pb2 as pb
from porep_prover.engine import Engine, inline_job, load_config, scheduler_guard
from porep_prover.engine.inline import InlineProvider, default_registry
from porep_prover.engine.registry import FifoScheduler
from porep_prover.groth16 import insecure_setup

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "helpers"))
from daemon_process import DaemonProcess, demo_request  # noqa: E402


def config(**extra):
    return load_config(overrides={"engine.partition_workers": 1, "engine.threads": 1, "engine.devices": ["cpu"],
                                  **extra})


class Never(InlineProvider):
    kinds = ("never",)

    def __init__(self):
        self.release = threading.Event()

    def srs_key(self, job):
        return "never"

    def synthesize(self, job, partition, threads):
        self.release.wait(600)
        return super().synthesize(job, partition, threads)


class NeverSink:
    def __init__(self):
        self.release = threading.Event()

    def deliver(self, result):
        self.release.wait(600)


class PopRaises(FifoScheduler):
    def pop(self):
        raise RuntimeError("pop broke")


class PopNever(FifoScheduler):
    release = threading.Event()

    def pop(self):
        PopNever.release.wait(600)
        return super().pop()


def job(circuit, kind="inline"):
    params, r1cs, w = circuit
    j = inline_job(params, r1cs, [w])
    j.kind = kind
    return j


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def provider_case(circuit, stall: float) -> list[tuple[str, str]]:
    never = Never()
    registry = default_registry()
    registry.add_provider(never)
    engine = Engine(config(**{"engine.provider_timeout_seconds": 0, "engine.provider_stall_seconds": stall}),
                    registry=registry)
    engine.submit(job(circuit, "never"))
    time.sleep(0.2)
    t = time.perf_counter()
    done = sum(h.result(120).ok for h in [engine.submit(job(circuit)) for _ in range(4)])
    took = time.perf_counter() - t
    never.release.set()
    engine.shutdown()
    return [(f"synthesize never returns, 1 synthesis worker (stall {stall:g} s)",
             f"{done} of 4 other jobs proved in {took:.2f} s")]


def sink_case(circuit) -> list[tuple[str, str]]:
    rows = []
    for wait in (False, True):
        sink = NeverSink()
        registry = default_registry()
        registry.add_sink("never", sink)
        engine = Engine(config(**{"engine.result_sinks": ["never"], "engine.sink_timeout_seconds": 1.0}),
                        registry=registry)
        t = time.perf_counter()
        resolved = sum(h.result(60).ok for h in [engine.submit(job(circuit)) for _ in range(5)])
        took = time.perf_counter() - t
        stop = timed(lambda engine=engine, wait=wait: engine.shutdown(wait=wait))
        sink.release.set()
        how = "leaving `with Engine` (shutdown())" if wait else "shutdown(wait=False)"
        rows.append((f"a sink's deliver never returns (limit 1 s), then {how}",
                     f"{resolved} of 5 handles resolved in {took:.2f} s; {how} took {stop:.2f} s"))
    return rows


def scheduler_case(circuit) -> list[tuple[str, str]]:
    rows = []
    for name, factory in (("pop raises", PopRaises), ("pop never returns", PopNever)):
        registry = default_registry()
        registry.add_scheduler("bad", factory)
        t = time.perf_counter()
        with Engine(config(**{"engine.scheduler": "bad"}), registry=registry) as engine:
            done = sum(h.result(60).ok for h in [engine.submit(job(circuit)) for _ in range(3)])
            proved = time.perf_counter() - t
            t = time.perf_counter()
        left = time.perf_counter() - t
        rows.append((f"a scheduler whose {name}", f"{done} of 3 jobs proved in {proved:.2f} s; leaving "
                                                  f"`with Engine` took {left:.2f} s"))
    PopNever.release.set()
    return rows


def cancel_case(big: int, watch: float) -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as folder, DaemonProcess(
            pathlib.Path(folder) / "state", {"logging.timeline": str(pathlib.Path(folder) / "timeline.log")}) as daemon:
        stub = daemon.stub()
        answer = stub.SubmitProof(demo_request(big, partitions=8), timeout=30)
        t = time.perf_counter()
        stub.CancelProof(pb.CancelProofRequest(job_id=answer.job_id), timeout=30)
        acked = time.perf_counter() - t
        time.sleep(watch)
        files = sorted(p.name for p in (daemon.state_dir / "params-cache").glob("*.params"))
        timeline = (pathlib.Path(folder) / "timeline.log").read_text()
        started = sum(1 for line in timeline.splitlines() if '"SYNTH_START"' in line and answer.job_id in line)
        try:
            stub.SubmitProof(demo_request(1 << 20, partitions=1 << 16), timeout=30)
            huge = "accepted"
        except Exception as exc:  # noqa: BLE001 - the status is the figure
            huge = f"{exc.code().name}: {exc.details()}"
    return [(f"demo job of {big} constraints x 8 partitions, cancelled when accepted",
             f"cancel acknowledged in {acked * 1e3:.0f} ms; after {watch:g} s: parameter files {files or 'none'}, "
             f"{started} partitions started"),
            ("demo job of 65,536 partitions x 2^20 constraints", huge)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stall", type=float, default=2.0)
    ap.add_argument("--big", type=int, default=1 << 18)
    ap.add_argument("--watch", type=float, default=20.0)
    args = ap.parse_args()
    r1cs, w, _ = square_chain(60)
    circuit = (insecure_setup(r1cs, warn=False), r1cs, w)
    scheduler_guard.CALL_SECONDS = 1.0          # the default is 5 s: the figure scales with it
    rows = provider_case(circuit, args.stall) + sink_case(circuit) + scheduler_case(circuit) + \
        cancel_case(args.big, args.watch)
    print("| what was done | what happened |\n|---|---|")
    for what, happened in rows:
        print(f"| {what} | {happened} |")
    print(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "argv": sys.argv[1:]}))


if __name__ == "__main__":
    main()
