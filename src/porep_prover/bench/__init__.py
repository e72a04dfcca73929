# SPDX-License-Identifier: Apache-2.0
"""Throughput benchmarks of a running engine, what `porep-prover bench batch`
and `bench sweep` run: workloads of jobs (workloads), a batch of them with a
bounded number in flight and its report (batch), one batch per value of a
setting, each on a fresh engine, as a table (sweep), and their pictures: the
workers' Gantt chart and the sweep's plot (plots).

Above the engine in the layers: it submits jobs to an Engine and reads the
timeline the engine emits (engine.timeline); nothing in the engine imports it.
"""
from .batch import BatchReport, latency_stats, run_batch, warm_up
from .plots import gantt, plot_sweep
from .report_file import ReportFile
from .sweep import sweep, write_csv
from .workloads import DemoWorkload, KindWorkload

__all__ = ["BatchReport", "DemoWorkload", "KindWorkload", "ReportFile", "gantt", "latency_stats", "plot_sweep",
           "run_batch", "sweep", "warm_up", "write_csv"]
