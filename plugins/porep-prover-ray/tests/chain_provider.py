# SPDX-License-Identifier: Apache-2.0
"""A synthesis provider for the cluster tests: kind "chain", payload
{"constraints": N, "seed": S, "sleep": seconds of synthesis}: partition i
proves square_chain(N, seed=S + i) under parameters read from a file the
test made (so every node proves under the same key)."""
import time

from porep_prover.circuits import square_chain
from porep_prover.groth16 import load_params


class ChainProvider:
    kinds = ("chain",)

    def __init__(self, params_path: str):
        self.params_path = params_path

    def srs_key(self, job) -> str:
        return f"chain:{job.payload['constraints']}"

    def load_srs(self, job):
        return load_params(self.params_path)

    def synthesize(self, job, partition: int, threads: int):
        time.sleep(job.payload.get("sleep", 0.0))
        r1cs, witness, _ = square_chain(job.payload["constraints"], seed=job.payload["seed"] + partition)
        return r1cs, witness


def expected_public(payload: dict, partition: int) -> list[int]:
    return square_chain(payload["constraints"], seed=payload["seed"] + partition)[2]
