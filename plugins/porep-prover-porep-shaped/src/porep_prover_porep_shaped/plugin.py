# SPDX-License-Identifier: Apache-2.0
"""The "porep-shaped" synthesis provider.

A job's payload is a dict (every key optional):
    scale       fraction of a 32 GiB partition (default 1/64)
    seed        the circuit's seed (default 0): jobs with one (scale, seed) share
                the circuit and its parameters
    job_seed    seed of this job's witnesses (default: the job id); partition i
                of a job draws its sources from (job_seed, i)
    params      a bellperson .params file for the circuit: read when it exists,
                else made (INSECURE test parameters) and written there;
                default <cache>/porep-shaped-<scale>-<seed>.params under
                POREP_PROVER_PARAMS_CACHE (default ~/.cache/porep-prover/params)
    save        write parameters it made to that file (default true; a
                scale-1 file is ~47 GiB: false keeps them in memory only)
    mapped      keep the host copy of the parameters in a mapped file (the
                same path with .pmap: the in-memory layout, read by mapping,
                its pages the kernel's to reclaim once the points are
                resident on the devices) instead of anonymous memory; made
                from the parameters on first use, used as is after (default:
                when the parameters would take over 1/4 of the host's memory,
                e.g. scale 1 (~47 GB) on a 128 GiB host, where it frees that
                memory for partitions in flight, and come from a file: the
                .params or the .pmap exists, or save is true. Parameters made
                in memory and not saved are kept in memory: a mirror of them
                would be written only to be read back)

Circuits are built once per (scale, seed) in a process and shared by every
provider in it (the engine's and a benchmark's alike; the KEEP_CIRCUITS
last used are kept); each partition's witness is evaluated from its seed
(the CPU work the engine's synthesis workers do). Parameters are loaded
once per process while in use (KEPT: read, mapped or made once, handed to
every job and engine of their key while any holds them, freed once the
engine evicts them and nothing else does), and their shape is said before
they exist (srs_shape: the engine refuses a set that cannot fit before it
is made).

From JSON (parse_payload: the daemon's jobs) every key is checked; params
(payload_paths: a daemon confines it to its input roots) must name a file
that exists, read as it is (a .pmap mapped, anything else decoded), so that
a request never makes the provider write beside it: parameters it makes go
to the cache.
"""
from __future__ import annotations

import collections
import hashlib
import logging
import os
import pathlib
import threading
import typing
import warnings

from porep_prover.engine import KeptParams, SrsShape, host_memory_bytes
from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import (MAPPED_SUFFIX, InsecureSetupWarning, ParamsCache, insecure_setup, mapped_copy,
                                  read_params, write_params)
from porep_prover.hooks import hookimpl

from .circuit import Shape, build, counts, shape_bytes, witness, witness_scratch_bytes

LOG = logging.getLogger("porep_prover.porep_shaped")
DEFAULT_SCALE = 1 / 64
PARAMS_BYTES_AT_SCALE_1 = 47_400_000_000      # h 2^27, l and a 130 M, b_g1 and b_g2 33 M points


def cache_dir() -> pathlib.Path:
    """The parameter cache (POREP_PROVER_PARAMS_CACHE): where made parameters go unless a payload names a path."""
    return pathlib.Path(ParamsCache().folder)


