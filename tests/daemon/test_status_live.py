# SPDX-License-Identifier: Apache-2.0
"""The live status: the timeline's window (engine.timeline_window: lanes,
bars, GPU efficiency, the longest gap and what ended it) against references
built from the events' own intervals; GET /status/live and GET / of the
status server; `porep-prover status` (once, --watch on a terminal and off
it, Ctrl-C) rendered to captured consoles."""
import fnmatch
import http.client
import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import tomllib

import pytest
from rich.console import Console

from porep_prover.circuits import porep_like
from porep_prover.cli import main, status_cmds, status_view
from porep_prover.daemon.metrics import DaemonMetrics
from porep_prover.daemon.status_http import PAGE_HEADERS, StatusServer, status_page
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.engine import timeline_window as tw
from porep_prover.engine.timeline import Event
from porep_prover.errors import DaemonError, InvalidInputError
from porep_prover.groth16 import insecure_setup

from interrupts import default_sigint
from status_samples import DEVICE, LANES, events_of, full_status, serve, synthetic_window, worker_intervals

ROOT = pathlib.Path(__file__).resolve().parents[2]


def expected_bars(intervals, start, now):
    """Reference: the bars a window shows of one worker's intervals."""
    return [{"stage": s, "job": j, "partition": p, "start": a, "end": b if b <= now else None}
            for s, j, p, a, b in intervals if a <= now and b >= start]


def merged(spans):
    """Reference: the union of intervals, sorted (its own loop, not the module's)."""
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def test_window_lanes_efficiency_and_longest_gap_match_the_intervals(rng):
    now, seconds = 1_800_000_000.0 + rng.uniform(0, 1e6), rng.choice([20.0, 45.5, 60.0])
    start = now - seconds
    intervals = {lane: worker_intervals(rng, lane[0], lane[1], start - rng.uniform(5, 30), now + 5) for lane in LANES}
    events = events_of(intervals, now)
    got = tw.window(events, LANES, [(DEVICE, "gpu0")], now, seconds)
    assert (got["now"], got["seconds"], got["start"], got["complete"]) == (now, seconds, start, True)
    assert [(lane["worker"], lane["role"], lane["device"]) for lane in got["lanes"]] == LANES
    for lane, key in zip(got["lanes"], LANES):
        assert lane["bars"] == expected_bars(intervals[key], start, now), lane["worker"]
    kernels = [(a, b) for key in LANES if key[1] == "device" for s, _, _, a, b in intervals[key]
               if s == "kernel" and start <= b <= now]
    (device,) = got["devices"]
    assert (device["label"], device["identity"], device["regions"]) == ("gpu0", DEVICE, len(kernels))
    union = merged(kernels)
    busy, span = sum(b - a for a, b in union), union[-1][1] - union[0][0]
    assert device["busy_seconds"] == pytest.approx(busy) and device["span_seconds"] == pytest.approx(span)
    assert device["efficiency"] == pytest.approx(busy / span)
    idle = [(b0, a1) for (_, b0), (a1, _) in zip(union, union[1:])]
    gap = device["longest_gap"]
    if not idle:
        assert gap is None
        return
    g0, g1 = max(idle, key=lambda g: g[1] - g[0])
    assert (gap["start"], gap["end"]) == (g0, g1) and gap["seconds"] == pytest.approx(g1 - g0)
    ender = min((iv for key in LANES if key[1] == "device" for iv in intervals[key]
                 if iv[0] == "kernel" and start <= iv[4] <= now and iv[3] >= g1), key=lambda iv: iv[3])
    assert (gap["job"], gap["partition"]) == ender[1:3]
    assert f"ended by job {ender[1]} partition {ender[2]}" in gap["text"]


