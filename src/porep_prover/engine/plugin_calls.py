# SPDX-License-Identifier: Apache-2.0
"""Plugin calls with time limits: a plugin that never returns costs the work
it was called for, not the engine.

Every call into a plugin (a provider's load_srs and synthesize, a sink's
deliver, a notification hook) runs on a lane: a daemon thread serving one
caller or one plugin, so that whoever waits for it can stop waiting. Python
cannot stop a thread, so a call that outlives its limit keeps running on
its thread, which is left behind:

- a worker's provider lane (call) gives its thread up at the limit (the
  partition fails with PluginTimeoutError) or when the engine stops, and
  the worker's next call gets a fresh thread;
- a sink's or the hooks' lane (Notifications) keeps its thread; while one
  of its calls is past the limit the lane is stuck, and what it would be
  given is skipped (logged) until the call returns.
"""
from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
import time

from ..errors import PluginTimeoutError

LOG = logging.getLogger("porep_prover.engine")


class Stopped(Exception):
    """The engine stopped while a worker waited for a plugin's call (not an error of the job)."""


class PluginLane:
    """Calls to plugins, one at a time in order, on a daemon thread named name.

    limit: seconds one call may take (None: no limit)."""

    def __init__(self, name: str, limit: float | None):
        self.name, self.limit = name, limit
        self._lock = threading.Lock()
        self._inbox: queue.SimpleQueue | None = None
        self._busy_since: float | None = None     # when the call running now started

    def submit(self, fn, *args) -> concurrent.futures.Future | None:
        """fn(*args) queued on the lane: a future of its result; None when
        the lane is stuck (a call of it past its limit has not returned)."""
        with self._lock:
            if self.stuck_for() is not None:
                return None
            if self._inbox is None:
                self._inbox = queue.SimpleQueue()
                threading.Thread(target=self._serve, args=(self._inbox,), name=self.name, daemon=True).start()
            future = concurrent.futures.Future()
            self._inbox.put((future, fn, args))
        return future

    def call(self, what: str, stopped: concurrent.futures.Future, fn, *args):
        """fn(*args) on the lane, waited for: its result, or what it raised;
        PluginTimeoutError after the limit, Stopped when stopped is set first.
        Either way the thread is given up and the next call gets a fresh one."""
        if stopped.done():
            raise Stopped(what)
        future = self.submit(fn, *args)
        if future is None:          # the last call ended past the limit as it was being waited for
            self.abandon()
            future = self.submit(fn, *args)
        done, _ = concurrent.futures.wait((future, stopped), self.limit, concurrent.futures.FIRST_COMPLETED)
        if future in done:
            return future.result()
        self.abandon()
        if stopped in done:
            raise Stopped(what)
        raise PluginTimeoutError(f"{what} did not return within {self.limit:g} s (engine.provider_timeout_seconds; "
                                 "its thread is left running)", what, self.limit)

    def stuck_for(self) -> float | None:
        """Seconds the running call is past its limit; None when it is not."""
        since = self._busy_since
        if since is None or self.limit is None:
            return None
        over = time.monotonic() - since - self.limit
        return over if over > 0 else None

    def abandon(self) -> None:
        """Leave the thread to its running call (it ends after it); the next call starts a fresh one."""
        with self._lock:
            if self._inbox is not None:
                self._inbox.put(None)
            self._inbox, self._busy_since = None, None

    close = abandon

    def _serve(self, inbox: queue.SimpleQueue) -> None:
        while True:
            item = inbox.get()
            if item is None:
                return
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                continue
            if self._inbox is inbox:        # (a thread left behind no longer marks the lane busy)
                self._busy_since = time.monotonic()
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)
            finally:
                if self._inbox is inbox:
                    self._busy_since = None
            del future, fn, args, item      # an idle lane holds nothing of its last call (a witness, a result)


class Notifications:
    """A finished job's delivery to the enabled result sinks, and the
    notification hooks, each sink on a lane of its own and the hooks on one.

    sinks: [(name, sink)]; plugins: a pluggy manager (None: no hooks);
    limit: seconds a sink's or a hook's call may take."""

    def __init__(self, sinks, plugins, limit: float):
        self.limit = limit
        self._sinks = [(name, sink, PluginLane(f"sink.{name}", limit)) for name, sink in sinks]
        self._plugins = plugins
        self._hooks = PluginLane("hooks", limit)

    def deliver(self, result, deadline: float | None = None) -> None:
        """result to every sink at once; returns when each returned, or at its
        limit, or at deadline (time.monotonic()); a sink that raised, did not
        return, or is stuck is logged and the others are not held up."""
        futures = {}
        for name, sink, lane in self._sinks:
            future = lane.submit(sink.deliver, result)
            if future is None:
                LOG.error("result sink %s is in a call past its limit (%.3g s): job %s is not delivered to it",
                          name, self.limit, result.job.id)
            else:
                futures[future] = f"result sink {name} on job {result.job.id}"
        self._wait(futures, deadline)

    def hook(self, hook_name: str, deadline: float | None = None, **kwargs) -> None:
        """A notification hook (every plugin's implementation), within the
        limit; a failure or a stall is logged."""
        if self._plugins is None:
            return
        future = self._hooks.submit(lambda: getattr(self._plugins.hook, hook_name)(**kwargs))
        if future is None:
            LOG.error("hook %s skipped: an earlier hook is in a call past its limit (%.3g s)", hook_name, self.limit)
            return
        self._wait({future: f"hook {hook_name}"}, deadline)

    def _wait(self, futures: dict, deadline: float | None) -> None:
        """Wait for the calls (future -> what was called, for the log) within the limit and deadline."""
        if not futures:
            return
        wait = self.limit if deadline is None else max(0.0, min(self.limit, deadline - time.monotonic()))
        done, late = concurrent.futures.wait(futures, wait)
        for future in done:
            if future.exception() is not None:
                LOG.error("%s failed", futures[future], exc_info=future.exception())
        for future in late:
            LOG.error("%s has not returned within %.3g s; going on without it", futures[future], wait)

    def stuck(self) -> list[str]:
        """The lanes stuck now, by name ("sink.NAME", "hooks")."""
        return [lane.name for _, _, lane in self._sinks if lane.stuck_for() is not None] + \
            ([self._hooks.name] if self._hooks.stuck_for() is not None else [])

    def close(self) -> None:
        """Let the lanes' threads end once their calls return."""
        for _, _, lane in self._sinks:
            lane.close()
        self._hooks.close()
