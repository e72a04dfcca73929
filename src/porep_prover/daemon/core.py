# SPDX-License-Identifier: Apache-2.0
"""The daemon's parts, wired: its settings, the state folder (held by one
daemon at a time), the plugins and the built-in "demo" kind, the engine,
the journal, the jobs, the metrics and the sweep of old results.

    Daemon(config).start()      state folder locked, engine started, unfinished jobs resumed
    ... the service calls submit / wait / cancel / status through daemon.jobs and daemon ...
    daemon.drain()              no more jobs; partitions in flight finish (drain_timeout_seconds);
                                the rest stays in the journal for the next start

When the daemon runs, providers' own caches live in the state folder:
POREP_PROVER_PARAMS_CACHE is set to <state_dir>/params-cache (the
porep-shaped plugin makes its parameters there), and POREP_PROVER_RESULT_DIR,
unless set, to <state_dir>/dir-sink (where the dir-sink plugin writes, when
engine.result_sinks names it).
"""
from __future__ import annotations

import collections
import contextlib
import fcntl
import logging
import os
import threading
import time
from typing import IO

from .._version import __version__
from ..engine import Engine, Job, Registry
from ..errors import ConfigError
from ..hooks import collect_registry, plugin_manager
from . import payloads
from .demo import DemoProvider
from .jobs import JobBook
from .journal import Journal
from .metrics import DaemonMetrics
from .private import make_private
from .settings import DaemonSettings
from .status_http import engine_status_view

LOG = logging.getLogger("porep_prover.daemon")
PRIORITY_NAMES = {1: "low", 2: "normal", 3: "high", 4: "critical"}   # the service's Priority numbers
SWEEP_SECONDS = 60.0            # the sweep runs this often at most (and at least every retention / 4)