class _Progress:
    """progress(what, done, total) logged at every tenth of each part."""

    def __init__(self, stage: str):
        self.stage, self.last = stage, {}

    def __call__(self, what: str, done: int, total: int) -> None:
        tenth = 10 * done // max(1, total)
        if tenth != self.last.get(what):
            self.last[what] = tenth
            LOG.info("%s %s: %d of %d (%d%%)", self.stage, what, done, total, 100 * done // max(1, total))


class Payload(typing.NamedTuple):
    """A job's payload, read and with its defaults (see the module docstring)."""
    scale: float
    seed: int
    job_seed: int
    params: pathlib.Path
    save: bool
    mapped: bool

    @classmethod
    def of(cls, job) -> "Payload":
        p = job.payload if job.payload is not None else {}
        if not isinstance(p, dict):
            raise InvalidInputError("a porep-shaped job's payload is a dict (scale, seed, job_seed, params)")
        scale, seed = float(p.get("scale", DEFAULT_SCALE)), int(p.get("seed", 0))
        job_seed = p.get("job_seed")
        if job_seed is None:
            job_seed = int.from_bytes(hashlib.sha256(job.id.encode()).digest()[:8], "little")
        params = pathlib.Path(p.get("params") or cache_dir() / f"porep-shaped-{scale:.8g}-{seed}.params")
        save, mapped = bool(p.get("save", True)), p.get("mapped")
        if mapped is None:
            from_file = save or params.exists() or params.with_suffix(MAPPED_SUFFIX).exists()
            mapped = from_file and PARAMS_BYTES_AT_SCALE_1 * scale > host_memory_bytes() / 4
        return cls(scale, seed, int(job_seed), params, save, bool(mapped))


MAX_SEED = (1 << 64) - 1
KEPT = KeptParams()             # the parameters loaded in this process, by srs_key, while in use
KEEP_CIRCUITS = 2               # circuits a process keeps (a scale-1 one holds ~15 GB)
_CIRCUITS: collections.OrderedDict[tuple[float, int], Shape] = collections.OrderedDict()
_CIRCUITS_LOCK = threading.Lock()


def shared_circuit(scale: float, seed: int) -> Shape:
    """The circuit of (scale, seed), built on first use in this process and
    shared by every provider in it (the engine's and a benchmark's); the
    KEEP_CIRCUITS last used are kept, the others dropped."""
    key = (float(scale), int(seed))
    with _CIRCUITS_LOCK:
        if key not in _CIRCUITS:
            LOG.info("building the porep-shaped circuit at scale %g (seed %d)", scale, seed)
            _CIRCUITS[key] = build(scale, seed)
        _CIRCUITS.move_to_end(key)
        while len(_CIRCUITS) > KEEP_CIRCUITS:
            _CIRCUITS.popitem(last=False)
        return _CIRCUITS[key]


def _seed(obj: dict, key: str) -> None:
    value = obj.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED):
        raise InvalidInputError(f"porep-shaped payload: {key} must be an integer from 0 to {MAX_SEED}, got {value!r}")


