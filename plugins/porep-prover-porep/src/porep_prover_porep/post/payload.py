# SPDX-License-Identifier: Apache-2.0
"""A PoSt job's payload (kinds winning-post and window-post), and the
vanilla proofs it carries, checked before anything is synthesized.

Payloads, every key checked (InvalidInputError naming it):

    the daemon's (a cuzk WINNING_POST or WINDOW_POST_PARTITION request):
        {"vanilla_proofs": PATH, "registered_proof": N, "sector_size": BYTES (0: the proof's),
         "randomness": HEX, "partition_index": N, "sector_number": N, "miner_id": N}
    a preload's (PreloadSRS, EvictSRS):  {"sector_size": BYTES}
    the Python API's and bench batch's: the same, with vanilla_proofs also as
        bytes (the file's content) or a list of FallbackPoStSectorProofs'
        bytes, randomness also as 32 bytes, registered_proof also as a name,
        and "params" (a .params file); bench batch adds "seed", unused

The file (or bytes) holds the request's vanilla proofs as bincode writes a
Vec<Vec<u8>> (bincode.write_list), each a FallbackPoStSectorProof as
filecoin-proofs-api serializes it: a WinningPoSt's one (its sector's 66
challenges), a WindowPoSt partition's one a sector (1 to the proof's
sector count; fewer are padded as Filecoin pads them). sector_number and
miner_id are taken and not used: nothing of a PoSt's circuit depends on
them (the sector ids travel in the vanilla proofs). The vanilla proofs are
read and verified (vanilla.verify) once a process for each randomness and
partition: VanillaProofError naming the field.
"""
from __future__ import annotations

import collections
import hashlib
import os
import threading
from dataclasses import dataclass

from porep_prover.errors import InvalidInputError, VanillaProofError

from ..payload import keys_checked, uint_of
from . import bincode, vanilla
from .bincode import FallbackSectorProof
from .challenges import public_inputs, randomness_of
from .registered import REGISTERED_POST, PoStProof, post_proof

MAX_FILE_BYTES = 256 << 20      # a full 32 GiB WindowPoSt partition's proofs are ~59 MB
KEYS = {"vanilla_proofs", "registered_proof", "sector_size", "randomness", "partition_index", "sector_number",
        "miner_id", "params", "seed"}
PRELOAD_KEYS = {"sector_size", "registered_proof", "params", "seed"}
KEEP_READ = 4


def _uint(obj: dict, key: str) -> int | None:
    return uint_of(obj, key, what="PoSt payload")


def _randomness(value) -> bytes:
    if isinstance(value, str):
        try:
            value = bytes.fromhex(value)
        except ValueError:
            raise InvalidInputError("PoSt payload: randomness must be 64 hex digits") from None
    try:
        return randomness_of(value)
    except InvalidInputError as exc:
        raise InvalidInputError(f"PoSt payload: {exc}") from None


def _proof_of(kind: str, obj: dict) -> PoStProof:
    size = _uint(obj, "sector_size")
    given = obj.get("registered_proof")
    if given is not None:
        proof = post_proof(given, kind)
        if size not in (None, 0, proof.sector_size):
            raise InvalidInputError(f"PoSt payload: sector_size {size} is not {proof.name}'s ({proof.sector_size})")
        return proof
    for proof in REGISTERED_POST.values():
        if proof.kind == kind and proof.sector_size == size:
            return proof
    raise InvalidInputError(f"PoSt payload: registered_proof, or a sector_size of a {kind} PoSt proof "
                            f"({', '.join(str(p.sector_size) for p in REGISTERED_POST.values() if p.kind == kind)})")


