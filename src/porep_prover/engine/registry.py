# SPDX-License-Identifier: Apache-2.0
"""What plugins register, and the plain protocols the engine calls on its hot
paths: synthesis providers (by job kind), schedulers (by name), result sinks
(by name; an engine delivers to those its setting engine.result_sinks names),
clusters (by name; engine.cluster picks one, see engine.cluster).
"""
from __future__ import annotations

import collections
import heapq
import dataclasses
import threading
from typing import (TYPE_CHECKING, Callable, Iterable, Mapping, NotRequired, Protocol, TypedDict, TypeVar,
                    runtime_checkable)

from ..errors import EngineError, InvalidInputError
from .cluster import Cluster
from .jobs import Job, JobResult, PartitionTask

if TYPE_CHECKING:
    from ..field.fr_array import FrArray
    from ..groth16.keys import Parameters
    from ..r1cs.system import R1CS
    from .config import EngineConfig

_T = TypeVar("_T")


@runtime_checkable
class SynthesisProvider(Protocol):
    """Turns a job's partitions into circuits and witnesses.

    kinds: the job kinds it serves.
    srs_key(job): names the job's parameters (jobs with one key share one load).
    load_srs(job): those parameters (a groth16.Parameters), called once per key.
    synthesize(job, partition, threads): (R1CS, witness FrArray) of one partition.
    load_srs and synthesize run on a thread of their own, within
    engine.provider_timeout_seconds (past it the partition's job fails);
    they may be called from several threads at once.

    Optionally, circuit(job): the job's circuit (the R1CS synthesize
    returns) before any partition is synthesized, cheaply where the provider
    keeps it; called once as the job's parameters load, on the same thread
    and within the same limit, so that the engine's memory plan counts the
    circuit and decides where A w, B w, C w run from the start (without it
    the plan learns the circuit's bytes at its first partition and keeps
    A w, B w, C w on the host of a device that plans its memory); and with
    it circuit_bytes(job): the host bytes the provider keeps for the circuit
    where more than its R1CS's own (the tables it synthesizes with).
    Optionally, srs_shape(job): the shape of the parameters load_srs would
    return (engine.SrsShape: each SRS array's length, the public inputs,
    whether the points are mapped from a file; SrsShape.of_circuit counts
    it from a circuit), without loading or making them; called before
    load_srs, on the same thread and within the same limit, so that the
    engine plans the set's memory first and refuses a set that cannot fit
    before its parameters exist (without it, a set is planned once
    loaded). A set refused alone under the host budget is not asked for
    again while the engine runs: load_srs is called at most once per key
    that does not fit.

    For payloads that come as JSON (the daemon's jobs), optionally:
    parse_payload(obj, partitions): the job's payload from a JSON object
        (a dict), checked: InvalidInputError saying what is wrong. Without
        it the dict itself is the payload. It must not take a place to
        write to from obj: a provider writes only where its host says
        (a cache the environment names, e.g. POREP_PROVER_PARAMS_CACHE).
    payload_paths: the payload keys whose values are paths of files the
        provider reads (a string, or a list of strings); a host that takes
        payloads from outside confines them (the daemon: to its input
        roots) before parse_payload sees them. Without it: none.
    constraints(payload): the constraints of one partition of a job with
        this payload (as parse_payload returned it), cheaply: what a host
        admitting jobs by cost weighs (the daemon: partitions x constraints
        against daemon.max_job_constraints). Without it: not weighed."""

    @property
    def kinds(self) -> tuple[str, ...]: ...

    def srs_key(self, job: Job) -> str: ...

    def load_srs(self, job: Job) -> Parameters: ...

    def synthesize(self, job: Job, partition: int, threads: int) -> tuple[R1CS, FrArray]: ...


