# SPDX-License-Identifier: Apache-2.0
"""Sweeps of one engine setting: a batch per value, each on a fresh engine,
written as CSV and plotted."""
from __future__ import annotations

import csv
from typing import Callable

from ..engine import Job
from .batch import BatchReport, run_batch


def sweep(key: str, values: list, make_engine: Callable[[dict], object], make_job: Callable[[int], Job],
          count: int, concurrency: int) -> list[tuple[object, BatchReport]]:
    """One batch per value of a setting, each on a fresh engine (make_engine({key: value}))."""
    rows = []
    for value in values:
        engine = make_engine({key: value})
        try:
            rows.append((value, run_batch(engine, make_job, count, concurrency)))
        finally:
            engine.shutdown(wait=True)
    return rows


def write_csv(key: str, rows, path) -> None:
    """The sweep's rows (value, BatchReport), one line a value, as CSV."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([key, "seconds_per_proof", "wall_s", "latency_mean_s", "queue_wait_mean_s", "gpu_efficiency",
                    "failed"])
        for value, r in rows:
            w.writerow([value, f"{r.seconds_per_proof:.4f}", f"{r.wall:.4f}", f"{r.latency.get('mean', 0):.4f}",
                        f"{r.queue_wait.get('mean', 0):.4f}", f"{r.efficiency:.4f}", r.failed])


def plot(key: str, rows, path) -> None:
    """Seconds per proof and GPU efficiency against the swept value (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [str(v) for v, _ in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(xs, [r.seconds_per_proof for _, r in rows], "o-", color="tab:blue")
    ax.set_xlabel(key)
    ax.set_ylabel("seconds per proof", color="tab:blue")
    ax2 = ax.twinx()
    ax2.plot(xs, [100 * r.efficiency for _, r in rows], "s--", color="tab:red")
    ax2.set_ylabel("GPU efficiency %", color="tab:red")
    ax.set_title(f"porep-prover sweep of {key}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
