# SPDX-License-Identifier: Apache-2.0
"""A porep job's payload, and the commit-phase-1 output it names, checked.

Payloads, every key checked (InvalidInputError naming it):

    the daemon's (a cuzk POREP_SEAL_COMMIT request):
        {"vanilla_proof": PATH, "registered_proof": N, "sector_size": BYTES,
         "sector_number": N, "miner_id": N}, and optionally the config below
    a preload's (PreloadSRS, EvictSRS):  {"sector_size": BYTES}
    the Python API's and bench batch's:
        {"c1": PATH or the output's bytes (or a proofs.C1Output), and optionally
         "registered_proof" (N or name), "sector_size", "prover_id" (32 bytes or
         64 hex digits), "sector_id", "miner_id" (the prover id as filecoin-ffi
         makes it), "params" (a .params file), "porep_id" (32 bytes or 64 hex
         digits) and "api_version" ("1.0.0", "1.1.0", "1.2.0" or V1_2_0)};
         bench batch adds "seed", unused

porep_id and api_version are those the sector was sealed under where they
are not its registered proof's (another chain's: registered.porep_config);
the vanilla proofs, the replica id and the public inputs are checked under
them.

The file or bytes hold rust-fil-proofs' SealCommitPhase1Output as JSON, or
curio's wrapper {"SectorNum", "SectorSize", "Phase1Out": base64 of that JSON}.
RegisteredSealProof 0-4 are the V1 proofs, 5-9 V1_1; 10-14 (synthetic
PoRep) and later are refused. The output is refused (VanillaProofError
naming the field) unless its registered proof and sector size are the
payload's, it has the job's partitions and each its challenges, and every
vanilla proof verifies (vanilla.verify; with the prover and sector ids, the
replica id too).
"""
from __future__ import annotations

import base64
import binascii
import collections
import hashlib
import json
import os
import threading
from dataclasses import dataclass

from porep_prover.errors import InvalidInputError, VanillaProofError

from . import c1_json, vanilla
from .proofs import C1Output
from .registered import REGISTERED, PorepConfig, SealProof, porep_config

U64 = (1 << 64) - 1
BY_NUMBER = {p.number: p for p in REGISTERED.values()}
WRAPPER = ("SectorNum", "SectorSize", "Phase1Out")
CONFIG_KEYS = {"porep_id", "api_version"}
DAEMON_KEYS = {"vanilla_proof", "registered_proof", "sector_size", "sector_number", "miner_id"} | CONFIG_KEYS
API_KEYS = {"c1", "registered_proof", "sector_size", "prover_id", "sector_id", "miner_id", "params", "seed"} \
    | CONFIG_KEYS
KEEP_OUTPUTS = 4


def prover_id_of(miner_id: int) -> bytes:
    """filecoin-ffi's prover id of a miner: its ID address's payload (the actor id
    as an unsigned LEB128 varint), zero-padded to 32 bytes."""
    out, v = bytearray(), miner_id
    while True:
        out.append(v & 0x7F | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out) + bytes(32 - len(out))


def keys_checked(obj, allowed: set[str] | frozenset[str], kind: str, module: str) -> dict:
    """obj, a job of kind's payload dict with no key outside allowed;
    InvalidInputError naming the type or the unknown keys (and module, where
    the keys are documented) otherwise."""
    if not isinstance(obj, dict):
        raise InvalidInputError(f"a {kind} job's payload is a dict, got {type(obj).__name__}")
    unknown = sorted(set(obj) - allowed, key=str)
    if unknown:
        raise InvalidInputError(f"{kind} payload: unknown keys {', '.join(map(str, unknown))} (see {module})")
    return obj