def scenario(kind):
    """One device, two workers: partition 1's kernel region follows partition 0's
    after a gap [10, 12); what partition 1 was doing decides the cause."""
    w0, w1 = "gpu0.w0", "gpu0.w1"
    evs = [Event("SYNTH_START", 1.0, "j", 0, "synth0"), Event("SYNTH_END", 2.0, "j", 0, "synth0"),
           Event("LOCK_WAIT", 2.5, "j", 0, w0, DEVICE), Event("GPU_START", 3.0, "j", 0, w0, DEVICE),
           Event("GPU_END", 10.0, "j", 0, w0, DEVICE)]
    synth_end, lock = {"synthesis": (11.0, 11.5), "preparation": (5.0, 11.8), "handover": (5.0, 6.0)}[kind]
    evs += [Event("SYNTH_START", 4.0, "j", 1, "synth0"), Event("SYNTH_END", synth_end, "j", 1, "synth0"),
            Event("LOCK_WAIT", lock, "j", 1, w1, DEVICE), Event("GPU_START", 12.0, "j", 1, w1, DEVICE),
            Event("GPU_END", 14.0, "j", 1, w1, DEVICE)]
    return sorted(evs, key=lambda e: e.t)


@pytest.mark.parametrize("cause", ["synthesis", "preparation", "handover"])
def test_the_longest_gap_names_what_ended_it(cause):
    got = tw.window(scenario(cause), LANES, [(DEVICE, "gpu0")], 15.0, 15.0)
    gap = got["devices"][0]["longest_gap"]
    assert (gap["seconds"], gap["job"], gap["partition"], gap["cause"]) == (2.0, "j", 1, cause)
    assert got["devices"][0]["efficiency"] == pytest.approx(9.0 / 11.0)
    if cause == "synthesis":
        assert (gap["synthesized"], gap["lock_asked"]) == (1.0, 1.5)
    # a window that begins inside partition 0's kernel region still draws it from its start
    late = tw.window(scenario(cause), LANES, [(DEVICE, "gpu0")], 15.0, 7.0)
    bars = {lane["worker"]: lane["bars"] for lane in late["lanes"]}
    assert bars["gpu0.w0"] == [{"stage": "kernel", "job": "j", "partition": 0, "start": 3.0, "end": 10.0}]
    assert late["devices"][0]["regions"] == 2


def test_stages_open_at_either_end_and_bounds():
    evs = [Event("SYNTH_START", 0.0, "j", 0, "synth0"), Event("GPU_START", 1.0, "j", 0, "gpu0.w0", DEVICE),
           Event("PARTITION_RETRY", 3.0, "j", 0, "gpu0.w0"), Event("FINALIZE_START", 99.0, "j", 2, "finalize_0")]
    got = tw.window(evs, LANES, [(DEVICE, "gpu0")], 100.0, 10.0)
    bars = {lane["worker"]: lane["bars"] for lane in got["lanes"]}
    assert bars["synth0"] == [{"stage": "synthesis", "job": "j", "partition": 0, "start": 0.0, "end": None}]
    assert bars["gpu0.w0"] == [] and bars["synth1"] == []        # the retry ended the region before the window
    assert bars["finalize_0"] == [{"stage": "finalize", "job": "j", "partition": 2, "start": 99.0, "end": None}]
    assert got["devices"][0]["efficiency"] is None and got["devices"][0]["longest_gap"] is None
    assert got["complete"]
    assert not tw.window(evs, LANES, [], 100.0, 10.0, whole=False)["complete"]   # synth1: its past is gone
    stray = tw.window(evs + [Event("SYNTH_START", 95.0, "k", 1, "other7")], LANES, [], 100.0, 10.0)
    assert stray["lanes"][-1]["worker"] == "other7" and stray["lanes"][-1]["role"] == "other"
    many = [Event(name, 50.0 + i * 0.01 + d, "j", i, "synth0") for i in range(tw.MAX_BARS_PER_LANE + 40)
            for name, d in (("SYNTH_START", 0.0), ("SYNTH_END", 0.005))]
    lane = tw.window(many, LANES, [], 100.0, 60.0)["lanes"][0]["bars"]
    assert len(lane) == tw.MAX_BARS_PER_LANE and lane[-1]["partition"] == tw.MAX_BARS_PER_LANE + 39
    for bad in (0, -1.0, float("nan"), tw.MAX_WINDOW_SECONDS + 1, True, "60"):
        with pytest.raises(InvalidInputError):
            tw.window([], LANES, [], 100.0, bad)


