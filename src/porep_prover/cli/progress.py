# SPDX-License-Identifier: Apache-2.0
"""Progress of the command line's long steps on standard error: loading and
mapping parameters, making them (setup), compiling the GPU kernels (gpu warm),
digests and bench runs.

On a terminal, a rich bar per step with its count, rate and time left; off a
terminal (a log, a pipe, CI), plain lines, at most one a step every
PLAIN_INTERVAL seconds besides the step's first and last. The steps report
through the API's own progress callbacks, called as progress(step, done,
total) (groth16.read_params, insecure_setup, file_digest, build_modules,
bench.run_batch); Display.callback() makes one, and is None where progress
is off, so that the API does no extra work for it.

Whether progress shows: --progress (on: a bar on a terminal, lines off it),
--no-progress (off), neither (on a terminal only); arguments.progress_option
adds them. This module imports rich: the commands import it when they run.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable

from rich.console import Console
from rich.progress import (BarColumn, Progress, ProgressColumn, TaskID, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.text import Text

PLAIN_INTERVAL = 10.0     # seconds between a step's plain lines (its first and last always written)
BYTES = "B"               # the unit of steps counted in bytes (shown in MiB)
BYTE_STEPS = ("digest", "write")    # steps the API reports in bytes whatever the callback's unit

Callback = Callable[[str, int, int], None]


def amount(value: float, unit: str) -> str:
    """value in its unit, short: bytes in MiB, other counts in k above 10,000 and M above 1,000,000."""
    if unit == BYTES:
        return f"{value / 2**20:.1f} MiB"
    if value >= 1e6:
        return f"{value / 1e6:.1f} M {unit}"
    if value >= 1e4:
        return f"{value / 1e3:.1f} k {unit}"
    return f"{value:.0f} {unit}" if value >= 100 or value == int(value) else f"{value:.3g} {unit}"


def fraction(done: int, total: int, unit: str) -> str:
    """done/total in unit: "3/8 jobs", "12.0/96.0 MiB"."""
    if unit == BYTES:
        return f"{done / 2**20:.1f}/{total / 2**20:.1f} MiB"
    return f"{done}/{total} {unit}"


def duration(seconds: float | None) -> str:
    """H:MM:SS, or "?" when not known yet."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class _CountColumn(ProgressColumn):
    def render(self, task) -> Text:
        return Text(fraction(int(task.completed), int(task.total or 0), task.fields.get("unit", "")))


class _RateColumn(ProgressColumn):
    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else amount(speed, task.fields.get("unit", "")) + "/s")


@dataclasses.dataclass
class _PlainStep:
    started: float       # when the step was first reported
    last: float          # when its last line was written
    first: int           # its count then
    ended: bool = False  # its last line (done = total) written


class Display:
    """The progress of a command's steps: a context manager (bars are drawn
    while it is open). enabled: True, False, or None for "on a terminal";
    console: where it goes (default: standard error; tests pass a rich
    Console of their own, force_terminal set or not); clock: seconds, for
    the rates, the time left and the plain lines' spacing."""

    def __init__(self, enabled: bool | None = None, console: Console | None = None,
                 interval: float = PLAIN_INTERVAL, clock: Callable[[], float] = time.monotonic):
        self.console = console or Console(stderr=True)
        self.terminal = self.console.is_terminal
        self.enabled = self.terminal if enabled is None else bool(enabled)
        self.interval, self.clock = interval, clock
        self._lock = threading.Lock()
        self._bars: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._plain: dict[str, _PlainStep] = {}

    def __enter__(self) -> Display:
        if self.enabled and self.terminal:
            self._bars = Progress(TextColumn("{task.description}"), BarColumn(), _CountColumn(), _RateColumn(),
                                  TimeElapsedColumn(), TextColumn("·"), TimeRemainingColumn(), TextColumn("left"),
                                  console=self.console, redirect_stdout=False, redirect_stderr=False,
                                  get_time=self.clock)
            self._bars.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    def callback(self, unit: str = "points", prefix: str = "") -> Callback | None:
        """A progress(step, done, total) callback drawing a bar (or lines) per
        step, named prefix + step, counted in unit (steps of BYTE_STEPS in
        bytes); None when progress is off."""
        if not self.enabled:
            return None
        return lambda step, done, total: self.update(prefix + step, done, total,
                                                     BYTES if step in BYTE_STEPS else unit)

    def update(self, step: str, done: int, total: int, unit: str = "points") -> None:
        """Step step has done of total units done (safe from any thread)."""
        if not self.enabled:
            return
        with self._lock:
            if self._bars is not None:
                if step not in self._tasks:
                    self._tasks[step] = self._bars.add_task(step, total=total, unit=unit)
                self._bars.update(self._tasks[step], completed=done, total=total)
            else:
                self._line(step, done, total, unit)

    def _line(self, step: str, done: int, total: int, unit: str) -> None:
        now = self.clock()
        seen = self._plain.get(step)
        if seen is None:
            seen = self._plain[step] = _PlainStep(now, now, done)
            if done < total:
                self._write(f"{step}: {fraction(done, total, unit)}")
                return
        elif seen.ended or done < total and now - seen.last < self.interval:
            return                   # its last line written, or too soon for the next
        seen.last, seen.ended = now, done >= total
        elapsed = now - seen.started
        rate = (done - seen.first) / elapsed if elapsed > 0 and done > seen.first else None
        left = (total - done) / rate if rate else None
        tail = (f", {amount(rate, unit)}/s" if rate else "") + \
            (f", done in {duration(elapsed)}" if done >= total else f", {duration(left)} left")
        self._write(f"{step}: {fraction(done, total, unit)} ({100 * done // max(total, 1)}%)" + tail)

    def _write(self, line: str) -> None:
        self.console.file.write(line + "\n")
        self.console.file.flush()


def display(args, console: Console | None = None) -> Display:
    """The Display a command's --progress / --no-progress asks for."""
    return Display(getattr(args, "progress", None), console)
