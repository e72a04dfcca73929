# SPDX-License-Identifier: Apache-2.0
"""Jobs, their handles (sync and asyncio futures) and their results."""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import itertools
import uuid
from typing import TYPE_CHECKING, Any, Callable, Generator, Protocol

from ..backend.stop import StopFlag
from ..errors import InvalidInputError, JobCancelledError

if TYPE_CHECKING:
    from ..groth16.proof import Proof

_SEQ = itertools.count()
MAX_PARTITIONS = 1 << 16           # a job's partitions (a 32 GiB PoRep has 10)
# the priority of a job of these kinds submitted with none (0; the wires' PRIORITY_UNSPECIFIED), on the daemons'
# scale (LOW 1, NORMAL 2, HIGH 3, CRITICAL 4): a WinningPoSt must end inside its epoch, a WindowPoSt within its deadline
KIND_PRIORITIES = {"winning-post": 4, "window-post": 3}
MAX_TIMEOUT_SECONDS = 365 * 86400.0


def check_timeout(timeout: object) -> float | None:
    """A wait's timeout: None (no limit) or a number of seconds from 0 to
    MAX_TIMEOUT_SECONDS (NaN and infinities refused); InvalidInputError saying so."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or \
            not 0 <= timeout <= MAX_TIMEOUT_SECONDS:
        raise InvalidInputError(f"timeout must be None or seconds from 0 to {MAX_TIMEOUT_SECONDS:.0f}, "
                                f"got {timeout!r}")
    return float(timeout)


@dataclasses.dataclass
class Job:
    """Work for the engine: `partitions` independent proofs of one circuit.

    kind: picks the synthesis provider (e.g. "inline", "r1cs-file").
    priority: larger runs earlier under a priority scheduler; 0 (the
        default): the kind's (KIND_PRIORITIES: CRITICAL, 4, for a
        winning-post job, HIGH, 3, for a window-post one), else 0.
    payload: the provider's input (what to synthesize).
    only: the partitions to prove (indices from 0 to partitions - 1, at least
        one); None: every one. The others are taken as proved elsewhere
        (a job resumed after a restart): its result holds None in their place.
    on_partition: called with a PartitionResult as each partition is proved
        (and verified), before the job concludes, on an engine worker's
        thread: keep it short. An exception it raises fails that partition
        like any failure (tried again while its retries last), so a proof
        the callback could not keep is made again.
    ended: False until the job concludes (proved, failed or cancelled). A
        provider's load_srs making parameters for it may look at it between
        steps and stop, raising JobCancelledError (raise_if_ended): a job cancelled while its
        parameters are made costs no more of them (another job needing the
        same parameters loads them again itself).
    stop: the flag `ended` reads, which the work for the job reads too
        without the GIL (backend.stop): the engine runs a partition's
        kernel region in its scope (the host's kernels stop between their
        tasks), and a provider may hand stop.array to native code of its own.
    InvalidInputError when partitions, kind or only are out of range.
    """
    kind: str
    partitions: int
    payload: Any = None
    priority: int = 0
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:12])
    seq: int = dataclasses.field(default_factory=lambda: next(_SEQ))
    submitted: float = 0.0
    only: frozenset[int] | None = None
    on_partition: Callable[["PartitionResult"], None] | None = dataclasses.field(default=None, repr=False,
                                                                               compare=False)
    # set by the engine when the job concludes (proved, failed or cancelled): see `ended` and `stop`
    stop: StopFlag = dataclasses.field(default_factory=StopFlag, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.partitions, bool) or not isinstance(self.partitions, int) or \
                not 1 <= self.partitions <= MAX_PARTITIONS:
            raise InvalidInputError(f"job partitions must be an integer from 1 to {MAX_PARTITIONS}, "
                                    f"got {self.partitions!r}")
        if not isinstance(self.kind, str) or not self.kind:
            raise InvalidInputError(f"job kind must be a non-empty string, got {self.kind!r}")
        if self.priority == 0:
            self.priority = KIND_PRIORITIES.get(self.kind, 0)
        if self.only is not None:
            only = list(self.only) if isinstance(self.only, (set, frozenset, list, tuple, range)) else None
            if not only or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.partitions
                               for i in only):
                raise InvalidInputError(f"job only must name at least one partition, each an integer from 0 to "
                                        f"{self.partitions - 1}, got {self.only!r}")
            self.only = frozenset(only)
        if self.on_partition is not None and not callable(self.on_partition):
            raise InvalidInputError(f"job on_partition must be callable, got {self.on_partition!r}")

    @property
    def ended(self) -> bool:
        return self.stop.is_set

    @ended.setter
    def ended(self, value: bool) -> None:
        """True: the job has concluded (its flag set, never cleared). False: a
        job submitted again after it concluded starts on a fresh flag, the old
        one staying set for what its earlier run still has winding down."""
        if value:
            self.stop.set()
        elif self.stop.is_set:
            self.stop = StopFlag()

    def raise_if_ended(self) -> None:
        """JobCancelledError once the job has ended (see `ended`): what a
        provider calls between the steps of work done for this job alone."""
        if self.ended:
            raise JobCancelledError(f"job {self.id} has ended: the work for it stops")

    def indices(self) -> list[int]:
        """The partitions this job proves, in order."""
        return sorted(self.only) if self.only is not None else list(range(self.partitions))


@dataclasses.dataclass(frozen=True)
class PartitionTimings:
    """Where one partition's time went, in seconds, from the moments the
    engine marks on its timeline.

    queue_wait: from the job's submission to its synthesis's start, less
        srs_load (the scheduler's queue and memory admission).
    srs_load: waiting for its parameters (their load; 0 when resident).
    synthesis: SYNTH_START to SYNTH_END.
    gpu_compute: the kernel region, GPU_START to GPU_END (the device's lock held).
    total: from the job's submission to the proof's check done (FINALIZE_END).
    started: when its synthesis started (seconds since the epoch).
    """
    queue_wait: float
    srs_load: float
    synthesis: float
    gpu_compute: float
    total: float
    started: float


@dataclasses.dataclass(frozen=True)
class PartitionResult:
    """A proved partition, as Job.on_partition receives it: the job, the
    partition's index, its proof (verified when prover.verify), its public
    inputs (without the leading one) and its timings."""
    job: Job
    index: int
    proof: Proof
    public_inputs: list[int]
    timings: PartitionTimings


@dataclasses.dataclass
class PartitionTask:
    """One partition of a job on its way through the stages: what a
    scheduler's push(task) receives and its pop() hands back.

    job: the Job (id, kind, priority: larger runs earlier under a priority
        scheduler, seq: the order of submission, payload).
    index: the partition, from 0 to job.partitions - 1.
    attempt: 0 the first time; a partition tried again after a failure comes
        back as a new task with attempt + 1."""
    job: Job
    index: int
    attempt: int = 0


@dataclasses.dataclass
class JobResult:
    """A finished job: one proof, its public inputs and its timings
    (PartitionTimings) per partition, None for a partition the job's `only`
    left out (or the error)."""
    job: Job
    proofs: list[Proof | None] = dataclasses.field(default_factory=list)
    public_inputs: list[list[int] | None] = dataclasses.field(default_factory=list)
    error: BaseException | None = None
    seconds: float = 0.0
    timings: list[PartitionTimings | None] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


class Canceller(Protocol):
    """Where a handle's cancel() goes: the engine that holds its job."""

    def cancel(self, job_id: str) -> bool: ...


class JobHandle:
    """What submit returns: result() blocks; `await handle` in asyncio; cancel()."""

    def __init__(self, job: Job, engine: Canceller):
        self.job = job
        self.future: concurrent.futures.Future[JobResult] = concurrent.futures.Future()
        self._engine = engine

    def result(self, timeout: float | None = None) -> JobResult:
        """The JobResult; raises the job's error (JobFailedError, JobCancelledError),
        TimeoutError after timeout seconds (see check_timeout)."""
        return self.future.result(check_timeout(timeout))

    def done(self) -> bool:
        return self.future.done()

    def cancel(self) -> bool:
        """Cancel the job if it has not finished; True when it was cancelled by this call."""
        return self._engine.cancel(self.job.id)

    def __await__(self) -> Generator[Any, None, JobResult]:
        return asyncio.wrap_future(self.future).__await__()

    # engine side -------------------------------------------------------------

    def _finish(self, result: JobResult) -> bool:
        if self.future.done():
            return False
        if result.error is not None:
            self.future.set_exception(result.error)
        else:
            self.future.set_result(result)
        return True
