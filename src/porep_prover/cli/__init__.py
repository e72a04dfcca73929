# SPDX-License-Identifier: Apache-2.0
"""The `porep-prover` command.

    porep-prover demo                     the main job: circuit, setup, prove, verify, timings
    porep-prover circuit generate ...     a demo circuit, its witness and public inputs
    porep-prover setup CIRCUIT -o PARAMS  INSECURE test parameters (bellperson format)
    porep-prover prove PARAMS CIRCUIT WITNESS -o PROOF
    porep-prover verify KEY PUBLIC PROOF  exit 0 and "OK!" when valid, 1 when not
    porep-prover params info PARAMS       sizes and layout of a parameters file
    porep-prover groth16 prove|verify     snarkjs's argument order and files
    porep-prover zkey export verificationkey | insecure-setup
    porep-prover gpu info | warm          CUDA devices; compile the kernels into the cache
    porep-prover bench batch | sweep      engine throughput (seconds per proof, GPU efficiency)
    porep-prover timeline LOG             GPU efficiency, gaps, lock wait/hold; --gantt PNG

Errors of porep_prover are printed as one line naming what is wrong (exit 2).
"""
from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..backend import BACKENDS
from ..errors import PorepProverError
from . import core, engine_cmds, gpu_cmds, snarkjs_cmds


def _common(p: argparse.ArgumentParser, backend: bool = True) -> None:
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    if backend:
        p.add_argument("--backend", choices=BACKENDS, default="auto", help="compute backend (default: auto)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="porep-prover", description="Groth16 prover over BLS12-381")
    parser.add_argument("--version", action="version", version=f"porep-prover {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    core.register(sub, _common)
    snarkjs_cmds.register(sub, _common)
    gpu_cmds.register(sub, _common)
    engine_cmds.register(sub, _common)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except PorepProverError as exc:
        print(f"porep-prover: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"porep-prover: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
