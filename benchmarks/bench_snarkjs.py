#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""snarkjs `groth16 prove` against ours on the same .zkey and .wtns.

Usage:
    npm ci --prefix tests/interop             # pinned snarkjs, circom2, circomlib
    python benchmarks/bench_snarkjs.py [--sizes chain14,chain16,sha256-1,sha256-2] [--json out.json]
    python benchmarks/bench_snarkjs.py --commands [--sizes sha256-2] [--repeats 7] [--baseline SRC]

Circuits (compiled with circom2 --O2 --prime bls12381 into benchmarks/work/):
  chainK     x_{i+1} = x_i^2 + 7 for 2^K - 3 steps: domain exactly 2^K, full-field witness
  sha256-M   M chained circomlib Sha256(256) blocks (about 29 400 constraints each),
             mostly-bit witness, 512 public signals
The .zkey comes from `porep-prover zkey insecure-setup` (snarkjs's own ceremony
takes about half an hour at 2^16 on this machine; the test suite shows snarkjs
proves and verifies with our keys). Every proof, ours and theirs, is checked
with `snarkjs groth16 verify`. Times are the best of --repeats fresh
processes: `snarkjs groth16 prove` (node) against `porep-prover groth16 prove`
(python), plus ours in-process: the files read and the proof written in the
call (what a resident host pays a proof: no interpreter start, no imports),
and with the key already loaded.

--commands: command to command instead, `groth16 prove` and `groth16 verify`
of snarkjs against ours (and, with --baseline SRC, ours from another
checkout's src folder, its native modules built, on the same files), every
command a fresh process, the commands interleaved round by round, medians of
--repeats rounds; then what each of our commands imports (`python -X
importtime`: modules, import time, the packages that take it), --help
included. Our commands run with bytecode caching on and once untimed first,
as an installed package's would (the environment may set
PYTHONDONTWRITEBYTECODE, which would compile every module on every start).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import snarkjs_commands

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / "work"
NODE_BIN = ROOT / "tests" / "interop" / "node_modules" / ".bin"

CHAIN = """pragma circom 2.0.0;
template SquareChain(N) {
    signal input x0;
    signal output y;
    signal x[N + 1];
    x[0] <== x0;
    for (var i = 0; i < N; i++) { x[i + 1] <== x[i] * x[i] + 7; }
    y <== x[N];
}
component main {public [x0]} = SquareChain(%d);
"""

SHA = """pragma circom 2.0.0;
include "circomlib/circuits/sha256/sha256.circom";
template Sha256Chain(M) {
    signal input in[256];
    signal output out[256];
    component h[M];
    for (var j = 0; j < M; j++) {
        h[j] = Sha256(256);
        for (var i = 0; i < 256; i++) { h[j].in[i] <== j == 0 ? in[i] : h[j - 1].out[i]; }
    }
    for (var i = 0; i < 256; i++) { out[i] <== h[M - 1].out[i]; }
}
component main {public [in]} = Sha256Chain(%d);
"""


def run(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, check=True, **kw)


def build(name: str) -> pathlib.Path:
    """Compile, compute the witness and make the zkey once per circuit."""
    d = WORK / name
    if (d / "circuit.zkey").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    kind, size = name.rsplit("-", 1) if "-" in name else ("chain", name[5:])
    if name.startswith("chain"):
        src, inputs = CHAIN % ((1 << int(size)) - 3), {"x0": "12345"}
    else:
        src, inputs = SHA % int(size), {"in": [str((i * 7) % 2) for i in range(256)]}
    (d / "circuit.circom").write_text(src)
    rel = d.relative_to(ROOT)
    run(NODE_BIN / "circom2", rel / "circuit.circom", "--r1cs", "--wasm", "--O2", "--prime", "bls12381",
        "-l", NODE_BIN.parent.relative_to(ROOT), "-o", rel, cwd=ROOT)
    (d / "input.json").write_text(json.dumps(inputs))
    run("node", d / "circuit_js" / "generate_witness.js", d / "circuit_js" / "circuit.wasm", d / "input.json",
        d / "witness.wtns")
    run(sys.executable, "-m", "porep_prover.cli", "zkey", "insecure-setup", d / "circuit.r1cs", d / "circuit.zkey",
        "--vk", d / "verification_key.json")
    return d


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench(name: str, repeats: int) -> dict:
    from porep_prover import snarkjs

    d = build(name)
    zkey, wtns = d / "circuit.zkey", d / "witness.wtns"
    theirs = best_of(repeats, lambda: run(NODE_BIN / "snarkjs", "groth16", "prove", zkey, wtns,
                                          d / "proof_snarkjs.json", d / "public_snarkjs.json"))
    ours_cli = best_of(repeats, lambda: run(sys.executable, "-m", "porep_prover.cli", "groth16", "prove", zkey,
                                            wtns, d / "proof_ours.json", d / "public_ours.json"))
    key, witness = snarkjs.read_zkey(zkey), snarkjs.read_wtns(wtns)
    snarkjs.prove(key, witness, check=False)  # warm-up

    def from_files():
        proof, public = snarkjs.prove(snarkjs.read_zkey(zkey), snarkjs.read_wtns(wtns))
        snarkjs.write_proof(d / "proof_files.json", proof)
        snarkjs.write_public(d / "public_files.json", public)
    ours_files = best_of(repeats, from_files)
    for who in ("snarkjs", "ours", "files"):
        run(NODE_BIN / "snarkjs", "groth16", "verify", d / "verification_key.json", d / f"public_{who}.json",
            d / f"proof_{who}.json")
    stages: dict = {}
    ours_mem = best_of(repeats, lambda: snarkjs.prove(key, witness, timings=stages))
    return {"circuit": name, "vars": key.n_vars, "public": key.n_public, "domain": key.domain_size,
            "snarkjs_s": theirs, "ours_cli_s": ours_cli, "ours_files_s": ours_files, "ours_inprocess_s": ours_mem,
            "speedup_cli": theirs / ours_cli, "speedup_files": theirs / ours_files,
            "speedup_inprocess": theirs / ours_mem,
            **{f"stage_{k}_s": v / repeats for k, v in stages.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="chain14,chain16,sha256-1,sha256-2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--commands", action="store_true", help="groth16 prove and verify, command to command")
    ap.add_argument("--baseline", metavar="SRC", help="with --commands: also ours from this src folder")
    args = ap.parse_args()
    if not (NODE_BIN / "snarkjs").exists() or shutil.which("node") is None:
        print("needs node and the pinned toolchain: npm ci --prefix tests/interop", file=sys.stderr)
        return 2
    if args.commands:
        return snarkjs_commands.main([build(name) for name in args.sizes.split(",")], args.repeats,
                                     NODE_BIN / "snarkjs", args.baseline, args.json)
    print(f"# snarkjs vs porep_prover, {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs")
    print("| circuit | vars | public | domain | snarkjs prove (s) | ours CLI (s) | speed-up | ours from files (s) "
          "| speed-up | ours, key loaded (s) | speed-up |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for name in args.sizes.split(","):
        row = bench(name, args.repeats)
        rows.append(row)
        print(f"| {name} | {row['vars']} | {row['public']} | 2^{row['domain'].bit_length() - 1} | "
              f"{row['snarkjs_s']:.2f} | {row['ours_cli_s']:.3f} | {row['speedup_cli']:.1f}x | "
              f"{row['ours_files_s']:.3f} | {row['speedup_files']:.1f}x | "
              f"{row['ours_inprocess_s']:.3f} | {row['speedup_inprocess']:.1f}x |", flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
