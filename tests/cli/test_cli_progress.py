# SPDX-License-Identifier: Apache-2.0
"""Progress of the command line's long steps: rich bars on a terminal, plain
lines at a bounded rate off one, nothing unless asked off a terminal, and
the API's callbacks driving both (parameter load, map, setup, kernel build,
bench runs)."""
import io
import re

import pytest
from rich.console import Console

from porep_prover.backend import kernels  # noqa: F401 - every package owning kernels registers them
from porep_prover.cuda import modules as gpu_modules
from porep_prover.cli import main
from porep_prover.cli import progress

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run(*args) -> int:
    return main([str(a) for a in args])


@pytest.fixture
def terminal(monkeypatch):
    """Make the commands' progress console a terminal writing into a buffer; returns the buffer."""
    buffer = io.StringIO()
    monkeypatch.setattr(progress, "Console", lambda **_: Console(file=buffer, force_terminal=True, width=140))
    return buffer


@pytest.fixture
def circuit_files(tmp_path, rng):
    c, w, pub = tmp_path / "c.npz", tmp_path / "w.bin", tmp_path / "pub.json"
    assert run("circuit", "generate", "--kind", "square-chain", "--constraints", rng.randrange(150, 400), "-o", c,
               "--witness", w, "--public", pub) == 0
    return c, w, pub


