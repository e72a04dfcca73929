# SPDX-License-Identifier: Apache-2.0
"""The last stretch of an engine's timeline as lanes of bars, one lane per
worker, with each device's GPU efficiency and longest gap over it: what the
daemon's live status page and `porep-prover status --watch` draw
(Engine.timeline_window). Every number they show is computed here, once.

A worker is one thread, so its events come in order and its state at any
moment is its last event: a stage opens at SYNTH_START (synthesis),
PREP_START (prepare), LOCK_WAIT (lock_wait), GPU_START (kernel, which also
ends the lock wait) or FINALIZE_START (finalize), and the worker's next event
ends it (its end, or a PARTITION_RETRY / PARTITION_FAILED). A stage open at
the window's start is found from the worker's last event before it.
"""
from __future__ import annotations

import collections
from typing import Any, Iterable, Sequence

from ..errors import InvalidInputError
from .timeline import Event, busy_over_span, describe_gap, idle_stretches

STAGE_OF = {"SYNTH_START": "synthesis", "PREP_START": "prepare", "LOCK_WAIT": "lock_wait", "GPU_START": "kernel",
            "FINALIZE_START": "finalize"}
STAGES = ("synthesis", "prepare", "lock_wait", "kernel", "finalize")
MAX_BARS_PER_LANE = 500        # a lane's most recent bars (tiny partitions: thousands a minute)
MAX_LOOKBACK_EVENTS = 20_000   # events read before the window's start, looking for stages open at it
MAX_WINDOW_SECONDS = 3600.0


def window(events: Sequence[Event], lanes: Iterable[tuple[str, str, str]], devices: Iterable[tuple[str, str]],
           now: float, seconds: float, whole: bool = True) -> dict[str, Any]:
    """The window (now - seconds, now] of events (oldest first, as
    Timeline.events() gives them; t in seconds since the epoch).

    lanes: (worker, role, device label) of the engine's workers, role
    "synthesis" | "device" | "finalizer" (a worker of the events not among
    them gets a lane of role "other"); devices: (identity, label); whole:
    events hold every event emitted (False: older ones have left the ring).
    InvalidInputError for seconds outside (0, MAX_WINDOW_SECONDS].

    Returns (times in seconds since the epoch, durations in seconds):
        now, seconds, start      the window
        lanes    [{worker, role, device, bars: [{stage (STAGES), job, partition,
                  start (may be before the window's start), end (None: still open)}]}]
                 (a lane's last MAX_BARS_PER_LANE bars, oldest first)
        devices  [{label, identity, regions (kernel regions ended in the window),
                  efficiency (union of those regions / first start .. last end; None: none),
                  busy_seconds, span_seconds,
                  longest_gap (None: fewer than two regions apart) {seconds, start, end,
                    job, partition (the region that ended it), synthesized, prepared,
                    lock_asked (that partition's SYNTH_END, PREP_END, LOCK_WAIT, from the
                    gap's start; None: not in the window), cause ("synthesis": its synthesis
                    ended in the gap; "preparation": its worker asked for the lock in it;
                    "handover": it waited for the lock from before; "unknown"), text}}]
        complete whether every stage open in the window was found (False: the events
                 before it had left the engine's ring or were past MAX_LOOKBACK_EVENTS)
    """
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= MAX_WINDOW_SECONDS:
        raise InvalidInputError(f"seconds must be above 0, at most {MAX_WINDOW_SECONDS:g}, got {seconds!r}")
    start = now - seconds
    lanes = list(lanes)
    inside, before, complete = _split(events, start, now, [w for w, _, _ in lanes], whole)
    known = {w: (role, device) for w, role, device in lanes}
    names = list(known) + sorted(w for w in set(inside) | set(before) if w not in known)
    out_lanes: list[dict[str, Any]] = [
        {"worker": w, "role": known.get(w, ("other", ""))[0], "device": known.get(w, ("", ""))[1],
         "bars": _bars(before.get(w), inside.get(w, []))} for w in names]
    kernels: collections.defaultdict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for lane in out_lanes:
        for bar in lane["bars"]:
            if bar["stage"] == "kernel" and bar["end"] is not None and bar["end"] >= start:
                kernels[bar["device_identity"]].append(bar)
    by_partition = _stage_times(out_lanes)
    out_devices = [_device(identity, label, kernels.get(identity, []), by_partition) for identity, label in devices]
    for lane in out_lanes:
        for bar in lane["bars"]:
            del bar["device_identity"]
    return {"now": now, "seconds": float(seconds), "start": start, "lanes": out_lanes, "devices": out_devices,
            "complete": complete}


