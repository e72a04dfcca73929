#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Commit-phase-1 outputs careless and hostile, fuzzed (tests/c1_mutations.py):
a valid 2 KiB sparse sector's output changed in one place (its JSON object:
fields dropped, added, re-typed, arrays cut or grown, numbers out of range,
hash bytes flipped, foreign registered proofs, nesting 50,000 deep; or its
text: cut, spliced, invalid UTF-8, keys twice, curio's wrapper damaged),
each case through the checks the provider runs before synthesis
(payload.checked_output), in worker processes watched from here.

Counted: refused by a named error (by its name), accepted unchanged (the
mutation changed nothing the output means), and the faults: a traceback
(an exception that is not the project's), ACCEPTED CHANGED (an output that
does not verify would be proved), a crash (the worker died), a hang (no
answer within --case-seconds). Beside them, the seconds a case took (mean
and most) and the workers' peak RSS; then, with --wire N, N cases on both
of a daemon's wires (its own service and the reference engine's
POREP_SEAL_COMMIT) counted by status code; and with --large, a 32 GiB
output's parse and verification in a process of its own (seconds, peak RSS).

Usage:
    python plugins/porep-prover-porep/benchmarks/bench_c1_fuzz.py [--cases 10000] [--seed 0]
        [--case-seconds 30] [--wire 200] [--large] [--json out.json]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from porep_prover.bench import ReportFile

HERE = pathlib.Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
ROOT = HERE.parents[2]
MINER, SECTOR = 1000, 7
BATCH = 500                   # cases a worker runs before the next one starts (its RSS measured per batch)

WORKER = r"""
import json, random, resource, sys, time
sys.path.insert(0, sys.argv[1])
import c1_mutations as m
from porep_prover_porep import c1_json, sparse
from porep_prover_porep.payload import prover_id_of
valid = sparse.sparse_c1("StackedDrg2KiBV1_1", prover_id_of(1000), 7, bytes(range(32)), bytes([7] * 32))
text = c1_json.dumps(valid)
obj = json.loads(text)
places = m.paths(obj)
for seed in range(int(sys.argv[2]), int(sys.argv[3])):
    rnd = random.Random(seed)
    if rnd.random() < 0.75:
        what, changed = m.mutate_object(obj, rnd, places)
        case = m.encode(changed)
    else:
        what, case = m.mutate_text(text.encode(), rnd)
    start = time.perf_counter()
    got = m.outcome(case, text)
    print(json.dumps({"seed": seed, "what": what.split(" at ")[0], "outcome": got,
                      "ms": (time.perf_counter() - start) * 1e3}), flush=True)
print(json.dumps({"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)
"""