@runtime_checkable
class Scheduler(Protocol):
    """Orders partitions for synthesis. push(task) receives an engine.PartitionTask
    (task.job: its Job, with priority and seq, the order of submission;
    task.index: the partition; task.attempt: 0, or the retry's number), and
    pop() returns one of the tasks pushed, or None when there is none. Both
    are called under the engine's lock (no locking of its own needed); a
    task popped for a job that has ended is dropped by the engine. One that
    raises, pops a task it was not given, or returns None while tasks wait
    is logged and set aside: the engine hands out what it held first come,
    first served (engine/scheduler_guard.py)."""

    def push(self, task: PartitionTask) -> None: ...

    def pop(self) -> PartitionTask | None: ...

    def __len__(self) -> int: ...


@runtime_checkable
class ResultSink(Protocol):
    """Receives every finished job of an engine that enables it (its name in
    engine.result_sinks); result.error is set when the job failed. An
    exception here is logged and does not reach the engine or other sinks.
    deliver runs on the sink's own thread, one call at a time, before the
    job's handle resolves; a call past engine.sink_timeout_seconds is logged,
    the job goes on without it, and the sink gets nothing until it returns."""

    def deliver(self, result: JobResult) -> None: ...


# what registers a scheduler (a class, or any function making one) and a cluster (factory(config, registry))
SchedulerFactory = Callable[[], Scheduler]
ClusterFactory = Callable[["EngineConfig", "Registry"], Cluster]


class FifoScheduler:
    """First come, first served (the engine's default)."""

    name = "builtin"

    def __init__(self) -> None:
        self._q: collections.deque[PartitionTask] = collections.deque()

    def push(self, task: PartitionTask) -> None:
        self._q.append(task)

    def pop(self) -> PartitionTask | None:
        return self._q.popleft() if self._q else None

    def __len__(self) -> int:
        return len(self._q)


class PriorityScheduler:
    """The highest job priority first, so that an urgent job's partitions pass
    every waiting one; among equals the job submitted first, then its
    partitions in order (so one job's partitions finish together)."""

    name = "priority"

    def __init__(self) -> None:
        # (-priority, seq, partition, the order pushed, the task): the order pushed breaks every tie
        self._heap: list[tuple[int, int, int, int, PartitionTask]] = []
        self._n = 0

    def push(self, task: PartitionTask) -> None:
        self._n += 1
        heapq.heappush(self._heap, (-task.job.priority, task.job.seq, task.index, self._n, task))

    def pop(self) -> PartitionTask | None:
        return heapq.heappop(self._heap)[-1] if self._heap else None

    def __len__(self) -> int:
        return len(self._heap)


@dataclasses.dataclass(frozen=True)
class PluginRecord:
    """An installed plugin as loading found it: name (its entry point's),
    distribution ("name version", "" when not known), registered (what it
    added: "provider KIND", "scheduler NAME", "result sink NAME"), and why
    it was skipped (None when it was loaded)."""
    name: str
    distribution: str = ""
    registered: tuple[str, ...] = ()
    why: str | None = None


class PluginEntry(TypedDict):
    """A plugin in Registry.plugin_report: what it registered when it was
    loaded, why when it was skipped."""
    name: str
    distribution: str
    registered: NotRequired[list[str]]
    why: NotRequired[str]


class PluginReport(TypedDict):
    loaded: list[PluginEntry]
    skipped: list[PluginEntry]


