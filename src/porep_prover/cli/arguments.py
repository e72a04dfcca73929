# SPDX-License-Identifier: Apache-2.0
"""The porep-prover command's shared arguments: --progress, and the numeric
ones, each bounded: a value outside its range is argparse's one-line usage
error naming the argument and the range (exit 2), never a traceback or a
crash further in.

The ranges: --threads 1 to config.MAX_THREADS; circuit sizes (--constraints)
1 to circuits.MAX_CONSTRAINTS; seeds 0 to 2^64 - 1; demo --proofs 1 to
MAX_PROOFS; bench -c 1 to MAX_JOBS, -j, --partitions and --witnesses 1 to
MAX_PARTITIONS; bench sweep --repeats 1 to MAX_REPEATS; --scale above 0, at
most 1; gpu plan's --device-memory-gib 1 to 2^20, --upload-gbps 0.1 to 1000,
--workers 1 to 16, --table-copies 0 to 64; --arch sm_NN (NN from 30 to 199).

Besides, the few names of lower layers the parser shows (the backends, the
demo circuits, their bounds): copied here because their modules import numpy
and the native kernels, which building the parser must not;
tests/cli/test_imports.py checks that the copies agree.
"""
from __future__ import annotations

import argparse
import math
import re

from ..config import MAX_THREADS

BACKENDS = ("cpu", "gpu", "auto")                 # backend.BACKENDS
CIRCUITS = ("porep-like", "square-chain")         # the names of circuits.CIRCUITS
MAX_CONSTRAINTS = 1 << 28                         # circuits.MAX_CONSTRAINTS
MAX_SEED = (1 << 64) - 1                          # circuits.MAX_SEED
MAX_PROOFS = 10_000
MAX_JOBS = 100_000
MAX_PARTITIONS = 1024
MAX_REPEATS = 100


def progress_option(parser: argparse.ArgumentParser) -> None:
    """--progress / --no-progress on a command (default: on a terminal only;
    progress.display reads it)."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress with rate and time left on standard error: bars on a terminal, "
                             "else a plain line every 10 s at most (default: on a terminal only)")


def integer(minimum: int, maximum: int):
    """An argparse type: a decimal integer in [minimum, maximum]."""
    def parse(text: str) -> int:
        try:
            n = int(text, 10)
        except ValueError:       # not a number, or more digits than int() reads
            n = None
        if n is None or not minimum <= n <= maximum:
            raise argparse.ArgumentTypeError(f"must be an integer from {minimum} to {maximum}, got {text!r}")
        return n
    parse.__name__ = "integer"
    return parse


def _float(text: str) -> float:
    """text as a float, NaN where it is none (every range test then fails)."""
    try:
        return float(text)
    except ValueError:
        return math.nan


def fraction(text: str) -> float:
    """An argparse type: a finite number above 0 and at most 1."""
    x = _float(text)
    if not 0 < x <= 1:          # also false for NaN
        raise argparse.ArgumentTypeError(f"must be a number above 0 and at most 1, got {text!r}")
    return x


def number(minimum: float, maximum: float):
    """An argparse type: a finite number in [minimum, maximum]."""
    def parse(text: str) -> float:
        x = _float(text)
        if not minimum <= x <= maximum:     # also false for NaN
            raise argparse.ArgumentTypeError(f"must be a number from {minimum:g} to {maximum:g}, got {text!r}")
        return x
    parse.__name__ = "number"
    return parse


def arch(text: str) -> str:
    """An argparse type: a CUDA target such as sm_90 or sm_90a."""
    match = re.fullmatch(r"sm_([0-9]{2,3})[af]?", text)
    if not match or not 30 <= int(match[1]) <= 199:
        raise argparse.ArgumentTypeError(f"must be a CUDA target sm_NN (NN from 30 to 199, e.g. sm_90), "
                                         f"got {text!r}")
    return text


THREADS = integer(1, MAX_THREADS)
CONSTRAINTS = integer(1, MAX_CONSTRAINTS)
SEED = integer(0, MAX_SEED)
PROOFS = integer(1, MAX_PROOFS)
JOBS = integer(1, MAX_JOBS)
PARTITIONS = integer(1, MAX_PARTITIONS)
REPEATS = integer(1, MAX_REPEATS)
