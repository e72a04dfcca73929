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
  given is skipped (logged) until the call returns. Deliveries and hooks
  are posted to a thread of their own and made in order, so that no
  engine worker and no job's handle waits on a sink or a hook.
"""
from __future__ import annotations

import collections
import concurrent.futures
import logging
import queue
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar, TypeVarTuple

from ..errors import PluginError, PluginTimeoutError

if TYPE_CHECKING:
    import pluggy

    from .jobs import JobResult
    from .registry import ResultSink

_R = TypeVar("_R")
_Ts = TypeVarTuple("_Ts")
# a call queued on a lane: its future, the function and its arguments (a lane runs calls of any type)
_Call = tuple[Future[Any], Callable[..., object], tuple[object, ...]]

LOG = logging.getLogger("porep_prover.engine")


class Stopped(Exception):
    """The engine stopped while a worker waited for a plugin's call (not an error of the job)."""


class PluginLane:
    """Calls to plugins, one at a time in order, on a daemon thread named name.

    limit: seconds one call may take (None: no limit); stall, on_stall:
    seconds after which a waited call (call()) is reported to on_stall(what),
    once, while the wait goes on (None: never); setting: where the limit
    comes from, for the error's message."""

    def __init__(self, name: str, limit: float | None, stall: float | None = None,
                 on_stall: Callable[[str], None] | None = None, setting: str = "engine.provider_timeout_seconds"):
        self.name, self.limit, self.setting = name, limit, setting
        self.stall, self.on_stall = stall, on_stall
        self._lock = threading.Lock()
        self._inbox: queue.SimpleQueue[_Call | None] | None = None
        self._busy_since: float | None = None     # when the call running now started

    def submit(self, fn: Callable[[*_Ts], _R], *args: *_Ts) -> Future[_R] | None:
        """fn(*args) queued on the lane: a future of its result; None when
        the lane is stuck (a call of it past its limit has not returned)."""
        with self._lock:
            if self.stuck_for() is not None:
                return None
            return self._queue(fn, args)

    def _queue(self, fn: Callable[[*_Ts], _R], args: tuple[*_Ts]) -> Future[_R]:
        """fn(*args) queued (caller holds the lock), on a fresh thread when the lane has none."""
        if self._inbox is None:
            self._inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(self._inbox,), name=self.name, daemon=True).start()
        future: Future[_R] = concurrent.futures.Future()
        self._inbox.put((future, fn, args))
        return future

    def call(self, what: str, stopped: Future[None], fn: Callable[[*_Ts], _R], *args: *_Ts) -> _R:
        """fn(*args) on the lane, waited for: its result, or what it raised
        (PluginError in place of a BaseException that is not an Exception:
        no plugin ends a worker); PluginTimeoutError after the limit, Stopped
        when stopped is set first. Either way the thread is given up and the
        next call gets a fresh one. Past `stall` seconds on_stall(what) is
        called once, and the wait goes on."""
        if stopped.done():
            raise Stopped(what)
        future = self.submit(fn, *args)
        if future is None:          # the last call ended past the limit as it was being waited for
            self.abandon()          # (a fresh thread, so not stuck)
            with self._lock:
                future = self._queue(fn, args)
        done = self._wait_for(what, future, stopped)
        if future in done:
            exc = future.exception()
            if exc is not None and not isinstance(exc, Exception):
                raise PluginError(f"{what} raised {type(exc).__name__}: {exc}") from exc
            return future.result()
        self.abandon()
        if stopped in done:
            raise Stopped(what)
        # (reached with a limit only: a wait without one ends with the call or the stop)
        raise PluginTimeoutError(f"{what} did not return within {self.limit:g} s ({self.setting}; "
                                 "its thread is left running)", what, self.limit or 0.0)

    def _wait_for(self, what: str, future: Future[_R], stopped: Future[None]) -> set[Future[Any]]:
        """The wait of call(): until the call or stopped is done, or the
        limit; on_stall(what) at `stall` seconds (when before the limit)."""
        first = FIRST_COMPLETED
        waited: tuple[Future[Any], ...] = (future, stopped)
        limit, stall, on_stall = self.limit, self.stall, self.on_stall
        if on_stall is None or stall is None or not (limit is None or stall < limit):
            return concurrent.futures.wait(waited, limit, first)[0]
        done = concurrent.futures.wait(waited, stall, first)[0]
        if done:
            return done
        on_stall(what)
        return concurrent.futures.wait(waited, None if limit is None else limit - stall, first)[0]

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

    def _serve(self, inbox: queue.SimpleQueue[_Call | None]) -> None:
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
    notification hooks, in the order they were posted, on a thread of their
    own (the post office), so that neither a job's handle nor the worker that
    concluded it waits on a plugin. Each call goes to a lane: each sink a
    lane of its own, the hooks one.

    sinks: [(name, sink)]; plugins: a pluggy manager (None: no hooks);
    limit: seconds a sink's or a hook's call may take."""

    def __init__(self, sinks: Iterable[tuple[str, ResultSink]], plugins: pluggy.PluginManager | None, limit: float):
        self.limit = limit
        self._sinks = [(name, sink, PluginLane(f"sink.{name}", limit)) for name, sink in sinks]
        self._plugins = plugins
        self._hooks = PluginLane("hooks", limit)
        self._cond = threading.Condition()
        self._posted: collections.deque[tuple[Callable[..., None], tuple[object, ...]]] = collections.deque()
        self._busy = False                  # the post office is making a delivery now
        self._closed = False
        self._office: threading.Thread | None = None

    def deliver(self, result: JobResult) -> None:
        """result posted to every sink (returns at once)."""
        self._post(self._deliver_now, result)

    def hook(self, hook_name: str, **kwargs: object) -> None:
        """A notification hook (every plugin's implementation) posted (returns at once)."""
        if self._plugins is not None:
            self._post(self._hook_now, hook_name, kwargs)

    def flush(self, deadline: float | None) -> bool:
        """Wait until everything posted has been delivered (True), or until
        deadline, time.monotonic(), None: no limit (False; what is left goes
        on in the background, each call within its limit)."""
        with self._cond:
            return bool(self._cond.wait_for(lambda: not (self._posted or self._busy),
                                            None if deadline is None else max(0.0, deadline - time.monotonic())))

    def pending(self) -> int:
        """Deliveries and hooks posted and not done."""
        with self._cond:
            return len(self._posted) + self._busy

    def stuck(self) -> list[str]:
        """The lanes stuck now, by name ("sink.NAME", "hooks")."""
        return [lane.name for _, _, lane in self._sinks if lane.stuck_for() is not None] + \
            ([self._hooks.name] if self._hooks.stuck_for() is not None else [])

    def close(self) -> None:
        """No more posts: what was posted is still delivered, then the lanes'
        threads end once their calls return. A post after close is logged and dropped."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            if self._office is not None:
                return              # the post office closes the lanes when it is done
        self._close_lanes()

    # ------------------------------------------------------------ the post office

    def _post(self, fn: Callable[[*_Ts], None], *args: *_Ts) -> None:
        with self._cond:
            if self._closed:
                LOG.error("%s after the engine stopped: not delivered", _what(fn, args))
                return
            self._posted.append((fn, args))
            if self._office is None:
                self._office = threading.Thread(target=self._serve, name="notifications", daemon=True)
                self._office.start()
            self._cond.notify_all()

    def _serve(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._posted or self._closed)
                if not self._posted:
                    break
                fn, args = self._posted.popleft()
                self._busy = True
            try:
                fn(*args)
            except Exception:  # noqa: BLE001 - the post office outlives any one delivery
                LOG.exception("%s failed", _what(fn, args))
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
            del fn, args            # an idle post office holds no result
        self._close_lanes()

    def _deliver_now(self, result: JobResult) -> None:
        """result to every sink at once; returns when each returned or at its
        limit; a sink that raised, did not return, or is stuck is logged and
        the others are not held up."""
        futures: dict[Future[None], str] = {}
        for name, sink, lane in self._sinks:
            future = lane.submit(sink.deliver, result)
            if future is None:
                LOG.error("result sink %s is in a call past its limit (%.3g s): job %s is not delivered to it",
                          name, self.limit, result.job.id)
            else:
                futures[future] = f"result sink {name} on job {result.job.id}"
        self._wait(futures)

    def _hook_now(self, hook_name: str, kwargs: dict[str, object]) -> None:
        plugins = self._plugins
        if plugins is None:         # (hook() posts none without a manager)
            return
        future = self._hooks.submit(lambda: getattr(plugins.hook, hook_name)(**kwargs))
        if future is None:
            LOG.error("hook %s skipped: an earlier hook is in a call past its limit (%.3g s)", hook_name, self.limit)
            return
        self._wait({future: f"hook {hook_name}"})

    def _wait(self, futures: dict[Future[None], str]) -> None:
        """Wait for the calls (future -> what was called, for the log) within the limit."""
        if not futures:
            return
        done, late = concurrent.futures.wait(futures, self.limit)
        for future in done:
            if future.exception() is not None:
                LOG.error("%s failed", futures[future], exc_info=future.exception())
        for future in late:
            LOG.error("%s has not returned within %.3g s; going on without it", futures[future], self.limit)

    def _close_lanes(self) -> None:
        for _, _, lane in self._sinks:
            lane.close()
        self._hooks.close()


def _what(fn: Callable[..., None], args: tuple[object, ...]) -> str:
    """A posted call, for the log."""
    if args and hasattr(args[0], "job"):
        return f"delivery of job {args[0].job.id}"
    return f"hook {args[0]}" if args else "a notification"