def uint_of(obj: dict, key: str, high: int = U64, what: str = "porep payload") -> int | None:
    """obj[key], an integer from 0 to high, or None when absent; InvalidInputError naming it (in what) otherwise."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise InvalidInputError(f"{what}: {key} must be an integer from 0 to {high}, got {value!r:.60}")
    return value


def seal_proof_of(value) -> SealProof:
    """A registered seal proof from its RegisteredSealProof number or its name."""
    if isinstance(value, str) and value in REGISTERED:
        return REGISTERED[value]
    if isinstance(value, int) and not isinstance(value, bool) and value in BY_NUMBER:
        return BY_NUMBER[value]
    raise InvalidInputError(f"porep payload: registered_proof {value!r:.60} is not a registered seal proof served "
                            f"here (0-4: V1, 5-9: V1_1; synthetic and non-interactive PoRep are not)")


def _size_proof(size: int) -> SealProof:
    for p in REGISTERED.values():
        if p.sector_size == size and p.api_v11:
            return p
    raise InvalidInputError(f"porep payload: sector_size {size} is not a sector size "
                            f"({', '.join(str(p.sector_size) for p in REGISTERED.values() if p.api_v11)})")


@dataclass(frozen=True)
class Payload:
    """A payload read: the registered proof (for a preload, the V1_1 one of its
    size: V1 and V1_1 partitions share their circuit), the output's source (None
    for a preload), the prover and sector ids when given, a parameters file,
    the porep_id and API version the sector was sealed under."""
    proof: SealProof
    source: object
    prover_id: bytes | None
    sector_id: int | None
    params: str | None
    config: PorepConfig

    @classmethod
    def of(cls, obj) -> "Payload":
        """From a payload dict (any of the forms above); InvalidInputError naming what is wrong."""
        daemon = isinstance(obj, dict) and "vanilla_proof" in obj
        keys_checked(obj, DAEMON_KEYS if daemon else API_KEYS, "porep", "porep_prover_porep.payload")
        source = obj.get("vanilla_proof" if daemon else "c1")
        size = uint_of(obj, "sector_size")
        proof = seal_proof_of(obj["registered_proof"]) if obj.get("registered_proof") is not None else None
        if proof is None:
            if source is None and size is None:
                raise InvalidInputError("porep payload: c1 (or vanilla_proof), or sector_size for a preload")
            proof = _size_proof(size) if size is not None and source is None else None
        if proof is not None and size not in (None, 0, proof.sector_size):
            raise InvalidInputError(f"porep payload: sector_size {size} is not {proof.name}'s "
                                    f"({proof.sector_size})")
        if source is None and (set(obj) - {"sector_size", "registered_proof", "params", "seed"}):
            raise InvalidInputError("porep payload: a preload's names sector_size (registered_proof, params) alone")
        proof = proof or _proof_of_source(source)
        try:
            config = porep_config(proof, obj.get("porep_id"), obj.get("api_version"))
        except InvalidInputError as exc:
            raise InvalidInputError(f"porep payload: {exc}") from None
        return cls(proof, source, _prover_id(obj), _sector_id(obj), _params(obj), config)

    def output(self, partitions: int | None = None) -> C1Output:
        """The commit-phase-1 output, read once and checked (see the module's docstring):
        its registered proof and partitions first, then its vanilla proofs under
        the payload's config."""
        if self.source is None:
            raise InvalidInputError("porep payload: a preload's payload names no commit-phase-1 output")
        c1 = _read(self.source)[1]
        if c1.registered_proof != self.proof.name:
            raise VanillaProofError(f"a {c1.registered_proof} output, {self.proof.name} expected", "registered_proof")
        if partitions is not None and len(c1.vanilla_proofs) != partitions:
            raise VanillaProofError(f"{len(c1.vanilla_proofs)} partitions, the job has {partitions}",
                                    "vanilla_proofs")
        return checked_output(self.source, self.prover_id, self.sector_id, self.config)


def _prover_id(obj: dict) -> bytes | None:
    miner = uint_of(obj, "miner_id")
    given = obj.get("prover_id")
    if given is not None and miner is not None:
        raise InvalidInputError("porep payload: prover_id or miner_id, not both")
    if miner is not None:
        return prover_id_of(miner)
    if given is None:
        return None
    if isinstance(given, str):
        try:
            given = bytes.fromhex(given)
        except ValueError:
            raise InvalidInputError("porep payload: prover_id must be 64 hex digits") from None
    if not isinstance(given, (bytes, bytearray)) or len(given) != 32:
        raise InvalidInputError("porep payload: prover_id must be 32 bytes (64 hex digits)")
    return bytes(given)


def _sector_id(obj: dict) -> int | None:
    number, sector = uint_of(obj, "sector_number"), uint_of(obj, "sector_id")
    return number if number is not None else sector


def _params(obj: dict) -> str | None:
    path = obj.get("params")
    if path is not None and (not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path)):
        raise InvalidInputError(f"porep payload: params must name a parameters file that exists, got {path!r:.80}")
    return os.fspath(path) if path is not None else None


