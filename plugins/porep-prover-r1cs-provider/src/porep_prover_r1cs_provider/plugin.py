# SPDX-License-Identifier: Apache-2.0
"""A synthesis provider for circuits and witnesses in files (job kind "r1cs-file").

A job's payload is a dict:
    params     bellperson .params or mapped .pmap parameters (loaded once per
               path, shared by jobs)
    mapped_cache  optional directory: a .params file is then loaded through a
               mapped mirror kept there (made on first use; the points are
               page cache the kernel reclaims once they are on the devices,
               and later loads do not decode)
    circuit    our .npz circuit or circom's .r1cs
    witnesses  one file per partition: 32-byte little-endian values, or snarkjs .wtns

From JSON (parse_payload: the daemon's jobs) params, circuit and witnesses
are paths (payload_paths: a daemon confines them to its input roots);
mapped_cache, a place to write to, is not taken from JSON.
"""
from __future__ import annotations

import os
import threading

from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import R1CS, is_mapped_file, load_params, load_witness, read_params_mapped
from porep_prover.hooks import hookimpl
from porep_prover.snarkjs import read_r1cs, read_wtns


def _magic(path) -> bytes:
    with open(path, "rb") as f:
        return f.read(4)


class R1csFileProvider:
    kinds = ("r1cs-file",)
    payload_paths = ("params", "circuit", "witnesses")

    @staticmethod
    def parse_payload(obj: dict, partitions: int) -> dict:
        """A job's payload from a JSON object: params and circuit paths, and
        one witness path per partition; InvalidInputError naming what is wrong."""
        unknown = sorted(set(obj) - {"params", "circuit", "witnesses"})
        if unknown:
            why = " (a folder to write to is not taken from JSON)" if "mapped_cache" in unknown else ""
            raise InvalidInputError(f"an r1cs-file payload takes params, circuit and witnesses; "
                                    f"not {', '.join(unknown)}{why}")
        for key in ("params", "circuit"):
            if not isinstance(obj.get(key), str) or not obj[key]:
                raise InvalidInputError(f"an r1cs-file payload needs {key}: a path")
        witnesses = obj.get("witnesses")
        if not isinstance(witnesses, list) or not all(isinstance(w, str) and w for w in witnesses):
            raise InvalidInputError("an r1cs-file payload needs witnesses: a list of paths, one per partition")
        if len(witnesses) != partitions:
            raise InvalidInputError(f"{len(witnesses)} witness files for {partitions} partitions")
        return {"params": obj["params"], "circuit": obj["circuit"], "witnesses": list(witnesses)}

    def __init__(self):
        self._circuits: dict[str, R1CS] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _payload(job) -> dict:
        p = job.payload
        if not isinstance(p, dict) or not {"params", "circuit", "witnesses"} <= set(p):
            raise InvalidInputError("an r1cs-file job needs a payload dict with params, circuit and witnesses")
        if len(p["witnesses"]) != job.partitions:
            raise InvalidInputError(f"{len(p['witnesses'])} witness files for {job.partitions} partitions")
        return p

    def srs_key(self, job) -> str:
        return "params:" + os.path.abspath(self._payload(job)["params"])

    def load_srs(self, job):
        p = self._payload(job)
        if p.get("mapped_cache") and not is_mapped_file(p["params"]):
            return read_params_mapped(p["params"], p["mapped_cache"])
        return load_params(p["params"])

    def _circuit(self, path) -> R1CS:
        key = os.path.abspath(path)
        with self._lock:
            if key not in self._circuits:
                self._circuits[key] = read_r1cs(path).r1cs if _magic(path) == b"r1cs" else R1CS.load(path)
            return self._circuits[key]

    def synthesize(self, job, partition: int, threads: int):
        p = self._payload(job)
        path = p["witnesses"][partition]
        witness = read_wtns(path) if _magic(path) == b"wtns" else load_witness(path)
        return self._circuit(p["circuit"]), witness


@hookimpl
def porep_prover_register_synthesis_providers(registry) -> None:
    registry.add_provider(R1csFileProvider())
