# SPDX-License-Identifier: Apache-2.0
"""The engine's timeline: structured events, their log lines, and the analysis
behind `porep-prover timeline` (GPU efficiency, gaps, lock wait and hold,
stage durations; its Gantt chart of the workers is bench.plots).

Events (t in seconds since the epoch):
    SYNTH_START / SYNTH_END        a partition's synthesis, on a synthesis worker
    GPU_QUEUE                      it waits for a device worker
    PREP_START / PREP_END          the device worker's host-side preparation (no lock)
    LOCK_WAIT                      a device worker asks for its device's lock
    LOCK_YIELD                     it gives its wait up to a more urgent partition (engine.ready)
    GPU_START / GPU_END            the lock is held: the kernel region
    FINALIZE_START / FINALIZE_END  B2 MSM, assembly, verification (no lock)
    PARTITION_RETRY / PARTITION_FAILED, JOB_SUBMIT / JOB_END
    HOLD                           a drain: no partition is handed out or started from here on
    PARTITION_SENT / PARTITION_PROVED  on a cluster (engine.cluster): to a node (the worker field), and back
    PARTITION_RETURNED             its node was lost: back to the scheduler, the attempt not counted
Each is logged as one line `TIMELINE {json}` on the logger porep_prover.timeline
(the record: `porep-prover timeline` reads it; with logging.format = "json" a
JSON record whose fields event, ts, job, partition, worker, device are the
event's; ts is Event.t, and logs that name it t are read too); an engine
keeps only its last events in memory
(engine.timeline_events), numbered in the order emitted (Timeline.since).
GPU efficiency = (union of the GPU_START..GPU_END intervals) / (first start .. last end).
"""
from __future__ import annotations

import bisect
import collections
import dataclasses
import itertools
import json
import logging
import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable
from typing import Any

PREFIX = "TIMELINE "
LOG = logging.getLogger("porep_prover.timeline")
RECORD_FIELDS = "timeline"      # the log record's attribute holding the event's fields (engine.logs reads it)


@dataclasses.dataclass(frozen=True)
class Event:
    event: str
    t: float
    job: str = ""
    partition: int = -1
    worker: str = ""
    device: str = ""


class Timeline:
    """Thread-safe recorder: logs each event and keeps the last `capacity` of
    them (None: every one); emitted counts them all, and the n-th event
    emitted has the sequence number n - 1 (since() reads by it)."""

    def __init__(self, capacity: int | None = None):
        self._events: collections.deque[Event] = collections.deque(maxlen=capacity)
        self._lock = threading.Lock()
        self.capacity = capacity
        self.emitted = 0

    def emit(self, event: str, job: str = "", partition: int = -1, worker: str = "", device: str = "") -> Event:
        ev = Event(event, time.time(), job, partition, worker, device)
        with self._lock:
            self._events.append(ev)
            self.emitted += 1
        if LOG.isEnabledFor(logging.INFO):     # the fields in their order, as dataclasses.asdict has them
            fields = {"event": event, "ts": ev.t, "job": job, "partition": partition, "worker": worker,
                      "device": device}
            LOG.info(PREFIX + json.dumps(fields, separators=(",", ":")), extra={RECORD_FIELDS: fields})
        return ev

    def events(self) -> list[Event]:
        """The events kept, oldest first."""
        with self._lock:
            return list(self._events)

    def since(self, seq: int) -> tuple[list[Event], int, int]:
        """The events from sequence number seq on that are still kept, oldest
        first; the number to read from next time; and how many events from
        seq on had already left the ring (not returned). A reader that passes
        back the number it got sees each event at most once, and learns how
        many it missed."""
        with self._lock:
            first = self.emitted - len(self._events)          # the oldest kept event's number
            start = max(seq, first, 0)
            new = max(0, self.emitted - start)
            events = list(itertools.islice(reversed(self._events), new))[::-1]    # from the newest end
            return events, self.emitted, max(0, first - max(seq, 0))

    def __len__(self) -> int:
        return len(self._events)


_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {"event": str, "ts": (int, float), "job": str, "partition": int,
                                                    "worker": str, "device": str}


