# SPDX-License-Identifier: Apache-2.0
"""What the porep-prover command says to a user's mistakes: numbers out of
range, files in the wrong place, a damaged key, engine settings before the
command, output piped into a reader that stops early, SIGTERM and Ctrl-C in
the middle of a write, and faults of its own: one line each, never a
traceback, and no file left half written or behind."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from interrupts import default_sigint

from porep_prover import config
from porep_prover.cli import build_parser, core, main
from porep_prover.errors import FileKindError, InvalidInputError
from porep_prover.cli.file_kinds import file_kind, naming

MAX = config.MAX_THREADS


def run(*args) -> int:
    return main([str(a) for a in args])


def usage_error(capsys, *args) -> str:
    """The one-line usage error of args (exit 2 through argparse)."""
    with pytest.raises(SystemExit) as exit_:
        run(*args)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A tiny circuit, its witness, public inputs, parameters, mapped copy, vk and proof."""
    d = tmp_path_factory.mktemp("cli")
    f = {n: d / n for n in ("c.npz", "w.bin", "pub.json", "c.params", "c.pmap", "vk.json", "proof.bin")}
    assert run("circuit", "generate", "--kind", "square-chain", "--constraints", 37, "--seed", 5, "-o", f["c.npz"],
               "--witness", f["w.bin"], "--public", f["pub.json"]) == 0
    assert run("setup", f["c.npz"], "-o", f["c.params"], "--vk", f["vk.json"], "--backend", "cpu") == 0
    assert run("params", "map", f["c.params"], f["c.pmap"]) == 0
    assert run("prove", f["c.params"], f["c.npz"], f["w.bin"], "-o", f["proof.bin"], "--backend", "cpu") == 0
    (d / "w.wtns").write_bytes(b"wtns" + bytes(60))
    (d / "k.zkey").write_bytes(b"zkey" + bytes(60))
    f["w.wtns"], f["k.zkey"] = d / "w.wtns", d / "k.zkey"
    return f


# ------------------------------------------------------------------ numbers


OUT_OF_RANGE = [
    (("demo", "--proofs", 0), "--proofs", "from 1 to 10000"),
    (("demo", "--proofs", 10001), "--proofs", "from 1 to 10000"),
    (("demo", "--constraints", 0), "--constraints", "from 1 to"),
    (("demo", "--constraints", (1 << 28) + 1), "--constraints", "from 1 to"),
    (("demo", "--seed", -1), "--seed", "from 0 to"),
    (("demo", "--seed", 2**64), "--seed", "from 0 to"),
    (("circuit", "generate", "--constraints", 0, "-o", "c", "--witness", "w", "--public", "p"),
     "--constraints", "from 1 to"),
    (("bench", "batch", "-c", 0), "-c/--count", "from 1 to 100000"),
    (("bench", "batch", "-j", 1025), "-j/--concurrency", "from 1 to 1024"),
    (("bench", "batch", "--partitions", 0), "--partitions", "from 1 to 1024"),
    (("bench", "batch", "--constraints", 2**31), "--constraints", "from 1 to"),
    (("bench", "batch", "--witnesses", 0), "--witnesses", "from 1 to 1024"),
    (("bench", "batch", "--seed", 2**64), "--seed", "from 0 to"),
    (("bench", "sweep", "engine.threads=1,2", "--partitions", 2**63), "--partitions", "from 1 to 1024"),
    (("bench", "sweep", "engine.threads=1,2", "--repeats", 0), "--repeats", "from 1 to 100"),
    (("bench", "sweep", "engine.threads=1,2", "--repeats", 101), "--repeats", "from 1 to 100"),
    (("gpu", "warm", "--arch", "sm_1000"), "--arch", "sm_NN"),
    (("gpu", "warm", "--arch", "90"), "--arch", "sm_NN"),
] + [(("bench", "batch", f"--scale={v}"), "--scale", "above 0 and at most 1")
     for v in ("0", "1.5", "nan", "inf", "-inf", "1e300", "x")]


@pytest.mark.parametrize("args, name, range_", OUT_OF_RANGE)
def test_numbers_out_of_range_are_usage_errors(capsys, args, name, range_):
    line = usage_error(capsys, *args)
    assert f"argument {name}" in line and range_ in line


THREADS_COMMANDS = [("demo",), ("setup", "c", "-o", "x"), ("prove", "p", "c", "w", "-o", "x"),
                    ("verify", "k", "p", "f"),
                    ("circuit", "generate", "--constraints", 8, "-o", "c", "--witness", "w", "--public", "p"),
                    ("params", "info", "p"), ("params", "map", "p", "o"), ("groth16", "prove", "z", "w", "p", "q"),
                    ("groth16", "verify", "v", "p", "f"), ("zkey", "export", "verificationkey", "z", "o"),
                    ("zkey", "insecure-setup", "r", "z"), ("bench", "batch"), ("bench", "sweep", "engine.threads=1")]


