#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the daemon's generated gRPC code (proving_pb2.py, proving_pb2_grpc.py,
proving_pb2.pyi) from src/porep_prover/daemon/v1/proving.proto with grpc_tools.protoc.

Usage: python tools/gen_proto.py [--check] [--out DIR]
With --check, write nothing and exit 1 if a committed file differs from what
would be written. With --out DIR, write the tree (porep_prover/daemon/v1/...)
under DIR instead of src/. Needs grpcio-tools (the test extra); the generated
code names the grpcio and protobuf versions it needs at run time (pyproject.toml
pins at least those).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PROTO = "porep_prover/daemon/v1/proving.proto"
GENERATED = ("proving_pb2.py", "proving_pb2_grpc.py", "proving_pb2.pyi")


def generate(out_root: pathlib.Path) -> list[pathlib.Path]:
    """Compile the .proto into out_root/porep_prover/daemon/v1/ (from a copy
    of the .proto alone, so that nothing else in src/ can reach the compiler);
    returns the generated files' paths. RuntimeError with protoc's output when
    it fails; ModuleNotFoundError when grpc_tools is not installed."""
    import grpc_tools.protoc  # noqa: F401  (the missing-module error here, not in the child)
    out_root = pathlib.Path(out_root)
    with tempfile.TemporaryDirectory(prefix="porep-prover-proto-") as tmp:
        copy = pathlib.Path(tmp) / PROTO
        copy.parent.mkdir(parents=True)
        shutil.copyfile(SRC / PROTO, copy)
        # the command the generated files were made with, run in the copy's root
        cmd = [sys.executable, "-m", "grpc_tools.protoc", "-I", ".", "--python_out=.", "--grpc_python_out=.",
               "--pyi_out=.", PROTO]
        run = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            raise RuntimeError(f"grpc_tools.protoc failed ({run.returncode}): {run.stderr.strip()}")
        made = []
        for name in GENERATED:
            target = out_root / pathlib.Path(PROTO).parent / name
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp_target = target.with_name(target.name + ".tmp")
            shutil.copyfile(copy.parent / name, tmp_target)
            os.replace(tmp_target, target)       # whole or not at all
            made.append(target)
    return made


def stale(out_root: pathlib.Path) -> list[str]:
    """The committed generated files that differ from those in out_root."""
    folder = pathlib.PurePosixPath(PROTO).parent
    return [name for name in GENERATED
            if (SRC / folder / name).read_bytes() != (pathlib.Path(out_root) / folder / name).read_bytes()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed files are not current")
    parser.add_argument("--out", type=pathlib.Path, default=None, help="write under DIR instead of src/")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(pathlib.Path(tmp))
            differ = stale(pathlib.Path(tmp))
        for name in differ:
            print(f"{name} differs from what {PROTO} generates: run tools/gen_proto.py", file=sys.stderr)
        return 1 if differ else 0
    for path in generate(args.out or SRC):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
