# SPDX-License-Identifier: Apache-2.0
"""The pictures of a run and the bench's numbers: the Gantt chart names its
lanes' devices and its jobs, keeps its legend off the bars and leaves the
warm-up out; the sweep plot shows every repeat and their spread on axes from
zero; latency percentiles are numpy's; the bench commands write them all."""
import csv
import json

import numpy as np
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_rgba
from matplotlib.container import ErrorbarContainer

from porep_prover.bench import BatchReport, latency_stats
from porep_prover.bench.batch import WARMUP_PREFIX
from porep_prover.bench.plots import JOB_STRIP, STAGES, gantt, gantt_figure, sweep_figure
from porep_prover.cli import main
from porep_prover.engine.timeline import Event

PNG = b"\x89PNG\r\n\x1a\n"


def run(*args) -> int:
    return main([str(a) for a in args])


def partition_events(rng, t, job, partition, device_worker, device, synth="synth0", finalizer="finalize_0"):
    """One partition's events through every stage from t, random durations; (events, its end)."""
    out = []
    for start, end, worker, dev in (("SYNTH_START", "SYNTH_END", synth, ""), ("PREP_START", "PREP_END",
                                    device_worker, device), ("LOCK_WAIT", None, device_worker, device),
                                    ("GPU_START", "GPU_END", device_worker, device),
                                    ("FINALIZE_START", "FINALIZE_END", finalizer, device)):
        out.append(Event(start, t, job, partition, worker, dev))
        t += rng.uniform(1.0, 2.0) if start == "GPU_START" else rng.uniform(0.05, 0.3)   # long enough to be named
        if end:
            out.append(Event(end, t, job, partition, worker, dev))
    return out, t


def run_events(rng, devices):
    """Events of a warm-up job and a few jobs over the device workers given as (worker, device identity)."""
    jobs = [WARMUP_PREFIX + "%012x" % rng.getrandbits(48)] + ["%012x" % rng.getrandbits(48)
                                                              for _ in range(rng.randrange(2, 4))]
    events, t = [], 1.7e9 + rng.random()
    for job in jobs:
        events.append(Event("JOB_SUBMIT", t, job))
        for p in range(rng.randrange(1, 3)):
            worker, device = devices[rng.randrange(len(devices))]
            evs, t = partition_events(rng, t, job, p, worker, device)
            events += evs
        events.append(Event("JOB_END", t, job))
    return events, jobs


@pytest.mark.parametrize("devices", [[("cpu.w0", "cpu"), ("cpu.w1", "cpu")],
                                     [("gpu0.w0", "gpu-aaaa"), ("gpu1.w0", "gpu-bbbb"), ("gpu1.w1", "gpu-bbbb")]])
