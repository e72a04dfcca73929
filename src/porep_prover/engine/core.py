# SPDX-License-Identifier: Apache-2.0
"""The proving engine: many partitions of many jobs at once.

    submit(job) -> JobHandle
      job table ──> scheduler ──> synthesis workers (memory admission)
                ──> ready queue ──> device workers (kernel region under the device's lock)
                ──> finalizers ──> the job table: result sinks, job_finished hook, the handle

Engine is the facade that wires the parts, each a module of its own:
settings (EngineSettings, resolved once), memory (host memory admission),
job_table (jobs from submission to conclusion: retries, cancellation),
stages (the three stage loops), lifecycle (the workers' threads, the switch
interval), plugin_calls (every provider, sink and hook call on a thread of
its own, within a time limit).

Partitions of different jobs interleave. A failing partition is retried up
to prover.max_retries times, then its job fails with the cause; other jobs
go on. An error a retry would meet again (bad input, an unsatisfied witness,
a damaged key: job_table.SAME_ON_RETRY) and a provider's call past its limit
are not retried. With prover.verify every proof is checked before it leaves
(groth16.proof_check). A concluded job leaves the engine: its result stays
with its handle and the sinks. Every stage boundary emits a timeline event.
A host that keeps its own record of proofs (the daemon's journal) submits
jobs with Job.only (the partitions still to prove) and Job.on_partition
(each proof as it is made, with its PartitionTimings), reads job_progress,
and stops with drain (the partitions in flight finish, no other starts).
With engine.cluster set, a cluster plugin's node engines prove the
partitions in place of this host's workers (engine.cluster); the job
table, the sinks, the hooks and the handles stay here.
"""
from __future__ import annotations

import concurrent.futures
import functools
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from ..errors import EngineError
from ..groth16 import load_params
from ..memory.host_plan import process_item
from .cluster import Cluster, ClusterWork
from .config import EngineConfig, load_config
from .devices import ProvingDevice, discover, release_parameters
from .inline import default_registry
from .job_table import JobTable
from .jobs import Job, JobHandle, JobResult, check_timeout
from .lifecycle import JOIN_SECONDS, STOP_GRACE_SECONDS, SWITCH_INTERVAL, WorkerThreads
from .memory import MemoryAdmission
from .planning import SetPlans
from .plugin_calls import Notifications
from .registry import Registry
from .settings import EngineSettings
from .srs import SrsManager
from .stages import Stages
from .timeline import Timeline
from .timeline_window import window as recent_window

if TYPE_CHECKING:
    import pluggy

    from ..groth16.keys import Parameters

LOG = logging.getLogger("porep_prover.engine")


