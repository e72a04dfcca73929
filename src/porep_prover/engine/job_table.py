# SPDX-License-Identifier: Apache-2.0
"""The jobs an engine holds, from submission to conclusion.

A job enters with admit() and its partitions (those its `only` names) go to
the scheduler; each partition, in flight from the moment next_task hands it
out, comes back proved (partition_proved: the job's on_partition callback,
then partition_done) or failed (failed: tried again, or its job fails). A
job concludes once: every partition proved, one failed past its retries, or
cancelled. hold() stops handing out partitions, so that a drain can wait for
those in flight (wait_in_flight). It then leaves the table at once, payload
and all (the result stays with its handle and the sinks); the table only
counts it. A conclusion posts the result to the sinks and the job_finished
hook (plugin_calls.Notifications: made in order on a thread of their own)
and resolves the handle at once: no handle waits on a plugin.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from typing import TYPE_CHECKING, Callable

from ..errors import (EngineError, HostMemoryError, InvalidInputError, JobCancelledError, JobFailedError,
                      KeyIntegrityError, ParamsMismatchError, PluginTimeoutError, UnsatisfiedError, WitnessError)
from .jobs import Job, JobHandle, JobResult, PartitionResult, PartitionTask, PartitionTimings
from .scheduler_guard import GuardedScheduler

if TYPE_CHECKING:
    from ..groth16.proof import Proof
    from .plugin_calls import Notifications
    from .registry import Scheduler
    from .timeline import Timeline

LOG = logging.getLogger("porep_prover.engine")

# Failures a retry would meet again: bad input (InvalidInputError and every kind of it, WitnessError and
# ParamsMismatchError among them, named here for the reader), a witness that does not satisfy its circuit, a
# damaged key. A device's fault (DeviceResultError, CudaError) and any other error may pass, and are retried.
SAME_ON_RETRY = (InvalidInputError, WitnessError, ParamsMismatchError, UnsatisfiedError, KeyIntegrityError,
                 HostMemoryError)


def not_retried(exc: BaseException) -> str | None:
    """Why a partition that failed with exc is not tried again; None when it is."""
    if isinstance(exc, PluginTimeoutError):
        return "the provider's call is still running"
    if isinstance(exc, SAME_ON_RETRY):
        return "a retry fails the same way"
    return None


class _JobState:
    """A job in the table: its handle, its partitions' proofs as they come,
    and the partitions in flight (handed out, not yet back)."""
    __slots__ = ("job", "handle", "proofs", "public", "timings", "left", "estimate", "in_flight", "urgent")

    def __init__(self, job: Job, handle: JobHandle):
        self.job, self.handle = job, handle
        self.proofs: list[Proof | None] = [None] * job.partitions
        self.public: list[list[int] | None] = [None] * job.partitions
        self.timings: list[PartitionTimings | None] = [None] * job.partitions
        self.left = len(job.only) if job.only is not None else job.partitions
        self.estimate = 0   # bytes of this job's last synthesized partition
        self.in_flight: set[int] = set()
        self.urgent: set[int] = set()   # those in flight handed out urgent, until their kernel region starts


class JobTable:
    """Jobs in flight and their partitions' scheduling.

    scheduler: push / pop / len, always called under the table's lock, behind a
    guard (engine/scheduler_guard.py: a scheduler that fails is set aside);
    scheduler_name: the name it is registered by;
    notifications: the sinks and hooks a conclusion goes to; timeline: where
    JOB_SUBMIT, PARTITION_RETRY / PARTITION_FAILED and JOB_END are emitted."""

    def __init__(self, scheduler: Scheduler, notifications: Notifications, timeline: Timeline, max_retries: int,
                 scheduler_name: str = ""):
        # the scheduler is a plugin: behind a guard, a failing one loses no partition and stops no worker
        self._scheduler = GuardedScheduler(scheduler, scheduler_name)
        self._notifications, self._timeline = notifications, timeline
        self._max_retries = max_retries
        self._cond = threading.Condition()
        self._jobs: dict[str, _JobState] = {}
        self._concluding = 0                        # jobs out of the table whose handle is not resolved yet
        self.counts: collections.Counter[str] = collections.Counter()   # submitted, succeeded, failed, cancelled
        self.accepting = False
        self.stopping = False
        self.holding = False                        # no partition is handed out (a drain)
        # called (under the table's lock, once) the first time an urgent partition waits (see next_task): the
        # engine's workers start the synthesis worker of urgent partitions then (None: not asked, or called)
        self.on_urgent: Callable[[], None] | None = None

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
            job.ended = False               # a job that concluded before may come again
            job.submitted = time.time()
            self._jobs[job.id] = _JobState(job, handle)
            self.counts["submitted"] += 1
            self._timeline.emit("JOB_SUBMIT", job.id)
            self._scheduler.push_all([PartitionTask(job, i) for i in job.indices()])
            self._notice_urgent()
            self._cond.notify_all()

    def next_task(self, timeout: float, urgent: bool = False, synthesis: bool = False) -> PartitionTask | None:
        """The scheduler's next partition of a job in the table (those of
        jobs that ended are dropped), in flight from now on; None after
        timeout seconds without one (also while holding), or once stopping.
        urgent: only a partition whose priority is higher than that of
        every partition in flight (some being in flight), and only when the
        scheduler hands it out next (one it hands out first that is not
        urgent stays first for the next call without urgent).

        synthesis: the caller is a synthesis worker of this engine (a
        cluster's node is not). Then a partition handed out urgent (its
        priority higher than that of every partition in flight, some being
        in flight) holds the syntheses of lower priorities back until its
        kernel region starts (region_started), or it fails or its job ends:
        no partition of a lower priority is handed out meanwhile (the
        worker waits, as for an empty scheduler; the urgent worker goes on)
        and none handed out before starts (start_synthesis puts it back).
        So the cores are the urgent partition's and the region's under way.
        Equal priorities, and engines that never see an urgent partition,
        are never held back."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.stopping:
                task = None if self.holding else self._pop(urgent, self._held_below() if synthesis else None)
                if task is not None:
                    state = self._jobs.get(task.job.id)
                    if state is not None:
                        if synthesis:
                            flying = self._flying_top()
                            if flying is not None and task.job.priority > flying:
                                state.urgent.add(task.index)
                        state.in_flight.add(task.index)
                        return task
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return None

    def _pop(self, urgent: bool, held: int | None = None) -> PartitionTask | None:
        """(caller holds the lock) The scheduler's next partition; urgent: see
        next_task (the scheduler is asked only while such a partition waits);
        held: only one of this priority or higher (None: any)."""
        if not urgent:
            if held is None:
                return self._scheduler.pop()
            return self._scheduler.pop_if(lambda task: task.job.priority >= held)
        above = self._urgent_above()
        if above is None:
            return None
        return self._scheduler.pop_if(lambda task: task.job.priority > above)

    def _flying_top(self) -> int | None:
        """(caller holds the lock) The highest priority of the partitions in flight (None: none is)."""
        return max((s.job.priority for s in self._jobs.values() if s.in_flight), default=None)

    def _held_below(self) -> int | None:
        """(caller holds the lock) The priority of the most urgent partition
        handed out urgent whose kernel region has not started: syntheses of
        a lower one wait (next_task); None when there is none."""
        return max((s.job.priority for s in self._jobs.values() if s.urgent), default=None)

    def region_started(self, task: PartitionTask) -> None:
        """The in-flight task's kernel region started: as an urgent
        partition, it no longer holds lower syntheses back (next_task)."""
        with self._cond:
            state = self._jobs.get(task.job.id)
            if state is not None and task.index in state.urgent:
                state.urgent.discard(task.index)
                self._cond.notify_all()

    def _urgent_above(self) -> int | None:
        """(caller holds the lock) The highest priority of the partitions in
        flight, when one of a higher priority waits; else None."""
        flying = self._flying_top()
        top = self._scheduler.top_priority()
        return flying if flying is not None and top is not None and top > flying else None

    def _notice_urgent(self) -> None:
        """(caller holds the lock) on_urgent called, once, the first time an urgent partition waits."""
        if self.on_urgent is not None and self._urgent_above() is not None:
            hook, self.on_urgent = self.on_urgent, None
            hook()

    def start_synthesis(self, task: PartitionTask, worker: str) -> float | None:
        """The moment the in-flight task's synthesis starts (SYNTH_START,
        emitted under the table's lock, so that none follows a HOLD or its
        job's end), or None: its job ended (cancelled) while its worker
        waited for parameters or memory, and the task is dropped; or a drain
        came meanwhile, and the task goes back to the scheduler, no longer in
        flight (the drain does not wait for it; it resumes with its job); so
        does a task of a lower priority than an urgent partition before its
        kernel region (next_task: it waits for that region)."""
        with self._cond:
            if task.job.id not in self._jobs:
                return None
            held = self._held_below()
            if not self.holding and (held is None or task.job.priority >= held):
                return self._timeline.emit("SYNTH_START", task.job.id, task.index, worker).t
            state = self._jobs.get(task.job.id)
            if state is not None and task.index in state.in_flight:
                state.in_flight.discard(task.index)
                state.urgent.discard(task.index)
                self._scheduler.push(task)
            self._cond.notify_all()
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

    def progress(self, job_id: str) -> dict[str, int] | None:
        """{"queued", "in_flight", "proved"}: the job's partitions waiting,
        handed out and not back, and proved in this engine (those its `only`
        left out are not counted); None when the job is not in the table."""
        with self._cond:
            state = self._jobs.get(job_id)
            if state is None:
                return None
            proved = sum(1 for p in state.proofs if p is not None)
            return {"queued": state.left - len(state.in_flight), "in_flight": len(state.in_flight), "proved": proved}

    def partition_proved(self, task: PartitionTask, proof: Proof, public: list[int], timings: PartitionTimings,
                         worker: str) -> None:
        """A partition's proof is made and checked: the job's on_partition
        callback gets it (an exception there fails the partition, see
        failed), then partition_done."""
        callback = task.job.on_partition
        if callback is not None and self.is_active(task.job.id):
            try:
                callback(PartitionResult(task.job, task.index, proof, public, timings))
            except BaseException as exc:  # noqa: BLE001 - the callback's failure is its partition's
                self.failed(task, exc, worker)
                return
        self.partition_done(task, proof, public, timings)

    def partition_done(self, task: PartitionTask, proof: Proof, public: list[int],
                       timings: PartitionTimings | None = None) -> None:
        with self._cond:
            state = self._jobs.get(task.job.id)
            if state is None:
                return
            state.in_flight.discard(task.index)
            state.urgent.discard(task.index)
            state.proofs[task.index], state.public[task.index] = proof, public
            state.timings[task.index] = timings
            state.left -= 1
            self._notice_urgent()
            self._cond.notify_all()
            if state.left:
                return
            self._take(state, "succeeded")
        self._conclude(state, JobResult(state.job, state.proofs, state.public, timings=state.timings))

    def failed(self, task: PartitionTask, exc: BaseException, worker: str) -> None:
        """A partition failed with exc: tried again while its retries last and
        a retry may pass; else its job fails with exc as the cause."""
        with self._cond:
            state = self._jobs.get(task.job.id)
            if state is None:
                return
            state.in_flight.discard(task.index)
            state.urgent.discard(task.index)
            self._notice_urgent()
            self._cond.notify_all()
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

    def returned(self, task: PartitionTask) -> None:
        """A partition handed out comes back unproved through no fault of its
        own (a cluster's node was lost): to the scheduler again, the same
        attempt. Nothing when its job has ended."""
        with self._cond:
            state = self._jobs.get(task.job.id)
            if state is None:
                return
            state.in_flight.discard(task.index)
            state.urgent.discard(task.index)
            self._scheduler.push(task)
            self._cond.notify_all()

    def cancel(self, job_id: str, why: str) -> bool:
        """Conclude the job as cancelled; False when it is not in the table.
        Its partitions not started never start (those taken by a worker are
        dropped before their synthesis); one running ends and is dropped."""
        with self._cond:
            state = self._jobs.get(job_id)
            if state is None:
                return False
            self._take(state, "cancelled")
        self._conclude(state, JobResult(state.job, error=JobCancelledError(f"job {job_id}: {why}")))
        return True

    def cancel_all(self, why: str) -> None:
        with self._cond:
            ids = list(self._jobs)
        for job_id in ids:
            self.cancel(job_id, why)

    def _take(self, state: _JobState, outcome: str) -> None:
        """The job out of the table (caller holds the lock): it concludes now."""
        del self._jobs[state.job.id]
        state.job.ended = True          # a provider's work for this job alone may stop (Job.ended)
        self.counts[outcome] += 1
        self._concluding += 1
        self._cond.notify_all()

    def _conclude(self, state: _JobState, result: JobResult) -> None:
        """The result posted to the sinks and the job_finished hook, then the
        handle resolved: at once, whatever the plugins do (they get it on
        the notifications' own thread, in order)."""
        try:
            result.seconds = time.time() - state.job.submitted
            self._timeline.emit("JOB_END", state.job.id)
            self._notifications.deliver(result)
            self._notifications.hook("porep_prover_job_finished", result=result)
            state.handle._finish(result)
        finally:
            with self._cond:
                self._concluding -= 1
                self._cond.notify_all()

    # ------------------------------------------------------------ the end

    def wait_concluded(self, deadline: float | None) -> bool:
        """Block until no job is in the table or concluding (True), or until deadline (False)."""
        return self._wait_until(lambda: not (self._jobs or self._concluding), deadline)

    def _wait_until(self, done: Callable[[], object], deadline: float | None) -> bool:
        """done() under the table's lock, waited for until deadline (time.monotonic(); None: no limit)."""
        with self._cond:
            return bool(self._cond.wait_for(done, None if deadline is None else deadline - time.monotonic()))

    def close(self) -> None:
        """No more jobs: admit refuses (the jobs in the table go on)."""
        with self._cond:
            self.accepting = False

    def hold(self) -> None:
        """No more partitions handed out (next_task returns None) and none
        started (a HOLD event marks the moment); those started go on."""
        with self._cond:
            if not self.holding:
                self._timeline.emit("HOLD")
            self.holding = True
            self._cond.notify_all()

    def wait_in_flight(self, deadline: float | None) -> bool:
        """Block until no partition of a job in the table is in flight (True),
        or until deadline, time.monotonic() (False)."""
        return self._wait_until(lambda: not any(state.in_flight for state in self._jobs.values()), deadline)

    def stop(self) -> None:
        """The workers stop: next_task returns None from now on."""
        with self._cond:
            self.accepting = False
            self.stopping = True
            self._scheduler.close()
            self._cond.notify_all()

    def status(self) -> dict[str, int]:
        with self._cond:
            return {"jobs_active": len(self._jobs), "jobs_total": self.counts["submitted"],
                    "jobs_succeeded": self.counts["succeeded"], "jobs_failed": self.counts["failed"],
                    "jobs_cancelled": self.counts["cancelled"], "partitions_waiting": len(self._scheduler),
                    "partitions_in_flight": sum(len(s.in_flight) for s in self._jobs.values())}