def test_gantt_names_devices_and_jobs_keeps_the_legend_off_and_leaves_the_warmup_out(rng, tmp_path, devices):
    events, jobs = run_events(rng, devices)
    fig = gantt_figure(events, width=24)          # wide enough for every kernel region to name its job
    ax = fig.axes[0]
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    used = {e.worker for e in events if not e.job.startswith(WARMUP_PREFIX)}      # the warm-up's alone: no lane
    for worker, device in devices:
        name = "CPU" if device == "cpu" else f"GPU {worker[3]}"
        assert (f"{worker} ({name})" in labels) == (worker in used)
    assert "synth0 (host)" in labels and "finalize_0 (host)" in labels
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert not any("GPU (lock held)" in t for t in texts) and "kernel region (device lock held)" in texts
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1     # outside the axes: on no bar
    kept = [j for j in jobs if not j.startswith(WARMUP_PREFIX)]
    assert [t for t in texts if t.startswith("job ")] == [f"job {j[:8]}" for j in kept]
    written = [t.get_text() for t in ax.texts]
    assert all(text.split("/")[0] in {j[:8] for j in kept} for text in written)
    regions = {f"{e.job[:8]}/{e.partition}" for e in events if e.event == "GPU_START" and e.job in kept}
    assert regions <= set(written)
    assert "1 warm-up job left out" in ax.get_title() and jobs[0][:8] not in " ".join(texts + written)
    assert ax.get_xlim()[0] == 0              # from the first event left: the warm-up's time is not drawn
    starts = [path.vertices[:, 0].min() for bars in ax.collections for path in bars.get_paths()]
    assert min(starts) == pytest.approx(0, abs=1e-9)
    strips = {tuple(bars.get_facecolor()[0]) for bars in ax.collections
              if np.ptp(bars.get_paths()[0].vertices[:, 1]) == pytest.approx(JOB_STRIP)}
    assert len(strips) == len(kept)                                       # a colour a job
    assert strips.isdisjoint(to_rgba(face) for _, _, face, _ in STAGES)   # none a stage's
    gantt(events, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == PNG
    with pytest.raises(ValueError, match="no timeline events"):
        gantt_figure([e for e in events if e.job == jobs[0]])             # the warm-up alone: nothing left


def report(rng, wall, efficiency):
    latencies = [rng.uniform(0.1, 2) for _ in range(rng.randrange(3, 30))]
    return BatchReport(count=rng.randrange(2, 9), concurrency=2, partitions=3, wall=wall,
                       latency=latency_stats(latencies), queue_wait={"count": 0},
                       devices={"cpu": {"efficiency": efficiency, "busy": 1.0, "span": 1.0, "partitions": 3,
                                        "gaps": {"count": 0}}}, failed=0)


def test_sweep_plot_shows_each_repeat_and_its_spread_from_zero(rng):
    repeats = rng.randrange(2, 6)
    rows = [(v, [report(rng, rng.uniform(5, 5.5), rng.uniform(0.9, 0.99)) for _ in range(repeats)])
            for v in rng.sample(range(1, 64), rng.randrange(2, 6))]
    fig = sweep_figure("engine.partition_workers", rows)
    seconds, efficiency = fig.axes
    assert seconds.get_ylim()[0] == 0 and efficiency.get_ylim()[0] == 0     # a 5 % spread does not look like a cliff
    assert [t.get_text() for t in seconds.get_xticklabels()] == [str(v) for v, _ in rows]
    for axis, measure in ((seconds, lambda r: r.seconds_per_proof), (efficiency, lambda r: 100 * r.efficiency)):
        bars = [c for c in axis.containers if isinstance(c, ErrorbarContainer)]
        assert len(bars) == 1
        line, _, (spans,) = bars[0]
        for (_x, median), segment, (_, reports) in zip(line.get_xydata(), spans.get_segments(), rows):
            values = [measure(r) for r in reports]
            assert median == pytest.approx(np.median(values))
            assert sorted(segment[:, 1]) == pytest.approx([min(values), max(values)])
        points = np.concatenate([c.get_offsets() for c in axis.collections if isinstance(c, PathCollection)])
        assert len(points) == repeats * len(rows)                           # every repeat drawn
        assert sorted(points[:, 1]) == pytest.approx(sorted(measure(r) for _, rs in rows for r in rs))
    assert f"{repeats} runs a value" in seconds.get_title()


def test_latency_percentiles_are_numpys(rng):
    for _ in range(20):
        values = [rng.expovariate(rng.uniform(0.5, 5)) for _ in range(rng.randrange(1, 500))]
        stats = latency_stats(values)
        expected = np.percentile(np.array(values), [50, 95, 99])
        assert [stats["p50"], stats["p95"], stats["p99"]] == pytest.approx(expected.tolist(), rel=1e-12)
        assert stats["count"] == len(values) and stats["max"] == max(values)
        assert stats["median"] == sorted(values)[len(values) // 2]
    assert latency_stats([]) == {"count": 0}
    text = "\n".join(report(rng, 3.0, 0.9).lines())
    assert "p50 " in text and "p95 " in text and "p99 " in text and "median " in text


def test_bench_batch_and_sweep_write_their_numbers_and_pictures(tmp_path, rng, capsys):
    out, gantt_png = tmp_path / "b.json", tmp_path / "g.png"
    assert run("bench", "batch", "-c", 3, "-j", 2, "--partitions", 2, "--constraints", rng.randrange(100, 300),
               "--threads", 1, "--json", out, "--gantt", gantt_png) == 0
    latency = json.loads(out.read_text())["latency"]
    assert latency["count"] == 3 and latency["min"] <= latency["p50"] <= latency["p95"] <= latency["p99"] <= \
        latency["max"]
    assert "p99" in capsys.readouterr().out and gantt_png.read_bytes()[:8] == PNG
    repeats = rng.randrange(2, 4)
    plot, table = tmp_path / "s.png", tmp_path / "s.csv"
    assert run("bench", "sweep", "engine.gpu_workers_per_device=1,2", "-c", 1, "-j", 1, "--partitions", 2,
               "--constraints", 150, "--threads", 1, "--no-warmup", "--repeats", repeats, "--csv", table,
               "--plot", plot) == 0
    rows = list(csv.DictReader(table.open()))
    assert [(r["engine.gpu_workers_per_device"], r["repeat"]) for r in rows] == \
        [(v, str(i)) for v in ("1", "2") for i in range(repeats)]
    assert plot.read_bytes()[:8] == PNG
    assert f"|    {repeats} |" in capsys.readouterr().out


def test_a_sweep_hands_over_its_rows_after_every_batch(tmp_path):
    """sweep's on_batch gets the rows so far as each batch ends (the CLI
    writes its CSV then), so a run stopped midway keeps every batch it
    finished; write_csv leaves a whole file each time."""
    from porep_prover.bench import DemoWorkload
    from porep_prover.bench.sweep import sweep, write_csv
    from porep_prover.engine import Engine, load_config
    work = DemoWorkload("porep-like", 120, 1, None)
    seen, path = [], tmp_path / "rows.csv"

    def on_batch(rows):
        write_csv("engine.gpu_workers_per_device", rows, path)
        seen.append((sum(len(r) for _, r in rows), len(list(csv.DictReader(path.open())))))

    def engine(change):
        return Engine(load_config(overrides={"engine.threads": 1, "engine.devices": ["cpu"], **change}))
    rows = sweep("engine.gpu_workers_per_device", [1, 2], engine, work.job, 1, 1, repeats=2, on_batch=on_batch)
    assert seen == [(1, 1), (2, 2), (3, 3), (4, 4)] and sum(len(r) for _, r in rows) == 4
