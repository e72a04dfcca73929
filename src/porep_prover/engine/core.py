# SPDX-License-Identifier: Apache-2.0
"""The proving engine: many partitions of many jobs at once.

    submit(job) -> JobHandle
      scheduler ──> synthesis workers (partition_workers threads; memory budget)
                     synthesize: circuit + witness (provider), a b c and the scalars
                 ──> ready queue (at most synthesis_lookahead partitions)
                 ──> device workers (gpu_workers_per_device per device)
                     kernel region under the device's lock: H, MSMs h / l / a / b_1
                 ──> finalizer pool: B2 MSM, assembly, verification (no lock)
                 ──> the job's handle, result sinks, hooks

Partitions of different jobs interleave. A failing partition is retried up
to prover.max_retries times, then its job fails with the cause; other jobs
go on. A failure of the key or the witness (KeyIntegrityError,
UnsatisfiedError, ...) is not retried: it would fail the same way. With
prover.verify every proof is checked before it leaves (groth16.proof_check),
a failed check naming what is at fault. Every stage boundary emits a
timeline event.
"""
from __future__ import annotations

import dataclasses
import logging
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ..backend import MsmOptions, get_backend
from ..config import resolve_threads
from ..errors import (EngineError, JobCancelledError, JobFailedError, KeyIntegrityError, ParamsMismatchError,
                      UnsatisfiedError, WitnessError)
from ..groth16.proof_check import bellman_suspects, check_proof
from ..groth16.prover import WitnessAssignment, finish, prove_device, synthesize
from . import config as _host
from .config import EngineConfig, load_config
from .devices import Device, discover
from .interlock import kernel_region
from .jobs import Job, JobHandle, JobResult, PartitionTask, check_timeout
from .inline import default_registry
from .registry import Registry
from .srs import SrsManager
from .timeline import Timeline

LOG = logging.getLogger("porep_prover.engine")
_STOP = object()
# failures of the key or the witness: a retry would fail the same way (a device's may pass)
_NOT_RETRIED = (KeyIntegrityError, ParamsMismatchError, UnsatisfiedError, WitnessError)


def partition_bytes(params, abc_on_device: bool = False) -> int:
    """Host bytes one synthesized partition of this circuit holds: a, b, c over
    the domain and the scalars of the l, a and b queries; or, when the device
    evaluates A, B, C and takes the scalars from the witness, the witness."""
    if abc_on_device:
        return 32 * (params.vk.num_inputs + len(params.l))
    return 32 * (3 * (len(params.h) + 1) + len(params.l) + len(params.a) + len(params.b_g1))


class _JobState:
    def __init__(self, job: Job, handle: JobHandle):
        self.job, self.handle = job, handle
        self.proofs: list = [None] * job.partitions
        self.public: list = [None] * job.partitions
        self.left = job.partitions
        self.finished = False
        self.estimate = 0   # bytes of this job's last synthesized partition