def test_plain_lines_are_bounded_and_their_rate_and_time_left_right(rng):
    buffer, now = io.StringIO(), [0.0]
    total, step_seconds, interval = rng.randrange(5_000, 50_000), rng.uniform(0.1, 0.5), rng.uniform(2, 5)
    steps = rng.randrange(200, 400)
    with progress.Display(True, Console(file=buffer, force_terminal=False), interval, lambda: now[0]) as shown:
        assert not shown.terminal
        report = shown.callback("points", prefix="load ")
        for i in range(1, steps + 1):
            now[0] += step_seconds
            report("h", min(total, i * total // steps), total)
        report("h", total, total)                                        # ended already: no second last line
    lines = buffer.getvalue().splitlines()
    assert sum("(100%)" in line for line in lines) == 1
    assert all(line.startswith("load h: ") for line in lines)
    assert len(lines) <= steps * step_seconds / interval + 2          # the first, the last, one per interval
    assert lines[-1].startswith(f"load h: {total}/{total} points (100%)") and "done in" in lines[-1]
    rate = total / (steps * step_seconds)
    shown_rate = float(re.search(r", ([\d.]+)( k)? points/s", lines[-1])[1]) * (1e3 if " k points/s" in lines[-1]
                                                                                 else 1)
    assert shown_rate == pytest.approx(rate, rel=0.01)
    middle = next(line for line in lines[1:-1] if "left" in line)
    done = int(re.search(r": (\d+)/", middle)[1])
    left = [int(x) for x in re.search(r"(\d+):(\d\d):(\d\d) left", middle).groups()]
    assert left[0] * 3600 + left[1] * 60 + left[2] == pytest.approx((total - done) / rate, rel=0.05, abs=1.5)


def test_on_a_terminal_bars_show_count_rate_and_time_left(rng):
    buffer, now = io.StringIO(), [0.0]
    total = rng.randrange(1000, 9000)
    with progress.Display(None, Console(file=buffer, force_terminal=True, width=140), clock=lambda: now[0]) as shown:
        assert shown.enabled and shown.terminal
        report = shown.callback("modules")
        for done in range(0, total + 1, total // 7):
            now[0] += 1.0
            report("sm_90 kernels", done, total)
        report("sm_90 kernels", total, total)
        shown.update("digest", 3 << 20, 10 << 20, progress.BYTES)
    text = ANSI.sub("", buffer.getvalue())
    assert "━" in text                                                   # a bar
    assert "sm_90 kernels" in text and f"{total}/{total} modules" in text
    assert re.search(r"[\d.]+( k)? modules/s", text)                     # a rate
    assert re.search(r"\d:\d\d:\d\d left", text)                         # the time left
    assert "3.0/10.0 MiB" in text


def test_off_a_terminal_and_not_asked_nothing_is_shown():
    buffer = io.StringIO()
    with progress.Display(None, Console(file=buffer, force_terminal=False)) as shown:
        assert shown.callback() is None                                  # the API does no work for it
        shown.update("x", 1, 2)
    with progress.Display(False, Console(file=buffer, force_terminal=True)) as shown:
        assert shown.callback() is None
    assert buffer.getvalue() == ""


def test_load_map_and_setup_off_a_terminal(tmp_path, circuit_files, capsys):
    c, _, _ = circuit_files
    p, m = tmp_path / "c.params", tmp_path / "c.pmap"
    assert run("setup", c, "-o", p, "--progress") == 0
    err = capsys.readouterr().err
    for query in ("ic", "h", "l", "a", "b_g1", "b_g2"):
        assert re.search(rf"^setup {query}: (\d+)/\1 points \(100%\)", err, re.M), query
    assert run("params", "map", p, m, "--progress") == 0
    err = capsys.readouterr().err
    assert re.search(r"^load h: (\d+)/\1 points \(100%\)", err, re.M)
    assert re.search(r"^map write: ([\d.]+)/\1 MiB \(100%\)", err, re.M)
    assert run("params", "info", m) == 0                                 # not a terminal, not asked: quiet
    assert capsys.readouterr().err == ""
    assert run("params", "digest", p, "--progress") == 0
    assert re.search(r"^digest: ([\d.]+)/\1 MiB \(100%\)", capsys.readouterr().err, re.M)


def test_load_on_a_terminal_and_no_progress(tmp_path, circuit_files, terminal, capsys):
    c, _, _ = circuit_files
    p = tmp_path / "c.params"
    assert run("setup", c, "-o", p, "--no-progress") == 0
    assert terminal.getvalue() == ""
    capsys.readouterr()
    assert run("params", "info", p) == 0                                 # a terminal: on by default
    text = ANSI.sub("", terminal.getvalue())
    assert "load b_g2" in text and "━" in text and re.search(r"(\d+)/\1 points", text)
    assert capsys.readouterr().err == ""                                 # the bars went to the console only


def test_gpu_warm_counts_modules(monkeypatch, capsys, tmp_path):
    compiled = []

    def compile_cubin(src, include, arch, defines, cache, version):     # NVRTC's ~30 s a module, skipped
        compiled.append((src, defines))
        return b"\0" * 64

    monkeypatch.setattr(gpu_modules, "compile_cubin", compile_cubin)
    monkeypatch.setenv("POREP_PROVER_CACHE_DIR", str(tmp_path))
    seen = []
    built = gpu_modules.build_modules("sm_90", None, lambda *a: seen.append(a))
    count = len(gpu_modules.MODULES)
    assert list(built) == list(gpu_modules.MODULES) and len(compiled) == count
    assert seen == [(name, i + 1, count) for i, name in enumerate(gpu_modules.MODULES)]
    assert run("gpu", "warm", "--arch", "sm_90", "--progress") == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"sm_90 kernels: 0/{count} modules"
    assert err[-1].startswith(f"sm_90 kernels: {count}/{count} modules (100%)")


def test_bench_batch_reports_jobs_off_a_terminal(capsys, rng):
    count = rng.randrange(2, 5)
    assert run("bench", "batch", "-c", count, "-j", 2, "--partitions", 2, "--constraints", rng.randrange(100, 300),
               "--threads", 1, "--progress") == 0
    err = capsys.readouterr().err
    assert re.search(r"^warm-up jobs: 1/1 jobs \(100%\)", err, re.M)
    assert re.search(rf"^batch jobs: {count}/{count} jobs \(100%\), [\d.]+ jobs/s", err, re.M)
    assert re.search(r"^setup h: (\d+)/\1 points", err, re.M)