def _split(events: Sequence[Event], start: float, now: float, workers: list[str],
           whole: bool) -> tuple[dict[str, list[Event]], dict[str, Event], bool]:
    """Each worker's events in the window (oldest first); each worker's last
    event before it; whether that is known for every worker (found, or none
    was ever emitted)."""
    inside: dict[str, list[Event]] = collections.defaultdict(list)
    before: dict[str, Event] = {}
    looked, wanted, exhausted = 0, set(workers), True
    for ev in reversed(events):                 # newest first: the window, then back as far as needed
        if not ev.worker or ev.t > now:
            continue
        if ev.t >= start:
            inside[ev.worker].append(ev)
            wanted.add(ev.worker)
            continue
        before.setdefault(ev.worker, ev)
        looked += 1
        if wanted <= set(before) or looked >= MAX_LOOKBACK_EVENTS:
            exhausted = False
            break
    for evs in inside.values():
        evs.reverse()
    complete = wanted <= set(before) or (exhausted and whole)
    return inside, before, complete


def _bars(last_before: Event | None, events: list[Event]) -> list[dict[str, Any]]:
    bars: list[dict[str, Any]] = []
    open_: Event | None = None
    if last_before is not None and last_before.event in STAGE_OF:
        open_ = last_before
    for ev in events:
        if open_ is not None:
            bars.append(_bar(open_, ev.t))
            open_ = None
        if ev.event in STAGE_OF:
            open_ = ev
    if open_ is not None:
        bars.append(_bar(open_, None))
    return bars[-MAX_BARS_PER_LANE:]


def _bar(ev: Event, end: float | None) -> dict[str, Any]:
    return {"stage": STAGE_OF[ev.event], "job": ev.job, "partition": ev.partition, "start": ev.t, "end": end,
            "device_identity": ev.device}


def _stage_times(lanes: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, float]]:
    """(job, partition) -> {"synthesized", "prepared", "lock_asked"}: the last such moment in the bars."""
    marks = {"synthesis": ("synthesized", "end"), "prepare": ("prepared", "end"), "lock_wait": ("lock_asked", "start")}
    out: collections.defaultdict[tuple[str, int], dict[str, float]] = collections.defaultdict(dict)
    for lane in lanes:
        for bar in lane["bars"]:
            if bar["stage"] in marks:
                key, which = marks[bar["stage"]]
                t = bar[which]
                if t is not None and t >= out[(bar["job"], bar["partition"])].get(key, float("-inf")):
                    out[(bar["job"], bar["partition"])][key] = t
    return out


def _device(identity: str, label: str, regions: list[dict[str, Any]],
            by_partition: dict[tuple[str, int], dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {"label": label, "identity": identity, "regions": len(regions), "efficiency": None,
                           "busy_seconds": 0.0, "span_seconds": 0.0, "longest_gap": None}
    if not regions:
        return out
    spans = [(r["start"], r["end"]) for r in regions]
    out["efficiency"], out["busy_seconds"], out["span_seconds"] = busy_over_span(spans)
    idle = idle_stretches(spans)
    if idle:
        gap_start, gap_end = max(idle, key=lambda g: g[1] - g[0])
        ender = min((r for r in regions if r["start"] >= gap_end), key=lambda r: r["start"])
        out["longest_gap"] = _gap(gap_start, gap_end, ender, by_partition.get((ender["job"], ender["partition"]), {}))
    return out


def _gap(start: float, end: float, ender: dict[str, Any], times: dict[str, float]) -> dict[str, Any]:
    gap = {"length": end - start, "job": ender["job"], "partition": ender["partition"]}
    for key in ("synthesized", "prepared", "lock_asked"):
        gap[key] = times[key] - start if key in times else None
    if gap["synthesized"] is not None and gap["synthesized"] > 0:
        cause = "synthesis"
    elif gap["lock_asked"] is not None:
        cause = "preparation" if gap["lock_asked"] > 0 else "handover"
    else:
        cause = "unknown"
    text = describe_gap(gap)
    return {"seconds": gap.pop("length"), "start": start, "end": end, **gap, "cause": cause, "text": text}
