from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Priority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PRIORITY_UNSPECIFIED: _ClassVar[Priority]
    PRIORITY_LOW: _ClassVar[Priority]
    PRIORITY_NORMAL: _ClassVar[Priority]
    PRIORITY_HIGH: _ClassVar[Priority]
    PRIORITY_CRITICAL: _ClassVar[Priority]

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    JOB_STATE_QUEUED: _ClassVar[JobState]
    JOB_STATE_RUNNING: _ClassVar[JobState]
    JOB_STATE_COMPLETED: _ClassVar[JobState]
    JOB_STATE_FAILED: _ClassVar[JobState]
    JOB_STATE_CANCELLED: _ClassVar[JobState]
PRIORITY_UNSPECIFIED: Priority
PRIORITY_LOW: Priority
PRIORITY_NORMAL: Priority
PRIORITY_HIGH: Priority
PRIORITY_CRITICAL: Priority
JOB_STATE_UNSPECIFIED: JobState
JOB_STATE_QUEUED: JobState
JOB_STATE_RUNNING: JobState
JOB_STATE_COMPLETED: JobState
JOB_STATE_FAILED: JobState
JOB_STATE_CANCELLED: JobState

class SubmitProofRequest(_message.Message):
    __slots__ = ("request_id", "kind", "partitions", "priority", "payload")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    kind: str
    partitions: int
    priority: Priority
    payload: bytes
    def __init__(self, request_id: _Optional[str] = ..., kind: _Optional[str] = ..., partitions: _Optional[int] = ..., priority: _Optional[_Union[Priority, str]] = ..., payload: _Optional[bytes] = ...) -> None: ...

class SubmitProofResponse(_message.Message):
    __slots__ = ("job_id", "queue_position", "existing")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_POSITION_FIELD_NUMBER: _ClassVar[int]
    EXISTING_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    queue_position: int
    existing: bool
    def __init__(self, job_id: _Optional[str] = ..., queue_position: _Optional[int] = ..., existing: _Optional[bool] = ...) -> None: ...

