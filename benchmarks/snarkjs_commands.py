# SPDX-License-Identifier: Apache-2.0
"""`groth16 prove` and `groth16 verify`, snarkjs's command against ours,
command to command (bench_snarkjs.py --commands), and what our commands
import.

Every command is a fresh process, timed from its start to its exit. A round
runs each command once, in an order rotated from round to round so that no
command always follows the same one; the figures are the medians over the
rounds (the fastest beside them). Before the rounds each of our commands
runs once untimed with bytecode caching on (what pip's install leaves),
and every proof made is checked by both verifiers.

The import summary runs `python -X importtime -m porep_prover.cli ...`
--repeats times a command and keeps the run of median total: the modules
imported, the sum of their own import times, the packages that take most of
it, and which of the heavy packages the command loads.
"""
from __future__ import annotations

import collections
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

# What a command may load only if it uses it (tests/cli/test_imports.py holds the commands to this).
HEAVY = ("numpy", "rich", "grpc", "google.protobuf", "pluggy", "matplotlib", "cuda", "porep_prover.cuda._driver",
         "porep_prover.engine", "porep_prover.daemon", "porep_prover.client", "porep_prover.hooks",
         "porep_prover.groth16", "porep_prover.snarkjs", "urllib.request")
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _env(src: str | None) -> dict:
    """The environment of our commands: bytecode cached, and SRC first on the path when given."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src:
        env["PYTHONPATH"] = os.pathsep.join([str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def _run(argv: list, env: dict | None = None) -> float:
    """Seconds from the process's start to its exit; an error if it fails."""
    t = time.perf_counter()
    subprocess.run([str(a) for a in argv], check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def commands(d: pathlib.Path, snarkjs: pathlib.Path, baseline: str | None) -> dict:
    """name -> (argv, env) of every timed command on circuit folder d."""
    zkey, wtns, vk = d / "circuit.zkey", d / "witness.wtns", d / "verification_key.json"
    ours = [sys.executable, "-m", "porep_prover.cli", "groth16"]
    table = {
        "python -c pass": ([sys.executable, "-c", "pass"], _env(None)),
        "node -e 0": (["node", "-e", "0"], None),
        "snarkjs prove": ([snarkjs, "groth16", "prove", zkey, wtns, d / "proof_snarkjs.json",
                           d / "public_snarkjs.json"], None),
        "ours prove": (ours + ["prove", zkey, wtns, d / "proof_ours.json", d / "public_ours.json"], _env(None)),
        "snarkjs verify": ([snarkjs, "groth16", "verify", vk, d / "public_ours.json", d / "proof_ours.json"], None),
        "ours verify": (ours + ["verify", vk, d / "public_ours.json", d / "proof_ours.json"], _env(None)),
        "ours --help": (ours[:-1] + ["--help"], _env(None)),
    }
    if baseline:
        table["before prove"] = (ours + ["prove", zkey, wtns, d / "proof_before.json", d / "public_before.json"],
                                 _env(baseline))
        table["before verify"] = (ours + ["verify", vk, d / "public_ours.json", d / "proof_ours.json"],
                                  _env(baseline))
        table["before --help"] = (ours[:-1] + ["--help"], _env(baseline))
    return table


def check_proofs(d: pathlib.Path, snarkjs: pathlib.Path, baseline: str | None) -> None:
    """Every proof made passes both verifiers (CalledProcessError otherwise)."""
    vk = d / "verification_key.json"
    ours = [sys.executable, "-m", "porep_prover.cli", "groth16", "verify", vk]
    for who in ("snarkjs", "ours") + (("before",) if baseline else ()):
        proof = [d / f"public_{who}.json", d / f"proof_{who}.json"]
        _run([snarkjs, "groth16", "verify", vk, *proof])
        _run(ours + proof, _env(None))


def time_rounds(table: dict, repeats: int) -> dict:
    """name -> the seconds of each round, the commands interleaved."""
    names = list(table)
    for name in names:                       # untimed: bytecode cached, files in the page cache
        _run(*table[name])
    times: dict = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(_run(*table[name]))
    return times


def importtime(args: list, env: dict) -> dict:
    """One `python -X importtime` run of our command: modules, total import
    time (own times summed), own time by package, the heavy ones loaded."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "porep_prover.cli", *map(str, args)],
                         env=env, capture_output=True, text=True)
    own: collections.Counter = collections.Counter()
    names = []
    for line in out.stderr.splitlines():
        m = IMPORT_LINE.match(line)
        if m:
            name = m[4]
            names.append(name)
            parts = name.split(".")
            own[".".join(parts[:2]) if parts[0] == "porep_prover" else parts[0]] += int(m[1]) / 1e6
    heavy = [h for h in HEAVY if any(n == h or n.startswith(h + ".") for n in names)]
    return {"modules": len(names), "import_s": sum(own.values()), "packages": own, "heavy": heavy}


def import_summary(d: pathlib.Path, repeats: int, baseline: str | None) -> dict:
    """label -> the importtime run of median total, for --help, prove and verify (and the baseline's)."""
    vk = d / "verification_key.json"
    runs = {"--help": ["--help"],
            "groth16 prove": ["groth16", "prove", d / "circuit.zkey", d / "witness.wtns", d / "proof_it.json",
                              d / "public_it.json"],
            "groth16 verify": ["groth16", "verify", vk, d / "public_ours.json", d / "proof_ours.json"]}
    summary = {}
    for who, src in (("ours", None),) + ((("before", baseline),) if baseline else ()):
        for label, args in runs.items():
            tries = sorted((importtime(args, _env(src)) for _ in range(repeats)), key=lambda t: t["import_s"])
            summary[f"{who} {label}"] = tries[len(tries) // 2]
    return summary


def _print_times(name: str, times: dict) -> list:
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\n### {name}: seconds a command, median of {len(next(iter(times.values())))} rounds (fastest)\n")
    print("| command | median (s) | fastest (s) | snarkjs / this |")
    print("| --- | ---: | ---: | ---: |")
    rows = []
    for k, v in times.items():
        verb = k.split()[-1]
        theirs = med.get(f"snarkjs {verb}")
        ratio = f"{theirs / med[k]:.1f}x" if theirs and verb in ("prove", "verify") else ""
        print(f"| {k} | {med[k]:.3f} | {min(v):.3f} | {ratio} |")
        rows.append({"circuit": name, "command": k, "median_s": med[k], "min_s": min(v), "all_s": v})
    return rows


def _print_imports(summary: dict) -> None:
    print("\n### What our commands import (`python -X importtime`, the run of median total)\n")
    print("| command | modules | import time (s) | most of it (own ms) | heavy packages loaded |")
    print("| --- | ---: | ---: | --- | --- |")
    for label, s in summary.items():
        top = ", ".join(f"{k} {v * 1000:.0f}" for k, v in s["packages"].most_common(6))
        print(f"| {label} | {s['modules']} | {s['import_s']:.3f} | {top} | {' '.join(s['heavy']) or 'none'} |")


def main(folders: list, repeats: int, snarkjs: pathlib.Path, baseline: str | None, json_out: str | None) -> int:
    load = os.getloadavg()
    print(f"# groth16 prove / verify, command to command, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, "
          f"{os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} before")
    rows: list = []
    for d in folders:
        table = commands(d, snarkjs, baseline)
        times = time_rounds(table, repeats)
        check_proofs(d, snarkjs, baseline)
        rows += _print_times(d.name, times)
        summary = import_summary(d, max(3, repeats // 2), baseline)
        _print_imports(summary)
        rows += [{"circuit": d.name, "imports": label, **{k: (dict(v) if k == "packages" else v)
                                                         for k, v in s.items()}} for label, s in summary.items()]
    load = os.getloadavg()
    print(f"\nload {load[0]:.2f} {load[1]:.2f} after", flush=True)
    if json_out:
        pathlib.Path(json_out).write_text(json.dumps(rows, indent=1))
    return 0