@dataclass(frozen=True)
class PostPayload:
    """A payload read: the registered proof (for a preload, the first of its
    kind and size: they share their circuit), the vanilla proofs' source
    (None for a preload), the randomness, the partition, a parameters file."""
    proof: PoStProof
    source: object
    randomness: bytes | None
    partition: int
    params: str | None

    @classmethod
    def of(cls, obj, kind: str) -> "PostPayload":
        """From a payload dict of a job of kind ("winning" or "window");
        InvalidInputError naming what is wrong."""
        keys_checked(obj, KEYS, "PoSt", "porep_prover_porep.post.payload")
        proof = _proof_of(kind, obj)
        params = obj.get("params")
        if params is not None and (not isinstance(params, (str, os.PathLike)) or not os.path.isfile(params)):
            raise InvalidInputError(f"PoSt payload: params must name a parameters file that exists, got "
                                    f"{params!r:.80}")
        params = os.fspath(params) if params is not None else None
        source = obj.get("vanilla_proofs")
        if source is None:
            if set(obj) - PRELOAD_KEYS:
                raise InvalidInputError("PoSt payload: vanilla_proofs, or a preload's sector_size (registered_proof, "
                                        "params) alone")
            return cls(proof, None, None, 0, params)
        partition = _uint(obj, "partition_index") or 0
        if proof.kind == "winning" and partition:
            raise InvalidInputError(f"PoSt payload: a WinningPoSt has one partition, not partition_index {partition}")
        if obj.get("randomness") is None:
            raise InvalidInputError("PoSt payload: randomness (32 bytes, 64 hex digits) is needed")
        return cls(proof, source, _randomness(obj["randomness"]), partition, params)

    def sector_proofs(self) -> list[FallbackSectorProof]:
        """The vanilla proofs, read and verified once a process (see the module)."""
        if self.source is None:
            raise InvalidInputError("PoSt payload: a preload's payload carries no vanilla proofs")
        return _checked(self.source, self.proof, self.randomness, self.partition)     # type: ignore[arg-type]

    def public_inputs(self) -> list[int]:
        """The partition's public inputs as a verifier computes them from the
        sectors' ids and comm_r's (which the vanilla proofs carry), the
        randomness and the partition."""
        sectors = [(sp.sector_id, int.from_bytes(sp.comm_r, "little")) for sp in self.sector_proofs()]
        return public_inputs(self.proof, self.randomness, sectors, self.partition)    # type: ignore[arg-type]


_READ: collections.OrderedDict[tuple, list[FallbackSectorProof]] = collections.OrderedDict()
_READ_LOCK = threading.Lock()


def vanilla_items(source, what: str = "PoSt payload") -> list[bytes]:
    """The vanilla proofs' byte strings of source: a list of 1 to 65,536 byte
    strings, bincode bytes, or a file of them (at most MAX_FILE_BYTES, its size
    checked before it is read). VanillaProofError for a list or bincode that
    does not fit; InvalidInputError, starting with what, for a file that
    cannot be read or a source of another type."""
    if isinstance(source, (list, tuple)):
        if not 1 <= len(source) <= 1 << 16 or not all(isinstance(x, (bytes, bytearray)) for x in source):
            raise VanillaProofError("a list of 1 to 65536 byte strings expected", "vanilla_proofs")
        return [bytes(x) for x in source]
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bincode.read_list(bytes(source))
    if isinstance(source, (str, os.PathLike)):
        try:
            size = os.path.getsize(source)
            if size > MAX_FILE_BYTES:
                raise VanillaProofError(f"{os.fspath(source)}: {size} bytes, at most {MAX_FILE_BYTES}",
                                        "vanilla_proofs")
            with open(source, "rb") as f:
                return bincode.read_list(f.read())
        except OSError as exc:
            raise InvalidInputError(f"{what}: the vanilla proofs cannot be read: {exc}") from None
    raise InvalidInputError(f"{what}: vanilla_proofs is a path, bytes or a list of bytes, not "
                            f"{type(source).__name__}")


def _checked(source, proof: PoStProof, randomness: bytes, partition: int) -> list[FallbackSectorProof]:
    items = vanilla_items(source)
    key = (hashlib.sha256(b"".join(hashlib.sha256(x).digest() for x in items)).digest(), proof.name, randomness,
           partition)
    with _READ_LOCK:
        if key in _READ:
            _READ.move_to_end(key)
            return _READ[key]
    most = 1 if proof.kind == "winning" else proof.sector_count
    if not 1 <= len(items) <= most:
        raise VanillaProofError(f"{len(items)} sectors' vanilla proofs, a {proof.name} partition takes "
                                f"{'1' if most == 1 else f'1 to {most}'}", "vanilla_proofs")
    proofs = [bincode.read(x, proof, f"vanilla_proofs[{i}]") for i, x in enumerate(items)]
    vanilla.verify(proof, proofs, randomness, partition)
    with _READ_LOCK:
        _READ[key] = proofs
        while len(_READ) > KEEP_READ:
            _READ.popitem(last=False)
    return proofs
