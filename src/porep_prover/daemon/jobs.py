# SPDX-License-Identifier: Apache-2.0
"""The daemon's jobs: accepted (journaled first), handed to the engine,
each proved partition journaled as it comes, concluded in the journal, and
resumed after a restart with the partitions still to prove.

Only unfinished jobs are held in memory (at most daemon.max_pending, with
their handles); finished ones are read from the journal, their proofs from
disk. A conclusion wakes the callers waiting for a job. While the daemon
drains, a job the engine gives up (cancelled by the drain, not by its
owner) stays unfinished in the journal: the next start resumes it.
"""
from __future__ import annotations

import dataclasses
import gc
import json
import logging
import threading
import time
import uuid
from typing import cast

from ..engine import Job, JobHandle
from ..engine.jobs import MAX_PARTITIONS
from ..errors import CapacityError, EngineError, InvalidInputError, JobCancelledError
from ..host_memory import release_free_heap
from . import payloads
from .journal import UNFINISHED, JobRecord, Journal

LOG = logging.getLogger("porep_prover.daemon")
WAIT_SLICE_SECONDS = 0.5     # a waiter looks at its caller this often (one that left frees its thread)
TRIM_DELAY = 2.0             # seconds after a job ends that the C heap's free pages go back to the host


@dataclasses.dataclass
class LiveJob:
    """An unfinished job: its record (as accepted), its engine handle,
    whether its owner cancelled it, its partitions proved (this run's and
    those journaled before a restart)."""
    record: JobRecord
    handle: JobHandle | None = None
    cancelled: bool = False
    proved: int = 0


