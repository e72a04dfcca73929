# SPDX-License-Identifier: Apache-2.0
"""The daemon's built-in job kind "demo": a PoRep-like circuit
(circuits.porep_like: mostly boolean constraints, four public inputs) of N
constraints, so that a deployment can be smoke-tested and benchmarked with
nothing else installed.

Payload (JSON): {"constraints": N, "seed": S}; N from MIN_CONSTRAINTS to
MAX_CONSTRAINTS, S from 0 to 2^64 - 1 (default 0). Partition i proves the
witness of seed hash(S, i). The circuit's structure depends on N alone, so
its parameters (INSECURE test parameters, the same on every host: their
toxic waste is drawn from N) are made once per N and kept in the parameter
cache (groth16.ParamsCache: <folder>/porep-like-<N>.params, the least
recently used removed past the cache's bound), written atomically and read
again after a restart (made anew when unreadable or not this circuit's).
A job that ends while they are made stops the making (Job.ended).
"""
from __future__ import annotations

import collections
import hashlib
import logging
import os
import random
import threading

from ..circuits import MAX_SEED, porep_like
from ..errors import InvalidInputError, ParamsError
from ..groth16 import ParamsCache, insecure_setup, load_params, write_params

LOG = logging.getLogger("porep_prover.daemon")
KIND = "demo"
MIN_CONSTRAINTS = 8              # porep_like's four public inputs need twice as many
MAX_CONSTRAINTS = 1 << 20        # its test parameters are made on the daemon's host, in memory
CIRCUITS_KEPT = 4                # circuits kept in memory, the most recently used


def params_name(constraints: int) -> str:
    """The cache's name of the parameters of the demo circuit of `constraints` constraints."""
    return f"porep-like-{constraints}.params"


def params_path(folder: str, constraints: int) -> str:
    """Where the parameters of the demo circuit of `constraints` constraints are kept."""
    return os.path.join(folder, params_name(constraints))


def partition_seed(seed: int, partition: int) -> int:
    """The witness seed of a partition (from 0 to MAX_SEED)."""
    digest = hashlib.sha256(f"{seed}:{partition}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class DemoProvider:
    """Synthesis provider of kind "demo"; folder: the parameter cache its
    parameters are kept in (bound: the cache's default, params_cache_bytes)."""

    kinds = (KIND,)
    payload_paths = ()

    def __init__(self, folder: str):
        self.folder = folder
        self.cache = ParamsCache(folder)
        self._circuits: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        """What travels to a cluster's node (engine.cluster): the folder; the
        circuits are made again there."""
        return {"folder": self.folder}

    def __setstate__(self, state: dict) -> None:
        type(self).__init__(self, state["folder"])

    @staticmethod
    def parse_payload(obj: dict, partitions: int) -> dict:
        """{"constraints": N, "seed": S} checked; InvalidInputError saying the ranges."""
        unknown = sorted(set(obj) - {"constraints", "seed"})
        if unknown:
            raise InvalidInputError(f"a demo payload takes constraints and seed, not {', '.join(unknown)}")
        n, seed = obj.get("constraints"), obj.get("seed", 0)
        if isinstance(n, bool) or not isinstance(n, int) or not MIN_CONSTRAINTS <= n <= MAX_CONSTRAINTS:
            raise InvalidInputError(f"demo payload: constraints must be an integer from {MIN_CONSTRAINTS} to "
                                    f"{MAX_CONSTRAINTS}, got {n!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise InvalidInputError(f"demo payload: seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
        return {"constraints": n, "seed": seed}

    @staticmethod
    def constraints(payload: dict) -> int:
        """Constraints of one partition of a job with this (parsed) payload: its cost, for admission."""
        return payload["constraints"]

    def _r1cs(self, n: int):
        with self._lock:
            if n in self._circuits:
                self._circuits.move_to_end(n)
                return self._circuits[n]
        r1cs = porep_like(n)[0]
        with self._lock:
            self._circuits[n] = r1cs
            while len(self._circuits) > CIRCUITS_KEPT:
                self._circuits.popitem(last=False)
        return r1cs

    def srs_key(self, job) -> str:
        return f"{KIND}:{job.payload['constraints']}"

    def load_srs(self, job):
        n = job.payload["constraints"]
        r1cs, name = self._r1cs(n), params_name(n)
        path = self.cache.path(name)
        if self.cache.use(name):
            try:
                params = load_params(path)
                params.check_matches(r1cs)
                return params
            except (ParamsError, InvalidInputError) as exc:
                LOG.warning("demo parameters %s are unusable (%s); making them again", path, exc)
        job.raise_if_ended()
        LOG.info("making INSECURE test parameters for the demo circuit of %d constraints: %s", n, path)
        # toxic waste drawn from N alone: every host of a cluster makes the same key (as INSECURE as any test key);
        # a job cancelled meanwhile stops the making at its next query, and nothing is written
        params = insecure_setup(r1cs, rng=random.Random(f"porep-like-{n}"), warn=False,
                                progress=lambda *_: job.raise_if_ended())
        job.raise_if_ended()
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        write_params(path, params)
        self.cache.made(name)
        return params

    def synthesize(self, job, partition: int, threads: int):
        n = job.payload["constraints"]
        witness = porep_like(n, seed=partition_seed(job.payload["seed"], partition))[1]
        return self._r1cs(n), witness
