# SPDX-License-Identifier: Apache-2.0
"""A cuzk.v1 request in the daemon's terms: the job a SubmitProofRequest
becomes (its kind, partitions, priority and JSON payload), the circuit a
PreloadSRS or EvictSRS names, and the inbox the vanilla proofs are written
to (the package's docstring states the contract).

    job = wire_job(request)                      checked: InvalidInputError saying what is wrong
    served(job.kind, proof_kind, jobs)           Refusal UNIMPLEMENTED when no provider serves the kind
    with inbox.holding(job.data) as path:
        jobs.submit(job.kind, job.partitions, job.priority, job.payload_json(path), request.request_id)
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import struct
import threading
import time

import grpc

from ...atomic import atomic_write, remove_stale
from ...engine.jobs import KIND_PRIORITIES
from ...errors import InvalidInputError
from ..service import MAX_ID_CHARS, Refusal
from . import proving_pb2 as pb

LOG = logging.getLogger("porep_prover.daemon")
KINDS = {pb.POREP_SEAL_COMMIT: "porep", pb.SNAP_DEALS_UPDATE: "snap-update",
         pb.WINDOW_POST_PARTITION: "window-post", pb.WINNING_POST: "winning-post"}
# the reference engine's names of the job kinds: in GetStatus's queues, and the metrics' proof_kind label
# (with "_" for "-"), as it names its proof kinds
QUEUE_NAMES = {"porep": "porep-c2", "snap-update": "snap-update", "window-post": "window-post",
               "winning-post": "winning-post"}
CIRCUITS = {"porep": "porep", "snap": "snap-update", "wpost": "window-post", "winning": "winning-post"}
SECTOR_SIZES = {"2k": 2 << 10, "8m": 8 << 20, "512m": 512 << 20, "32g": 32 << 30, "64g": 64 << 30}
# RegisteredSealProof 0-14: V1, V1_1, V1_1 with synthetic PoRep, each for the sizes above in that order;
# 15-19, non-interactive PoRep, have partition counts of their own, which this wire does not know
SEAL_PROOF_SIZES = tuple(SECTOR_SIZES.values()) * 3
POREP_PARTITIONS = {2 << 10: 1, 8 << 20: 1, 512 << 20: 1, 32 << 30: 10, 64 << 30: 10}    # filecoin-proofs'
NON_INTERACTIVE = range(15, 20)
MAX_FIELD_BYTES = 256        # randomness and each commitment (raw, or a CID's bytes)
CIRCUIT_ID = re.compile(f"({'|'.join(CIRCUITS)})-({'|'.join(SECTOR_SIZES)})")
INBOX_NAME = re.compile(r"([0-9a-f]{64}\.vanilla)(\.tmp\d+)?")      # a file, or atomic_write's temporary
SWEEP_SECONDS = 60.0         # the inbox is swept this often at most (at a submit)


def proof_kind_name(number: int) -> str:
    return pb.ProofKind.Name(number) if number in pb.ProofKind.values() else str(number)


@dataclasses.dataclass(frozen=True)
class WireJob:
    """The daemon job of a SubmitProofRequest: its kind, partitions,
    priority (the daemon's number), payload less the path of the inbox
    file, the key that path goes under and the file's bytes (data)."""
    kind: str
    partitions: int
    priority: int
    fields: dict
    inbox_key: str = "vanilla_proof"
    data: bytes = b""

    def payload_json(self, path: str) -> bytes:
        """The job's payload: the fields and the path of the file holding the vanilla proof(s)."""
        return json.dumps({self.inbox_key: path, **self.fields}, separators=(",", ":")).encode()


def vanilla_list(items) -> bytes:
    """A request's vanilla_proofs in one file, as bincode writes a Vec<Vec<u8>>
    (u64 little-endian count, then each one's u64 length and bytes): the form
    the providers of the other kinds read."""
    return struct.pack("<Q", len(items)) + b"".join(struct.pack("<Q", len(x)) + bytes(x) for x in items)


def wire_job(request: pb.SubmitProofRequest) -> WireJob:
    """The job request becomes. InvalidInputError naming the field: a proof
    kind or priority this interface does not define, a registered seal proof
    that is none (or non-interactive), a sector size that is not its, no
    vanilla proof, a request_id, randomness or commitment past its limit."""
    if request.proof_kind not in KINDS:
        raise InvalidInputError(f"invalid proof_kind: {request.proof_kind} (one of "
                                f"{', '.join(f'{pb.ProofKind.Name(k)} = {k}' for k in KINDS)})")
    kind = KINDS[request.proof_kind]
    if len(request.request_id) > MAX_ID_CHARS:
        raise InvalidInputError(f"request_id of {len(request.request_id)} characters: at most {MAX_ID_CHARS}")
    priority = request.priority or KIND_PRIORITIES.get(kind, pb.NORMAL)      # the reference engine's defaults
    if priority not in pb.Priority.values():
        raise InvalidInputError(f"priority {request.priority} is not one of LOW, NORMAL, HIGH, CRITICAL "
                                "(1 to 4; 0: the proof kind's)")
    fields = {"registered_proof": request.registered_proof, "sector_size": request.sector_size,
              "sector_number": request.sector_number, "miner_id": request.miner_id}
    if kind == "porep":
        if not request.vanilla_proof:
            raise InvalidInputError("vanilla_proof is empty: a POREP_SEAL_COMMIT request carries its "
                                    "commit-phase-1 output")
        size = _seal_proof_size(request.registered_proof, request.sector_size)
        return WireJob(kind, POREP_PARTITIONS[size], priority, {**fields, "sector_size": size},
                       data=request.vanilla_proof)
    proofs = list(request.vanilla_proofs) or ([request.vanilla_proof] if request.vanilla_proof else [])
    if not proofs or not all(proofs):
        raise InvalidInputError(f"vanilla_proofs is empty or holds an empty proof: a "
                                f"{proof_kind_name(request.proof_kind)} request carries its vanilla proofs (field "
                                "11; a single one also in vanilla_proof)")
    names = ("comm_r_old", "comm_r_new", "comm_d_new") if kind == "snap-update" else ("randomness",)
    for name in names:
        value = getattr(request, name)
        if len(value) > MAX_FIELD_BYTES:
            raise InvalidInputError(f"{name} of {len(value)} bytes: at most {MAX_FIELD_BYTES}")
        fields[name] = value.hex()
    if kind != "snap-update":
        fields["partition_index"] = request.partition_index
    return WireJob(kind, _partitions(kind, request.sector_size, request.registered_proof), priority, fields,
                   "vanilla_proofs", vanilla_list(proofs))


def _seal_proof_size(registered_proof: int, sector_size: int) -> int:
    """The sector size of a RegisteredSealProof number, checked against sector_size (0: not given)."""
    if registered_proof in NON_INTERACTIVE:
        raise InvalidInputError(f"registered_proof {registered_proof} is a non-interactive PoRep, which this "
                                "daemon's reference wire does not serve")
    if registered_proof >= len(SEAL_PROOF_SIZES):
        raise InvalidInputError(f"registered_proof {registered_proof} is no RegisteredSealProof (0 to "
                                f"{len(SEAL_PROOF_SIZES) - 1} are served)")
    size = SEAL_PROOF_SIZES[registered_proof]
    if sector_size not in (0, size):
        raise InvalidInputError(f"sector_size {sector_size} is not registered_proof {registered_proof}'s ({size})")
    return size


def _partitions(kind: str, sector_size: int, registered_proof: int) -> int:
    """A SnapDeals proof's partitions by its sector size (storage-proofs-update's
    partition_count; sector_size 0: its RegisteredUpdateProof's, 0 to 4 for the
    sizes in order); one proof of a WindowPoSt partition or a WinningPoSt."""
    if kind != "snap-update":
        return 1
    if sector_size == 0 and registered_proof < len(SECTOR_SIZES):
        sector_size = tuple(SECTOR_SIZES.values())[registered_proof]
    if sector_size not in SECTOR_SIZES.values():
        raise InvalidInputError(f"sector_size {sector_size} is not a sector size "
                                f"({', '.join(map(str, SECTOR_SIZES.values()))})")
    return 1 if sector_size <= 8 << 10 else 4 if sector_size <= 16 << 20 else 16


def circuit(circuit_id: str) -> tuple[str, dict]:
    """(job kind, the preload payload {"sector_size": BYTES}) of a circuit id
    such as "porep-32g"; InvalidInputError for one of another form."""
    match = CIRCUIT_ID.fullmatch(circuit_id)
    if match is None:
        raise InvalidInputError(f"circuit_id {circuit_id[:MAX_ID_CHARS]!r} is not KIND-SIZE (KIND: "
                                f"{', '.join(CIRCUITS)}; SIZE: {', '.join(SECTOR_SIZES)}; e.g. porep-32g)")
    return CIRCUITS[match[1]], {"sector_size": SECTOR_SIZES[match[2]]}


def circuit_ids() -> list[tuple[str, str, dict]]:
    """Every circuit id with its job kind and preload payload."""
    return [(f"{prefix}-{size}", kind, {"sector_size": SECTOR_SIZES[size]})
            for prefix, kind in CIRCUITS.items() for size in SECTOR_SIZES]


def served(kind: str, what: str, jobs) -> None:
    """Refusal UNIMPLEMENTED naming what (a proof kind or circuit) and kind
    when the daemon's job book (jobs) takes no job of kind."""
    accepted = jobs.kinds()
    if kind in accepted:
        return
    why = "left out of daemon.kinds" if kind in jobs.registry.providers else "no synthesis provider serves it"
    raise Refusal(grpc.StatusCode.UNIMPLEMENTED, f"{what} (job kind {kind!r}) is not served by this daemon: {why} "
                                                 f"(served: {', '.join(accepted) or 'none'})")


class Inbox:
    """The vanilla proofs of the jobs the wire accepted, in folder (made,
    mode 0700): one file each, named by the SHA-256 of its bytes
    (<hex>.vanilla, mode 0600), on disk before its job is journaled, removed
    once no unfinished job of journal names it and no submit holds it."""

    def __init__(self, folder: str, journal):
        self.folder, self.journal = folder, journal
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
        self._held: collections.Counter[str] = collections.Counter()
        self._writing: dict[str, threading.Lock] = {}     # a file's writer, while a submit holds it
        self._lock = threading.Lock()
        self._swept = 0.0
        self.sweep_seconds = SWEEP_SECONDS

    @contextlib.contextmanager
    def holding(self, data: bytes):
        """The path of a file holding data, kept for the block (a submit
        journals its job in it); the inbox is swept after, at most every
        sweep_seconds. OSError when it cannot be written."""
        name = hashlib.sha256(data).hexdigest() + ".vanilla"
        path = os.path.join(self.folder, name)
        with self._lock:
            self._held[name] += 1
            writing = self._writing.setdefault(name, threading.Lock())
        try:
            with writing:                     # two submits of the same bytes write one file, once
                if not os.path.isfile(path):  # written whole or not at all: one there is the same bytes
                    with atomic_write(path, fsync=True) as f:
                        os.fchmod(f.fileno(), 0o600)
                        f.write(data)
            yield path
        finally:
            with self._lock:
                self._held[name] -= 1
                if not self._held[name]:
                    del self._held[name], self._writing[name]
        if time.monotonic() - self._swept >= self.sweep_seconds:
            self.sweep()

    def sweep(self) -> list[str]:
        """Remove the files no unfinished job names and no submit holds; returns their names."""
        removed = []
        with self._lock:
            self._swept = time.monotonic()
            named = "\n".join(record.payload for record in self.journal.unfinished())
            for name in os.listdir(self.folder):
                match = INBOX_NAME.fullmatch(name)
                if match is None or match[1] in self._held:
                    continue
                if match[2]:                  # a writer's temporary: removed once its process has gone
                    removed += [os.path.basename(p) for p in remove_stale(os.path.join(self.folder, match[1]))]
                elif name not in named:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(os.path.join(self.folder, name))
                        removed.append(name)
        if removed:
            LOG.info("removed %d vanilla proofs no unfinished job names from %s", len(removed), self.folder)
        return removed
