# SPDX-License-Identifier: Apache-2.0
"""What plugins register, and the plain protocols the engine calls on its hot
paths: synthesis providers (by job kind), schedulers (by name), result sinks.
"""
from __future__ import annotations

import collections
import threading
from typing import Protocol, runtime_checkable

from ..errors import EngineError, InvalidInputError


@runtime_checkable
class SynthesisProvider(Protocol):
    """Turns a job's partitions into circuits and witnesses.

    kinds: the job kinds it serves.
    srs_key(job): names the job's parameters (jobs with one key share one load).
    load_srs(job): those parameters (a groth16.Parameters), called once per key.
    synthesize(job, partition, threads): (R1CS, witness FrArray) of one partition."""
    kinds: tuple

    def srs_key(self, job) -> str: ...

    def load_srs(self, job): ...

    def synthesize(self, job, partition: int, threads: int): ...


@runtime_checkable
class Scheduler(Protocol):
    """Orders partitions for synthesis. push/pop are called under the engine's
    lock (no locking of its own needed); pop returns None when empty."""

    def push(self, task) -> None: ...

    def pop(self): ...

    def __len__(self) -> int: ...


@runtime_checkable
class ResultSink(Protocol):
    """Receives every finished job (result.error set when it failed); an
    exception here is logged and does not reach the engine or other sinks."""

    def deliver(self, result) -> None: ...


class FifoScheduler:
    """First come, first served (the engine's default)."""

    name = "builtin"

    def __init__(self):
        self._q = collections.deque()

    def push(self, task) -> None:
        self._q.append(task)

    def pop(self):
        return self._q.popleft() if self._q else None

    def __len__(self) -> int:
        return len(self._q)


class Registry:
    """Providers, schedulers and sinks, as plugins register them."""

    def __init__(self):
        self.providers: dict[str, SynthesisProvider] = {}
        self.schedulers: dict[str, type] = {"builtin": FifoScheduler}
        self.sinks: list[ResultSink] = []
        self._lock = threading.Lock()

    def add_provider(self, provider) -> None:
        if not isinstance(provider, SynthesisProvider):
            raise InvalidInputError(f"{provider!r} is not a synthesis provider (kinds, srs_key, load_srs, synthesize)")
        with self._lock:
            for kind in provider.kinds:
                if kind in self.providers and self.providers[kind] is not provider:
                    raise InvalidInputError(f"two synthesis providers for job kind {kind!r}")
                self.providers[kind] = provider

    def add_scheduler(self, name: str, factory) -> None:
        """factory() makes a Scheduler; selected by the setting engine.scheduler = name."""
        with self._lock:
            if name in self.schedulers and self.schedulers[name] is not factory:
                raise InvalidInputError(f"two schedulers named {name!r}")
            self.schedulers[name] = factory

    def add_sink(self, sink) -> None:
        if not isinstance(sink, ResultSink):
            raise InvalidInputError(f"{sink!r} is not a result sink (deliver)")
        with self._lock:
            self.sinks.append(sink)

    def provider(self, kind: str) -> SynthesisProvider:
        try:
            return self.providers[kind]
        except KeyError:
            raise EngineError(f"no synthesis provider for job kind {kind!r} "
                              f"(registered: {', '.join(sorted(self.providers)) or 'none'})") from None

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
