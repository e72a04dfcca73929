# SPDX-License-Identifier: Apache-2.0
"""The engine's parts on their own: the SRS manager and the commands."""
import json
import random
import threading
import time

import pytest

from porep_prover.circuits import square_chain
from porep_prover.cli import main
from porep_prover.engine.srs import SrsManager
from porep_prover.groth16 import insecure_setup


@pytest.fixture(scope="module")
def params_pair():
    a = insecure_setup(square_chain(64)[0], warn=False)
    b = insecure_setup(square_chain(128)[0], warn=False)
    return a, b


def test_srs_loads_once_for_concurrent_users(params_pair):
    a, _ = params_pair
    calls = []

    def loader():
        calls.append(1)
        time.sleep(0.05)
        return a

    srs = SrsManager()
    got = []
    threads = [threading.Thread(target=lambda: got.append(srs.get("k", loader))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and all(g is a for g in got)
    assert srs.status()[0]["loads"] == 1


def test_srs_failed_load_is_retried_by_the_next_user(params_pair):
    a, _ = params_pair
    srs = SrsManager()
    with pytest.raises(OSError):
        srs.get("k", lambda: (_ for _ in ()).throw(OSError("disk")))
    assert srs.get("k", lambda: a) is a


def test_srs_idle_eviction_respects_leases(params_pair):
    a, b = params_pair
    evicted = []
    srs = SrsManager(idle_evict_seconds=10, on_evict=evicted.append)
    srs.get("a", lambda: a)
    with srs.lease("b", lambda: b):
        assert srs.evict_idle(now=time.monotonic() + 60) == ["a"]   # b is leased
    assert evicted == [a]
    assert srs.evict_idle(now=time.monotonic() + 5) == []           # b idle, but not for long
    assert srs.evict_idle(now=time.monotonic() + 60) == ["b"]
    assert srs.status() == []


def test_srs_budget_drops_least_recently_used(params_pair):
    a, b = params_pair
    from porep_prover.engine.srs import params_bytes
    srs = SrsManager(budget_bytes=params_bytes(a) + params_bytes(b) - 1)
    srs.get("a", lambda: a)
    srs.get("b", lambda: b)                                          # over budget: a goes
    assert [s["key"] for s in srs.status()] == ["b"]
    with srs.lease("b", lambda: b):
        srs.get("a", lambda: a)                                      # b leased: stays, over budget
        assert {s["key"] for s in srs.status()} == {"a", "b"}


def test_bench_and_timeline_commands(tmp_path, capsys):
    log = tmp_path / "t.log"
    args = ["--set", 'engine.devices=["cpu"]', "--set", "partition_workers=1", "--set", "engine.threads=1",
            "--set", f"logging.timeline={log}", "--partitions", "2", "--constraints", "300"]
    assert main(["bench", "batch", "-c", "2", "-j", "1", "--json", str(tmp_path / "b.json")] + args) == 0
    out = capsys.readouterr().out
    assert "s per proof" in out and "GPU efficiency" in out
    device = next(iter(json.loads((tmp_path / "b.json").read_text())["devices"].values()))
    assert "longest_gap" in device          # the longest idle stretch, and what ended it (or None)
    assert main(["timeline", str(log), "--gantt", str(tmp_path / "g.png")]) == 0
    out = capsys.readouterr().out
    assert "device cpu: GPU efficiency" in out and (tmp_path / "g.png").exists()
    assert main(["bench", "sweep", "gpu_workers_per_device=1,2", "-c", "1", "-j", "1", "--no-warmup", "--repeats", "1",
                 "--csv", str(tmp_path / "s.csv")] + args) == 0
    rows = (tmp_path / "s.csv").read_text().splitlines()
    assert rows[0].startswith("engine.gpu_workers_per_device,") and len(rows) == 3
    assert main(["bench", "sweep", "engine.nope=1,2"] + args) == 2       # named config error
    assert "engine.nope" in capsys.readouterr().err
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    assert main(["timeline", str(empty)]) == 1


def test_batch_report_says_whether_the_host_keeps_up():
    from porep_prover.bench import BatchReport
    dev = {"efficiency": 0.6, "busy": 3.0, "span": 5.0, "gaps": {"count": 9}, "partitions": 10}
    synth = {"count": 10, "mean": 1.2}
    slow = BatchReport(1, 1, 10, 5.0, {"count": 0}, {"count": 0}, {"gpu0": dev}, 0, {"synthesis": synth}, 2)
    host, device = slow.supply()
    assert host == pytest.approx(0.6) and device == pytest.approx(0.3)
    assert any("host-bound: 2.00x short" in line for line in slow.lines())
    two = BatchReport(1, 1, 10, 5.0, {"count": 0}, {"count": 0}, {"gpu0": dev, "gpu1": dev}, 0,
                      {"synthesis": synth}, 8)
    host, device = two.supply()                       # two devices take a partition twice as often
    assert host == pytest.approx(0.15) and device == pytest.approx(0.15)
    fast = BatchReport(1, 1, 10, 5.0, {"count": 0}, {"count": 0}, {"gpu0": dev}, 0,
                       {"synthesis": {"count": 10, "mean": 0.3}}, 4)
    assert any("keeps up (4.00x headroom)" in line for line in fast.lines())
    assert BatchReport(1, 1, 10, 5.0, {"count": 0}, {"count": 0}, {}, 0, {}, 1).supply() is None


def test_bench_payload_entries_must_be_key_value(capsys):
    from porep_prover.cli import main
    assert main(["bench", "batch", "-t", "inline", "--payload", "no-equals-sign"]) == 2
    assert "--payload 'no-equals-sign' is not KEY=VALUE" in capsys.readouterr().err


@pytest.mark.parametrize("abc_on_device", [False, True])
def test_partition_estimate_is_what_synthesis_holds(abc_on_device):
    """The memory plan's bytes a partition (before any is synthesized) are what a synthesis holds."""
    import random

    from porep_prover.circuits import porep_like
    from porep_prover.memory.workload import Workload
    from porep_prover.groth16.prover import synthesize
    r1cs, w, _ = porep_like(900 + random.randrange(200), seed=random.randrange(1 << 20))
    params = insecure_setup(r1cs, warn=False)
    synth = synthesize(params, r1cs, w, 1, abc_on_device=abc_on_device)
    workload = Workload.of(params)
    if abc_on_device:
        assert workload.witness_bytes == synth.nbytes
    else:     # l's scalars are a view of the witness, whose inputs it holds too
        assert workload.host_assignment_bytes == synth.nbytes + 32 * r1cs.num_inputs


def test_batch_report_steady_state_is_the_devices_pace():
    from porep_prover.bench import BatchReport
    span, parts = 10 + random.random() * 50, random.randrange(5, 40)
    dev = {"efficiency": 0.9, "busy": span * 0.9, "span": span, "gaps": {"count": 3}, "partitions": parts}
    one = BatchReport(2, 2, 10, span + 7.0, {"count": 0}, {"count": 0}, {"gpu0": dev}, 0, {}, 8)
    assert one.steady_seconds_per_proof == pytest.approx(10 * span / parts)
    assert any(f"{10 * span / parts:.3f} s per proof" in line for line in one.lines() if "steady" in line)
    two = BatchReport(2, 2, 10, span, {"count": 0}, {"count": 0}, {"gpu0": dev, "gpu1": dev}, 0, {}, 8)
    assert two.steady_seconds_per_proof == pytest.approx(5 * span / parts)     # two devices, twice the pace
    assert BatchReport(1, 1, 10, 5.0, {"count": 0}, {"count": 0}, {}, 0, {}, 1).steady_seconds_per_proof is None
