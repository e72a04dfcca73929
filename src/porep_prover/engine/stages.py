# SPDX-License-Identifier: Apache-2.0
"""The engine's three stage loops and the queues between them.

    synthesis workers (partition_workers)   provider.synthesize, then a, b, c and the scalars
      + a synthesis worker of urgent ones   (a partition more urgent than all in flight; from the first on)
      ──> ready queue (at most synthesis_lookahead partitions, one more if urgent; engine.ready)
    device workers (gpu_workers_per_device per device)
                                            prepare (no lock), then the kernel region under the
                                            device's lock: H, the MSMs h / l / a / b_1
      ──> proved queue
    finalizers (one per device worker)      B_2 MSM, assembly, verification (no lock; Finalizers)
      ──> the job table (the job concludes once its last partition is in)

Each loop runs on a thread of its own and calls providers through a lane of
its own (plugin_calls), so that a provider that never returns fails its
partition at engine.provider_timeout_seconds and the loop goes on. Every
stage boundary emits a timeline event, and a partition's timings
(PartitionTimings) are read from those events' moments. STOP in a queue ends
one worker.

Priority (the job's; equal priorities keep first come, first served): a
partition whose priority is higher than that of every partition in flight
is urgent. The urgent synthesis worker takes it as soon as the scheduler
hands it out next (the ordinary workers may be busy or waiting for room
downstream), the host memory admission lets none of a lower priority in
before it (engine.memory; never past the budget), the ready queue takes it
past its bound (by one) and hands it out first, and the device's lock goes
to it next: a worker waiting for the lock with a less urgent partition
puts that one back and takes it (engine.ready, engine.interlock). So an
urgent partition waits for the kernel region under way alone. And from the
moment it is handed out until its region starts, no synthesis of a lower
priority starts (JobTable.next_task): the host's cores are its synthesis's
and the region's under way (on the host, the region is CPU work too).
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import enum
import queue
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Final

from ..backend import get_backend
from ..backend.stop import stop_scope
from ..groth16.proof_check import bellman_suspects, check_proof
from ..errors import PluginError
from ..groth16.prover import (Assignment, MsmSums, WitnessAssignment, arena_witness, assignment_bytes, finish,
                              prove_device, synthesize)
from ..r1cs.system import R1CS
from .devices import ProvingDevice
from .interlock import RegionYielded, kernel_region
from .jobs import Job, PartitionTask, PartitionTimings
from .memory import Reservation
from .plugin_calls import PluginLane, Stopped
from .ready import ReadyQueue, Turn

if TYPE_CHECKING:
    from ..memory.device_plan import DevicePlan
    from ..field.fr_array import FrArray
    import numpy as np
    from numpy.typing import NDArray

    from ..groth16.keys import Parameters
    from .job_table import JobTable
    from .memory import MemoryAdmission
    from ..memory.host_plan import MemoryPlan
    from .planning import SetPlans
    from .registry import Registry, SynthesisProvider
    from .settings import EngineSettings
    from .srs import SrsManager
    from .timeline import Timeline


class Stop(enum.Enum):
    """What STOP is: the mark that ends one worker when it comes out of a queue."""
    STOP = "STOP"


STOP: Final = Stop.STOP
IDLE_SECONDS = 0.5       # a synthesis worker without work looks for idle parameters to drop this often


@dataclasses.dataclass
class SynthesizedPartition:
    """A partition from its synthesis on: its circuit's provider, its
    assignment, its public inputs and the host memory it holds; when its
    synthesis started and ended (seconds since the epoch) and the seconds it
    waited for its parameters."""
    task: PartitionTask
    provider: SynthesisProvider
    srs_key: str
    assignment: Assignment
    public: list[int]
    reservation: Reservation
    srs_load: float = 0.0
    synth_start: float = 0.0
    synth_end: float = 0.0


@dataclasses.dataclass
class ProvedPartition:
    """A partition after its kernel region: the sums the device made there,
    and the region's seconds (its device's lock held)."""
    partition: SynthesizedPartition
    sums: MsmSums
    device: ProvingDevice
    gpu_seconds: float = 0.0


class Stages:
    """The loops of one engine. settings: EngineSettings; table: JobTable;
    memory: MemoryAdmission; srs: SrsManager; plans: the loaded sets'
    memory plans (made as a set loads: its partitions are admitted, its
    kernel regions run and its A w, B w, C w placed by it); registry: the
    providers; stopped: a future set when the engine stops (a wait for a
    provider's call ends then)."""

    def __init__(self, settings: EngineSettings, table: JobTable, memory: MemoryAdmission, srs: SrsManager,
                 plans: SetPlans, timeline: Timeline, registry: Registry, stopped: concurrent.futures.Future[None]):
        self.settings, self.table, self.memory, self.srs, self.plans = settings, table, memory, srs, plans
        self.timeline, self.registry, self.stopped = timeline, registry, stopped
        # stand_in(name): a synthesis worker stalled in a provider's call asks for a stand-in (the
        # engine's WorkerThreads set it); True when one started, and the stalled worker ends after its call
        self.stand_in: Callable[[str], bool] = lambda name: False
        self.cpu = get_backend("cpu")      # the host's backend: B_2, assembly, A's input rows
        self.ready: ReadyQueue[SynthesizedPartition | Stop] = ReadyQueue(settings.synthesis_lookahead, _priority)
        self.proved: queue.SimpleQueue[ProvedPartition | Stop] = queue.SimpleQueue()
        self.finalizers = Finalizers(self)

    def lane(self, name: str) -> PluginLane:
        """The provider lane of a device worker or a finalizer called name."""
        return PluginLane(f"{name}.provider", self.settings.provider_timeout)

    @contextlib.contextmanager
    def params(self, provider: SynthesisProvider, job: Job, lane: PluginLane) -> Iterator[tuple[str, Parameters]]:
        """(the set's key, a lease on the job's parameters), loaded through the
        lane when absent and planned (the provider's srs_key too is a call on
        the lane, within its limit)."""
        name = type(provider).__name__
        key = lane.call(f"srs_key of provider {name} (job {job.id})", self.stopped, provider.srs_key, job)
        def call(what: str, method: Callable[[Job], object]) -> object:
            return lane.call(what, self.stopped, method, job)
        with self.srs.lease(key, lambda: self.plans.load(key, provider, job, call)) as params:
            yield key, params

    # ------------------------------------------------------------ synthesis

    def synthesis_loop(self, name: str, urgent: bool = False) -> None:
        """Synthesis until the engine stops, or until this worker, stalled in
        a provider's call past engine.provider_stall_seconds, has a stand-in
        and its call has returned (or failed at its limit). urgent: of urgent
        partitions only (JobTable.next_task)."""
        relieved: list[str] = []

        def stalled(what: str) -> None:
            if not relieved and self.stand_in(name):
                relieved.append(what)

        lane = PluginLane(f"{name}.provider", self.settings.provider_timeout, self.settings.provider_stall, stalled)
        try:
            while not self.table.stopping and not relieved and self._synthesis_step(name, lane, urgent):
                pass
        except Stopped:
            return
        finally:
            lane.close()

    def _synthesis_step(self, name: str, lane: PluginLane, urgent: bool = False) -> bool:
        """One partition synthesized and queued for a device (or failed), or an
        idle wait; False when the engine stops. (A step a call: an idle worker
        holds nothing of the last job.) What the step raises (the worker's
        own fault, not the provider's) fails the partition before it goes up."""
        task = self.table.next_task(IDLE_SECONDS, urgent, synthesis=True)
        if task is None:
            self.srs.evict_idle()
            return True
        partition = None
        try:
            partition = self._synthesize(task, name, lane)
            if partition is None:
                return True
            if not self.table.is_active(task.job.id):         # cancelled meanwhile: its memory back now
                partition.reservation.release()
                return True
            self.timeline.emit("GPU_QUEUE", task.job.id, task.index, name)
            if self._queue_ready(partition):
                return True
        except Stopped:
            raise
        except BaseException as exc:
            _fail_up(self.table, task, exc, name, partition)
            raise
        partition.reservation.release()
        return False

    def _synthesize(self, task: PartitionTask, name: str, lane: PluginLane) -> SynthesizedPartition | None:
        """The partition synthesized (None: it failed, and the job table has it)."""
        job, settings = task.job, self.settings
        reservation = None
        try:
            provider = self.registry.provider(job.kind)
            asked = time.time()
            with self.params(provider, job, lane) as (key, params):
                srs_load = time.time() - asked
                plan = self.plans.get(key)
                matvec = plan is not None and plan.matvec_on_device
                gathers = plan is not None and plan.gathers
                reservation = self._reserve(job, params, plan, matvec, gathers)
                if reservation is None:
                    raise Stopped("memory admission closed")
                start = self.table.start_synthesis(task, name)
                if start is None:
                    reservation.release()
                    return None
                arena = reservation.arena.view if reservation.arena is not None else None
                r1cs, witness = self._witness(provider, task, lane, params, (matvec, gathers), arena)
                with stop_scope(job.stop):          # stops between its steps as the job ends
                    assignment = synthesize(params, r1cs, witness, settings.synthesis_threads,
                                            check=settings.check_witness, abc_on_device=matvec, arena=arena,
                                            gathers=gathers)
                self.plans.circuit_seen(key, r1cs)
            public = witness[1:r1cs.num_inputs].to_ints()
            del witness          # laid out in its arena, the provider's copy goes now
            held = reservation.arena.nbytes if reservation.arena is not None else assignment.nbytes
            reservation.allocated(held)          # the real size replaces the estimate
            self.table.note_size(job.id, held)
            end = self.timeline.emit("SYNTH_END", job.id, task.index, name).t
        except Stopped:
            if reservation is not None:
                reservation.release()
            raise
        except Exception as exc:  # noqa: BLE001 - a partition's failure is its job's, not the worker's
            if reservation is not None:
                reservation.release()
            self.table.failed(task, exc, name)
            return None
        return SynthesizedPartition(task, provider, key, assignment, public, reservation, srs_load, start, end)

    def _reserve(self, job: Job, params: Parameters, plan: MemoryPlan | None, matvec: bool, gathers: bool
                 ) -> Reservation | None:
        """A partition's host memory by its set's plan (blocking until it fits):
        with devices, an arena it is laid out in (page-locked where the engine's
        devices lend it: their uploads read it without a copy), else its
        assignment's bytes; beside either, what the synthesis holds while it
        runs (the provider's scratch, its witness until copied in)."""
        running = plan.synthesis.nbytes if plan is not None and plan.synthesis is not None else 0
        if plan is not None and plan.workers.devices and plan.workers.arenas:
            arena = assignment_bytes(params, matvec, gathers)
            return self.memory.reserve(arena + running, arena=arena, priority=job.priority)
        return self.memory.reserve((self.table.estimate(job.id) or (plan.partition.total if plan is not None else 0))
                                   + running, priority=job.priority)

    def _witness(self, provider: SynthesisProvider, task: PartitionTask, lane: PluginLane, params: Parameters,
                 layout: tuple[bool, bool], arena: NDArray[np.uint8] | None) -> tuple[R1CS, FrArray]:
        """The partition's circuit and witness from its provider: written
        straight into the arena's witness (synthesize_into; layout: the
        arena's, synthesize's abc_on_device and gathers) where the provider
        can and there is an arena, else its own (synthesize)."""
        job, threads = task.job, self.settings.synthesis_threads
        what = f"of provider {type(provider).__name__} (job {job.id} partition {task.index})"
        into = getattr(provider, "synthesize_into", None)
        if arena is None or not callable(into):
            got: tuple[R1CS, FrArray] = lane.call(f"synthesize {what}", self.stopped, provider.synthesize, job,
                                                 task.index, threads)
            return got
        witness = arena_witness(params, layout[0], arena, layout[1])
        r1cs = lane.call(f"synthesize_into {what}", self.stopped, into, job, task.index, threads, witness)
        if not isinstance(r1cs, R1CS):
            raise PluginError(f"synthesize_into {what} returned {type(r1cs).__name__}, not an R1CS")
        return r1cs, witness

    def _queue_ready(self, partition: SynthesizedPartition) -> bool:
        """Into the ready queue, waiting while it has no room for it (ReadyQueue.put); False when
        the engine stops first."""
        while not self.table.stopping:
            try:
                self.ready.put(partition, timeout=IDLE_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    # ------------------------------------------------------------ devices

    def device_loop(self, name: str, device: ProvingDevice) -> None:
        lane = self.lane(name)
        try:
            while self._device_step(name, device, lane):
                pass
        except Stopped:
            return
        finally:
            lane.close()

    def _device_step(self, name: str, device: ProvingDevice, lane: PluginLane) -> bool:
        """The next ready partition through the kernel region, to the
        finalizers (or failed), or more urgent ones in its place; False at STOP."""
        item = self.ready.get(device.identity)
        if isinstance(item, Stop):
            return False
        partition: SynthesizedPartition | None = item
        while partition is not None:
            partition = self._region_step(name, device, lane, partition)
        return True

    def _region_step(self, name: str, device: ProvingDevice, lane: PluginLane, partition: SynthesizedPartition
                     ) -> SynthesizedPartition | None:
        """partition through the kernel region, to the finalizers (or failed):
        None; or, when its wait for the lock gave way to a more urgent
        partition, the partition taken in its place (it back in the ready queue)."""
        task, swapped = partition.task, None
        try:
            if not self.table.is_active(task.job.id):
                partition.reservation.release()
                return None
            with self.params(partition.provider, task.job, lane) as (key, params):
                sums, seconds = self._kernel_region(device, name, task, params, partition.assignment,
                                                    self.plans.for_device(key, device.identity),
                                                    self.ready.turn(partition, device.identity))
        except RegionYielded:
            swapped = self.ready.swap(partition, device.identity)
            return swapped if isinstance(swapped, SynthesizedPartition) else None
        except Stopped:
            partition.reservation.release()
            raise
        except Exception as exc:  # noqa: BLE001
            partition.reservation.release()
            self.table.failed(task, exc, name)
            return None
        except BaseException as exc:
            _fail_up(self.table, task, exc, name, partition)
            raise
        finally:
            if swapped is None:
                self.ready.done(partition)
        self.proved.put(ProvedPartition(partition, sums, device, seconds))
        return None

    def _kernel_region(self, device: ProvingDevice, name: str, task: PartitionTask, params: Parameters,
                       assignment: Assignment, plan: DevicePlan | None, turn: Turn[SynthesizedPartition | Stop]
                       ) -> tuple[MsmSums, float]:
        """Prepare (host work: the backend's pinning, and the copies ahead
        where the settings ask them and the plan has room, outside the lock),
        then the kernel region under the device's lock, asked with turn, by
        the device's plan of the set, handed to it: its sums, and its
        seconds. RegionYielded when the turn gave its wait up."""
        backend, job = device.backend, task.job
        self.timeline.emit("PREP_START", job.id, task.index, name, device.identity)
        staged = backend.prepare(assignment, ahead=self.settings.upload_ahead and (plan is None or plan.ahead))
        self.timeline.emit("PREP_END", job.id, task.index, name, device.identity)
        try:
            b_g2 = device.kind != "cpu" and self.settings.b_g2_on_device
            with kernel_region(device.identity, self.timeline, job.id, task.index, name, turn) as region, \
                    stop_scope(job.stop):      # the host's kernels stop as the job ends
                self.table.region_started(task)     # an urgent partition holds lower syntheses back no longer
                sums = prove_device(backend, params, staged.assignment, self.settings.threads, b_g2=b_g2,
                                    host=self.cpu, overlap=self.settings.overlap_msms, plan=plan,
                                    options=self.settings.msm_options)
            return sums, region.end - region.start
        finally:
            backend.release_prepared(staged)


class Finalizers:
    """The finalizers of an engine's stages (one a device worker): B_2
    unless the kernel region did it, the proof's assembly and its check,
    the partition's memory released either way, its proof handed to the
    job table."""

    def __init__(self, stages: Stages) -> None:
        self.stages = stages

    def loop(self, name: str) -> None:
        """Proved partitions finalized until STOP comes out of the proved queue."""
        lane = self.stages.lane(name)
        try:
            while (proved := self.stages.proved.get()) is not STOP:
                with contextlib.suppress(Stopped):
                    self._finalize(proved, name, lane)
                del proved          # an idle finalizer holds no partition
        finally:
            lane.close()

    def _finalize(self, proved: ProvedPartition, name: str, lane: PluginLane) -> None:
        """B_2 (unless the kernel region did it), the proof's assembly and its
        check; the partition's memory is released either way."""
        partition, device = proved.partition, proved.device
        task, job = partition.task, partition.task.job
        try:
            if not self.stages.table.is_active(job.id):
                return
            self.stages.timeline.emit("FINALIZE_START", job.id, task.index, name, device.identity)
            with self.stages.params(partition.provider, job, lane) as (_, params):
                proof = finish(self.stages.cpu, params, partition.assignment, proved.sums, self.stages.settings.threads)
                if self.stages.settings.verify:
                    # a proof that fails raises what is at fault: the witness, the device or the key
                    suspects = bellman_suspects(params, lambda: self._circuit(partition, lane), device.backend,
                                                proved.sums)
                    check_proof(params.vk, partition.public, proof, suspects, self.stages.settings.threads)
            end = self.stages.timeline.emit("FINALIZE_END", job.id, task.index, name, device.identity).t
        except Stopped:
            raise
        except Exception as exc:  # noqa: BLE001
            self.stages.table.failed(task, exc, name)
            return
        except BaseException as exc:
            _fail_up(self.stages.table, task, exc, name, None)
            raise
        finally:
            partition.reservation.release()
        try:
            self.stages.table.partition_proved(task, proof, partition.public, _timings(job, proved, end), name)
        except BaseException as exc:
            _fail_up(self.stages.table, task, exc, name, None)
            raise

    def _circuit(self, partition: SynthesizedPartition, lane: PluginLane) -> tuple[R1CS, FrArray]:
        """The partition's circuit and witness again, for a failed proof's check
        (kept by a partition whose device evaluates A, B, C, else synthesized anew)."""
        if isinstance(partition.assignment, WitnessAssignment):
            return partition.assignment.r1cs, partition.assignment.witness
        task, provider = partition.task, partition.provider
        return lane.call(f"synthesize of provider {type(provider).__name__} (job {task.job.id} partition "
                         f"{task.index})", self.stages.stopped, provider.synthesize, task.job, task.index,
                         self.stages.settings.synthesis_threads)


def _fail_up(table: JobTable, task: PartitionTask, exc: BaseException, worker: str,
             partition: SynthesizedPartition | None) -> None:
    """A worker's step raised (not a partition's failure, which the step
    handles): the partition fails with it (tried again while retries last)
    and its memory is released, before the worker is replaced."""
    if partition is not None:
        partition.reservation.release()
    table.failed(task, exc, worker)


def _priority(item: SynthesizedPartition | Stop) -> int | None:
    """A ready item's priority (its job's; None for STOP)."""
    return None if isinstance(item, Stop) else item.task.job.priority


def _timings(job: Job, proved: ProvedPartition, end: float) -> PartitionTimings:
    """A proved partition's timings (its job's submission to `end`, the
    moment its proof's check ended)."""
    p = proved.partition
    return PartitionTimings(queue_wait=max(0.0, p.synth_start - job.submitted - p.srs_load), srs_load=p.srs_load,
                            synthesis=p.synth_end - p.synth_start, gpu_compute=proved.gpu_seconds,
                            total=max(0.0, end - job.submitted), started=p.synth_start)
