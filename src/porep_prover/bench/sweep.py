# SPDX-License-Identifier: Apache-2.0
"""Sweeps of one engine setting: a fresh engine per value, one batch on it per
repeat, written as CSV (a row a batch) and plotted (bench.plots)."""
from __future__ import annotations

import csv
import io
import statistics
from typing import Callable

from ..atomic import atomic_write
from ..engine import Engine, Job
from .batch import BatchReport, run_batch

Rows = list[tuple[object, list[BatchReport]]]


def sweep(key: str, values: list, make_engine: Callable[[dict], Engine], make_job: Callable[[int], Job],
          count: int, concurrency: int, repeats: int = 1,
          progress: Callable[[str, int, int], None] | None = None,
          on_batch: Callable[[Rows], None] | None = None) -> Rows:
    """For each value of a setting, a fresh engine (make_engine({key: value}))
    and `repeats` batches on it, one after another: [(value, [BatchReport
    per repeat])], in the order of values. progress, when given, is called
    as progress("KEY=VALUE", jobs ended, count * repeats) as jobs end;
    on_batch, when given, with the rows so far as each batch ends (what a
    run stopped before the sweep's end keeps)."""
    rows: Rows = []
    for value in values:
        engine = make_engine({key: value})
        step = f"{key}={value}"
        try:
            reports: list = []
            for r in range(repeats):
                report = run_batch(engine, make_job, count, concurrency,
                                   progress=_batch_progress(progress, step, r * count, count * repeats))
                reports.append(report)
                if on_batch is not None:
                    on_batch(rows + [(value, reports)])
            rows.append((value, reports))
        finally:
            engine.shutdown(wait=True)
    return rows


def _batch_progress(progress: Callable[[str, int, int], None] | None, step: str, base: int,
                    total: int) -> Callable[[str, int, int], None] | None:
    """A batch's progress told as the sweep's: as progress(step, jobs ended before this batch (base) + those
    of the batch, total); None without progress."""
    if progress is None:
        return None

    def told(_step: str, done: int, _total: int) -> None:
        progress(step, base + done, total)
    return told


def table(key: str, rows: Rows) -> list[str]:
    """The sweep as lines of a table: per value its repeats, the median of
    their seconds per proof (with the lowest and highest), of their latency
    p50 and p95 and of their GPU efficiency, and their failures."""
    out = [f"{key:>28} | runs | s/proof (min-max)     | p50 lat s | p95 lat s | GPU eff | failed"]
    for value, reports in rows:
        per_proof = [r.seconds_per_proof for r in reports]
        p50, p95 = (statistics.median(r.latency.get(k, 0) for r in reports) for k in ("p50", "p95"))
        efficiency = statistics.median(r.efficiency for r in reports)
        out.append(f"{str(value):>28} | {len(reports):4d} | {statistics.median(per_proof):7.3f} "
                   f"({min(per_proof):.3f}-{max(per_proof):.3f}) | {p50:9.3f} | {p95:9.3f} | {efficiency:7.2%} | "
                   f"{sum(r.failed for r in reports)}")
    return out


CSV_COLUMNS = ("repeat", "seconds_per_proof", "wall_s", "latency_mean_s", "latency_p50_s", "latency_p95_s",
               "latency_p99_s", "queue_wait_mean_s", "gpu_efficiency", "failed")


def write_csv(key: str, rows: Rows, path) -> None:
    """The sweep's batches, one line each (value, repeat from 0, its numbers),
    as CSV, the file written whole (beside it, then renamed over it: a reader
    finds the last complete one)."""
    with atomic_write(path) as raw:
        f = io.TextIOWrapper(raw, newline="")
        w = csv.writer(f)
        w.writerow((key,) + CSV_COLUMNS)
        for value, reports in rows:
            for i, r in enumerate(reports):
                lat = r.latency
                w.writerow([value, i, f"{r.seconds_per_proof:.4f}", f"{r.wall:.4f}"]
                           + [f"{lat.get(k, 0):.4f}" for k in ("mean", "p50", "p95", "p99")]
                           + [f"{r.queue_wait.get('mean', 0):.4f}", f"{r.efficiency:.4f}", r.failed])
        f.flush()
        f.detach()            # the file is atomic_write's to close (and rename)