class PorepShapedProvider:
    kinds = ("porep-shaped",)
    payload_paths = ("params",)

    @staticmethod
    def parse_payload(obj: dict, partitions: int) -> dict:
        """A job's payload from a JSON object (see the module's docstring);
        InvalidInputError naming the key that is wrong."""
        unknown = sorted(set(obj) - {"scale", "seed", "job_seed", "params", "save", "mapped"})
        if unknown:
            raise InvalidInputError(f"porep-shaped payload: unknown keys {', '.join(unknown)} (it takes scale, "
                                    "seed, job_seed, params, save, mapped)")
        scale = obj.get("scale", DEFAULT_SCALE)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale <= 1:
            raise InvalidInputError(f"porep-shaped payload: scale must be a number above 0 and at most 1, "
                                    f"got {scale!r}")
        counts(float(scale))            # a circuit of at least its least number of constraints
        _seed(obj, "seed")
        _seed(obj, "job_seed")
        for key in ("save", "mapped"):
            if key in obj and not isinstance(obj[key], bool):
                raise InvalidInputError(f"porep-shaped payload: {key} must be true or false, got {obj[key]!r}")
        out = dict(obj)
        if "params" in obj:
            path = obj["params"]
            if not isinstance(path, str) or not os.path.isfile(path):
                raise InvalidInputError(f"porep-shaped payload: params must name a parameters file that exists, "
                                        f"got {path!r}")
            out["mapped"] = path.endswith(MAPPED_SUFFIX)
        return out

    @staticmethod
    def constraints(payload: dict) -> int:
        """Constraints of one partition of a job with this (parsed) payload: its cost, for admission."""
        return counts(float(payload.get("scale", DEFAULT_SCALE)))["constraints"]

    @staticmethod
    def shape(scale: float, seed: int) -> Shape:
        """The circuit of (scale, seed): shared_circuit's."""
        return shared_circuit(scale, seed)

    def srs_key(self, job) -> str:
        p = Payload.of(job)
        return f"porep-shaped:{p.scale:.8g}:{p.seed}:{p.params}:{'mapped' if p.mapped else 'read'}"

    def srs_shape(self, job) -> SrsShape:
        """The shape of the parameters load_srs gives the job, from its
        circuit, before they are read or made (mapped: the payload's mapped)."""
        p = Payload.of(job)
        return SrsShape.of_circuit(self.shape(p.scale, p.seed).r1cs, p.mapped)

    def load_srs(self, job):
        """The parameters of the job's circuit: those in use in this process
        (KEPT), else read, mapped, or made (and saved); files in the
        parameter cache count against its bound (the least recently used
        others removed), files a payload names do not."""
        return KEPT.get(self.srs_key(job), lambda: self._load(job))

    def _load(self, job):
        p = Payload.of(job)

        def params():
            if p.params.exists():
                return read_params(p.params, progress=_Progress("reading"))
            return self._make(p.scale, p.seed, p.params, p.save, job)
        loaded = mapped_copy(p.params.with_suffix(MAPPED_SUFFIX), params) if p.mapped else params()
        if p.params.parent.absolute() == cache_dir():
            cache = ParamsCache(cache_dir())
            used = [f.name for f in (p.params, p.params.with_suffix(MAPPED_SUFFIX)) if cache.use(f.name)]
            cache.prune(keep=used)
        return loaded

    def _make(self, scale: float, seed: int, path: pathlib.Path, save: bool, job):
        """Parameters made for the circuit (and saved at path); a job that
        ends meanwhile stops the making at its next step (JobCancelledError)."""
        shape = self.shape(scale, seed)
        job.raise_if_ended()
        LOG.warning("making INSECURE test parameters for the porep-shaped circuit at scale %g: %s", scale, path)
        logged = _Progress("setup")

        def progress(what: str, done: int, total: int) -> None:
            logged(what, done, total)
            job.raise_if_ended()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureSetupWarning)
            params = insecure_setup(shape.r1cs, backend="auto", progress=progress)
        job.raise_if_ended()
        if save:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_params(path, params, progress=_Progress("writing"))
        return params

    def circuit(self, job):
        """The job's circuit before any partition (the engine's memory plan counts it, and places A w, B w, C w
        by it)."""
        p = Payload.of(job)
        return self.shape(p.scale, p.seed).r1cs

    def circuit_bytes(self, job) -> int:
        """Host bytes the provider keeps for the job's circuit: its R1CS and
        the witness program it evaluates partitions by (the gates' arrays)."""
        p = Payload.of(job)
        return shape_bytes(self.shape(p.scale, p.seed))

    def synthesis_bytes(self, job) -> int:
        """Host bytes one synthesis holds beside its witness while it runs (the witness program's scratch)."""
        p = Payload.of(job)
        return witness_scratch_bytes(self.shape(p.scale, p.seed))

    def synthesize(self, job, partition: int, threads: int):
        p = Payload.of(job)
        shape = self.shape(p.scale, p.seed)
        return shape.r1cs, witness(shape, p.job_seed * 1009 + partition, threads)

    def synthesize_into(self, job, partition: int, threads: int, out):
        """synthesize's witness written into out (the engine's page-locked arena); the circuit."""
        p = Payload.of(job)
        shape = self.shape(p.scale, p.seed)
        witness(shape, p.job_seed * 1009 + partition, threads, out)
        return shape.r1cs


@hookimpl
def porep_prover_register_synthesis_providers(registry) -> None:
    registry.add_provider(PorepShapedProvider())
