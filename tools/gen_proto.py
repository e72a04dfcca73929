#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the daemon's generated gRPC code (proving_pb2.py, proving_pb2_grpc.py,
proving_pb2.pyi beside each .proto) from its two services' .proto files with
grpc_tools.protoc: src/porep_prover/daemon/v1/proving.proto (its own,
porep_prover.v1) and src/porep_prover/daemon/cuzk/proving.proto (the
reference engine's, cuzk.v1).

Usage: python tools/gen_proto.py [--check] [--out DIR]
With --check, write nothing and exit 1 if a committed file differs from what
would be written. With --out DIR, write the tree (porep_prover/daemon/v1/...,
porep_prover/daemon/cuzk/...) under DIR instead of src/. Needs grpcio-tools (the test extra); the generated
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
PROTOS = ("porep_prover/daemon/v1/proving.proto", "porep_prover/daemon/cuzk/proving.proto")
GENERATED = ("proving_pb2.py", "proving_pb2_grpc.py", "proving_pb2.pyi")     # beside each .proto


def outputs() -> list[str]:
    """Every generated file's path under src/ (or --out), POSIX."""
    return [str(pathlib.PurePosixPath(proto).parent / name) for proto in PROTOS for name in GENERATED]


def generate(out_root: pathlib.Path) -> list[pathlib.Path]:
    """Compile each .proto into its folder under out_root (from copies of
    the .proto files alone, so that nothing else in src/ can reach the
    compiler); returns the generated files' paths. RuntimeError with
    protoc's output when it fails; ModuleNotFoundError when grpc_tools is
    not installed."""
    import grpc_tools.protoc  # noqa: F401  (the missing-module error here, not in the child)
    out_root = pathlib.Path(out_root)
    with tempfile.TemporaryDirectory(prefix="porep-prover-proto-") as tmp:
        for proto in PROTOS:
            copy = pathlib.Path(tmp) / proto
            copy.parent.mkdir(parents=True)
            shutil.copyfile(SRC / proto, copy)
            # the command the generated files were made with, run in the copies' root
            cmd = [sys.executable, "-m", "grpc_tools.protoc", "-I", ".", "--python_out=.", "--grpc_python_out=.",
                   "--pyi_out=.", proto]
            run = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=120)
            if run.returncode != 0:
                raise RuntimeError(f"grpc_tools.protoc {proto} failed ({run.returncode}): {run.stderr.strip()}")
        made = []
        for rel in outputs():
            target = out_root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp_target = target.with_name(target.name + ".tmp")
            shutil.copyfile(pathlib.Path(tmp) / rel, tmp_target)
            os.replace(tmp_target, target)       # whole or not at all
            made.append(target)
    return made


def stale(out_root: pathlib.Path) -> list[str]:
    """The committed generated files (paths under src/) that differ from those in out_root."""
    return [rel for rel in outputs()
            if not (SRC / rel).is_file() or (SRC / rel).read_bytes() != (pathlib.Path(out_root) / rel).read_bytes()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed files are not current")
    parser.add_argument("--out", type=pathlib.Path, default=None, help="write under DIR instead of src/")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(pathlib.Path(tmp))
            differ = stale(pathlib.Path(tmp))
        for rel in differ:
            print(f"src/{rel} differs from what its .proto generates: run tools/gen_proto.py", file=sys.stderr)
        return 1 if differ else 0
    for path in generate(args.out or SRC):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
