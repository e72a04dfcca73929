# SPDX-License-Identifier: Apache-2.0
"""Host and device memory over a bench run, measured beside what the
engine's memory plans say (memory.host_plan, memory.device_plan): the planned peaks next to
the measured ones, in every row a run writes."""
from __future__ import annotations

import threading
import time
from typing import Any

from ..memory.budgets import host_available_bytes, host_memory_bytes
from ..memory.sizes import GIB

SAMPLE_SECONDS = 0.2


def process_memory() -> dict[str, int]:
    """This process's resident, peak resident and page-locked bytes (/proc/self/status: VmRSS, VmHWM, VmPin)."""
    out = {"rss": 0, "rss_peak": 0, "pinned": 0}
    keys = {"VmRSS:": "rss", "VmHWM:": "rss_peak", "VmPin:": "pinned"}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                name = line.split(None, 1)[0] if line.strip() else ""
                if name in keys:
                    out[keys[name]] = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return out


class MemoryWatch:
    """Samples the host's memory in use (MemTotal less MemAvailable) and the
    process's while open (a thread, every SAMPLE_SECONDS), and each device's
    memory status when asked; figures() the peaks beside the engine's plans."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.host_peak = 0
        self.pinned_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-watch", daemon=True)

    def __enter__(self) -> "MemoryWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(SAMPLE_SECONDS)

    def sample(self) -> None:
        available = host_available_bytes()
        if available is not None:
            self.host_peak = max(self.host_peak, host_memory_bytes() - available)
        self.pinned_peak = max(self.pinned_peak, process_memory()["pinned"])

    def figures(self) -> dict[str, Any]:
        """GiB: host_planned_peak (the largest of the loaded sets' plans),
        host_peak (the host's memory in use at its highest), rss_peak and
        pinned_peak (the process's), host_budget; and per device its budget,
        planned and measured peaks and the resident bytes dropped."""
        self.sample()
        loaded = self.engine.plans        # None before the engine starts
        plans = [loaded.get(s["key"]) for s in self.engine.srs.status()] if loaded is not None else []
        plans = [p for p in plans if p is not None]
        out: dict[str, Any] = {
            "host_budget_gib": self.engine.settings.memory_budget_bytes / GIB,
            "host_planned_peak_gib": max((p.peak_bytes for p in plans), default=0) / GIB,
            "host_peak_gib": self.host_peak / GIB, "rss_peak_gib": process_memory()["rss_peak"] / GIB,
            "pinned_peak_gib": self.pinned_peak / GIB, "partitions_admitted": max((p.partitions for p in plans),
                                                                                   default=0)}
        devices = {}
        for d in self.engine.devices:
            status = d.backend.memory_status()
            if status:
                devices[d.label] = {k: (v / GIB if v is not None else None) for k, v in status.items()
                                    if k in ("budget", "planned", "peak", "dropped")}
        out["devices"] = devices
        return out

    def row(self) -> dict[str, float]:
        """The host's peaks so far, for a job's row."""
        self.sample()
        return {"host_peak_gib": round(self.host_peak / GIB, 3),
                "rss_peak_gib": round(process_memory()["rss_peak"] / GIB, 3),
                "at": round(time.time(), 3)}
