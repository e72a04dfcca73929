# SPDX-License-Identifier: Apache-2.0
"""The machine a benchmark runs on, as its figures need it said: how much of
its CPU other work takes (the hosts these benchmarks run on are shared, and a
figure means little without the load beside it)."""
from __future__ import annotations

import os
import time


def _cpu_ticks() -> tuple[int, int]:
    """(all ticks, idle + iowait ticks) since boot, from /proc/stat's cpu line."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]


def cpu_busy(seconds: float = 0.5) -> float:
    """CPUs in use over the next `seconds` (0 to os.cpu_count()), by every
    process: call it while the benchmark itself is idle to read the others'
    load. Linux only (reads /proc/stat); OSError elsewhere."""
    t0, i0 = _cpu_ticks()
    time.sleep(seconds)
    t1, i1 = _cpu_ticks()
    return (os.cpu_count() or 1) * (1 - (i1 - i0) / max(1, t1 - t0))
