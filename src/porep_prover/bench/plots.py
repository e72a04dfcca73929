# SPDX-License-Identifier: Apache-2.0
"""The pictures of a run: the workers' Gantt chart from timeline events
(`porep-prover timeline --gantt`, `bench batch --gantt`) and a sweep's plot
(`bench sweep --plot`). matplotlib's object API (no pyplot, no display):
*_figure() build a Figure to look into, the others write a PNG."""
from __future__ import annotations

import re
import statistics
from collections import defaultdict
from typing import Callable

from ..engine.timeline import Event, stage_pairs
from .batch import WARMUP_PREFIX

STAGES = (("SYNTH_START", "SYNTH_END", "tab:blue", "synthesis"), ("PREP_START", "PREP_END", "tab:orange", "prepare"),
          ("LOCK_WAIT", "GPU_START", "tab:gray", "lock wait"),
          ("GPU_START", "GPU_END", "tab:red", "kernel region (device lock held)"),
          ("FINALIZE_START", "FINALIZE_END", "tab:green", "finalize"))
LABELLED = ("synthesis", "kernel region (device lock held)")    # stages whose bars name their job and partition
JOB_STRIP = 0.22           # height of the strip under a bar in its job's colour (a lane is 0.8 high)
JOB_LEGEND_MAX = 16        # jobs named in the legend at most (every bar wide enough names its own)
DPI = 110
JOB_ORDER = (0, 9, 16, 6, 13, 2, 11, 18, 4, 15, 1, 8, 19, 5, 12, 3, 10, 17, 7, 14)   # neighbours far apart


def job_colour(i: int):
    """The i-th job's colour: one of tab20b's (purples, olives, browns, pinks:
    none a stage's), neighbours in JOB_ORDER far apart."""
    from matplotlib import colormaps
    return colormaps["tab20b"](JOB_ORDER[i % len(JOB_ORDER)])


def is_warmup(job: str) -> bool:
    """Whether job is a warm-up's (bench.warm_up marks their ids)."""
    return job.startswith(WARMUP_PREFIX)


def device_names(events: list[Event]) -> dict[str, str]:
    """Device identity -> "CPU" or "GPU N": N from the workers' names
    (gpuN.wK) where they give it, else GPUs numbered in identity order."""
    names, gpus = {}, set()
    for e in events:
        if not e.device or e.device in names:
            continue
        if e.device == "cpu":
            names[e.device] = "CPU"
        elif m := re.match(r"gpu(\d+)\.", e.worker):
            names[e.device] = f"GPU {m[1]}"
        else:
            gpus.add(e.device)
    for i, identity in enumerate(sorted(gpus - set(names))):
        names[identity] = f"GPU {i}"
    return names


def lanes(events: list[Event]) -> list[tuple[str, str]]:
    """(worker, lane label) of the workers in events: synthesis workers, then
    device workers (their label names the device: "cpu.w0 (CPU)", "gpu0.w1
    (GPU 0)"), then finalizers and any other, each group by name."""
    devices, kinds, role = device_names(events), defaultdict(set), {}
    for e in events:
        if e.worker:
            kinds[e.worker].add(e.event)
    for worker, seen in kinds.items():
        if seen & {"PREP_START", "LOCK_WAIT", "GPU_START"}:
            role[worker] = 1
        elif seen & {"SYNTH_START"}:
            role[worker] = 0
        else:
            role[worker] = 2
    out = []
    for worker in sorted(kinds, key=lambda w: (role[w], w)):
        if role[worker] == 1:
            device = next((devices[e.device] for e in events if e.worker == worker and e.device), "device")
        else:
            device = "host"
        out.append((worker, f"{worker} ({device})"))
    return out


def _job_label(job: str, partition: int) -> str:
    return f"{job[:8]}/{partition}"


