#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The device lane's speed guard (porep_prover.bench.speed_guard): time its
small kernel region on this host's GPU and print it beside the figure
recorded for the card in benchmarks/device_figures.json; --record writes
this run's figure there (the tree and date with it), for a card that has
none or after a change that is meant to move it.

Usage: python3 benchmarks/speed_guard.py [--record] [--reps 5]
"""
from __future__ import annotations

import argparse
import datetime
import pathlib
import subprocess

from porep_prover.backend import get_backend
from porep_prover.bench.speed_guard import TOLERANCE, read_figures, record, region_ms

FIGURES = pathlib.Path(__file__).resolve().parent / "device_figures.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--record", action="store_true", help="write this run's figure for the card")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    gpu = get_backend("gpu")
    card = gpu.info.name
    ms = region_ms(gpu, args.reps)
    known = read_figures(FIGURES).get(card)
    line = f"{card}: guard region {ms:.2f} ms"
    if known:
        line += f", recorded {known['region_ms']:.2f} ms ({ms / known['region_ms'] - 1:+.1%}; fails past " \
                f"{TOLERANCE:.0%})"
    print(line, flush=True)
    if args.record:
        tree = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=FIGURES.parent).stdout.strip() or "unknown"
        record(FIGURES, card, ms, tree, datetime.date.today().isoformat())
        print(f"recorded in {FIGURES}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