def test_an_engine_window_has_a_lane_per_worker_and_every_partition(rng):
    r1cs, _, _ = porep_like(233)
    params = insecure_setup(r1cs, warn=False)
    witnesses = [porep_like(233, seed=rng.randrange(1 << 30))[1] for _ in range(rng.randrange(2, 5))]
    cfg = load_config(overrides={"engine.partition_workers": 2, "engine.threads": 1, "engine.devices": ["cpu"],
                                 "engine.gpu_workers_per_device": 2})
    with Engine(cfg) as engine:
        job = inline_job(params, r1cs, witnesses)
        engine.prove(job, 120)
        window = engine.timeline_window(30.0)
        events = engine.timeline.events()
    assert [lane["worker"] for lane in window["lanes"]] == \
        ["synth0", "synth1", "cpu.w0", "cpu.w1", "finalize_0", "finalize_1"]
    for part in range(len(witnesses)):
        stages = {(lane["role"], bar["stage"]) for lane in window["lanes"] for bar in lane["bars"]
                  if (bar["job"], bar["partition"]) == (job.id, part)}
        assert {("synthesis", "synthesis"), ("device", "kernel"), ("finalizer", "finalize")} <= stages, part
    regions = {(e.partition, e.event): e.t for e in events if e.event in ("GPU_START", "GPU_END")}
    spans = merged([(regions[(p, "GPU_START")], regions[(p, "GPU_END")]) for p in range(len(witnesses))])
    (device,) = window["devices"]
    assert device["label"] == "cpu" and device["regions"] == len(witnesses)
    assert device["efficiency"] == pytest.approx(sum(b - a for a, b in spans) / (spans[-1][1] - spans[0][0]))


# ------------------------------------------------------------------ the status server and the command


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def test_live_status_and_the_page_over_http(rng):
    server, status, window = serve(rng)
    with server:
        code, headers, body = get(server.port, "/status/live")
        assert (code, headers["Content-Type"]) == (200, "application/json")
        assert json.loads(body) == {"status": status, "window": window}
        code, headers, body = get(server.port, "/")
        assert (code, headers["Content-Type"]) == (200, "text/html; charset=utf-8") and body == status_page()
        assert all(headers[name] == value for name, value in PAGE_HEADERS.items())
        assert get(server.port, "/status")[1].get("Content-Security-Policy") is None
        assert get(server.port, "/status/live?window=7.5")[0] == 200 and server.engine.asked == [60.0, 7.5]
        for bad in ("0", "3601", "nan", "inf", "x", ""):
            assert get(server.port, f"/status/live?window={bad}")[0] == (200 if bad == "" else 400), bad
    page = body.decode()
    assert "<script>" in page and "<style>" in page and len(body) < 40_000
    for external in ("http://", "https://", "src=", "@import", "url("):   # nothing fetched but /status/live
        assert external not in page, external
    with StatusServer(("127.0.0.1", 0), status=lambda: status, metrics=DaemonMetrics()) as bare:
        assert json.loads(get(bare.port, "/status/live")[2]) == {"status": status, "window": None}


def test_the_page_ships_in_the_package():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert any(fnmatch.fnmatch("daemon/page/status.html", p) for p in patterns["porep_prover"])