def _proof_of_source(source) -> SealProof:
    return REGISTERED[_read(source)[1].registered_proof]

# ---------------------------------------------------------------- the output


_OUTPUTS: collections.OrderedDict[tuple, tuple[C1Output, set]] = collections.OrderedDict()
_OUTPUTS_LOCK = threading.Lock()
_FILES: collections.OrderedDict[tuple, tuple] = collections.OrderedDict()   # a file as it was read -> its key


def _unwrapped(data: bytes) -> bytes:
    """The SealCommitPhase1Output JSON of curio's wrapper, or data itself."""
    if b'"Phase1Out"' not in data[:512]:
        return data
    try:
        outer = json.loads(data)
    except ValueError as exc:
        raise VanillaProofError(f"not JSON: {exc}") from None
    if not isinstance(outer, dict) or set(outer) != set(WRAPPER) or not isinstance(outer["Phase1Out"], str):
        raise VanillaProofError(f"a wrapper of {', '.join(WRAPPER)} expected")
    try:
        return base64.b64decode(outer["Phase1Out"], validate=True)
    except (binascii.Error, ValueError):
        raise VanillaProofError("not base64", "Phase1Out") from None


def _read(source) -> tuple[tuple, C1Output]:
    """(a key of the source, the output parsed); the parse is cached by that key."""
    if isinstance(source, C1Output):
        key: tuple = ("object", id(source))
        with _OUTPUTS_LOCK:
            if key not in _OUTPUTS:
                _OUTPUTS[key] = (source, set())
                while len(_OUTPUTS) > KEEP_OUTPUTS:
                    _OUTPUTS.popitem(last=False)
        return key, source
    file = None
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        try:
            stat = os.stat(source)
            if stat.st_size > 2 * c1_json.MAX_BYTES:
                raise VanillaProofError(f"{os.fspath(source)}: {stat.st_size} bytes, at most "
                                        f"{2 * c1_json.MAX_BYTES}")
            # a file read before and unchanged since (the same inode, size and time) is not read again: a job's
            # key, each partition's synthesis and its region each ask for the output of tens of megabytes
            file = (os.path.realpath(source), stat.st_ino, stat.st_size, stat.st_mtime_ns)
            with _OUTPUTS_LOCK:
                known = _FILES.get(file)
                if known is not None and known in _OUTPUTS:
                    _OUTPUTS.move_to_end(known)
                    return known, _OUTPUTS[known][0]
            with open(source, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise InvalidInputError(f"porep payload: the commit-phase-1 output cannot be read: {exc}") from None
    else:
        raise InvalidInputError(f"porep payload: c1 is a path, bytes or a C1Output, not {type(source).__name__}")
    key = ("bytes", hashlib.sha256(data).digest())
    with _OUTPUTS_LOCK:
        found = _OUTPUTS.get(key)
    c1 = found[0] if found is not None else c1_json.loads(_unwrapped(data))
    with _OUTPUTS_LOCK:
        if key in _OUTPUTS:
            _OUTPUTS.move_to_end(key)
        else:
            _OUTPUTS[key] = (c1, set())
            while len(_OUTPUTS) > KEEP_OUTPUTS:
                _OUTPUTS.popitem(last=False)
        if file is not None:
            _FILES[file] = key
            while len(_FILES) > 4 * KEEP_OUTPUTS:
                _FILES.popitem(last=False)
    return key, c1


def checked_output(source, prover_id: bytes | None = None, sector_id: int | None = None,
                   config: PorepConfig | None = None) -> C1Output:
    """The output of a source (path, bytes, C1Output) with every vanilla proof
    verified under config (default: its registered proof's porep_id and API
    version; and the replica id, given the ids); each check done once a process."""
    key, c1 = _read(source)
    check = (prover_id, sector_id, config)
    with _OUTPUTS_LOCK:
        done = _OUTPUTS.get(key, (None, set()))[1]
        if check in done:
            return c1
    vanilla.verify(c1, prover_id, sector_id, config)
    with _OUTPUTS_LOCK:
        if key in _OUTPUTS:
            _OUTPUTS[key][1].add(check)
    return c1
