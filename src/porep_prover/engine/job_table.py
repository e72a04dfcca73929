# SPDX-License-Identifier: Apache-2.0
"""The jobs an engine holds, from submission to conclusion.

A job enters with admit() and its partitions go to the scheduler; each
partition comes back proved (partition_done) or failed (failed: tried again,
or its job fails). A job concludes once: every partition proved, one failed
past its retries, or cancelled. It then leaves the table at once, payload
and all (the result stays with its handle and the sinks); the table only
counts it. A conclusion delivers the result to the sinks, then the
job_finished hook, then resolves the handle, so that a result is delivered
before its owner sees it.
"""
from __future__ import annotations

import collections
import logging
import threading
import time

from ..errors import (EngineError, InvalidInputError, JobCancelledError, JobFailedError, KeyIntegrityError,
                      ParamsMismatchError, PluginTimeoutError, UnsatisfiedError, WitnessError)
from .jobs import Job, JobHandle, JobResult, PartitionTask

LOG = logging.getLogger("porep_prover.engine")

# Failures a retry would meet again: bad input (InvalidInputError and every kind of it, WitnessError and
# ParamsMismatchError among them, named here for the reader), a witness that does not satisfy its circuit, a
# damaged key. A device's fault (DeviceResultError, CudaError) and any other error may pass, and are retried.
SAME_ON_RETRY = (InvalidInputError, WitnessError, ParamsMismatchError, UnsatisfiedError, KeyIntegrityError)


def not_retried(exc: BaseException) -> str | None:
    """Why a partition that failed with exc is not tried again; None when it is."""
    if isinstance(exc, PluginTimeoutError):
        return "the provider's call is still running"
    if isinstance(exc, SAME_ON_RETRY):
        return "a retry fails the same way"
    return None


class _JobState:
    """A job in the table: its handle, and its partitions' proofs as they come."""
    __slots__ = ("job", "handle", "proofs", "public", "left", "estimate")

    def __init__(self, job: Job, handle: JobHandle):
        self.job, self.handle = job, handle
        self.proofs: list = [None] * job.partitions
        self.public: list = [None] * job.partitions
        self.left = job.partitions
        self.estimate = 0   # bytes of this job's last synthesized partition