@pytest.mark.parametrize("command", THREADS_COMMANDS, ids=lambda c: " ".join(map(str, c[:2])))
@pytest.mark.parametrize("threads", [0, -1, MAX + 1, 100_000, 2**31, 2**63, "nan", "inf", "1.5"])
def test_every_computing_command_bounds_threads(capsys, command, threads):
    line = usage_error(capsys, *command, "--threads", threads)
    assert "argument --threads" in line and f"from 1 to {MAX}" in line


@pytest.mark.parametrize("command", THREADS_COMMANDS, ids=lambda c: " ".join(map(str, c[:2])))
def test_every_computing_command_takes_threads(command):
    args = build_parser().parse_args([str(a) for a in command] + ["--threads", str(MAX)])
    assert args.threads == MAX


def test_threads_reach_every_kernel_of_the_command(files, capsys, monkeypatch):
    seen = []

    def verify_spy(args):
        seen.append(config.default_threads())   # what a kernel called without a count gets
        return 0
    monkeypatch.setattr(core, "cmd_verify", verify_spy)
    before = config.default_threads()
    assert run("verify", files["vk.json"], files["pub.json"], files["proof.bin"], "--threads", 3) == 0
    assert seen == [3] and config.default_threads() == before


@pytest.mark.parametrize("value", ["0", str(MAX + 1), str(2**31), str(2**63), "nan"])
def test_porep_prover_threads_out_of_range_through_the_command(files, capsys, monkeypatch, value):
    monkeypatch.setenv("POREP_PROVER_THREADS", value)
    assert run("verify", files["vk.json"], files["pub.json"], files["proof.bin"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"porep-prover: error: InvalidInputError: POREP_PROVER_THREADS='{value}'")
    assert f"from 1 to {MAX}" in err
    assert run("verify", files["vk.json"], files["pub.json"], files["proof.bin"], "--threads", 2) == 0


def test_the_bounds_themselves_run(files, tmp_path, capsys):
    out = tmp_path / "c.npz"
    assert run("circuit", "generate", "--kind", "square-chain", "--constraints", 1, "--seed", 2**64 - 1,
               "-o", out, "--witness", tmp_path / "w.bin", "--public", tmp_path / "p.json", "--threads", MAX) == 0
    assert run("verify", files["c.params"], files["pub.json"], files["proof.bin"], "--threads", MAX) == 0
    assert run("demo", "--circuit", "square-chain", "--constraints", 3, "--proofs", 1, "--seed", 0,
               "--threads", MAX, "--backend", "cpu") == 0
    assert "OK: every proof verifies" in capsys.readouterr().out


@pytest.mark.parametrize("setting", ["engine.partition_workers=100000", "engine.memory_budget_gib=inf",
                                     "engine.memory_budget_gib=nan", "srs.budget_gib=1e300",
                                     "engine.threads=2147483648", "engine.gpu_workers_per_device=17",
                                     "prover.max_retries=9223372036854775808", "engine.switch_interval_ms=-1"])
@pytest.mark.parametrize("where", ["before", "after"])
def test_settings_out_of_range_through_the_command(capsys, setting, where):
    args = ["--set", setting, "bench", "batch"] if where == "before" else ["bench", "batch", "--set", setting]
    assert run(*args) == 2
    err = capsys.readouterr().err
    assert "ConfigError" in err and setting.split("=")[0] in err and " to " in err and "Traceback" not in err


def test_settings_out_of_range_in_a_config_file(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text("[engine]\nmemory_budget_gib = 1e300\n")
    assert run("--config", path, "bench", "batch") == 2
    err = capsys.readouterr().err
    assert "engine.memory_budget_gib" in err and "from 0 to 1048576" in err


def test_demo_circuit_too_small_is_one_line(capsys):
    assert run("demo", "--constraints", 7, "--backend", "cpu") == 2
    err = capsys.readouterr().err
    assert "InvalidInputError" in err and "from 8 to" in err and "Traceback" not in err


# ------------------------------------------------------------------ files in the wrong place


@pytest.mark.parametrize("order", [(1, 0, 2), (0, 2, 1), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
def test_swapped_prove_arguments_name_each_file(files, tmp_path, capsys, order):
    right = [files["c.params"], files["c.npz"], files["w.bin"]]
    given = [right[i] for i in order]
    assert run("prove", *given, "-o", tmp_path / "x.bin") == 2
    err = capsys.readouterr().err
    assert "FileKindError" in err and "prove takes PARAMS CIRCUIT WITNESS" in err
    assert "pickle" not in err and "Traceback" not in err
    roles = ("PARAMS", "CIRCUIT", "WITNESS")
    for role, path, want in zip(roles, given, right):
        assert (f"{path}, given as {role}" in err) == (path != want)
    assert not (tmp_path / "x.bin").exists()


@pytest.mark.parametrize("name", ["c.params", "c.pmap", "w.bin", "w.wtns", "k.zkey", "pub.json", "proof.bin"])
def test_a_non_circuit_as_circuit_says_what_it_is(files, tmp_path, capsys, name):
    assert run("setup", files[name], "-o", tmp_path / "x.params") == 2
    err = capsys.readouterr().err
    assert f"{files[name]}: given as the circuit, is " in err and "pickle" not in err
    assert not (tmp_path / "x.params").exists()


def test_file_kinds_by_magic(files, tmp_path):
    kinds = {n: file_kind(files[n])[0] for n in ("c.npz", "c.params", "c.pmap", "w.bin", "w.wtns", "k.zkey",
                                                 "pub.json", "proof.bin")}
    assert kinds == {"c.npz": "npz", "c.params": "unknown", "c.pmap": "pmap", "w.bin": "raw-witness",
                     "w.wtns": "wtns", "k.zkey": "zkey", "pub.json": "json", "proof.bin": "unknown"}
    (tmp_path / "empty").write_bytes(b"")
    assert file_kind(tmp_path / "empty")[0] == "empty"
    with pytest.raises(FileKindError) as err:
        core.load_circuit(str(files["w.bin"]))
    assert err.value.path == str(files["w.bin"]) and "circuit" in err.value.expected
    with pytest.raises(FileKindError):
        core.load_any_witness(str(files["c.npz"]))


def test_a_damaged_key_names_its_file(files, tmp_path, capsys):
    short = tmp_path / "short.params"
    short.write_bytes(files["c.params"].read_bytes()[:3000])
    assert run("prove", short, files["c.npz"], files["w.bin"], "-o", tmp_path / "x.bin") == 2
    assert f"ParamsFormatError: {short}:" in capsys.readouterr().err
    bad_vk = tmp_path / "vk.json"
    bad_vk.write_text('{"alpha_g1": ')
    assert run("verify", bad_vk, files["pub.json"], files["proof.bin"]) == 2
    assert f"Error: {bad_vk}:" in capsys.readouterr().err
    assert run("groth16", "verify", bad_vk, files["pub.json"], files["proof.bin"]) == 2
    assert f"Error: {bad_vk}:" in capsys.readouterr().err
    bad_zkey = tmp_path / "bad.zkey"
    bad_zkey.write_bytes(b"zkey" + os.urandom(40))
    assert run("zkey", "export", "verificationkey", bad_zkey, tmp_path / "vk2.json") == 2
    assert f"Error: {bad_zkey}:" in capsys.readouterr().err


def test_naming_prefixes_once():
    with pytest.raises(InvalidInputError, match=r"^f\.bin: broken$"):
        with naming("f.bin"):
            raise InvalidInputError("broken")
    with pytest.raises(InvalidInputError, match=r"^f\.bin: broken$"):
        with naming("f.bin"):
            raise InvalidInputError("f.bin: broken")


# ------------------------------------------------------------------ engine settings before the command


def test_config_before_the_command(tmp_path, capsys):
    cfg, log, out = tmp_path / "e.toml", tmp_path / "timeline.log", tmp_path / "run.json"
    cfg.write_text(f'[engine]\npartition_workers = 1\nthreads = 2\n[logging]\nlevel = "WARNING"\n'
                   f'timeline = "{log}"\n')
    assert run("--config", tmp_path / "missing.toml", "--set", "engine.synthesis_threads=1",
               "bench", "batch", "--config", cfg, "--set", "engine.synthesis_threads=2", "--threads", 1,
               "-c", 1, "-j", 1, "--partitions", 1, "--constraints", 16, "--no-warmup", "--json", out) == 0
    values = json.loads(out.read_text())["config"]
    # the command's --config replaces the global one; its --set entries come last; --threads is engine.threads
    assert values["engine.partition_workers"] == 1 and values["engine.synthesis_threads"] == 2
    assert values["engine.threads"] == 1 and values["logging.timeline"] == str(log)
    capsys.readouterr()
    assert run("--config", cfg, "timeline", "--json") == 0     # the log the setting names
    assert json.loads(capsys.readouterr().out)
    assert run("timeline") == 2
    assert "name the LOG" in capsys.readouterr().err


def test_config_for_a_command_without_settings_is_a_usage_error(files, capsys):
    line = usage_error(capsys, "--config", "e.toml", "verify", files["vk.json"], files["pub.json"],
                       files["proof.bin"])
    assert "--config and --set are engine settings" in line and "verify takes none" in line
    assert "engine settings" in usage_error(capsys, "--set", "engine.threads=1", "gpu", "info")


@pytest.mark.parametrize("command", [("batch",), ("sweep", "engine.gpu_workers_per_device=1,2")])
def test_bench_leaves_no_temporary_files(tmp_path, monkeypatch, capsys, command):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert run("bench", *command, "-c", 1, "-j", 1, "--partitions", 1, "--constraints", 16, "--no-warmup",
               "--set", "engine.partition_workers=1", "--set", "logging.level=WARNING") == 0
    assert list(scratch.iterdir()) == []
    assert "timeline log" not in capsys.readouterr().out


# ------------------------------------------------------------------ pipes, signals, faults


def _closed_stdout(*args, env=None):
    """Run the command with standard output a pipe whose reader is already gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "porep_prover.cli", *map(str, args)], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    finally:
        os.close(write)
    return done.returncode, done.stderr


@pytest.mark.parametrize("command", [("verify", "vk.json", "pub.json", "proof.bin"), ("params", "info", "c.params"),
                                     ("--help",), ("verify", "--help")])
def test_output_into_a_closed_pipe_ends_quietly(files, command):
    args = [files.get(a, a) for a in command]
    code, err = _closed_stdout(*args)
    assert err == "" and code in (0, 141)
    if "--help" not in command:
        assert code == 141


def test_head_reads_one_line_quietly(files):
    exe = f"{sys.executable} -m porep_prover.cli"
    done = subprocess.run(f"set -o pipefail; {exe} params info {files['c.params']} | head -1",
                          shell=True, executable="/bin/bash", capture_output=True, text=True, timeout=120)
    assert done.stdout == "{\n" and done.stderr == "" and done.returncode in (0, 141)


SLOW_WRITE = textwrap.dedent("""
    import sys, time
    from porep_prover.curve.points import _PointArray
    from porep_prover.cli import main
    encode = _PointArray.to_bytes
    def slow(self, *a, **k):    # the write has begun: say so, then take long enough to be signalled
        out = encode(self, *a, **k)
        print("writing", flush=True)
        time.sleep(60)
        return out
    _PointArray.to_bytes = slow
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signalled_write_leaves_no_temporary(files, tmp_path, sig, code):
    target = tmp_path / "out.params"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_WRITE, "setup", files["c.npz"], "-o", target,
                             "--backend", "cpu", "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_sigint)
    try:
        assert proc.stdout.readline() == "writing\n"
        assert [p.name for p in tmp_path.iterdir()] == [f"out.params.tmp{proc.pid}"]
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_stale_temporary_goes_at_the_next_write(files, tmp_path, capsys):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    target = tmp_path / "c.params"
    stale, fresh, other = (tmp_path / f"c.params.tmp{gone.pid}", tmp_path / f"c.params.tmp{os.getppid()}",
                           tmp_path / "c.params.tmpX")
    for p in (stale, fresh, other):
        p.write_bytes(b"partial")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    assert run("setup", files["c.npz"], "-o", target, "--backend", "cpu") == 0
    assert target.exists() and not stale.exists()
    assert fresh.exists() and other.exists()       # a live process's, and a name not ours


def test_sigterm_handler_is_restored_after_main(files, capsys):
    before = signal.getsignal(signal.SIGTERM)
    run("verify", files["vk.json"], files["pub.json"], files["proof.bin"])
    assert signal.getsignal(signal.SIGTERM) is before


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_is_one_line(files, capsys, monkeypatch, debug):
    def broken(args):
        raise RuntimeError("an invariant broke")
    monkeypatch.setattr(core, "cmd_verify", broken)
    monkeypatch.setenv("POREP_PROVER_DEBUG", "1" if debug else "0")
    assert run("verify", files["vk.json"], files["pub.json"], files["proof.bin"]) == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: an invariant broke" in err and "POREP_PROVER_DEBUG=1" in err
    assert ("Traceback" in err) == debug
    if not debug:
        assert len(err.strip().splitlines()) == 1


def test_ctrl_c_exits_130_quietly(files, capsys, monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(core, "cmd_verify", interrupted)
    assert run("verify", files["vk.json"], files["pub.json"], files["proof.bin"]) == 130
    assert capsys.readouterr().err == ""


def test_atomic_write_writes_devices_in_place(tmp_path):
    from porep_prover.atomic import atomic_write
    with atomic_write(os.devnull) as f:
        f.write(b"nothing")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    with atomic_write(fifo) as f:
        f.write(b"through the pipe")
    assert reader.communicate(timeout=30)[0] == b"through the pipe"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]