class Registry:
    """Providers, schedulers and sinks, as plugins register them; plugins: the
    record of the plugins that were loaded into it or skipped."""

    def __init__(self) -> None:
        self.providers: dict[str, SynthesisProvider] = {}
        self.schedulers: dict[str, SchedulerFactory] = {"builtin": FifoScheduler, "priority": PriorityScheduler}
        self.sinks: dict[str, ResultSink] = {}
        self.clusters: dict[str, ClusterFactory] = {}
        self.plugins: list[PluginRecord] = []
        self._owners: dict[str, str] = {}      # "scheduler NAME" -> the plugin that added it through merge
        self._lock = threading.Lock()

    def add_provider(self, provider: SynthesisProvider) -> None:
        if not isinstance(provider, SynthesisProvider):
            raise InvalidInputError(f"{provider!r} is not a synthesis provider (kinds, srs_key, load_srs, synthesize)")
        with self._lock:
            for kind in provider.kinds:
                if kind in self.providers and self.providers[kind] is not provider:
                    raise InvalidInputError(f"two synthesis providers for job kind {kind!r}")
                self.providers[kind] = provider

    def add_scheduler(self, name: str, factory: SchedulerFactory) -> None:
        """factory() makes a Scheduler; selected by the setting engine.scheduler = name."""
        with self._lock:
            if name in self.schedulers and self.schedulers[name] is not factory:
                raise InvalidInputError(f"two schedulers named {name!r}")
            self.schedulers[name] = factory

    def add_sink(self, name: str, sink: ResultSink) -> None:
        """sink.deliver(result) gets the finished jobs of the engines whose
        setting engine.result_sinks names it."""
        if not isinstance(name, str) or not name:
            raise InvalidInputError(f"a result sink's name must be a non-empty string, got {name!r}")
        if not isinstance(sink, ResultSink):
            raise InvalidInputError(f"{sink!r} is not a result sink (deliver)")
        with self._lock:
            if name in self.sinks and self.sinks[name] is not sink:
                raise InvalidInputError(f"two result sinks named {name!r}")
            self.sinks[name] = sink

    def add_cluster(self, name: str, factory: ClusterFactory) -> None:
        """factory(config, registry) makes an engine.cluster.Cluster; selected by
        the setting engine.cluster = name."""
        if not isinstance(name, str) or not name or not callable(factory):
            raise InvalidInputError(f"a cluster needs a non-empty name and a factory, got {name!r}, {factory!r}")
        with self._lock:
            if name in self.clusters and self.clusters[name] is not factory:
                raise InvalidInputError(f"two clusters named {name!r}")
            self.clusters[name] = factory

    def merge(self, other: "Registry", owner: str = "") -> tuple[str, ...]:
        """Add everything other holds that this one does not, all or nothing:
        InvalidInputError naming the first kind or name both hold with
        different objects (and the plugin that registered it first, when it
        came through merge). owner: the plugin other's entries come from.
        Returns what was added ("provider KIND", "scheduler NAME", "result sink NAME", "cluster NAME")."""
        with self._lock:
            providers = self._missing("provider", self.providers, other.providers)
            schedulers = self._missing("scheduler", self.schedulers, other.schedulers)
            sinks = self._missing("result sink", self.sinks, other.sinks)
            clusters = self._missing("cluster", self.clusters, other.clusters)
            self.providers.update(providers)
            self.schedulers.update(schedulers)
            self.sinks.update(sinks)
            self.clusters.update(clusters)
            added = tuple(f"{what} {name}" for what, table in (("provider", providers), ("scheduler", schedulers),
                                                               ("result sink", sinks), ("cluster", clusters))
                          for name in table)
            for entry in added:
                self._owners[entry] = owner
            return added

    def _missing(self, what: str, mine: dict[str, _T], theirs: dict[str, _T]) -> dict[str, _T]:
        """What theirs holds that mine does not, in theirs' order (caller holds the
        lock); InvalidInputError for a name both hold with different objects."""
        new: dict[str, _T] = {}
        for name, obj in theirs.items():
            if name in mine and mine[name] is not obj:
                first = self._owners.get(f"{what} {name}")
                by = f" by plugin {first!r}" if first else ""
                raise InvalidInputError(f"{what} {name!r} is registered already{by}")
            if name not in mine:
                new[name] = obj
        return new

    def enabled_sinks(self, names: Iterable[str]) -> list[tuple[str, ResultSink]]:
        """The sinks named (the setting engine.result_sinks), in that order;
        EngineError naming one that is not registered."""
        missing = [n for n in names if n not in self.sinks]
        if missing:
            raise EngineError(f"engine.result_sinks names {', '.join(map(repr, missing))}, not registered "
                              f"(registered: {', '.join(sorted(self.sinks)) or 'none'}; `porep-prover plugins` "
                              "lists them and any plugin that was skipped)")
        return [(n, self.sinks[n]) for n in dict.fromkeys(names)]

    def contents(self) -> dict[str, dict[str, str]]:
        """Everything registered, by what it is: {"providers": {kind: owner},
        "schedulers", "result_sinks", "clusters": {name: owner}}, owner the
        plugin that registered it or "built in"."""
        with self._lock:
            tables: tuple[tuple[str, str, Mapping[str, object]], ...] = (
                ("providers", "provider", self.providers), ("schedulers", "scheduler", self.schedulers),
                ("result_sinks", "result sink", self.sinks), ("clusters", "cluster", self.clusters))
            return {key: {name: self._owners.get(f"{what} {name}", "built in") for name in sorted(table)}
                    for key, what, table in tables}

    def plugin_report(self) -> PluginReport:
        """{"loaded": [{name, distribution, registered}], "skipped": [{name, distribution, why}]}."""
        return {"loaded": [{"name": p.name, "distribution": p.distribution, "registered": list(p.registered)}
                           for p in self.plugins if p.why is None],
                "skipped": [{"name": p.name, "distribution": p.distribution, "why": p.why}
                            for p in self.plugins if p.why is not None]}

    def payload_from_json(self, kind: str, obj: object, partitions: int) -> object:
        """The payload of a job of kind with `partitions` partitions, from a
        JSON object: the provider's parse_payload(obj, partitions), or obj
        itself when it has none. EngineError when no provider serves kind;
        InvalidInputError when obj is not a dict, or what parse_payload raises."""
        provider = self.provider(kind)
        if not isinstance(obj, dict):
            raise InvalidInputError(f"a {kind} job's payload must be a JSON object, got {type(obj).__name__}")
        parse = getattr(provider, "parse_payload", None)
        return parse(obj, partitions) if parse is not None else obj

    def partition_constraints(self, kind: str, payload: object) -> int | None:
        """The constraints of one partition of a job of kind with this
        payload (its provider's constraints(payload)); None when the provider
        does not say. InvalidInputError when what it says is not a count (or it raises)."""
        measure = getattr(self.provider(kind), "constraints", None)
        if measure is None:
            return None
        try:
            n = measure(payload)
        except Exception as exc:  # noqa: BLE001 - the provider's reason, as bad input
            raise InvalidInputError(f"a {kind} job's payload has no constraint count: {exc}") from exc
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InvalidInputError(f"the {kind} provider counted {n!r} constraints a partition: not a count")
        return n

    def payload_paths(self, kind: str) -> tuple[str, ...]:
        """The payload keys that hold paths of files kind's provider reads
        (its payload_paths; none when it declares none). EngineError when no
        provider serves kind."""
        paths = getattr(self.provider(kind), "payload_paths", ())
        return tuple(paths)

    def provider(self, kind: str) -> SynthesisProvider:
        try:
            return self.providers[kind]
        except KeyError:
            raise EngineError(f"no synthesis provider for job kind {kind!r} "
                              f"(registered: {', '.join(sorted(self.providers)) or 'none'})") from None

    def cluster(self, config: EngineConfig) -> Cluster | None:
        """The Cluster the setting engine.cluster names, made from config
        (None when it names none: this host proves); EngineError when no
        plugin registered that name; what its factory raises (ConfigError)."""
        name = config.get("engine.cluster")
        if not name:
            return None
        try:
            factory = self.clusters[name]
        except KeyError:
            raise EngineError(f"engine.cluster names {name!r}, not registered (registered: "
                              f"{', '.join(sorted(self.clusters)) or 'none'}; the plugin porep-prover-ray "
                              "registers 'ray')") from None
        made = factory(config, self)
        if not isinstance(made, Cluster):
            raise EngineError(f"cluster {name!r} does not implement start / stop / status / preload / evict_srs")
        return made

    def scheduler(self, name: str) -> Scheduler:
        try:
            factory = self.schedulers[name or "builtin"]
        except KeyError:
            raise EngineError(f"no scheduler named {name!r} (registered: {', '.join(sorted(self.schedulers))})") \
                from None
        sched = factory()
        if not isinstance(sched, Scheduler):
            raise EngineError(f"scheduler {name!r} does not implement push / pop / __len__")
        return sched