class JobTable:
    """Jobs in flight and their partitions' scheduling.

    scheduler: push / pop / len, always called under the table's lock;
    notifications: the sinks and hooks a conclusion goes to; timeline: where
    JOB_SUBMIT, PARTITION_RETRY / PARTITION_FAILED and JOB_END are emitted."""

    def __init__(self, scheduler, notifications, timeline, max_retries: int):
        self._scheduler, self._notifications, self._timeline = scheduler, notifications, timeline
        self._max_retries = max_retries
        self._cond = threading.Condition()
        self._jobs: dict[str, _JobState] = {}
        self._concluding = 0                        # jobs out of the table whose handle is not resolved yet
        self.counts = collections.Counter()         # submitted, succeeded, failed, cancelled
        self.accepting = False
        self.stopping = False

    # ------------------------------------------------------------ in

    def open(self) -> None:
        with self._cond:
            self.accepting = True

    def admit(self, job: Job, handle: JobHandle) -> None:
        """The job in, its partitions to the scheduler. EngineError when not
        accepting; InvalidInputError when a job with its id is in the table."""
        with self._cond:
            if not self.accepting:
                raise EngineError("the engine is not accepting jobs (not started, or shutting down)")
            if job.id in self._jobs:
                raise InvalidInputError(f"job {job.id} is in the engine already (submitted and not finished)")
            job.submitted = time.time()
            self._jobs[job.id] = _JobState(job, handle)
            self.counts["submitted"] += 1
            self._timeline.emit("JOB_SUBMIT", job.id)
            for i in range(job.partitions):
                self._scheduler.push(PartitionTask(job, i))
            self._cond.notify_all()

    def next_task(self, timeout: float) -> PartitionTask | None:
        """The scheduler's next partition of a job in the table (those of
        jobs that ended are dropped); None after timeout seconds without
        one, or once stopping."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.stopping:
                task = self._scheduler.pop()
                if task is not None:
                    if task.job.id in self._jobs:
                        return task
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return None

    def is_active(self, job_id: str) -> bool:
        return job_id in self._jobs

    def estimate(self, job_id: str) -> int:
        """Bytes the job's last synthesized partition held (0: none yet, or the job ended)."""
        state = self._jobs.get(job_id)
        return state.estimate if state is not None else 0

    def note_size(self, job_id: str, nbytes: int) -> None:
        state = self._jobs.get(job_id)
        if state is not None:
            state.estimate = nbytes

    # ------------------------------------------------------------ out

    def partition_done(self, task: PartitionTask, proof, public) -> None:
        with self._cond:
            state = self._jobs.get(task.job.id)
            if state is None:
                return
            state.proofs[task.index], state.public[task.index] = proof, public
            state.left -= 1
            if state.left:
                return
            self._take(state, "succeeded")
        self._conclude(state, JobResult(state.job, state.proofs, state.public))

    def failed(self, task: PartitionTask, exc: BaseException, worker: str) -> None:
        """A partition failed with exc: tried again while its retries last and
        a retry may pass; else its job fails with exc as the cause."""
        if not self.is_active(task.job.id):
            return
        reason = not_retried(exc)
        if reason is None and task.attempt < self._max_retries:
            LOG.warning("job %s partition %d failed (attempt %d), retrying: %s", task.job.id, task.index,
                        task.attempt + 1, exc)
            self._timeline.emit("PARTITION_RETRY", task.job.id, task.index, worker)
            with self._cond:
                self._scheduler.push(PartitionTask(task.job, task.index, task.attempt + 1))
                self._cond.notify_all()
            return
        self._timeline.emit("PARTITION_FAILED", task.job.id, task.index, worker)
        with self._cond:
            state = self._jobs.get(task.job.id)
            if state is None:
                return
            self._take(state, "failed")
        tries = f"{task.attempt + 1} attempt{'s' if task.attempt else ''}"
        if reason is not None:
            tries += f", not retried ({reason})"
        err = JobFailedError(f"job {task.job.id} failed: partition {task.index} after {tries}: "
                             f"{type(exc).__name__}: {exc}", task.job.id, task.index)
        err.__cause__ = exc
        self._conclude(state, JobResult(state.job, error=err))

    def cancel(self, job_id: str, why: str, deadline: float | None = None) -> bool:
        """Conclude the job as cancelled; False when it is not in the table."""
        with self._cond:
            state = self._jobs.get(job_id)
            if state is None:
                return False
            self._take(state, "cancelled")
        self._conclude(state, JobResult(state.job, error=JobCancelledError(f"job {job_id}: {why}")),
                       deadline)
        return True

    def cancel_all(self, why: str, deadline: float | None = None) -> None:
        with self._cond:
            ids = list(self._jobs)
        for job_id in ids:
            self.cancel(job_id, why, deadline)

    def _take(self, state: _JobState, outcome: str) -> None:
        """The job out of the table (caller holds the lock): it concludes now."""
        del self._jobs[state.job.id]
        self.counts[outcome] += 1
        self._concluding += 1
        self._cond.notify_all()

    def _conclude(self, state: _JobState, result: JobResult, deadline: float | None = None) -> None:
        """Sinks, then the job_finished hook, then the handle (each plugin
        call within its limit, and by deadline, time.monotonic())."""
        try:
            result.seconds = time.time() - state.job.submitted
            self._timeline.emit("JOB_END", state.job.id)
            self._notifications.deliver(result, deadline)
            self._notifications.hook("porep_prover_job_finished", deadline, result=result)
            state.handle._finish(result)
        finally:
            with self._cond:
                self._concluding -= 1
                self._cond.notify_all()

    # ------------------------------------------------------------ the end

    def wait_concluded(self, deadline: float | None) -> bool:
        """Block until no job is in the table or concluding (True), or until deadline (False)."""
        with self._cond:
            while self._jobs or self._concluding:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def close(self) -> None:
        """No more jobs: admit refuses (the jobs in the table go on)."""
        with self._cond:
            self.accepting = False

    def stop(self) -> None:
        """The workers stop: next_task returns None from now on."""
        with self._cond:
            self.accepting = False
            self.stopping = True
            self._cond.notify_all()

    def status(self) -> dict:
        with self._cond:
            return {"jobs_active": len(self._jobs), "jobs_total": self.counts["submitted"],
                    "jobs_succeeded": self.counts["succeeded"], "jobs_failed": self.counts["failed"],
                    "jobs_cancelled": self.counts["cancelled"], "partitions_waiting": len(self._scheduler)}