class JobBook:
    """Jobs of one daemon. engine: a running Engine; registry: its providers;
    journal: the Journal; settings: DaemonSettings; metrics: the DaemonMetrics
    (None: none)."""

    def __init__(self, engine, registry, journal: Journal, settings, metrics=None):
        self.engine, self.registry, self.journal = engine, registry, journal
        self.settings, self.metrics = settings, metrics
        self._live: dict[str, LiveJob] = {}
        self._changed = threading.Condition()
        self.accepting = True
        self.stopped = False           # the engine has stopped: waits end
        self.finished = {"completed": 0, "failed": 0, "cancelled": 0}   # since start
        self._trim: threading.Timer | None = None       # the heap's release a moment after a job ends

    # ------------------------------------------------------------ in

    def payload(self, kind: str, partitions: int, data: bytes | str, new: bool = True):
        """(JSON object, the provider's payload) of a request, checked:
        InvalidInputError (unknown kind, one daemon.kinds leaves out of a new
        job, partitions, malformed payload), InputPathError (a path refused).
        new: False for a job accepted before (resumed whatever daemon.kinds
        says now: nothing accepted is lost)."""
        if kind == "inline":
            raise InvalidInputError("job kind 'inline' takes objects in memory, not a JSON payload")
        if kind not in self.registry.providers:
            raise InvalidInputError(f"unknown job kind {kind!r} (installed: {', '.join(sorted(self.kinds()))})")
        if new and kind not in self.kinds():
            raise InvalidInputError(f"job kind {kind!r} is not served by this daemon (daemon.kinds: "
                                    f"{', '.join(self.kinds())})")
        if not 1 <= partitions <= MAX_PARTITIONS:
            raise InvalidInputError(f"partitions must be from 1 to {MAX_PARTITIONS}, got {partitions}")
        obj = payloads.decode(data.encode() if isinstance(data, str) else data)
        confined = payloads.confine(obj, self.registry.payload_paths(kind), self.settings.input_roots)
        return obj, self.registry.payload_from_json(kind, confined, partitions)

    def kinds(self) -> list[str]:
        """The job kinds a request may name: daemon.kinds, or every one
        installed ("inline" takes objects, not JSON)."""
        installed = sorted(k for k in self.registry.providers if k != "inline")
        return [k for k in installed if k in self.settings.kinds] if self.settings.kinds else installed

    def submit(self, kind: str, partitions: int, priority: int, data: bytes, request_id: str = "") \
            -> tuple[JobRecord, bool, int]:
        """Accept a job: (its record, whether request_id named an earlier job,
        its queue position: unfinished jobs accepted before it). Journaled
        before this returns. A request_id naming a job that is queued,
        running or completed returns that job; one naming a job that failed
        or was cancelled is let go by it and names the new job (a proof tried
        again after a failure, as an orchestrator retries it). Raises as
        payload(); EngineError while draining; CapacityError at
        daemon.max_pending, and for a job past daemon.max_job_constraints (cost)."""
        obj, payload = self.payload(kind, partitions, data)
        self._weigh(kind, partitions, payload)
        if request_id:
            earlier = self.journal.by_request(request_id)
            if earlier is not None and earlier.state in ("failed", "cancelled"):
                self.journal.release_request(earlier.id)
            elif earlier is not None:
                return earlier, True, self.position(earlier.id)
        record = JobRecord(uuid.uuid4().hex, request_id or None, kind, partitions, priority,
                           json.dumps(obj, separators=(",", ":")), submitted=time.time())
        with self._changed:
            if not self.accepting:
                raise EngineError("the daemon is draining: it accepts no jobs (resubmit to its successor)")
            if len(self._live) >= self.settings.max_pending:
                raise CapacityError(f"{len(self._live)} jobs accepted and unfinished: daemon.max_pending is "
                                    f"{self.settings.max_pending}; retry when some have finished")
            record, existing = self.journal.add(record)
            if existing:
                return record, True, self.position(record.id)
            live = self._live[record.id] = LiveJob(record)
            position = len(self._live) - 1
            try:
                live.handle = self.engine.submit(self._job(record, payload, None))
            except Exception as exc:
                del self._live[record.id]
                self.journal.finish(record.id, "failed", f"the engine refused it: {exc}")
                raise
        self._watch(live)
        return record, False, position

    def _weigh(self, kind: str, partitions: int, payload) -> None:
        """CapacityError naming the limit when the job's cost (partitions x
        the constraints of one, for kinds whose provider counts them) passes
        daemon.max_job_constraints (0: no limit)."""
        limit = self.settings.max_job_constraints
        per = self.registry.partition_constraints(kind, payload) if limit else None
        if per is not None and partitions * per > limit:
            raise CapacityError(f"a job of {partitions} partitions of {per:,} constraints ({partitions * per:,}) "
                                f"is past daemon.max_job_constraints ({limit:,}); submit fewer partitions, or "
                                "raise the limit")

    def _job(self, record: JobRecord, payload, only) -> Job:
        return Job(record.kind, record.partitions, payload, priority=record.priority, id=record.id, only=only,
                   on_partition=self._partition_proved)

    def _watch(self, live: LiveJob) -> None:
        assert live.handle is not None          # submitted to the engine
        live.handle.future.add_done_callback(lambda future: self._concluded(live, future))

    def resume(self) -> int:
        """Hand the journal's unfinished jobs to the engine, each with the
        partitions it has no proof of; returns how many were resumed. A job
        whose every partition is proved concludes; one whose kind is gone
        or whose payload is now refused fails, saying why."""
        resumed = 0
        for record in self.journal.unfinished():
            proved = self.journal.proved_indices(record.id)
            if len(proved) == record.partitions:
                self._finish(record, "completed", "")
                continue
            try:
                _, payload = self.payload(record.kind, record.partitions, record.payload, new=False)
            except (InvalidInputError, EngineError) as exc:
                self._finish(record, "failed", f"not resumed: {exc}")
                continue
            live = self._live[record.id] = LiveJob(record, proved=len(proved))
            only = frozenset(range(record.partitions)) - proved
            live.handle = self.engine.submit(self._job(record, payload, only))
            self._watch(live)
            resumed += 1
            LOG.info("resumed job %s (%s): %d of %d partitions to prove", record.id, record.kind, len(only),
                     record.partitions)
        return resumed

    # ------------------------------------------------------------ out

    def _partition_proved(self, result) -> None:
        """Job.on_partition: the proof to disk and the journal (an error here
        fails the partition, and the engine proves it again)."""
        job = result.job
        self.journal.add_partition(job.id, result.index, result.proof.to_bytes(), result.public_inputs,
                                   dataclasses.asdict(result.timings))
        with self._changed:
            live = self._live.get(job.id)
            if live is not None:
                live.proved += 1
        if self.metrics is not None:
            self.metrics.partition_proved(job.kind)

    def _concluded(self, live: LiveJob, future) -> None:
        try:
            exc = future.exception()
            if live.cancelled:                    # the journal says so already (cancel)
                self._finish(live.record, "cancelled", "", journaled=True)
            elif exc is None:
                self._finish(live.record, "completed", "")
            elif not isinstance(exc, JobCancelledError):
                self._finish(live.record, "failed", str(exc))
            elif self.accepting:
                self._finish(live.record, "cancelled", str(exc))
            # else the drain cancelled it: it stays unfinished in the journal, and resumes
        except Exception:  # noqa: BLE001 - a callback's error would otherwise vanish into the future's log
            LOG.exception("job %s: recording its end failed", live.record.id)
        finally:
            self._forget(live)
            self._release_heap_soon()

    def _release_heap_soon(self) -> None:
        """The C heap's free pages back to the host TRIM_DELAY seconds after a
        job ends (a cancelled job's partitions let go of their arrays as the
        workers see the cancellation): one release pending at a time."""
        with self._changed:
            if self._trim is not None or self.stopped:
                return
            self._trim = threading.Timer(TRIM_DELAY, self._release_heap)
            self._trim.daemon = True
            self._trim.start()

    def _release_heap(self) -> None:
        with self._changed:
            self._trim = None
        gc.collect()            # a cancelled partition's arrays may wait in reference cycles (its error's frames)
        release_free_heap()

    def _finish(self, record: JobRecord, state: str, error: str, journaled: bool = False) -> None:
        """The job ends in state (unless it had ended: the first ending
        stands), counted and reported to the metrics."""
        if not journaled and not self.journal.finish(record.id, state, error):
            return
        self.finished[state] += 1
        if self.metrics is not None:
            done = cast(JobRecord, self.journal.get(record.id))     # finished just now: its row is there
            stages = timings(done, self.journal.partitions(record.id, with_proofs=False))
            self.metrics.job_finished(record.kind, state, stages.pop("total"), stages)

    def _forget(self, live: LiveJob) -> None:
        with self._changed:
            self._live.pop(live.record.id, None)
            self._changed.notify_all()

    # ------------------------------------------------------------ asking

    def live(self) -> list[LiveJob]:
        with self._changed:
            return list(self._live.values())

    def position(self, job_id: str) -> int:
        """Unfinished jobs accepted before this one (0 when it has finished)."""
        with self._changed:
            ids = list(self._live)
        return ids.index(job_id) if job_id in ids else 0

    def wait(self, job_id: str, timeout: float | None, active) -> JobRecord | None:
        """The job's record once it has finished, or after timeout seconds
        (None: no limit), or as soon as active() is False (the caller has
        gone) or the daemon has stopped, whichever comes first; None for an
        unknown job."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while job_id in self._live and not self.stopped and active():
                left = WAIT_SLICE_SECONDS if deadline is None else min(WAIT_SLICE_SECONDS,
                                                                        deadline - time.monotonic())
                if left <= 0:
                    break
                self._changed.wait(left)
        return self.journal.get(job_id)

    def cancel(self, job_id: str) -> tuple[bool, bool] | None:
        """Cancel an unfinished job: (cancelled, it had partitions started);
        (False, False) when it had finished; None when unknown. The journal
        records the cancellation before the engine drops the job."""
        with self._changed:
            live = self._live.get(job_id)
        if live is None:
            return None if self.journal.get(job_id) is None else (False, False)
        progress = self.engine.job_progress(job_id) or {"in_flight": 0}
        started = progress["in_flight"] > 0 or live.proved > 0
        if not self.journal.finish(job_id, "cancelled", "cancelled by its owner"):
            return False, False
        live.cancelled = True
        self.engine.cancel(job_id)
        return True, started

    def progress(self, record: JobRecord) -> dict:
        """A job's partitions: queued, in_flight, proved, failed, and its
        state ("queued" and no partition started yet, "running", or how it ended)."""
        live = self._live.get(record.id)
        proved = max(record.proved, live.proved) if live is not None else record.proved
        if record.state != UNFINISHED:
            failed = record.partitions - proved if record.state == "failed" else 0
            return {"state": record.state, "queued": 0, "in_flight": 0, "proved": proved, "failed": failed}
        in_flight = (self.engine.job_progress(record.id) or {"in_flight": 0})["in_flight"]
        queued = max(0, record.partitions - proved - in_flight)
        return {"state": "running" if in_flight or proved else "queued", "queued": queued, "in_flight": in_flight,
                "proved": proved, "failed": 0}

    # ------------------------------------------------------------ the end

    def close(self) -> None:
        """Accept no more jobs (submit raises EngineError)."""
        with self._changed:
            self.accepting = False

    def stop(self) -> None:
        """The engine has stopped: every wait ends now (and no heap release is left pending)."""
        with self._changed:
            self.stopped = True
            trim, self._trim = self._trim, None
            self._changed.notify_all()
        if trim is not None:
            trim.cancel()


def timings(record: JobRecord, partitions) -> dict:
    """A job's stage seconds from its partitions' (PartitionRecord) timings:
    queue_wait, from its acceptance to its first synthesis's start; srs_load,
    synthesis and gpu_compute summed over its partitions; total, from its
    acceptance to its end (or now)."""
    starts = [p.timings["started"] for p in partitions]
    end = record.finished if record.finished is not None else time.time()
    return {"queue_wait": max(0.0, min(starts) - record.submitted) if starts else 0.0,
            "srs_load": sum(p.timings["srs_load"] for p in partitions),
            "synthesis": sum(p.timings["synthesis"] for p in partitions),
            "gpu_compute": sum(p.timings["gpu_compute"] for p in partitions),
            "total": max(0.0, end - record.submitted)}