class AwaitProofRequest(_message.Message):
    __slots__ = ("job_id", "timeout_ms")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    timeout_ms: int
    def __init__(self, job_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class PublicInputs(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...

class AwaitProofResponse(_message.Message):
    __slots__ = ("status", "job_id", "proof", "public_inputs", "error_message", "queue_wait_ms", "srs_load_ms", "synthesis_ms", "gpu_compute_ms", "total_ms", "job")
    class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATUS_UNSPECIFIED: _ClassVar[AwaitProofResponse.Status]
        COMPLETED: _ClassVar[AwaitProofResponse.Status]
        FAILED: _ClassVar[AwaitProofResponse.Status]
        CANCELLED: _ClassVar[AwaitProofResponse.Status]
        TIMEOUT: _ClassVar[AwaitProofResponse.Status]
    STATUS_UNSPECIFIED: AwaitProofResponse.Status
    COMPLETED: AwaitProofResponse.Status
    FAILED: AwaitProofResponse.Status
    CANCELLED: AwaitProofResponse.Status
    TIMEOUT: AwaitProofResponse.Status
    STATUS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PROOF_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_INPUTS_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    QUEUE_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    SRS_LOAD_MS_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIS_MS_FIELD_NUMBER: _ClassVar[int]
    GPU_COMPUTE_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    status: AwaitProofResponse.Status
    job_id: str
    proof: bytes
    public_inputs: _containers.RepeatedCompositeFieldContainer[PublicInputs]
    error_message: str
    queue_wait_ms: int
    srs_load_ms: int
    synthesis_ms: int
    gpu_compute_ms: int
    total_ms: int
    job: JobStatus
    def __init__(self, status: _Optional[_Union[AwaitProofResponse.Status, str]] = ..., job_id: _Optional[str] = ..., proof: _Optional[bytes] = ..., public_inputs: _Optional[_Iterable[_Union[PublicInputs, _Mapping]]] = ..., error_message: _Optional[str] = ..., queue_wait_ms: _Optional[int] = ..., srs_load_ms: _Optional[int] = ..., synthesis_ms: _Optional[int] = ..., gpu_compute_ms: _Optional[int] = ..., total_ms: _Optional[int] = ..., job: _Optional[_Union[JobStatus, _Mapping]] = ...) -> None: ...

class ProveRequest(_message.Message):
    __slots__ = ("submit", "timeout_ms")
    SUBMIT_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    submit: SubmitProofRequest
    timeout_ms: int
    def __init__(self, submit: _Optional[_Union[SubmitProofRequest, _Mapping]] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class CancelProofRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class CancelProofResponse(_message.Message):
    __slots__ = ("cancelled", "was_running")
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    WAS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    cancelled: bool
    was_running: bool
    def __init__(self, cancelled: _Optional[bool] = ..., was_running: _Optional[bool] = ...) -> None: ...

class JobStatus(_message.Message):
    __slots__ = ("job_id", "request_id", "kind", "priority", "state", "partitions", "queued", "in_flight", "proved", "failed", "submitted_unix_ms", "finished_unix_ms", "error_message")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    PROVED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    request_id: str
    kind: str
    priority: Priority
    state: JobState
    partitions: int
    queued: int
    in_flight: int
    proved: int
    failed: int
    submitted_unix_ms: int
    finished_unix_ms: int
    error_message: str
    def __init__(self, job_id: _Optional[str] = ..., request_id: _Optional[str] = ..., kind: _Optional[str] = ..., priority: _Optional[_Union[Priority, str]] = ..., state: _Optional[_Union[JobState, str]] = ..., partitions: _Optional[int] = ..., queued: _Optional[int] = ..., in_flight: _Optional[int] = ..., proved: _Optional[int] = ..., failed: _Optional[int] = ..., submitted_unix_ms: _Optional[int] = ..., finished_unix_ms: _Optional[int] = ..., error_message: _Optional[str] = ...) -> None: ...

class GetJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("states", "limit")
    STATES_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedScalarFieldContainer[JobState]
    limit: int
    def __init__(self, states: _Optional[_Iterable[_Union[JobState, str]]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListJobsResponse(_message.Message):
    __slots__ = ("jobs",)
    JOBS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[JobStatus]
    def __init__(self, jobs: _Optional[_Iterable[_Union[JobStatus, _Mapping]]] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeviceStatus(_message.Message):
    __slots__ = ("label", "kind", "name", "memory_total_bytes", "memory_free_bytes", "workers")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FREE_BYTES_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    label: str
    kind: str
    name: str
    memory_total_bytes: int
    memory_free_bytes: int
    workers: int
    def __init__(self, label: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ..., memory_total_bytes: _Optional[int] = ..., memory_free_bytes: _Optional[int] = ..., workers: _Optional[int] = ...) -> None: ...

class SrsStatus(_message.Message):
    __slots__ = ("key", "bytes", "leases", "loads")
    KEY_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    LEASES_FIELD_NUMBER: _ClassVar[int]
    LOADS_FIELD_NUMBER: _ClassVar[int]
    key: str
    bytes: int
    leases: int
    loads: int
    def __init__(self, key: _Optional[str] = ..., bytes: _Optional[int] = ..., leases: _Optional[int] = ..., loads: _Optional[int] = ...) -> None: ...

class QueueStatus(_message.Message):
    __slots__ = ("priority", "jobs")
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    priority: Priority
    jobs: int
    def __init__(self, priority: _Optional[_Union[Priority, str]] = ..., jobs: _Optional[int] = ...) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("version", "uptime_seconds", "devices", "srs", "queues", "jobs_running", "proofs_completed", "proofs_failed", "memory_in_flight_bytes", "memory_budget_bytes", "accepting", "json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UPTIME_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    SRS_FIELD_NUMBER: _ClassVar[int]
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    JOBS_RUNNING_FIELD_NUMBER: _ClassVar[int]
    PROOFS_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    PROOFS_FAILED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_IN_FLIGHT_BYTES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BUDGET_BYTES_FIELD_NUMBER: _ClassVar[int]
    ACCEPTING_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    version: str
    uptime_seconds: int
    devices: _containers.RepeatedCompositeFieldContainer[DeviceStatus]
    srs: _containers.RepeatedCompositeFieldContainer[SrsStatus]
    queues: _containers.RepeatedCompositeFieldContainer[QueueStatus]
    jobs_running: int
    proofs_completed: int
    proofs_failed: int
    memory_in_flight_bytes: int
    memory_budget_bytes: int
    accepting: bool
    json: str
    def __init__(self, version: _Optional[str] = ..., uptime_seconds: _Optional[int] = ..., devices: _Optional[_Iterable[_Union[DeviceStatus, _Mapping]]] = ..., srs: _Optional[_Iterable[_Union[SrsStatus, _Mapping]]] = ..., queues: _Optional[_Iterable[_Union[QueueStatus, _Mapping]]] = ..., jobs_running: _Optional[int] = ..., proofs_completed: _Optional[int] = ..., proofs_failed: _Optional[int] = ..., memory_in_flight_bytes: _Optional[int] = ..., memory_budget_bytes: _Optional[int] = ..., accepting: _Optional[bool] = ..., json: _Optional[str] = ...) -> None: ...

class GetMetricsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetMetricsResponse(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class PreloadSRSRequest(_message.Message):
    __slots__ = ("kind", "payload")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    kind: str
    payload: bytes
    def __init__(self, kind: _Optional[str] = ..., payload: _Optional[bytes] = ...) -> None: ...

class PreloadSRSResponse(_message.Message):
    __slots__ = ("srs_key", "load_ms", "bytes", "already_loaded")
    SRS_KEY_FIELD_NUMBER: _ClassVar[int]
    LOAD_MS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    ALREADY_LOADED_FIELD_NUMBER: _ClassVar[int]
    srs_key: str
    load_ms: int
    bytes: int
    already_loaded: bool
    def __init__(self, srs_key: _Optional[str] = ..., load_ms: _Optional[int] = ..., bytes: _Optional[int] = ..., already_loaded: _Optional[bool] = ...) -> None: ...

class EvictSRSRequest(_message.Message):
    __slots__ = ("srs_key",)
    SRS_KEY_FIELD_NUMBER: _ClassVar[int]
    srs_key: str
    def __init__(self, srs_key: _Optional[str] = ...) -> None: ...

class EvictSRSResponse(_message.Message):
    __slots__ = ("evicted", "bytes_freed")
    EVICTED_FIELD_NUMBER: _ClassVar[int]
    BYTES_FREED_FIELD_NUMBER: _ClassVar[int]
    evicted: bool
    bytes_freed: int
    def __init__(self, evicted: _Optional[bool] = ..., bytes_freed: _Optional[int] = ...) -> None: ...