class Engine:
    """A running engine (start() is called by the constructor unless start=False).

    config: an EngineConfig (default: load_config()); registry: providers,
    schedulers and sinks (default: the built-ins; hooks.collect_registry adds
    what installed plugins register); plugins: a pluggy manager whose
    notification hooks the engine calls (hooks.plugin_manager()).
    """

    def __init__(self, config: EngineConfig | None = None, registry: Registry | None = None, plugins=None,
                 start: bool = True, devices: list[Device] | None = None):
        self.config = config if config is not None else load_config()
        self.plugins = plugins
        self.registry = registry if registry is not None else default_registry()
        self.timeline = Timeline()
        self.devices: list[Device] = list(devices) if devices else []
        self.srs = SrsManager(int(self.config.get("srs.budget_gib") * 2**30),
                              self.config.get("srs.idle_evict_seconds"), on_evict=self._release_on_devices)
        self._lock = threading.Condition()
        self._jobs: dict[str, _JobState] = {}
        self._scheduler = self.registry.scheduler(self.config.get("engine.scheduler"))
        self._sinks = self.registry.enabled_sinks(self.config.get("engine.result_sinks"))
        self._ready: queue.Queue = queue.Queue(maxsize=self.config.get("engine.synthesis_lookahead"))
        self._budget = self.config.memory_budget_bytes()
        self._in_flight_bytes = 0
        self._pending_bytes = 0          # reserved for syntheses not yet finished (not yet allocated)
        self._headroom = _host.host_memory_bytes() // 8
        self._threads: list[threading.Thread] = []
        self._finalizers: ThreadPoolExecutor | None = None
        self._accepting = False
        self._stopping = False
        self.threads = resolve_threads(self.config.get("engine.threads") or None)
        self.synthesis_threads = self.config.synthesis_threads()
        self._device_workers = 0
        self._host = get_backend("cpu")
        self._abc_on_device = False
        if start:
            self.start()

    # ------------------------------------------------------------ lifecycle

    def start(self) -> "Engine":
        if self._threads:
            return self
        if not self.devices:
            self.devices = discover(self.config.get("engine.devices"))
        if self.config.get("prover.msm_tables"):
            # window tables for resident parameters, in this engine's views of its devices' backends (the
            # backends are the process's: another engine keeps its own settings)
            options = MsmOptions(tables=True, table_copies=self.config.get("prover.msm_table_copies") or None)
            self.devices = [dataclasses.replace(d, backend=d.backend.with_options(options)) for d in self.devices]
        workers = self.config.get("engine.gpu_workers_per_device")
        self._finalizers = ThreadPoolExecutor(max(1, workers * len(self.devices)), thread_name_prefix="finalize")
        for i in range(self.config.partition_workers()):
            self._spawn(f"synth{i}", self._synthesis_loop)
        for dev in self.devices:
            for w in range(workers):
                self._spawn(f"{dev.label}.w{w}", self._device_loop, dev)
                self._device_workers += 1
        # A, B, C on the devices only when every device can evaluate them
        self._abc_on_device = self.config.get("prover.matvec") == "device" and all(
            d.backend.capabilities.evaluates_witness for d in self.devices)
        self._accepting = True
        self._set_switch_interval()
        self._preload()
        self._hook("porep_prover_engine_started", engine=self)
        LOG.info("engine started: %s, %d synthesis workers, %d workers per device",
                 ", ".join(d.label for d in self.devices), self.config.partition_workers(), workers)
        return self

    def _spawn(self, name: str, target, *args) -> None:
        t = threading.Thread(target=target, args=(name, *args), name=name, daemon=True)
        t.start()
        self._threads.append(t)

    def _set_switch_interval(self) -> None:
        """A device worker woken by the lock's release must get the GIL at once,
        not after the interpreter's default 5 ms: the GPU is idle until it
        launches (engine.switch_interval_ms; restored at shutdown)."""
        ms = self.config.get("engine.switch_interval_ms")
        self._switch_restore = None
        if ms > 0:
            self._switch_restore = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch_restore, ms / 1e3))

    def _preload(self) -> None:
        from ..groth16.params_file import read_params
        for path in self.config.get("srs.preload"):
            self.srs.get(f"params:{path}", lambda p=path: read_params(p))

    def shutdown(self, wait: bool = True, timeout: float | None = None) -> None:
        """Stop taking jobs. wait=True: finish every accepted job first; False:
        cancel the unfinished ones. Either way every accepted job's handle is
        resolved when this returns. timeout: seconds to wait (check_timeout's range), None: no limit."""
        timeout = check_timeout(timeout)
        with self._lock:
            if not self._accepting and self._stopping:
                return
            self._accepting = False
        self._hook("porep_prover_engine_stopping", engine=self)
        if wait:
            deadline = None if timeout is None else time.monotonic() + timeout
            with self._lock:
                while any(not s.finished for s in self._jobs.values()):
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    self._lock.wait(left)
        for state in list(self._jobs.values()):
            self._cancel_state(state, "the engine is shutting down")
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        for _ in range(self._device_workers):
            self._ready.put(_STOP)
        for t in self._threads:
            t.join(timeout=30)
        if self._finalizers is not None:
            self._finalizers.shutdown(wait=True)
        self.srs.clear()
        if getattr(self, "_switch_restore", None) is not None:
            sys.setswitchinterval(self._switch_restore)
            self._switch_restore = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown(wait=exc[0] is None)

    # ------------------------------------------------------------ jobs

    def submit(self, job: Job) -> JobHandle:
        """Accept a job; its partitions enter the scheduler. EngineError when stopped
        or when no provider serves the job's kind."""
        self.registry.provider(job.kind)
        handle = JobHandle(job, self)
        with self._lock:
            if not self._accepting:
                raise EngineError("the engine is not accepting jobs (not started, or shutting down)")
            job.submitted = time.time()
            self._jobs[job.id] = _JobState(job, handle)
            for i in range(job.partitions):
                self._scheduler.push(PartitionTask(job, i))
            self._lock.notify_all()
        self.timeline.emit("JOB_SUBMIT", job.id)
        return handle

    def prove(self, job: Job, timeout: float | None = None) -> JobResult:
        """submit(job).result(): the blocking form."""
        return self.submit(job).result(timeout)

    def cancel(self, job_id: str) -> bool:
        state = self._jobs.get(job_id)
        return state is not None and self._cancel_state(state, "cancelled")

    def _cancel_state(self, state: _JobState, why: str) -> bool:
        with self._lock:
            if state.finished:
                return False
            state.finished = True
            self._lock.notify_all()
        self._conclude(state, JobResult(state.job, error=JobCancelledError(f"job {state.job.id}: {why}")))
        return True

    def status(self) -> dict:
        with self._lock:
            active = [s for s in self._jobs.values() if not s.finished]
            return {
                "devices": [{"label": d.label, "identity": d.identity, "kind": d.kind} for d in self.devices],
                "jobs_active": len(active), "jobs_total": len(self._jobs),
                "partitions_waiting": len(self._scheduler), "partitions_ready": self._ready.qsize(),
                "memory_in_flight": self._in_flight_bytes, "memory_budget": self._memory_budget(),
                "memory_pending": self._pending_bytes,
                "srs": self.srs.status(), "accepting": self._accepting,
                "plugins": self.registry.plugin_report(),
            }

    # ------------------------------------------------------------ stages

    def _next_task(self) -> PartitionTask | None:
        with self._lock:
            while True:
                if self._stopping:
                    return None
                task = self._scheduler.pop()
                if task is not None:
                    if self._jobs[task.job.id].finished:
                        continue
                    return task
                self._lock.wait(0.5)
                self.srs.evict_idle()

    def _reserve(self, nbytes: int) -> bool:
        """Block until a synthesis of nbytes fits (with nothing in flight, anything
        fits); the bytes count as pending until _synthesized()."""
        with self._lock:
            waited = time.monotonic()
            while self._in_flight_bytes and not self._fits(nbytes):
                if self._stopping:
                    return False
                if waited and time.monotonic() - waited > 5:
                    waited = 0.0    # once per wait: the GPU may idle for this, and the operator should know
                    LOG.info("a synthesis of %.1f GiB waits for host memory: %.1f GiB in flight, budget %.1f GiB, "
                             "%.1f GiB available", nbytes / 2**30, self._in_flight_bytes / 2**30,
                             self._memory_budget() / 2**30, (_host.host_available_bytes() or 0) / 2**30)
                self._lock.wait(0.5)
            if not self._in_flight_bytes and not self._fits(nbytes):
                # Admitted so that the engine moves on, but the host may not hold it.
                LOG.warning("a synthesis of %.1f GiB starts although %.1f GiB are available (less 1/8 of the "
                            "host kept free) and the budget is %.1f GiB: the host may run out of memory",
                            nbytes / 2**30, max(0, (_host.host_available_bytes() or 0) - self._headroom) / 2**30,
                            self._memory_budget() / 2**30)
            self._in_flight_bytes += nbytes
            self._pending_bytes += nbytes
            return True

    def _fits(self, nbytes: int) -> bool:
        """The budget (caller holds the lock), and by default also the host's free
        memory: what is not yet allocated of the syntheses running plus nbytes
        must leave 1/8 of the host free, so that what else lives in the process
        (a provider's circuit, pinned arenas) is counted as it is, not guessed."""
        if self._in_flight_bytes + nbytes > self._memory_budget():
            return False
        if self.config.get("engine.memory_budget_gib"):
            return True
        available = _host.host_available_bytes()
        return available is None or self._pending_bytes + nbytes <= available - self._headroom

    def _synthesized(self, estimate: int) -> None:
        """A synthesis reserved with estimate has ended: its memory is allocated (or freed)."""
        with self._lock:
            self._pending_bytes -= estimate
            self._lock.notify_all()

    def _memory_budget(self) -> int:
        """Bytes partitions in flight may hold: the setting, or by default 3/4 of
        the host's memory less the parameters loaded now (a 32 GiB PoRep's
        are ~47 GiB of it)."""
        if self.config.get("engine.memory_budget_gib"):
            return self._budget
        return max(0, self._budget - self.srs.resident_bytes())

    def _release(self, nbytes: int) -> None:
        with self._lock:
            self._in_flight_bytes -= nbytes
            self._lock.notify_all()

    def _synthesis_loop(self, name: str) -> None:
        while True:
            task = self._next_task()
            if task is None:
                return
            state = self._jobs[task.job.id]
            job, provider = task.job, self.registry.provider(task.job.kind)
            held = pending = 0
            try:
                with self.srs.lease(provider.srs_key(job), lambda: provider.load_srs(job)) as params:
                    held = state.estimate or partition_bytes(params, self._abc_on_device)
                    if not self._reserve(held):
                        return
                    pending = held
                    self.timeline.emit("SYNTH_START", job.id, task.index, name)
                    r1cs, witness = provider.synthesize(job, task.index, self.synthesis_threads)
                    synth = synthesize(params, r1cs, witness, self.synthesis_threads,
                                       check=self.config.get("prover.check_witness"),
                                       abc_on_device=self._abc_on_device)
                self._synthesized(pending)
                pending = 0
                public = witness[1:r1cs.num_inputs].to_ints()
                size = synth.nbytes
                state.estimate = size
                self._release(held - size)                 # the real size replaces the estimate
                held = size
                self.timeline.emit("SYNTH_END", job.id, task.index, name)
            except Exception as exc:  # noqa: BLE001 - a partition's failure is its job's, not the worker's
                self._synthesized(pending)
                self._release(held)
                self._failed(task, exc, name)
                continue
            self.timeline.emit("GPU_QUEUE", job.id, task.index, name)
            while True:
                try:
                    self._ready.put((task, provider, synth, public, held), timeout=0.5)
                    break
                except queue.Full:
                    if self._stopping:
                        self._release(held)
                        return

    def _device_loop(self, name: str, device: Device) -> None:
        while True:
            item = self._ready.get()
            if item is _STOP:
                return
            task, provider, synth, public, held = item
            job = task.job
            if self._jobs[job.id].finished:
                self._release(held)
                continue
            try:
                with self.srs.lease(provider.srs_key(job), lambda: provider.load_srs(job)) as params:
                    dev = self._kernel_region(device, name, task, params, synth)
            except Exception as exc:  # noqa: BLE001
                self._release(held)
                self._failed(task, exc, name)
                continue
            self._finalizers.submit(self._finalize, task, provider, synth, public, held, dev, device, name)

    def _kernel_region(self, device: Device, name: str, task: PartitionTask, params, synth):
        """Prepare (host work: the backend's pinning, outside the lock), then the
        kernel region under the device's lock."""
        be, job = device.backend, task.job
        self.timeline.emit("PREP_START", job.id, task.index, name, device.identity)
        staged = be.prepare(synth, ahead=self.config.get("prover.upload") == "ahead")
        self.timeline.emit("PREP_END", job.id, task.index, name, device.identity)
        try:
            b_g2 = device.kind != "cpu" and self.config.get("prover.b_g2") == "device"
            with kernel_region(device.identity, self.timeline, job.id, task.index, name):
                return prove_device(be, params, staged.assignment, self.threads, b_g2=b_g2, host=self._host)
        finally:
            be.release_prepared(staged)

    def _finalize(self, task, provider, synth, public, held, dev, device, worker) -> None:
        job, name = task.job, threading.current_thread().name   # a finalizer thread, not the device worker
        try:
            self.timeline.emit("FINALIZE_START", job.id, task.index, name, device.identity)
            with self.srs.lease(provider.srs_key(job), lambda: provider.load_srs(job)) as params:
                proof = finish(self._host, params, synth, dev, self.threads)   # B_2 here unless done on the device
                if self.config.get("prover.verify"):
                    # a proof that fails raises what is at fault: the witness, the device or the key
                    check_proof(params.vk, public, proof,
                                bellman_suspects(params, lambda: self._circuit(task, provider, synth), device.backend,
                                                 dev), self.threads)
            self.timeline.emit("FINALIZE_END", job.id, task.index, name, device.identity)
        except Exception as exc:  # noqa: BLE001
            self._failed(task, exc, name)
            return
        finally:
            self._release(held)
        self._partition_done(task, proof, public)

    def _circuit(self, task: PartitionTask, provider, synth):
        """The partition's circuit and witness again, for a failed proof's check
        (kept by a partition whose device evaluates A, B, C, else synthesized anew)."""
        if isinstance(synth, WitnessAssignment):
            return synth.r1cs, synth.witness
        return provider.synthesize(task.job, task.index, self.synthesis_threads)

    # ------------------------------------------------------------ outcomes

    def _partition_done(self, task: PartitionTask, proof, public) -> None:
        state = self._jobs[task.job.id]
        with self._lock:
            if state.finished:
                return
            state.proofs[task.index], state.public[task.index] = proof, public
            state.left -= 1
            if state.left:
                return
            state.finished = True
            self._lock.notify_all()
        self._conclude(state, JobResult(state.job, state.proofs, state.public))

    def _failed(self, task: PartitionTask, exc: BaseException, worker: str) -> None:
        state = self._jobs[task.job.id]
        if state.finished:
            return
        if task.attempt < self.config.get("prover.max_retries") and not isinstance(exc, _NOT_RETRIED):
            LOG.warning("job %s partition %d failed (attempt %d), retrying: %s", task.job.id, task.index,
                        task.attempt + 1, exc)
            self.timeline.emit("PARTITION_RETRY", task.job.id, task.index, worker)
            with self._lock:
                self._scheduler.push(PartitionTask(task.job, task.index, task.attempt + 1))
                self._lock.notify_all()
            return
        self.timeline.emit("PARTITION_FAILED", task.job.id, task.index, worker)
        with self._lock:
            if state.finished:
                return
            state.finished = True
            self._lock.notify_all()
        tries = f"{task.attempt + 1} attempt{'s' if task.attempt else ''}"
        if isinstance(exc, _NOT_RETRIED):
            tries += ", not retried (a retry fails the same way)"
        err = JobFailedError(f"job {task.job.id} failed: partition {task.index} after {tries}: "
                             f"{type(exc).__name__}: {exc}", task.job.id, task.index)
        err.__cause__ = exc
        self._conclude(state, JobResult(state.job, error=err))

    def _conclude(self, state: _JobState, result: JobResult) -> None:
        """A job's end (the caller made it final): every sink, then the
        job_finished hook, then its handle resolves (so a result is delivered
        before its owner sees it); a failing sink or hook is logged and skipped."""
        result.seconds = time.time() - state.job.submitted
        self.timeline.emit("JOB_END", state.job.id)
        for sink_name, sink in self._sinks:
            try:
                sink.deliver(result)
            except Exception:  # noqa: BLE001 - one sink must not break the others
                LOG.exception("result sink %s failed on job %s", sink_name, result.job.id)
        self._hook("porep_prover_job_finished", result=result)
        state.handle._finish(result)

    def _hook(self, name: str, **kwargs) -> None:
        if self.plugins is None:
            return
        try:
            getattr(self.plugins.hook, name)(**kwargs)
        except Exception:  # noqa: BLE001 - notifications must not stop the engine
            LOG.exception("hook %s failed", name)

    def _release_on_devices(self, params) -> None:
        for dev in self.devices:
            for points in (params.h, params.l, params.a, params.b_g1, params.b_g2):
                dev.backend.release_points(points)
