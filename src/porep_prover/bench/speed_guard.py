# SPDX-License-Identifier: Apache-2.0
"""A small kernel region timed at the card's budget, against the figure
recorded for the card (benchmarks/device_figures.json): what the device lane
checks, so that a change made without a GPU that slows the GPU is caught the
next time one is lent.

The region: a porep-like circuit of GUARD_CONSTRAINTS (2^18 rows, padded),
its INSECURE parameters made on the device, one partition with A w, B w,
C w and B's G2 MSM on the device, by the device's own plan; the median of
GUARD_REPS regions after a warm-up (each partition synthesized outside the
clock, as the engine synthesizes it)."""
from __future__ import annotations

import json
import pathlib
import statistics
import time
from typing import Any

GUARD_CONSTRAINTS = (1 << 18) - 64
GUARD_REPS = 5
TOLERANCE = 0.10           # slower than the figure by more than this fails


def region_ms(gpu: Any, reps: int = GUARD_REPS, seed: int = 7) -> float:
    """The median milliseconds of the guard's kernel region on gpu (a GpuBackend) at its card's budget."""
    import random

    from ..backend import get_backend
    from ..circuits import porep_like
    from ..groth16 import insecure_setup
    from ..groth16.prover import prove_device, synthesize
    from ..memory.workload import Workload
    host = get_backend("cpu")
    r1cs, witness, _ = porep_like(GUARD_CONSTRAINTS, seed=seed)
    params = insecure_setup(r1cs, rng=random.Random(seed), backend="gpu", warn=False)
    chosen = gpu.device_plan(Workload.of(params, r1cs, on_device=True), gpu.device_budget(), workers=1,
                               g2=True)
    times = []
    try:
        for i in range(reps + 1):
            synth = synthesize(params, r1cs, witness, 2, abc_on_device=chosen.matrices)
            t = time.perf_counter()
            prove_device(gpu, params, synth, 2, b_g2=True, host=host, plan=chosen)
            if i:                        # the first is the warm-up: the points made resident, the kernels loaded
                times.append(time.perf_counter() - t)
    finally:
        gpu.release_plan()     # unplanned again: the guard's plan ends with it
    return statistics.median(times) * 1e3


def read_figures(path: str | pathlib.Path) -> dict[str, dict[str, Any]]:
    """The recorded figures by card name ({} where the file is not there)."""
    p = pathlib.Path(path)
    return json.loads(p.read_text()) if p.exists() else {}


def record(path: str | pathlib.Path, card: str, ms: float, tree: str, date: str) -> None:
    """The card's figure written into the table at path (the others kept)."""
    figures = read_figures(path)
    figures[card] = {"region_ms": round(ms, 2), "tree": tree, "date": date, "constraints": GUARD_CONSTRAINTS}
    pathlib.Path(path).write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