def test_addresses():
    assert status_cmds.live_url("127.0.0.1:9821") == "http://127.0.0.1:9821/status/live"
    assert status_cmds.live_url("http://[::1]:80/status") == "http://[::1]:80/status/live"
    for bad in ("127.0.0.1", "https://h:1", "unix:/run/x", "h:99999", "user@h:1", ""):
        with pytest.raises(InvalidInputError):
            status_cmds.live_url(bad)


def rendered(live, width=140, terminal=False) -> str:
    console = Console(file=io.StringIO(), width=width, force_terminal=terminal, color_system=None, record=True)
    console.print(status_view.render(live, width))
    return console.export_text()


def test_the_terminal_view_shows_the_numbers(rng):
    status, window = full_status(rng), synthetic_window(rng)
    text = rendered({"status": status, "window": window})
    for lane in window["lanes"]:
        assert f"\n{lane['worker']} " in text
    for job in status["jobs"]["active"]:
        row = next(line for line in text.splitlines() if job["job_id"] in line)
        assert row.split()[4:9] == [str(job[k]) for k in ("proved", "in_flight", "queued", "failed", "partitions")]
    device = window["devices"][0]
    assert status_view.percent(device["efficiency"]) in text
    assert status_view.size(status["srs"]["resident_bytes"]) in text
    gpu = status["devices"][0]
    wide = rendered({"status": status, "window": window}, width=240)
    assert f"{status_view.size(gpu['memory']['streamed_bytes'])} / " \
           f"{status_view.duration(gpu['copy_wait_seconds'])}" in wide
    assert ("accepting jobs" if status["accepting"] else "not accepting") in text
    for p, n in status["queue"].items():
        assert any(line.split()[:2] == [p, str(n)] for line in text.splitlines())


def test_the_terminal_view_shows_every_cluster_node(rng):
    status, window = full_status(rng, cluster=True), synthetic_window(rng)
    text = rendered({"status": status, "window": window}, width=240)
    nodes = status["cluster"]["nodes"]
    for n in nodes:
        row = next(line for line in text.splitlines() if line.split()[:1] == [n["node_id"][:8]])
        numbers = [str(n[k]) for k in ("partitions_sent", "partitions_done", "partitions_failed",
                                       "partitions_rerun", "in_flight")]
        assert " ".join(numbers) in " ".join(row.split()), row
        assert n["address"] in row and n["state"] in row
        shown = []                    # each device with its own efficiency, "-" where none ended in the window
        for label in n["devices"]:
            figure = [f for f in n["device_figures"] if f["label"] == label]
            efficiency = figure[0]["efficiency"] if figure else None
            shown.append(f"{label} {'-' if efficiency is None else f'{100 * efficiency:.1f} %'}" if figure else label)
        assert ", ".join(shown) in row, row
    assert f"{status['cluster']['nodes_ready']} of {len(nodes)} nodes ready" in text
    assert "Cluster nodes" not in rendered({"status": full_status(rng), "window": window})