class Engine:
    """A running engine (start() is called by the constructor unless start=False).

    config: an EngineConfig (default: load_config()), resolved once into
    settings (EngineSettings); registry: providers, schedulers and sinks
    (default: the built-ins; hooks.collect_registry adds what installed
    plugins register); plugins: a pluggy manager whose notification hooks the
    engine calls (hooks.plugin_manager()); devices: the devices to prove on
    (default: discovered from engine.devices at start).
    EngineError when engine.result_sinks, engine.scheduler or engine.cluster
    names what the registry does not hold; ConfigError for a cluster's bad
    settings. With engine.cluster, `cluster` is the Cluster proving this
    engine's partitions on its nodes (else None) and `devices` is empty.
    """

    def __init__(self, config: EngineConfig | None = None, registry: Registry | None = None,
                 plugins: pluggy.PluginManager | None = None, start: bool = True,
                 devices: list[ProvingDevice] | None = None):
        self.config = config if config is not None else load_config()
        self.settings = settings = EngineSettings.resolve(self.config)
        self.registry = registry if registry is not None else default_registry()
        self.plugins = plugins
        self.timeline = Timeline(settings.timeline_events)
        self.devices: list[ProvingDevice] = list(devices) if devices else []
        self.memory = MemoryAdmission(settings.memory_budget_bytes, settings.memory_budget_set)
        self.plans: SetPlans | None = None     # the loaded sets' memory plans (engine.planning), made at start
        self.srs = SrsManager(settings.srs_budget_bytes, settings.srs_idle_evict_seconds,
                              on_evict=lambda params: release_parameters(self.devices, params),
                              on_drop=self._drop_plan)
        self.notifications = Notifications(self.registry.enabled_sinks(settings.result_sinks), plugins,
                                           settings.sink_timeout)
        self.jobs = JobTable(self.registry.scheduler(settings.scheduler), self.notifications, self.timeline,
                             settings.max_retries, settings.scheduler or "builtin")
        self.cluster = self.registry.cluster(self.config)
        self._stopped: concurrent.futures.Future[None] = concurrent.futures.Future()   # set when the workers stop
        self._stages: Stages | None = None
        self._workers: WorkerThreads | None = None
        self._switch_token: int | None = None
        self._state_lock = threading.Lock()
        self._shut_down = False
        self._cluster_started = False
        if start:
            self.start()

    # ------------------------------------------------------------ lifecycle

    def start(self) -> "Engine":
        """Discover the devices, start the workers, preload srs.preload; the engine takes jobs.
        With engine.cluster: start the cluster instead (what its start raises: EngineError when
        it cannot be reached)."""
        if self.cluster is not None:         # the nodes load srs.preload, each for itself
            return self._start_cluster(self.cluster)
        with self._state_lock:
            if self._workers is not None or self._shut_down:
                return self
            preloaded = self._preload()   # first: a file that cannot be read leaves nothing started
            if not self.devices:
                self.devices = discover(list(self.settings.devices))
            # the sets' plans, each device's under the budget the settings give it there (nothing is set on the
            # devices: each region lays the device's memory out by the plan it is handed)
            plans = self.plans = SetPlans(self.settings, self.memory, self.devices)
            self.memory.set_base(process_item(plans.workers()).total)
            # with prover.stage "arena", or "auto" where a set's plan takes them, partitions laid out in a device's
            # page-locked arenas (portable: every device uploads them as they are)
            lent = [arenas for d in self.devices if (arenas := d.backend.host_arenas()) is not None]
            self.memory.set_arenas(lent[0] if lent and self.settings.stage_in_arenas else None)
            for key, params in preloaded.items():     # a set that does not fit leaves nothing started
                plans.make(key, params, None, f"the preloaded parameters {key}")
            self._stages = Stages(self.settings, self.jobs, self.memory, self.srs, plans, self.timeline,
                                  self.registry, self._stopped)
            self._workers = WorkerThreads(self._stages, self.settings, self.devices)
            self._workers.start()
            self.jobs.open()
            self._switch_token = SWITCH_INTERVAL.hold(self.settings.switch_interval)
        self.notifications.hook("porep_prover_engine_started", engine=self)
        LOG.info("engine started: %s, %d synthesis workers, %d workers per device",
                 ", ".join(d.label for d in self.devices), self.settings.partition_workers,
                 self.settings.gpu_workers_per_device)
        return self

    def _start_cluster(self, cluster: Cluster) -> "Engine":
        """start() on a cluster: its node engines prove, none of this host's workers runs."""
        with self._state_lock:
            if self._cluster_started or self._shut_down:
                return self
            cluster.start(ClusterWork(self.jobs, self.timeline))
            self._cluster_started = True
            self.jobs.open()
        self.notifications.hook("porep_prover_engine_started", engine=self)
        LOG.info("engine started on cluster %r", self.settings.cluster)
        return self

    def _preload(self) -> dict[str, Parameters]:
        """The sets of srs.preload loaded (by key): planned once the devices are known."""
        loaded = {}
        for path in self.settings.srs_preload:    # .params or mapped .pmap
            key = f"params:{path}"
            loaded[key] = self.srs.get(key, functools.partial(load_params, path, threads=self.settings.threads))
        return loaded

    def shutdown(self, wait: bool = True, timeout: float | None = None) -> None:
        """Stop taking jobs and end the workers; every accepted job's handle
        is resolved when this returns.

        wait=True: first wait for the accepted jobs to finish, until timeout
        (seconds, check_timeout's range; None: no limit); then, or at once
        with wait=False, cancel the unfinished ones. Whatever a plugin does,
        this returns in bounded time: a provider's call is not waited for;
        the deliveries to the sinks and the hooks are waited for until
        timeout (with wait=False and no timeout: not at all; they go on in
        the background, each call within engine.sink_timeout_seconds); the
        workers get STOP_GRACE_SECONDS past timeout (with wait=False and no
        timeout, that alone), and at most JOIN_SECONDS, to end."""
        timeout = check_timeout(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._state_lock:
            if self._shut_down:
                return
            self._shut_down = True
        self.jobs.close()
        self.notifications.hook("porep_prover_engine_stopping", engine=self)
        if wait:
            self.jobs.wait_concluded(deadline)
        self.jobs.cancel_all("the engine is shutting down")
        # a conclusion under way on a worker only posts its result and resolves its handle
        self.jobs.wait_concluded(time.monotonic() + STOP_GRACE_SECONDS)
        if not wait and deadline is None:
            deadline = time.monotonic()
        self._stop_workers(deadline)
        if not self.notifications.flush(deadline):
            LOG.warning("shutdown: %d deliveries to result sinks and hooks not made yet; they go on in the "
                        "background", self.notifications.pending())
        self.notifications.close()

    def drain(self, timeout: float | None = None) -> None:
        """Stop taking jobs and starting partitions; wait until timeout
        (seconds, check_timeout's range; None: no limit) for the partitions
        in flight to be proved (their jobs' on_partition callbacks run) or
        to fail; then shut down without waiting: every job not finished is
        cancelled, its handle resolved with JobCancelledError."""
        timeout = check_timeout(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        self.jobs.close()
        self.jobs.hold()
        if not self.jobs.wait_in_flight(deadline):
            LOG.warning("drain: partitions still in flight after %.3g s; their jobs are cancelled", timeout)
        self.shutdown(wait=False, timeout=timeout)

    def _stop_workers(self, deadline: float | None) -> None:
        self._stopped.set_result(None)         # waits for a provider's call end here
        self.jobs.stop()
        self.memory.close()
        # past the shutdown's deadline the workers still get a moment to see the stop (each waits in
        # slices of at most half a second), and never more than JOIN_SECONDS (a kernel region running)
        now = time.monotonic()
        join_by = now + JOIN_SECONDS if deadline is None else min(max(deadline, now + STOP_GRACE_SECONDS),
                                                                  now + JOIN_SECONDS)
        if self._cluster_started and self.cluster is not None:
            self.cluster.stop(join_by)
        workers = self._workers
        left = workers.stop(join_by) if workers is not None else []
        if left:
            LOG.warning("shutdown: workers still running, left behind: %s", ", ".join(left))
        if workers is None or not any(workers.is_device_worker(name) for name in left):
            self.srs.clear()          # (a device worker left behind may still read its parameters' device copies)
            if self.plans is not None:
                self.plans.close()    # its plans' layouts end with it: the devices are left unplanned
        SWITCH_INTERVAL.release(self._switch_token)
        self._switch_token = None

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=exc[0] is None)

    # ------------------------------------------------------------ jobs

    def submit(self, job: Job) -> JobHandle:
        """Accept a job; its partitions enter the scheduler. EngineError when
        stopped or when no provider serves the job's kind; InvalidInputError
        when a job with its id is in the engine (not yet finished)."""
        self.registry.provider(job.kind)
        handle = JobHandle(job, self)
        self.jobs.admit(job, handle)
        return handle

    def prove(self, job: Job, timeout: float | None = None) -> JobResult:
        """submit(job).result(): the blocking form."""
        return self.submit(job).result(timeout)

    def cancel(self, job_id: str) -> bool:
        """Cancel a job in the engine; True when this call cancelled it."""
        return self.jobs.cancel(job_id, "cancelled")

    def job_progress(self, job_id: str) -> dict[str, int] | None:
        """{"queued", "in_flight", "proved"}: partitions of a job in the engine
        (see JobTable.progress); None when it is not (finished, or never submitted)."""
        return self.jobs.progress(job_id)

    def preload(self, job: Job) -> dict[str, Any]:
        """Load the parameters of job's kind and payload now (its provider's
        srs_key and load_srs; nothing is proved): {"key", "seconds",
        "bytes", "already_loaded"}. EngineError when no provider serves the
        kind or the engine has not started; what load_srs raises;
        HostMemoryError when the set's memory plan does not fit."""
        provider = self.registry.provider(job.kind)
        if self.cluster is not None:
            return self.cluster.preload(job)
        plans = self.plans
        if plans is None:
            raise EngineError("preload: the engine has not started (its devices, and so its plans, are not known)")
        key = provider.srs_key(job)
        already = self.srs.loaded(key)
        start = time.monotonic()
        self.srs.get(key, lambda: plans.load(key, provider, job, lambda what, method: method(job)))
        entry = next((e for e in self.srs.status() if e["key"] == key), {"bytes": 0})
        return {"key": key, "seconds": time.monotonic() - start, "bytes": entry["bytes"], "already_loaded": already}

    def evict_srs(self, key: str) -> int | None:
        """Drop a parameter set no job uses (and its device copies): the host
        bytes freed; None when none of that key is loaded, or it is in use
        (on a cluster: the bytes freed on all its nodes)."""
        if self.cluster is not None:
            return self.cluster.evict_srs(key)
        return self.srs.evict(key)

    def status(self) -> dict[str, Any]:
        """Devices, job counts (active, and totals by outcome), partitions
        waiting and ready, memory, parameters, plugins, and the plugin lanes
        stuck past their limit; with engine.cluster, "cluster": its nodes (Cluster.status)."""
        extra = {"cluster": self.cluster.status()} if self.cluster is not None else {}
        return {**extra,
            "devices": [{"label": d.label, "identity": d.identity, "kind": d.kind} for d in self.devices],
            **self.jobs.status(),
            "partitions_ready": self._stages.ready.qsize() if self._stages is not None else 0,
            **self.memory.status(),
            "srs": self.srs.status(), "accepting": self.jobs.accepting,
            "plugins": self.registry.plugin_report(),
            "plugin_calls_stuck": self.notifications.stuck(),
            "timeline_events": {"kept": len(self.timeline), "emitted": self.timeline.emitted},
        }

    def timeline_window(self, seconds: float = 60.0, now: float | None = None) -> dict[str, Any]:
        """The last `seconds` of the timeline (up to now, seconds since the
        epoch; default the present) as one lane of bars per worker, with each
        device's GPU efficiency and longest gap over it: see
        timeline_window.window, which raises InvalidInputError for seconds out of range."""
        lanes = self._workers.lanes() if self._workers is not None else []
        events = self.timeline.events()
        return recent_window(events, lanes, [(d.identity, d.label) for d in self.devices],
                             time.time() if now is None else now, seconds, whole=self.timeline.emitted == len(events))

    def _drop_plan(self, key: str) -> None:
        if self.plans is not None:          # (none before the engine starts)
            self.plans.drop(key)
