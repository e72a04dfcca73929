# SPDX-License-Identifier: Apache-2.0
"""benchmarks/device_run.py without a device: its plan, and a run of fake
steps (one passing, one failing, one past its limit that ignores SIGTERM
and leaves a child behind, one reading the summary) for the step limits,
the logs and a summary that is whole after every step."""
import importlib.util
import io
import json
import os
import pathlib
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def device_run():
    spec = importlib.util.spec_from_file_location("device_run", ROOT / "benchmarks" / "device_run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["device_run"] = module          # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_the_plan_in_order_with_its_limits(device_run, tmp_path, capsys):
    assert device_run.main(["--dry-run", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split("|")[0].strip() for line in lines if "|" in line]
    assert names == ["install", "warm", "lane", "inputs", "inputs-direct", "partition", "engine-16", "engine-card",
                     "real-c1", "real-card", "real-16", "winning", "window", "snap", "peers", "c2"]
    steps = {s.name: s for s in device_run.plan(False, "python3", tmp_path, tmp_path / "none", [])}
    assert "-m gpu tests/backend tests/msm tests/cuda" in steps["lane"].command
    assert "--device-memory-gib 0,16,24,32" in steps["partition"].command and "--scale 1 " in steps["partition"].command
    for name, gib in (("engine-16", 16), ("engine-card", 0)):
        assert (f"bench batch -t porep-shaped --scale 1 --partitions 10 -c 2 -j 2 --payload save=false "
                f"--set engine.device_memory_gib={gib}") in steps[name].command
        assert str(tmp_path / f"{name}.json") in steps[name].command
    assert "-e plugins/porep-prover-porep" in steps["install"].command        # the real circuit's steps need it
    assert "synth-c1 " in steps["real-c1"].command and "--proof StackedDrg32GiBV1_1" in steps["real-c1"].command
    for name, gib in (("real-16", 16), ("real-card", 0)):
        assert (f"bench batch -t porep --c1 {device_run.ROOT}/benchmarks/work/c1-32g.json -c 2 -j 2 "
                f"--set engine.device_memory_gib={gib}") in steps[name].command
    for name, make in (("winning", "post-vanilla"), ("window", "post-vanilla"), ("snap", "snap-vanilla")):
        assert f"-m porep_prover_porep {make} " in steps[name].command and "32GiB" in steps[name].what
        assert "-c 2 -j 2 --no-progress" in steps[name].command and f"{name}.json" in steps[name].command
    assert all(0 < s.limit_s <= 600 for s in steps.values())     # each fits one device command
    assert "sh benchmarks/peers/build.sh c2 && " in steps["c2"].command
    assert "bench_c2_peer.py --scale 1 --shrink-to-disk --reps 2 --device-memory-gib 0,16" in steps["c2"].command
    quick = device_run.plan(True, "python3", tmp_path, tmp_path / "none", [])
    assert all("--scale 0.0625" in s.command for s in quick if s.name in ("inputs", "partition", "engine-16"))
    assert sum(s.limit_s for s in quick if s.name != "install") <= 720
    assert not {"peers", "c2"} & {s.name for s in quick}
    with pytest.raises(SystemExit):
        device_run.main(["--dry-run", "--steps", "lane,nope"])
    assert "no step nope" in capsys.readouterr().err


def test_install_takes_wheels_only_for_what_is_missing(device_run, tmp_path):
    plain = device_run.install_command("py", tmp_path, [])
    assert "--no-deps --no-build-isolation -e ." in plain and "--no-index" not in plain
    lacking = device_run.install_command("py", tmp_path, ["py_arkworks_bls12381"])
    assert "missing py_arkworks_bls12381" in lacking and "exit 1" in lacking
    (tmp_path / "py_arkworks_bls12381-0.5.0-cp312-manylinux.whl").write_bytes(b"")
    carried = device_run.install_command("py", tmp_path, ["py_arkworks_bls12381"])
    assert "--no-index --no-deps" in carried and "py_arkworks_bls12381-0.5.0" in carried and carried.endswith(plain)


def test_fake_steps_keep_their_limits_logs_and_summary(device_run, tmp_path, monkeypatch):
    monkeypatch.setattr(device_run, "GRACE_S", 0.5)
    child = tmp_path / "child.pid"
    Step = device_run.Step
    steps = [Step("ok", "echo first; echo the figure", 10, "passes"),
             Step("fails", "echo broken >&2; exit 3", 10, "fails"),
             Step("slow", f"trap '' TERM; sleep 60 & echo $! > {child}; wait; sleep 60", 1, "past its limit"),
             Step("after", f"cat {tmp_path}/summary.md", 10, "reads the summary"),
             Step("never", "true", 10, "not reached")]
    out = io.StringIO()
    t = time.monotonic()
    rows = device_run.run(steps[:4], tmp_path, echo=out)
    assert time.monotonic() - t < 10                           # the slow step stopped at its limit, not at 60 s
    assert [rows[s.name]["state"] for s in steps[:4]] == ["passed", "failed (3)", "timed out at 1 s", "passed"]
    assert 1 <= rows["slow"]["seconds"] < 4
    pid = int(child.read_text())
    with pytest.raises(ProcessLookupError):                    # its child went with it
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.05)
    assert (tmp_path / "ok.log").read_text() == "first\nthe figure\n"
    assert (tmp_path / "fails.log").read_text() == "broken\n" and "broken" in out.getvalue()
    seen = (tmp_path / "after.log").read_text()            # the summary as the last step began
    assert "| slow | timed out at 1 s |" in seen and "| after | running |" in seen
    device_run.write_summary(tmp_path, steps, rows)
    summary = (tmp_path / "summary.md").read_text()
    assert "| ok | passed |" in summary and "the figure" in summary and "| never | not run |" in summary


def test_the_c2_figure_gives_each_row_and_the_proofs_verdict(device_run, tmp_path):
    step = device_run.Step("c2", "true", 10, "the peer", "c2")
    rows = [{"prover": "ours", "budget": "the card's", "whole_ms": 3012.4},
            {"prover": "ours", "budget": "16 GiB", "whole_ms": 4100.0},
            {"prover": "supraseal-c2 (cuzk-fork)", "budget": "none: it runs as it is", "call_ms": 2890.6}]
    (tmp_path / "c2.json").write_text(json.dumps({"c2": rows, "proofs": "identical"}))
    assert device_run.figure(step, tmp_path) == ("ours the card's 3012 ms, ours 16 GiB 4100 ms, supraseal-c2 2891 ms; "
                                                 "proofs identical")
    (tmp_path / "c2.json").write_text(json.dumps({"c2": rows[:1], "scale": 0.5, "scale_asked": 1}))
    assert device_run.figure(step, tmp_path) == "scale 0.5: ours the card's 3012 ms; proofs not compared"