def read_log(path: str | os.PathLike[str]) -> list[Event]:
    """The events in a log file, in either of its formats (engine.logs): text
    lines holding `TIMELINE {json}`, and JSON records (one object a line)
    holding an "event" and a "ts" (or "t", as logs of version 0.1.0 wrote
    it). Other lines, and events whose fields are not of their types, are
    skipped."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            event = _event(line)
            if event is not None:
                out.append(event)
    return out


def _event(line: str) -> Event | None:
    """The event a log line holds, or None."""
    text = line.strip()
    try:
        if text.startswith("{"):        # a JSON record; its message never holds the text form's prefix
            fields = json.loads(text)
            if not isinstance(fields, dict) or "event" not in fields or not ("ts" in fields or "t" in fields):
                return None
        else:
            at = text.find(PREFIX)
            if at < 0:
                return None
            fields = json.loads(text[at + len(PREFIX):])
            if not isinstance(fields, dict):
                return None
    except (ValueError, RecursionError):
        return None
    if "ts" not in fields and "t" in fields:
        fields["ts"] = fields["t"]
    fields = {k: v for k, v in fields.items() if k in _FIELD_TYPES}
    if "event" not in fields or "ts" not in fields or any(
            not isinstance(v, _FIELD_TYPES[k]) or isinstance(v, bool) for k, v in fields.items()):
        return None
    return Event(t=fields.pop("ts"), **fields)


def stage_pairs(events: list[Event], start: str, end: str) -> list[tuple[Event, Event]]:
    """(start event, end event) pairs of a stage (e.g. "SYNTH_START",
    "SYNTH_END"), matched in order per job, partition and worker."""
    return _pairs(events, start, end)


def _pairs(events: Iterable[Event], start: str, end: str,
           key: Callable[[Event], Hashable] = lambda e: (e.job, e.partition, e.worker),
           abandon: str = "") -> list[tuple[Event, Event]]:
    """(start event, end event) pairs, matched in order per key; an abandon
    event closes its key's first open start unpaired (a LOCK_WAIT given up)."""
    open_: defaultdict[Hashable, list[Event]] = defaultdict(list)
    out: list[tuple[Event, Event]] = []
    for ev in sorted(events, key=lambda e: e.t):
        if ev.event == start:
            open_[key(ev)].append(ev)
        elif ev.event in (end, abandon) and open_[key(ev)]:
            first = open_[key(ev)].pop(0)
            if ev.event == end:
                out.append((first, ev))
    return out


def kernel_regions(events: list[Event]) -> tuple[list[tuple[Event, Event]], list[Event]]:
    """The (GPU_START, GPU_END) pairs in events, matched per worker and
    partition, and the GPU_START events not ended among them (their ends may
    come in later events)."""
    pairs = _pairs(events, "GPU_START", "GPU_END")
    ended = {id(s) for s, _ in pairs}
    return pairs, [e for e in events if e.event == "GPU_START" and id(e) not in ended]


def _queue_waits(events: list[Event]) -> list[float]:
    """From each GPU_QUEUE to the first device-worker event (PREP_START or LOCK_WAIT) of that partition."""
    taken: defaultdict[tuple[str, int], list[float]] = defaultdict(list)
    for e in events:
        if e.event in ("PREP_START", "LOCK_WAIT"):
            taken[(e.job, e.partition)].append(e.t)
    waits = []
    for q in (e for e in events if e.event == "GPU_QUEUE"):
        times = sorted(taken[(q.job, q.partition)])
        i = bisect.bisect_left(times, q.t)
        if i < len(times):
            waits.append(times[i] - q.t)
    return waits


