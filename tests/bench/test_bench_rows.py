# SPDX-License-Identifier: Apache-2.0
"""A benchmark keeps what it measured: each job's row as the job ends, in a
JSON file that is whole after every row, so a run stopped by a limit (or
killed outright) leaves every row it finished."""
import json
import os
import random
import signal
import subprocess
import sys
import threading

import pytest

from porep_prover.bench import ReportFile, run_batch
from porep_prover.bench.batch import describe_row
from porep_prover.circuits import square_chain
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.groth16 import insecure_setup


def test_report_file_is_whole_after_every_row(tmp_path):
    path = tmp_path / "r.json"
    report = ReportFile(path, "rows", machine="here")
    assert json.loads(path.read_text()) == {"machine": "here", "rows": []}
    rng = random.Random()
    rows = [{"i": i, "ms": rng.random()} for i in range(rng.randrange(3, 9))]
    for i, row in enumerate(rows):
        report.add(row)
        assert json.loads(path.read_text())["rows"] == rows[:i + 1]
    report.set(done=True, machine="there")
    assert json.loads(path.read_text()) == {"machine": "there", "done": True, "rows": rows}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]      # no temporary left beside it
    memory = ReportFile(None)
    memory.add({"x": 1})
    assert memory.rows == [{"x": 1}]


def test_run_batch_tells_each_job_as_it_ends_failures_included():
    r1cs, witness, _ = square_chain(40)
    params = insecure_setup(r1cs, warn=False)
    bad = witness.copy()
    bad.limbs[-1] ^= 1                          # the last constraint no longer holds
    cfg = load_config(overrides={"engine.devices": ["cpu"], "engine.threads": 1, "engine.partition_workers": 1})
    failing = random.Random().randrange(4)
    rows, told = [], []
    with Engine(cfg) as engine:
        report = run_batch(engine, lambda i: inline_job(params, r1cs, [bad if i == failing else witness]), 4, 2,
                           progress=lambda step, done, total: told.append((done, len(rows))), on_job=rows.append)
    assert sorted(r["index"] for r in rows) == [0, 1, 2, 3] and report.failed == 1
    assert [r["ok"] for r in sorted(rows, key=lambda r: r["index"])] == [i != failing for i in range(4)]
    assert all(done == seen for done, seen in told)          # each row is told before the progress that counts it
    broken = next(r for r in rows if not r["ok"])
    assert "FAILED" in describe_row(broken, 4) and broken["error"]
    fine = next(r for r in rows if r["ok"])
    assert fine["seconds"] > 0 and fine["synthesis_s"] >= 0 and fine["partitions"] == 1
    assert [r["ended_s"] for r in rows] == sorted(r["ended_s"] for r in rows)


@pytest.mark.skipif(os.name != "posix", reason="stops the run with SIGKILL")
def test_a_batch_killed_after_k_jobs_leaves_k_rows(tmp_path):
    """The command itself, killed outright once it has printed k job lines:
    its --json file parses and holds at least those k rows, the same jobs."""
    out = tmp_path / "batch.json"
    k = random.Random().randrange(2, 5)
    run = subprocess.Popen([sys.executable, "-m", "porep_prover.cli", "bench", "batch", "-c", "400", "-j", "1",
                            "--partitions", "1", "--constraints", "200", "--no-warmup", "--no-progress",
                            "--set", 'engine.devices=["cpu"]', "--set", "engine.threads=1", "--json", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    timer = threading.Timer(120, run.kill)        # a run that never prints its rows fails below, not hangs
    timer.start()
    printed = []
    try:
        for line in run.stdout:
            if line.startswith("job "):
                printed.append(line.split("(")[1].split(",")[0])
                if len(printed) == k:
                    break
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
        timer.cancel()
    assert len(printed) == k
    report = json.loads(out.read_text())
    assert report["done"] is False and "seconds_per_proof" not in report      # stopped before its end
    assert [r["job"] for r in report["jobs"][:k]] == printed and all(r["ok"] for r in report["jobs"])