class Daemon:
    """One proving daemon. config: an EngineConfig (its [daemon] section and
    the engine's); start() before use. ConfigError for bad [daemon] settings
    (DaemonSettings.resolve) and for a state folder another daemon holds."""

    def __init__(self, config):
        self.config = config
        self.settings = DaemonSettings.resolve(config)
        self.started = time.time()
        self.engine: Engine | None = None
        self.registry: Registry | None = None
        self.jobs: JobBook | None = None
        self.journal: Journal | None = None
        self.metrics: DaemonMetrics | None = None
        self._lock_file: IO[str] | None = None
        self._sweeping = threading.Event()
        self._sweeper: threading.Thread | None = None

    def start(self) -> "Daemon":
        """Lock the state folder, start the engine, resume the journal's unfinished jobs."""
        state = self.settings.state_dir
        os.makedirs(state, mode=0o700, exist_ok=True)
        make_private(state)                 # a folder an operator made first, with files of a umask of 022
        self._lock_state(state)
        self._provider_caches(state, self.settings.params_cache_bytes)
        pm = plugin_manager()
        registry = collect_registry(pm)
        registry.add_provider(DemoProvider(os.environ["POREP_PROVER_PARAMS_CACHE"]))   # the kinds' one cache
        config = self.config
        if not config.get("engine.scheduler"):      # the engine's "priority": CRITICAL passes every waiting job
            config = config.replace(**{"engine.scheduler": "priority"})
        self.registry = registry
        unknown = [k for k in self.settings.kinds if k not in registry.providers or k == "inline"]
        if unknown:
            raise ConfigError(f"daemon.kinds names {', '.join(map(repr, unknown))}, not installed (installed: "
                              f"{', '.join(sorted(k for k in registry.providers if k != 'inline'))})",
                              key="daemon.kinds")
        self.journal = Journal(state)
        make_private(state)                 # the journal's files (and the lock) as they were created
        self.journal.sweep(self.settings.result_retention, self.settings.fetched_retention, orphans=True)
        self.metrics = DaemonMetrics()
        self.engine = Engine(config, registry=registry, plugins=pm)
        self.jobs = JobBook(self.engine, registry, self.journal, self.settings, self.metrics)
        resumed = self.jobs.resume()
        if resumed:
            LOG.info("resumed %d unfinished jobs from the journal", resumed)
        self._sweeper = threading.Thread(target=self._sweep_loop, name="daemon-sweep", daemon=True)
        self._sweeper.start()
        return self

    def _lock_state(self, state: str) -> None:
        path = os.path.join(state, "daemon.lock")
        f = open(path, "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            f.close()
            raise ConfigError(f"daemon.state_dir {state} is in use by another daemon (pid {holder})",
                              key="daemon.state_dir") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        self._lock_file = f

    @staticmethod
    def _provider_caches(state: str, bound: int) -> None:
        cache = os.path.join(state, "params-cache")
        given = os.environ.get("POREP_PROVER_PARAMS_CACHE")
        if given and os.path.abspath(given) != cache:
            LOG.info("POREP_PROVER_PARAMS_CACHE=%s replaced by %s: the daemon writes only in its state folder",
                     given, cache)
        os.environ["POREP_PROVER_PARAMS_CACHE"] = cache
        os.environ["POREP_PROVER_PARAMS_CACHE_GIB"] = str(bound >> 30)    # the kinds read it beside the folder
        os.environ.setdefault("POREP_PROVER_RESULT_DIR", os.path.join(state, "dir-sink"))

    def _sweep_loop(self) -> None:
        journal = self.journal
        assert journal is not None              # start() opens it before the sweep starts
        every = max(1.0, min(SWEEP_SECONDS, self.settings.result_retention / 4))
        while not self._sweeping.wait(every):
            try:
                removed = journal.sweep(self.settings.result_retention, self.settings.fetched_retention)
                if removed:
                    LOG.info("removed %d finished jobs past their retention", len(removed))
            except Exception:  # noqa: BLE001 - the next sweep tries again
                LOG.exception("sweeping the journal failed")

    # ------------------------------------------------------------ the end

    def drain(self) -> None:
        """Accept no more jobs; let the partitions in flight finish, up to
        daemon.drain_timeout_seconds (their proofs are journaled); stop the
        engine. Jobs not finished stay in the journal and resume at the next
        start. Waits for a job end now."""
        if self.jobs is None:
            return
        assert self.engine is not None          # start() makes the engine before the jobs
        self.jobs.close()
        LOG.info("draining: %d jobs unfinished, up to %.3g s for the partitions in flight", len(self.jobs.live()),
                 self.settings.drain_timeout)
        self.engine.drain(self.settings.drain_timeout)
        self.jobs.stop()

    def close(self) -> None:
        """After drain() and the service's end: the sweep, the journal, the state folder's lock."""
        self._sweeping.set()
        if self._sweeper is not None:
            self._sweeper.join(5.0)
        if self.journal is not None:
            self.journal.close()
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None

    # ------------------------------------------------------------ asking

    def status(self) -> dict:
        """The status dict (its keys: status_http.StatusServer's docstring)."""
        jobs = self.jobs
        assert jobs is not None, "Daemon.start() first"
        out = {"version": __version__, "uptime_seconds": time.time() - self.started}
        out.update(engine_status_view(self.engine))
        out["accepting"] = bool(out["accepting"] and jobs.accepting)
        queue: collections.Counter[str] = collections.Counter()
        counts = collections.Counter({"queued": 0, "running": 0, **jobs.finished})
        active = []
        for live in jobs.live():
            record = live.record
            progress = jobs.progress(record)
            if progress["state"] not in ("queued", "running"):
                continue           # ended just now
            counts[progress["state"]] += 1
            priority = PRIORITY_NAMES.get(record.priority, "normal")
            if progress["state"] == "queued":
                queue[priority] += 1
            active.append({"job_id": record.id, "request_id": record.request_id or "", "kind": record.kind,
                           "priority": priority, "state": progress["state"], "partitions": record.partitions,
                           "queued": progress["queued"], "in_flight": progress["in_flight"],
                           "proved": progress["proved"], "failed": progress["failed"],
                           "submitted_unix_ms": int(record.submitted * 1000)})
        out["queue"] = {name: queue[name] for name in PRIORITY_NAMES.values()}
        out["jobs"] = {"counts": dict(counts), "active": active}
        return out

    def preload(self, kind: str, data: bytes) -> dict:
        """Load the parameters of kind for the payload now: the engine's
        preload answer. The payload is read as a job's of as many partitions
        as its longest list of paths has entries (one per partition), else
        one. Raises as JobBook.payload."""
        assert self.registry is not None and self.jobs is not None and self.engine is not None, \
            "Daemon.start() first"
        obj = payloads.decode(data)
        lists = [len(v) for k, v in obj.items() if isinstance(v, list) and k in self.registry.payload_paths(kind)] \
            if kind in self.registry.providers else []
        partitions = max([1, *lists])
        _, payload = self.jobs.payload(kind, partitions, data)
        return self.engine.preload(Job(kind, partitions, payload))

    def evict(self, key: str) -> int | None:
        assert self.engine is not None, "Daemon.start() first"
        return self.engine.evict_srs(key)