def union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def idle_stretches(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The stretches (start, end) between one device's kernel regions (start,
    end) where none runs, in time order."""
    merged = union(spans)
    return [(b0, a1) for (_, b0), (a1, _) in zip(merged, merged[1:])]


def busy_over_span(spans: list[tuple[float, float]]) -> tuple[float, float, float]:
    """(efficiency, busy, span) of one device's kernel regions (start, end):
    busy, the length of their union, over span, first start to last end
    (efficiency 1.0 when the span is empty). ValueError when spans is empty."""
    if not spans:
        raise ValueError("no kernel regions")
    span = max(b for _, b in spans) - min(a for a, _ in spans)
    busy = sum(b - a for a, b in union(spans))
    return (busy / span if span > 0 else 1.0), busy, span


def summary_stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"count": 0}
    s = sorted(values)
    return {"count": len(s), "mean": sum(s) / len(s), "min": s[0], "max": s[-1], "median": s[len(s) // 2]}


def _longest_gap(events: list[Event], gpu: list[tuple[Event, Event]],
                 idle: list[tuple[float, float]]) -> dict[str, Any] | None:
    """The longest idle stretch of a device and what the partition whose kernel
    region ended it was doing: when its synthesis ended, its preparation
    ended and its worker asked for the lock, in seconds from the gap's
    start (negative: before it). A gap the partition's synthesis ends late
    in is the host's; one after its lock request, the handover's."""
    if not idle:
        return None
    start, end = max(idle, key=lambda g: g[1] - g[0])
    nxt = min((s for s, _ in gpu if s.t >= end), key=lambda s: s.t)
    mine = [e for e in events if (e.job, e.partition) == (nxt.job, nxt.partition) and e.t <= nxt.t]

    def last(kind: str) -> float | None:
        times = [e.t for e in mine if e.event == kind]
        return max(times) - start if times else None

    return {"length": end - start, "job": nxt.job, "partition": nxt.partition, "synthesized": last("SYNTH_END"),
            "prepared": last("PREP_END"), "lock_asked": last("LOCK_WAIT")}


def describe_gap(gap: dict[str, Any]) -> str:
    """One line for _longest_gap's record (ms from the gap's start)."""
    marks = ", ".join(f"{key.replace('_', ' ')} {gap[key] * 1e3:+.1f} ms"
                      for key in ("synthesized", "prepared", "lock_asked") if gap[key] is not None)
    return (f"longest gap {gap['length'] * 1e3:.1f} ms, ended by job {gap['job']} partition {gap['partition']}"
            + (f" ({marks} from its start)" if marks else ""))


def analyze(events: list[Event]) -> dict[str, Any]:
    """The numbers `porep-prover timeline` reports (seconds)."""
    gpu = _pairs(events, "GPU_START", "GPU_END")
    devices: dict[str, dict[str, Any]] = {}
    for device in sorted({s.device for s, _ in gpu}):
        spans = [(s.t, e.t) for s, e in gpu if s.device == device]
        efficiency, busy, span = busy_over_span(spans)
        idle = idle_stretches(spans)
        devices[device] = {"efficiency": efficiency, "span": span, "busy": busy,
                           "gaps": summary_stats([b - a for a, b in idle]), "partitions": len(spans),
                           "longest_gap": _longest_gap(events, [(s, e) for s, e in gpu if s.device == device],
                                                       idle)}
    per_worker_gaps = []
    for worker in sorted({s.worker for s, _ in gpu}):
        mine = sorted((s.t, e.t) for s, e in gpu if s.worker == worker)
        per_worker_gaps += [a1 - b0 for (_, b0), (a1, _) in zip(mine, mine[1:])]
    waits = _pairs(events, "LOCK_WAIT", "GPU_START", abandon="LOCK_YIELD")
    jobs = _pairs(events, "JOB_SUBMIT", "JOB_END", key=lambda e: e.job)
    return {
        "devices": devices,
        "worker_gaps": summary_stats(per_worker_gaps),
        "lock_wait": summary_stats([e.t - s.t for s, e in waits]),
        "lock_hold": summary_stats([e.t - s.t for s, e in gpu]),
        "stages": {
            "synthesis": summary_stats([e.t - s.t for s, e in _pairs(events, "SYNTH_START", "SYNTH_END")]),
            "queue": summary_stats(_queue_waits(events)),
            "prepare": summary_stats([e.t - s.t for s, e in _pairs(events, "PREP_START", "PREP_END")]),
            "gpu": summary_stats([e.t - s.t for s, e in gpu]),
            "finalize": summary_stats([e.t - s.t for s, e in _pairs(events, "FINALIZE_START", "FINALIZE_END")]),
        },
        "jobs": summary_stats([e.t - s.t for s, e in jobs]),
        "retries": sum(1 for e in events if e.event == "PARTITION_RETRY"),
        "failures": sum(1 for e in events if e.event == "PARTITION_FAILED"),
    }


def format_report(stats: dict[str, Any]) -> str:
    lines = []
    for device, d in stats["devices"].items():
        g = d["gaps"]
        lines.append(f"device {device}: GPU efficiency {d['efficiency']:.2%} over {d['span']:.3f} s "
                     f"({d['partitions']} partitions, busy {d['busy']:.3f} s, {g['count']} gaps"
                     + (f", longest {g['max'] * 1e3:.1f} ms" if g["count"] else "") + ")")
        if d.get("longest_gap"):
            lines.append("  " + describe_gap(d["longest_gap"]))
    rows = [("lock wait", stats["lock_wait"]), ("lock hold", stats["lock_hold"]),
            ("worker turnaround", stats["worker_gaps"])] + [(k, v) for k, v in stats["stages"].items()] + \
        [("job latency", stats["jobs"])]
    lines.append(f"{'':18} {'count':>6} {'mean ms':>10} {'median ms':>10} {'max ms':>10}")
    for name, s in rows:
        if s["count"]:
            lines.append(f"{name:18} {s['count']:6d} {s['mean'] * 1e3:10.1f} {s['median'] * 1e3:10.1f} "
                         f"{s['max'] * 1e3:10.1f}")
        else:
            lines.append(f"{name:18} {0:6d}")
    lines.append(f"retries {stats['retries']}, failed partitions {stats['failures']}")
    return "\n".join(lines)

