# SPDX-License-Identifier: Apache-2.0
"""What a benchmark submits: jobs of a demo circuit made in memory, or jobs of
a provider's kind with one payload."""
from __future__ import annotations

import time
import warnings

from ..circuits import CIRCUITS
from ..engine import Job, inline_job
from ..groth16 import InsecureSetupWarning, insecure_setup


class DemoWorkload:
    """A demo circuit (circuits.CIRCUITS), its INSECURE test parameters and
    the witnesses its jobs' partitions cycle through, made once.

    witnesses: how many distinct witnesses to draw (default: one per
    partition); partition i proves witness i mod witnesses. progress:
    insecure_setup's, for the parameters."""

    def __init__(self, circuit: str, constraints: int, partitions: int, witnesses: int | None = None,
                 log=print, progress=None):
        t = time.perf_counter()
        make = CIRCUITS[circuit]
        self.r1cs, _, _ = make(constraints)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureSetupWarning)
            self.params = insecure_setup(self.r1cs, progress=progress)
        distinct = max(1, min(partitions, witnesses or partitions))
        self.witnesses = [make(constraints, seed=i)[1] for i in range(distinct)]
        self.partitions = partitions
        log(f"workload: {circuit}, {self.r1cs.num_constraints} constraints (domain {self.r1cs.domain_size}), "
            f"{partitions} partitions per job, {distinct} distinct witnesses; setup "
            f"{time.perf_counter() - t:.1f} s")

    def job(self, i: int = 0, partitions: int | None = None) -> Job:
        """Job i (all alike): partitions (default the workload's) proofs of the circuit."""
        return inline_job(self.params, self.r1cs, lambda k: self.witnesses[k % len(self.witnesses)],
                          partitions=partitions or self.partitions)


class KindWorkload:
    """Jobs of a provider's kind (a plugin's, e.g. "porep-shaped") with one payload."""

    def __init__(self, kind: str, partitions: int, payload: dict):
        self.kind, self.partitions, self.payload = kind, partitions, payload

    def job(self, i: int = 0, partitions: int | None = None) -> Job:
        return Job(self.kind, partitions or self.partitions, dict(self.payload))
