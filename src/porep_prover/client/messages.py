# SPDX-License-Identifier: Apache-2.0
"""The daemon's requests and replies in Python's terms: what the client
checks before it sends (InvalidInputError naming the argument), and the
dataclasses it hands back (proofs decoded and checked, public inputs as ints).
"""
from __future__ import annotations

import dataclasses
import enum
import json
import re
from typing import Any, cast

from ..daemon.v1 import proving_pb2 as pb
from ..errors import InvalidInputError, ProofFormatError, PublicInputsError
from ..field.constants import R
from ..groth16.proof import Proof
from ..groth16.verifier import PreparedVerifyingKey, verify

MAX_PARTITIONS = 65536          # the service's bound (proving.proto)
MAX_LIST_LIMIT = (1 << 32) - 1
_DECIMAL = re.compile(r"[0-9]{1,78}")   # r < 10^78


class Priority(enum.StrEnum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    CRITICAL = "critical"


class JobState(enum.StrEnum):
    UNSPECIFIED = "unspecified"
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED)


class ProofStatus(enum.StrEnum):
    """How an await ended: the job's end, or TIMEOUT (still unfinished when the wait ran out)."""
    UNSPECIFIED = "unspecified"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"


# wire value -> member; an unknown value reads as UNSPECIFIED (a priority as None); an unspecified priority is NORMAL
_PRIORITIES = {pb.Priority.Value(f"PRIORITY_{p.name}"): p for p in Priority}
_PRIORITIES[pb.PRIORITY_UNSPECIFIED] = Priority.NORMAL
_STATES = {pb.JobState.Value(f"JOB_STATE_{s.name}"): s for s in JobState}
_STATUSES = {pb.AwaitProofResponse.Status.Value(s.name): s for s in ProofStatus if s is not ProofStatus.UNSPECIFIED}


def _member(enum_cls, value, what: str, choices):
    """The member of enum_cls named by value (a member, or its name in any case) among choices."""
    try:
        member = enum_cls(value.lower()) if isinstance(value, str) else None
    except ValueError:
        member = None
    if member not in choices:
        raise InvalidInputError(f"{what} is one of {', '.join(choices)}, got {value!r}")
    return member


def priority_value(priority) -> pb.Priority:
    """The wire value of a priority (a Priority or its name, any case)."""
    member = _member(Priority, priority, "a priority", list(Priority))
    # the generated stub types Value() as a bare int: the value is the enum's, which the stub calls pb.Priority
    return cast(pb.Priority, pb.Priority.Value(f"PRIORITY_{member.name}"))


def state_values(states) -> list[pb.JobState]:
    """The wire values of job states (JobState members or their names); None: []."""
    if states is None:
        return []
    choices = [s for s in JobState if s is not JobState.UNSPECIFIED]
    members = [_member(JobState, s, "a job state", choices) for s in ([states] if isinstance(states, str) else states)]
    # as in priority_value: Value() returns the enum's value, typed a bare int by the generated stub
    return [cast(pb.JobState, pb.JobState.Value(f"JOB_STATE_{m.name}")) for m in members]


def payload_bytes(payload) -> bytes:
    """A job's payload (a dict) as the JSON object the service carries."""
    if not isinstance(payload, dict):
        raise InvalidInputError(f"a payload is a dict (a JSON object), got {type(payload).__name__}")
    try:
        return json.dumps(payload, allow_nan=False, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"the payload is not JSON: {exc}") from None


def text_argument(name: str, value, allow_empty: bool = False) -> str:
    """value, a str (non-empty unless allow_empty); InvalidInputError naming the argument otherwise."""
    if not isinstance(value, str) or (not value and not allow_empty):
        raise InvalidInputError(f"{name} must be a {'' if allow_empty else 'non-empty '}string, got {value!r}")
    return value


def submit_request(kind, payload, partitions=1, priority="normal", request_id=None) -> pb.SubmitProofRequest:
    """A SubmitProofRequest, every argument checked (InvalidInputError)."""
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not 1 <= partitions <= MAX_PARTITIONS:
        raise InvalidInputError(f"partitions must be an integer from 1 to {MAX_PARTITIONS}, got {partitions!r}")
    return pb.SubmitProofRequest(kind=text_argument("kind", kind), payload=payload_bytes(payload),
                                 partitions=partitions, priority=priority_value(priority),
                                 request_id=text_argument("request_id", "" if request_id is None else request_id,
                                                          allow_empty=True))


def list_request(states=None, limit=100) -> pb.ListJobsRequest:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidInputError(f"limit must be an integer from 1 to {MAX_LIST_LIMIT}, got {limit!r}")
    return pb.ListJobsRequest(states=state_values(states), limit=limit)


def timeout_ms(seconds: float | None) -> int:
    """An AwaitProof timeout_ms: 0 (until the job ends) for None, else at least 1."""
    return 0 if seconds is None else max(1, round(seconds * 1000))


# ------------------------------------------------------------------ replies


@dataclasses.dataclass(frozen=True)
class Submission:
    job_id: str
    existing: bool          # the request id named a job submitted earlier: nothing new was accepted
    queue_position: int     # jobs accepted before it and not yet finished


