# SPDX-License-Identifier: Apache-2.0
"""The SRS manager: each circuit's parameters loaded once, shared by every
job and worker, kept while in use, dropped when idle past a limit or when
the budget needs room (least recently used first).

Callers take a lease for as long as they use a set (`with srs.lease(key,
loader) as params:`); a set with leases is never evicted. Eviction calls
on_evict(params) (the engine frees the device copies there) and on_drop(key)
(the engine drops the set's memory plan).
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Callable, Iterator, TypedDict

from ..host_memory import is_mapped

if TYPE_CHECKING:
    from ..groth16.keys import Parameters


def params_bytes(params: Parameters) -> int:
    """Anonymous host bytes of a parameter set's points (mapped ones are page
    cache the kernel reclaims, not counted)."""
    arrays = (q.limbs for q in (params.h, params.l, params.a, params.b_g1, params.b_g2))
    return sum(a.nbytes for a in arrays if not is_mapped(a))


class SrsSetStatus(TypedDict):
    """A parameter set in SrsManager.status (idle_seconds: None before its first lease ends)."""
    key: str
    bytes: int
    leases: int
    loads: int
    idle_seconds: float | None
    loading: bool


@dataclasses.dataclass
class _Entry:
    params: Parameters | None = None     # None while loading
    nbytes: int = 0
    leases: int = 0
    last_used: float = 0.0
    loads: int = 0
    loading: bool = False


class SrsManager:
    """Parameters by key, loaded on first use (concurrent askers wait for one load)."""

    def __init__(self, budget_bytes: int = 0, idle_evict_seconds: float = 0.0,
                 on_evict: Callable[[Parameters], None] | None = None,
                 on_drop: Callable[[str], None] | None = None):
        self.budget, self.idle = budget_bytes, idle_evict_seconds
        self.on_evict, self.on_drop = on_evict, on_drop
        self._entries: dict[str, _Entry] = {}
        self._cond = threading.Condition()

    def _load(self, key: str, loader: Callable[[], Parameters]) -> tuple[_Entry, Parameters]:
        """The entry of key, leased, and its parameters."""
        with self._cond:
            while True:
                entry = self._entries.get(key)
                if entry is None:
                    entry = self._entries[key] = _Entry(loading=True)
                    break
                if entry.params is None:        # loading (a load that fails leaves no entry)
                    self._cond.wait()
                    continue
                entry.leases += 1
                return entry, entry.params
        try:
            params = loader()
        except BaseException:
            with self._cond:
                del self._entries[key]
                self._cond.notify_all()
            raise
        with self._cond:
            entry.params, entry.nbytes, entry.loading = params, params_bytes(params), False
            entry.loads += 1
            entry.leases += 1
            self._cond.notify_all()
            self._make_room(keep=key)
        return entry, params

    @contextlib.contextmanager
    def lease(self, key: str, loader: Callable[[], Parameters]) -> Iterator[Parameters]:
        """The parameters for key (loaded by loader() if absent), held for the block."""
        entry, params = self._load(key, loader)
        try:
            yield params
        finally:
            with self._cond:
                entry.leases -= 1
                entry.last_used = time.monotonic()

    def get(self, key: str, loader: Callable[[], Parameters]) -> Parameters:
        """Load (or find) without holding a lease."""
        with self.lease(key, loader) as params:
            return params

    def resident_bytes(self) -> int:
        """Host bytes of the parameter sets loaded now."""
        with self._cond:
            return sum(e.nbytes for e in self._entries.values())

    def preload(self, items: dict[str, Callable[[], Parameters]]) -> None:
        for key, loader in items.items():
            self.get(key, loader)

    def _make_room(self, keep: str) -> None:
        """Evict idle sets, least recently used first, while over the budget (caller holds the lock)."""
        if not self.budget:
            return
        total = sum(e.nbytes for e in self._entries.values())
        for key, entry in sorted(self._entries.items(), key=lambda kv: kv[1].last_used):
            if total <= self.budget:
                break
            if key != keep and entry.leases == 0 and entry.params is not None:
                total -= entry.nbytes
                self._drop(key)

    def evict_idle(self, now: float | None = None) -> list[str]:
        """Drop the sets unused for idle_evict_seconds; returns their keys."""
        if not self.idle:
            return []
        now = time.monotonic() if now is None else now
        with self._cond:
            stale = [k for k, e in self._entries.items()
                     if e.leases == 0 and e.params is not None and now - e.last_used >= self.idle]
            for key in stale:
                self._drop(key)
        return stale

    def evict(self, key: str) -> int | None:
        """Drop the set of key now: the host bytes it held; None when there is
        none loaded, or it is leased or loading (in use)."""
        with self._cond:
            entry = self._entries.get(key)
            if entry is None or entry.leases or entry.params is None:
                return None
            self._drop(key)
            return entry.nbytes

    def loaded(self, key: str) -> bool:
        """Whether the set of key is loaded now."""
        with self._cond:
            entry = self._entries.get(key)
            return entry is not None and entry.params is not None

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key)
        if self.on_evict is not None and entry.params is not None:      # (only loaded sets are dropped)
            self.on_evict(entry.params)
        if self.on_drop is not None:
            self.on_drop(key)

    def clear(self) -> None:
        with self._cond:
            for key in [k for k, e in self._entries.items() if e.params is not None]:
                self._drop(key)

    def status(self) -> list[SrsSetStatus]:
        now = time.monotonic()
        with self._cond:
            return [{"key": k, "bytes": e.nbytes, "leases": e.leases, "loads": e.loads,
                     "idle_seconds": round(now - e.last_used, 3) if e.last_used else None,
                     "loading": e.loading}
                    for k, e in self._entries.items()]