def gantt_figure(events: list[Event], leave_out: Callable[[str], bool] = is_warmup, width: float = 12.0):
    """The Figure of every worker's stages over time: a lane per worker
    named with its device, bars coloured by stage, a strip under each bar
    in its job's colour, the job and partition written on the synthesis and
    kernel-region bars wide enough to hold them, the legend outside the
    axes. Jobs for which leave_out(job id) holds (default: warm-ups) are
    left out, and the title says so. ValueError when no event is left."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    dropped = {e.job for e in events if e.job and leave_out(e.job)}
    events = [e for e in events if e.job not in dropped]
    if not events:
        raise ValueError("no timeline events to draw")
    rows = lanes(events)
    jobs = list(dict.fromkeys(e.job for e in sorted(events, key=lambda e: e.t) if e.job))
    colour = {job: job_colour(i) for i, job in enumerate(jobs)}
    fig = Figure(figsize=(width, 1.2 + 0.4 * max(1, len(rows))), dpi=DPI)
    ax = fig.add_subplot()
    span = _draw_bars(ax, events, {w: i for i, (w, _) in enumerate(rows)}, colour, width)
    ax.set_yticks(range(len(rows)), [label for _, label in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, span * 1.01)
    ax.set_xlabel("seconds from the first event")
    handles = [Patch(facecolor=face, label=label) for _, _, face, label in STAGES]
    handles += [Patch(facecolor=colour[j], label=f"job {j[:8]}") for j in jobs[:JOB_LEGEND_MAX]]
    if len(jobs) > JOB_LEGEND_MAX:
        handles.append(Patch(facecolor="none", edgecolor="none", label=f"... {len(jobs) - JOB_LEGEND_MAX} jobs more"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small",
              title="stage; strip: job")
    ax.set_title(f"porep-prover timeline: {len(jobs)} jobs"
                 + (f" ({len(dropped)} warm-up job{'s' * (len(dropped) > 1)} left out)" if dropped else ""))
    return fig


def _draw_bars(ax, events: list[Event], row: dict[str, int], colour: dict, width: float) -> float:
    """Every stage's bars on ax, one collection per stage and lane and per
    job and lane (thousands of bars draw fast), the labels on those wide
    enough; returns the seconds from the first event to the last."""
    t0 = min(e.t for e in events)
    span = max(e.t for e in events) - t0 or 1.0
    seconds_per_px = span / (width * DPI * 0.7)          # the axes take about 0.7 of the figure's width
    for start, end, face, label in STAGES:
        bars, strips = defaultdict(list), defaultdict(list)
        for s, e in stage_pairs(events, start, end):
            if s.worker not in row:
                continue
            y, x, w = row[s.worker], s.t - t0, e.t - s.t
            bars[y].append((x, w))
            strips[(y, s.job)].append((x, w))
            text = _job_label(s.job, s.partition)
            if label in LABELLED and w / seconds_per_px >= 6.5 * len(text) + 4:
                ax.text(x + w / 2, y + JOB_STRIP / 2, text, ha="center", va="center", fontsize=7, color="white",
                        clip_on=True)
        for y, spans in bars.items():
            ax.broken_barh(spans, (y - 0.4 + JOB_STRIP, 0.8 - JOB_STRIP), facecolors=face)
        for (y, job), spans in strips.items():
            ax.broken_barh(spans, (y - 0.4, JOB_STRIP), facecolors=colour.get(job, "black"))
    return span


def gantt(events: list[Event], path, leave_out: Callable[[str], bool] = is_warmup) -> None:
    """gantt_figure(events, leave_out) as a PNG at path."""
    gantt_figure(events, leave_out).savefig(path, bbox_inches="tight")


def sweep_figure(key: str, rows):
    """The Figure of a sweep's rows [(value, [BatchReport per repeat])]:
    seconds per proof (left axis) and GPU efficiency (right axis) against
    the value, each repeat a point, a line through the medians and bars
    from the lowest to the highest repeat; both axes from zero."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=(8, 4.5), dpi=DPI)
    ax = fig.add_subplot()
    ax2 = ax.twinx()
    xs = list(range(len(rows)))
    for axis, colour, marker, measure in ((ax, "tab:blue", "o", lambda r: r.seconds_per_proof),
                                          (ax2, "tab:red", "s", lambda r: 100 * r.efficiency)):
        runs = [[measure(r) for r in reports] for _, reports in rows]
        for x, values in zip(xs, runs):
            axis.scatter([x] * len(values), values, color=colour, alpha=0.45, s=18, marker=marker)
        medians = [statistics.median(v) for v in runs]
        spread = [[m - min(v) for m, v in zip(medians, runs)], [max(v) - m for m, v in zip(medians, runs)]]
        axis.errorbar(xs, medians, yerr=spread, color=colour, marker=marker, capsize=4,
                      linestyle="-" if axis is ax else "--")
    ax.set_xticks(xs, [str(v) for v, _ in rows])
    ax.set_xlim(-0.5, len(rows) - 0.5)
    ax.set_xlabel(key)
    ax.set_ylabel("seconds per proof", color="tab:blue")
    ax2.set_ylabel("GPU efficiency %", color="tab:red")
    ax.set_ylim(0, max((r.seconds_per_proof for _, reports in rows for r in reports), default=1) * 1.15 or 1)
    ax2.set_ylim(0, 105)
    repeats = sorted({len(reports) for _, reports in rows})
    ax.set_title(f"porep-prover sweep of {key}: {'/'.join(map(str, repeats))} runs a value "
                 "(points; line: median, bars: lowest to highest)", fontsize="medium")
    return fig


def plot_sweep(key: str, rows, path) -> None:
    """sweep_figure(key, rows) as a PNG at path."""
    sweep_figure(key, rows).savefig(path, bbox_inches="tight")