def run_cases(first: int, count: int, case_seconds: float) -> tuple[collections.Counter, list[dict], float]:
    """(outcomes counted, the faults' rows, the workers' most RSS in MiB) of
    seeds first .. first + count, in workers of BATCH cases; a worker that
    dies is a crash of the case it was on, one silent for case_seconds a
    hang (killed); the next worker starts after that case."""
    counted: collections.Counter = collections.Counter()
    faults: list[dict] = []
    rss = 0.0
    seed, end = first, first + count
    while seed < end:
        stop = min(end, seed + BATCH)
        worker = subprocess.Popen([sys.executable, "-c", WORKER, str(TESTS), str(seed), str(stop)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        done = _read_worker(worker, seed, case_seconds, counted, faults)
        rss = max(rss, done[1])
        seed = done[0]
    return counted, faults, rss


def _read_worker(worker, seed: int, case_seconds: float, counted, faults) -> tuple[int, float]:
    """(the next seed to run, the worker's peak RSS or 0): its lines read as they come."""
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(worker.stdout, selectors.EVENT_READ)
    while True:
        if not sel.select(timeout=case_seconds):
            worker.kill()
            worker.wait()
            counted["HANG"] += 1
            faults.append({"seed": seed, "fault": "hang"})
            return seed + 1, 0.0
        line = worker.stdout.readline()
        if not line:
            code = worker.wait()
            if code != 0:
                counted["CRASH"] += 1
                faults.append({"seed": seed, "fault": f"crash (exit {code})", "stderr": worker.stderr.read()[-500:]})
                return seed + 1, 0.0
            return seed, 0.0
        row = json.loads(line)
        if "rss_mib" in row:
            worker.wait()
            return seed, row["rss_mib"]
        counted[row["outcome"].split(":")[0]] += 1
        counted["ms"] += row["ms"]
        counted["most_ms"] = max(counted["most_ms"], row["ms"])
        if not (row["outcome"].startswith("refused ") or row["outcome"] == "accepted unchanged"):
            faults.append(row)
        seed = row["seed"] + 1


def wire_cases(count: int, seed: int) -> collections.Counter:
    """count mutated outputs on a daemon's own service and on the reference
    engine's wire: status codes counted (by wire), every call bounded."""
    import base64
    import random

    import grpc
    sys.path.insert(0, str(TESTS))
    sys.path.insert(0, str(ROOT / "tests" / "helpers"))
    import c1_mutations as m
    from daemon_process import DaemonProcess
    from porep_prover.daemon.cuzk import proving_pb2 as cuzk
    from porep_prover.daemon.cuzk import proving_pb2_grpc
    from porep_prover.daemon.v1 import proving_pb2 as own
    from porep_prover_porep import c1_json, sparse
    from porep_prover_porep.payload import prover_id_of
    from porep_prover_porep.registered import seal_proof
    valid = sparse.sparse_c1("StackedDrg2KiBV1_1", prover_id_of(MINER), SECTOR, bytes(range(32)), bytes([7] * 32))
    text = c1_json.dumps(valid)
    obj, rnd, counted = json.loads(text), random.Random(seed), collections.Counter()
    with tempfile.TemporaryDirectory() as folder:
        inputs = pathlib.Path(folder) / "inputs"
        inputs.mkdir()
        settings = {"daemon.input_roots": [str(inputs)], "daemon.kinds": ["porep"]}
        with DaemonProcess(pathlib.Path(folder) / "state", settings) as daemon:
            service, wire = daemon.stub(), proving_pb2_grpc.ProvingEngineStub(daemon.channel())
            for i in range(count):
                case = m.encode(m.mutate_object(obj, rnd)[1]) if rnd.random() < 0.75 else \
                    m.mutate_text(text.encode(), rnd)[1]
                path = inputs / f"c1-{i}.json"
                path.write_bytes(case)
                payload = json.dumps({"c1": str(path), "miner_id": MINER, "sector_id": SECTOR}).encode()
                wrapped = json.dumps({"SectorNum": SECTOR, "SectorSize": 2048,
                                      "Phase1Out": base64.b64encode(case).decode()}).encode()
                calls = (("own", service.SubmitProof, own.SubmitProofRequest(kind="porep", partitions=1,
                                                                             payload=payload)),
                         ("cuzk", wire.SubmitProof, cuzk.SubmitProofRequest(
                             request_id=f"fuzz-{i}", proof_kind=cuzk.POREP_SEAL_COMMIT,
                             registered_proof=seal_proof("StackedDrg2KiBV1_1").number, sector_size=2048,
                             sector_number=SECTOR, miner_id=MINER, vanilla_proof=wrapped)))
                for name, call, request in calls:
                    try:
                        call(request, timeout=60)
                        counted[f"{name} OK"] += 1
                    except grpc.RpcError as exc:
                        counted[f"{name} {exc.code().name}"] += 1
                path.unlink()
            counted["daemon still answers"] = int(service.GetStatus(own.GetStatusRequest(), timeout=10).accepting)
    return counted


def large_output() -> dict:
    """A 32 GiB sparse output made, then parsed and verified in a process of its own (seconds, peak RSS)."""
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "c1-32g.json"
        subprocess.run([sys.executable, "-m", "porep_prover_porep", "synth-c1", str(path), "--proof",
                        "StackedDrg32GiBV1_1"], check=True, stdout=subprocess.DEVNULL)
        code = ("import time; t = time.perf_counter()\n"
                "from porep_prover_porep.payload import checked_output\n"
                f"checked_output({str(path)!r})\nprint(time.perf_counter() - t)")
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status):
            raise SystemExit("the 32 GiB output did not parse and verify")
        return {"bytes": path.stat().st_size, "seconds": float(out.split()[-1]),
                "peak_rss_mib": usage.ru_maxrss / 1024}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0, help="the first case's seed (cases are seeds in a row)")
    ap.add_argument("--case-seconds", type=float, default=30.0, help="a case silent this long is a hang")
    ap.add_argument("--wire", type=int, default=0, metavar="N", help="N cases on both of a daemon's wires")
    ap.add_argument("--large", action="store_true", help="a 32 GiB output's parse and verification")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not 1 <= args.cases <= 10_000_000 or args.case_seconds <= 0 or not 0 <= args.wire <= 100_000:
        ap.error("--cases 1 to 10,000,000, --case-seconds above 0, --wire 0 to 100,000")
    report = ReportFile(args.json, "rows", cases=args.cases, seed=args.seed)
    start = time.perf_counter()
    counted, faults, rss = run_cases(args.seed, args.cases, args.case_seconds)
    ms, most = counted.pop("ms"), counted.pop("most_ms")
    row = {"row": "cases", "cases": args.cases, "seconds": time.perf_counter() - start, "mean_ms": ms / args.cases,
           "most_ms": most, "worker_peak_rss_mib": rss, "outcomes": dict(counted), "faults": faults[:50]}
    report.add(row)
    print(json.dumps(row, indent=1))
    if args.wire:
        row = {"row": "wire", "cases": args.wire, "statuses": dict(wire_cases(args.wire, args.seed))}
        report.add(row)
        print(json.dumps(row, indent=1))
    if args.large:
        row = {"row": "32 GiB output", **large_output()}
        report.add(row)
        print(json.dumps(row, indent=1))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
