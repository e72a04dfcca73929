# SPDX-License-Identifier: Apache-2.0
"""benchmarks/bench_daemon.py at tiny sizes: it starts a real daemon on
127.0.0.1, proves through it and through the engine in the same process,
times the journal, writes its figures as JSON, stops the daemon (exit 0
after SIGTERM) and leaves no state folder behind."""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_daemon.py"


def test_bench_daemon_runs_and_writes_json(tmp_path):
    out = tmp_path / "daemon.json"
    state = tmp_path / "state"
    state.mkdir()
    clients, per_client, rounds, jobs, journal_jobs = 3, 2, 1, 3, 7
    argv = [sys.executable, str(SCRIPT), "--constraints", "37", "--jobs", str(jobs), "--clients", str(clients),
            "--per-client", str(per_client), "--rounds", str(rounds), "--journal-jobs", str(journal_jobs),
            "--calls", "3", "--dir", str(state), "--json", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=dict(os.environ, POREP_PROVER_THREADS="2"))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["failed"] == 0 and figures["daemon_exit"] == 0
    assert figures["overhead"]["engine"]["n"] == figures["overhead"]["daemon"]["n"] == jobs
    assert figures["clients"]["jobs"] == figures["engine_batch"]["jobs"] == clients * per_client * rounds
    assert figures["clients"]["errors"] == []
    assert figures["clients"]["jobs_per_second"] > 0 and figures["engine_batch"]["jobs_per_second"] > 0
    assert figures["journal"]["jobs"] == journal_jobs
    steps = [figures["journal"][k] for k in ("accept", "partition", "finish", "fetch")]
    assert all(ms > 0 for ms in steps) and abs(sum(steps) - figures["journal"]["total"]) < 1e-9
    assert list(state.iterdir()) == []                       # the temporary state folder is gone
    assert done.stdout.rstrip().splitlines()[-1].startswith("| journal, ms a job in all")