def test_lane_cells_show_the_stage_that_fills_each_cell(rng):
    cells = rng.randrange(20, 90)
    start, now = 1000.0, 1000.0 + cells          # a second a cell
    a, b = rng.randrange(0, cells // 2), rng.randrange(cells // 2 + 1, cells)
    bars = [{"stage": "kernel", "start": start + a, "end": start + b},
            {"stage": "finalize", "start": start + b + 0.25, "end": None},
            {"stage": "synthesis", "start": start - 50, "end": start + 0.3}]
    got = status_view.lane_cells(bars, start, now, cells)
    if a == 0:
        assert got[0] == "kernel"
    else:
        assert got[0] == "synthesis" and got[1:a] == [None] * (a - 1)
    assert got[a:b] == ["kernel"] * (b - a)
    assert got[b + 1:] == ["finalize"] * (cells - b - 1) and got[b] == "finalize"
    assert status_view.size(1536) == "1.5 KiB" and status_view.size(7) == "7 B"
    assert status_view.duration(0.0123) == "12.3 ms" and status_view.duration(300) == "5.0 min"


def test_watch_off_a_terminal_prints_a_view_per_interval(rng, monkeypatch):
    server, status, window = serve(rng)
    naps = []
    monkeypatch.setattr(status_cmds.time, "sleep", naps.append)
    with server:
        url = status_cmds.live_url(f"127.0.0.1:{server.port}")
        out = Console(file=io.StringIO(), width=150, force_terminal=False, record=True)
        assert status_cmds.watch(url, 0.5, 3, out) == 0
    text = out.export_text()
    assert text.count("--- ") == 3 and naps == [0.5, 0.5]
    assert text.count(status["jobs"]["active"][0]["job_id"]) == 3
    assert "\x1b[" not in text


def test_watch_on_a_terminal_redraws_in_place_and_ctrl_c_exits_130(rng, monkeypatch, capsys):
    server, status, window = serve(rng)
    with server:
        url = status_cmds.live_url(f"127.0.0.1:{server.port}")
        monkeypatch.setattr(status_cmds.time, "sleep", lambda s: None)
        screen = io.StringIO()
        out = Console(file=screen, width=150, force_terminal=True, color_system="standard")
        assert status_cmds.watch(url, 1.0, 2, out) == 0
        assert "\x1b[" in screen.getvalue() and status["jobs"]["active"][0]["job_id"] in screen.getvalue()

        def interrupt(seconds):
            raise KeyboardInterrupt
        monkeypatch.setattr(status_cmds.time, "sleep", interrupt)
        assert main(["status", "--watch", "--address", f"127.0.0.1:{server.port}"]) == 130
        assert status["jobs"]["active"][0]["job_id"] in capsys.readouterr().out
        assert main(["status", "--json", "--address", f"127.0.0.1:{server.port}"]) == 0
        assert json.loads(capsys.readouterr().out) == {"status": status, "window": window}
        port = server.port
    assert main(["status", "--address", f"127.0.0.1:{port}"]) == 2
    assert "DaemonUnavailableError" in capsys.readouterr().err
    shown = io.StringIO()
    monkeypatch.setattr(status_cmds.time, "sleep", lambda s: None)
    status_cmds.watch(status_cmds.live_url(f"127.0.0.1:{port}"), 1.0, 2, Console(file=shown, width=120))
    assert shown.getvalue().count("asking again") == 2
    for bad in (["--interval", "0.1"], ["--interval", "nan"], ["--count", "0"], ["--watch", "--json"]):
        with pytest.raises(SystemExit) as exc:
            main(["status", "--watch", *bad] if bad[0] != "--watch" else ["status", *bad])
        assert exc.value.code == 2


def test_ctrl_c_ends_a_watching_process_with_130(rng):
    server, status, _ = serve(rng)
    with server:
        proc = subprocess.Popen([sys.executable, "-m", "porep_prover.cli", "status", "--watch", "--interval", "0.2",
                                 "--address", f"127.0.0.1:{server.port}"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "150"},
                                preexec_fn=default_sigint)
        try:
            job, seen = status["jobs"]["active"][0]["job_id"], []
            while not seen or (job not in seen[-1] and len(seen) < 500):      # the first view, to its jobs
                seen.append(proc.stdout.readline())
                assert seen[-1], "".join(seen) + proc.stderr.read()
            assert seen[0].startswith("--- ") and job in seen[-1], seen
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    assert proc.returncode == 130 and "Traceback" not in err, err


def test_answers_that_are_not_a_live_status_are_daemon_errors():
    def broken():
        raise RuntimeError("journal closed")
    for status, words in ((broken, "HTTP 500"), (lambda: [1, 2], "not a daemon's live status")):
        with StatusServer(("127.0.0.1", 0), status=status, metrics=DaemonMetrics()) as server:
            with pytest.raises(DaemonError, match=words):
                status_cmds.fetch_live(status_cmds.live_url(f"127.0.0.1:{server.port}"))
