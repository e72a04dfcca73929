# SPDX-License-Identifier: Apache-2.0
"""Jobs, their handles (sync and asyncio futures) and their results."""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import itertools
import uuid
from typing import Any

from ..errors import InvalidInputError

_SEQ = itertools.count()
MAX_PARTITIONS = 1 << 16           # a job's partitions (a 32 GiB PoRep has 10)
MAX_TIMEOUT_SECONDS = 365 * 86400.0


def check_timeout(timeout) -> float | None:
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
    priority: larger runs earlier under a priority scheduler.
    payload: the provider's input (what to synthesize).
    """
    kind: str
    partitions: int
    payload: Any = None
    priority: int = 0
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:12])
    seq: int = dataclasses.field(default_factory=lambda: next(_SEQ))
    submitted: float = 0.0

    def __post_init__(self):
        if isinstance(self.partitions, bool) or not isinstance(self.partitions, int) or \
                not 1 <= self.partitions <= MAX_PARTITIONS:
            raise InvalidInputError(f"job partitions must be an integer from 1 to {MAX_PARTITIONS}, "
                                    f"got {self.partitions!r}")
        if not isinstance(self.kind, str) or not self.kind:
            raise InvalidInputError(f"job kind must be a non-empty string, got {self.kind!r}")


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
    """A finished job: one proof and its public inputs per partition (or the error)."""
    job: Job
    proofs: list = dataclasses.field(default_factory=list)
    public_inputs: list = dataclasses.field(default_factory=list)
    error: BaseException | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class JobHandle:
    """What submit returns: result() blocks; `await handle` in asyncio; cancel()."""

    def __init__(self, job: Job, engine):
        self.job = job
        self.future: concurrent.futures.Future = concurrent.futures.Future()
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

    def __await__(self):
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