@dataclasses.dataclass(frozen=True)
class JobInfo:
    """A job's state and its partitions' progress (counts of partitions)."""
    job_id: str
    request_id: str
    kind: str
    priority: Priority | None
    state: JobState
    partitions: int
    queued: int
    in_flight: int
    proved: int
    failed: int
    submitted_unix_ms: int
    finished_unix_ms: int   # 0 while unfinished
    error_message: str

    @property
    def finished(self) -> bool:
        return self.state.finished

    @classmethod
    def from_message(cls, m: pb.JobStatus) -> "JobInfo":
        return cls(m.job_id, m.request_id, m.kind, _PRIORITIES.get(m.priority),
                   _STATES.get(m.state, JobState.UNSPECIFIED), m.partitions, m.queued, m.in_flight, m.proved,
                   m.failed, m.submitted_unix_ms, m.finished_unix_ms, m.error_message)


@dataclasses.dataclass(frozen=True)
class Timings:
    """Milliseconds, summed over the job's partitions where stages repeat."""
    queue_wait_ms: int
    srs_load_ms: int
    synthesis_ms: int
    gpu_compute_ms: int
    total_ms: int


@dataclasses.dataclass(frozen=True)
class ProofResult:
    """An await's answer. proofs and public_inputs (one entry per partition,
    inputs without the leading one) are filled when status is COMPLETED."""
    job_id: str
    status: ProofStatus
    proofs: list[Proof]
    public_inputs: list[list[int]]
    error_message: str
    timings: Timings
    job: JobInfo | None

    @property
    def ok(self) -> bool:
        return self.status is ProofStatus.COMPLETED

    @property
    def proof_bytes(self) -> bytes:
        """The partitions' proofs concatenated (192 bytes each), as the daemon sent them."""
        return b"".join(p.to_bytes() for p in self.proofs)

    def failed_partitions(self, vk) -> list[int]:
        """The partitions whose proof does not verify under vk (a VerifyingKey
        or PreparedVerifyingKey) with their public inputs; InvalidInputError
        when the inputs do not fit the key."""
        pvk = vk if isinstance(vk, PreparedVerifyingKey) else PreparedVerifyingKey(vk)
        return [i for i, (proof, inputs) in enumerate(zip(self.proofs, self.public_inputs))
                if not verify(pvk, inputs, proof)]

    def verify(self, vk) -> bool:
        """True iff the job completed and every partition's proof verifies under vk."""
        return self.ok and bool(self.proofs) and not self.failed_partitions(vk)

    @classmethod
    def from_message(cls, m: pb.AwaitProofResponse) -> "ProofResult":
        """ProofFormatError / PublicInputsError when a completed job's proofs or
        inputs are malformed or their counts disagree with its partitions."""
        status = _STATUSES.get(m.status, ProofStatus.UNSPECIFIED)
        job = JobInfo.from_message(m.job) if m.HasField("job") else None
        proofs, inputs = [], []
        if status is ProofStatus.COMPLETED:
            try:
                proofs = Proof.split(m.proof)
            except ProofFormatError as exc:
                raise ProofFormatError(f"job {m.job_id}: {exc}") from None
            inputs = [_public_inputs(m.job_id, i, p.values) for i, p in enumerate(m.public_inputs)]
            expected = job.partitions if job is not None and job.partitions else len(proofs)
            if not len(proofs) == len(inputs) == expected:
                raise ProofFormatError(f"job {m.job_id}: {len(proofs)} proofs and {len(inputs)} public input "
                                       f"lists for {expected} partitions")
        timings = Timings(m.queue_wait_ms, m.srs_load_ms, m.synthesis_ms, m.gpu_compute_ms, m.total_ms)
        return cls(m.job_id, status, proofs, inputs, m.error_message, timings, job)


def _public_inputs(job_id: str, partition: int, values) -> list[int]:
    out = []
    for text in values:
        if not _DECIMAL.fullmatch(text) or int(text) >= R:
            raise PublicInputsError(f"job {job_id}, partition {partition}: public input {text[:80]!r} is not "
                                    f"a decimal integer below r")
        out.append(int(text))
    return out


@dataclasses.dataclass(frozen=True)
class Cancellation:
    cancelled: bool         # False: the job had already ended
    was_running: bool


@dataclasses.dataclass(frozen=True)
class Preload:
    srs_key: str
    load_ms: int
    bytes: int
    already_loaded: bool


@dataclasses.dataclass(frozen=True)
class Eviction:
    evicted: bool           # False: unknown, or in use
    bytes_freed: int


def message_dict(message) -> dict:
    """A reply as plain data: every field by its name (defaults included),
    enums by their short lower-case names ("high", "running")."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None:
            convert = message_dict
        elif field.enum_type is not None:
            convert = _enum_name(field.enum_type)
        else:
            convert = None
        if field.is_repeated:
            out[field.name] = [convert(v) if convert else v for v in value]
        else:
            out[field.name] = convert(value) if convert else value
    return out


def _enum_name(enum_type):
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum_type.name).upper() + "_"

    def name(value: int):
        known = enum_type.values_by_number.get(value)
        return known.name.removeprefix(prefix).lower() if known else value
    return name


def status_dict(m: pb.GetStatusResponse) -> dict:
    """GetStatus's reply as plain data; its "json" field parsed under "detail"
    (kept as text when it is not JSON)."""
    out = message_dict(m)
    text = out.pop("json")
    try:
        out["detail"] = json.loads(text) if text else {}
    except ValueError:
        out["detail"] = text
    return out
