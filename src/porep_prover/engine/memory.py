# SPDX-License-Identifier: Apache-2.0
"""Host memory's admission of partitions by the plans.

The host budget (engine.memory_budget_gib; memory.budgets: by default the
host's memory, or its cgroup's limit where lower, less a margin) bounds the
whole process. Out of it come the process's own bytes, once, and what each
loaded parameter set holds by its memory plan (memory.host_plan: its SRS,
circuit, staging arenas); the rest is for partitions in flight, each reserved from its synthesis's start
to its finalization's end. A synthesis waits until its partition fits; one
that does not fit with nothing in flight is refused (HostMemoryError), never
started: nothing is allocated past the budget. Where the budget is the
default, a synthesis also waits while the host's available memory, less the
margin, would not cover it and the syntheses still allocating (other
processes share the host). Waiting syntheses are admitted by priority (their
job's): none is admitted while one of a higher priority waits, so that the
room the partitions in flight give back goes to the most urgent first; an
urgent partition is never admitted past the budget.
"""
from __future__ import annotations

import logging
import threading
import time
import collections
from typing import TYPE_CHECKING, Protocol

from ..errors import HostMemoryError
from ..memory.budgets import host_limit_bytes, host_margin
# what the host has and has available, as the admission and the daemon's status read them
from ..memory.budgets import host_available_bytes as host_available_bytes, host_memory_bytes as host_memory_bytes
from ..memory.sizes import GIB

if TYPE_CHECKING:
    from ..cuda.pinned import Arena      # page-locked host bytes a partition is laid out in

LOG = logging.getLogger("porep_prover.engine")
WAIT_NOTICE_SECONDS = 5.0        # a synthesis waiting this long for memory is logged (the GPU may idle for it)


class ArenaSource(Protocol):
    """Where a partition's arenas come from (a device's cuda.pinned.PinnedPool)."""

    def acquire(self, nbytes: int) -> Arena: ...

    def discard(self, arena: Arena) -> None: ...


class Reservation:
    """One partition's bytes, counted in flight from its synthesis's start to
    its finalization's end. arena: the page-locked bytes it is laid out in
    (None: none asked for, or the host has no devices to read them);
    allocated(n): the synthesis ended and holds n bytes (the estimate's
    place); release(): the partition is gone (once; again does nothing; its
    arena kept for the next partition)."""

    def __init__(self, admission: "MemoryAdmission", nbytes: int, arena: Arena | None = None,
                 allocating: int | None = None):
        # allocating: what the synthesis has yet to take from the host (an arena taken over is taken already)
        self._admission, self.nbytes, self.arena = admission, nbytes, arena
        self._allocating = nbytes if allocating is None else allocating

    def allocated(self, nbytes: int) -> None:
        self._admission._settle(self._allocating, self.nbytes - nbytes)
        self._allocating, self.nbytes = 0, nbytes

    def release(self) -> None:
        arena, self.arena = self.arena, None
        self._admission._settle(self._allocating, self.nbytes, arena)
        self._allocating = self.nbytes = 0


class MemoryAdmission:
    """The host budget: the process's base, what each loaded set holds, and
    the partitions in flight.

    budget_bytes: the host budget; budget_set: it is the setting's (else the
    default, and the host's available memory counts too); base_bytes: the
    process's own bytes (a plan's base).

    With an arena source (set_arenas: the engine's devices' page-locked
    memory) a reservation may come with an arena its partition is laid out
    in; an arena a released partition leaves is kept for the next (page-
    locking is slow) and counted as held until taken again, or given back
    to the host when its room is wanted."""

    def __init__(self, budget_bytes: int, budget_set: bool, base_bytes: int = 0):
        self._budget, self._budget_set, self._base = budget_bytes, budget_set, base_bytes
        self._margin = host_margin(host_limit_bytes())
        self._cond = threading.Condition()
        self._held: dict[str, int] = {}    # bytes each loaded set holds (its plan's), by key
        self.in_flight = 0          # bytes of the partitions admitted and not yet released
        self.pending = 0            # of those, bytes of syntheses still running (not yet allocated)
        self._closed = False
        self._arenas: ArenaSource | None = None
        self._idle: list[Arena] = []    # arenas left by released partitions
        self._waiting: collections.Counter[int] = collections.Counter()   # the priorities of the waiting syntheses

    def set_arenas(self, source: ArenaSource | None) -> None:
        """Where reservations asking for an arena get one (None: nowhere; they get none)."""
        with self._cond:
            self._arenas = source

    def set_base(self, nbytes: int) -> None:
        """The process's own bytes (a plan's base: the interpreter, the devices' contexts)."""
        with self._cond:
            self._base = nbytes
            self._cond.notify_all()

    def room(self) -> int:
        """Bytes partitions in flight may hold now: the budget less the base and what the sets hold."""
        with self._cond:
            return self._room()

    def _room(self) -> int:
        """(caller holds the lock) The budget less the base, the sets' holdings and the idle arenas."""
        idle = sum(a.nbytes for a in self._idle)
        return max(0, self._budget - self._base - sum(self._held.values()) - idle)

    def hold(self, key: str, nbytes: int, partition: int, what: str) -> None:
        """A set of key loaded, holding nbytes while loaded: HostMemoryError
        when, beside the sets already held, it leaves no room for one of its
        partitions (partition bytes). The same key again replaces its bytes."""
        with self._cond:
            others = sum(v for k, v in self._held.items() if k != key)
            room = self._budget - self._base - others - nbytes
            if room < partition:
                loaded = f" beside {len(self._held) - (key in self._held)} other loaded sets holding " \
                         f"{others / GIB:.1f} GiB" if others else ""
                raise HostMemoryError(f"{what}: holds {nbytes / GIB:.1f} GiB and {partition / GIB:.1f} GiB a "
                                      f"partition, under a host budget of {self._budget / GIB:.1f} GiB{loaded} "
                                      f"(the process {self._base / GIB:.1f}): evict a set or raise "
                                      "engine.memory_budget_gib")
            self._held[key] = nbytes
            self._cond.notify_all()

    def add_held(self, key: str, nbytes: int) -> None:
        """More bytes a loaded set holds (its circuit, known at its first partition)."""
        with self._cond:
            if key in self._held:
                self._held[key] += nbytes

    def release_held(self, key: str) -> None:
        """A set of key unloaded: its bytes back (nothing where none are held)."""
        with self._cond:
            self._held.pop(key, None)
            self._cond.notify_all()

    def reserve(self, nbytes: int, arena: int = 0, priority: int = 0) -> Reservation | None:
        """Block until a synthesis of nbytes fits beside the partitions in
        flight and no synthesis of a higher priority waits; None when the
        admission closed first. HostMemoryError when it does not fit with
        nothing in flight (it never could). arena: the bytes of an arena the
        partition is laid out in, part of nbytes (0: none; none either
        without an arena source): an idle one of at least that size taken
        over, else one made (idle ones given back first where their room is
        wanted). priority: its job's (see the module)."""
        source = self._arenas if arena else None
        with self._cond:
            self._waiting[priority] += 1
            try:
                admitted = self._admit(nbytes, arena, source, priority)
            finally:
                self._waiting[priority] -= 1
                if not self._waiting[priority]:
                    del self._waiting[priority]
                self._cond.notify_all()         # a synthesis it held back may go now
        if admitted is None:
            return None
        reused, fresh = admitted
        if source is None or reused is not None:
            return Reservation(self, nbytes, reused, fresh)
        try:
            made = source.acquire(arena)        # page-locking takes long: outside the lock
        except BaseException:
            self._settle(nbytes, nbytes)
            raise
        return Reservation(self, nbytes, made)

    def _admit(self, nbytes: int, arena: int, source: ArenaSource | None, priority: int
               ) -> tuple[Arena | None, int] | None:
        """(caller holds the lock; see reserve) The wait, then nbytes counted
        in flight: (the idle arena taken over or None, the bytes yet to be
        allocated); None when the admission closed first."""
        since = time.monotonic()
        while True:
            if self._closed:
                return None
            if any(p > priority for p in self._waiting):
                self._cond.wait(0.5)
                continue
            if self._fits(nbytes, self._reusable(arena) if source is not None else 0):
                break
            # idle arenas this one would not take give their room back (the one it would take stays)
            if self._give_back_idle(keep=self._reusable(arena) if source is not None else 0):
                continue
            if not self.in_flight and nbytes > self._room():
                raise HostMemoryError(f"a partition of {nbytes / GIB:.2f} GiB does not fit the host budget's "
                                      f"{self._room() / GIB:.2f} GiB left for partitions (budget "
                                      f"{self._budget / GIB:.1f} GiB, the process {self._base / GIB:.1f}, "
                                      f"loaded sets {sum(self._held.values()) / GIB:.1f})")
            if since and time.monotonic() - since > WAIT_NOTICE_SECONDS:
                since = 0.0     # once per wait
                LOG.info("a synthesis of %.1f GiB waits for host memory: %.1f GiB in flight of %.1f GiB left "
                         "for partitions, %.1f GiB available", nbytes / GIB, self.in_flight / GIB,
                         self._room() / GIB, (host_available_bytes() or 0) / GIB)
            self._cond.wait(0.5)
        self._warn_if_short(nbytes)
        reused = self._take_idle(arena) if source is not None else None
        fresh = nbytes - (reused.nbytes if reused is not None else 0)
        self.in_flight += nbytes
        self.pending += fresh
        return reused, fresh

    def _reusable(self, nbytes: int) -> int:
        """(caller holds the lock) Bytes of the idle arena a reservation of an arena of nbytes would take (0: none)."""
        fits = [a.nbytes for a in self._idle if a.nbytes >= nbytes]
        return min(fits) if fits else 0

    def _take_idle(self, nbytes: int) -> Arena | None:
        """(caller holds the lock) The smallest idle arena of at least nbytes, taken out of the idle ones."""
        fits = [a for a in self._idle if a.nbytes >= nbytes]
        if not fits:
            return None
        chosen = min(fits, key=lambda a: a.nbytes)
        self._idle.remove(chosen)
        return chosen

    def _give_back_idle(self, keep: int = 0) -> bool:
        """(caller holds the lock) The idle arenas back to the host, their room
        wanted, but for the smallest of at least keep bytes where keep is not
        0 (the one a waiting reservation would take over); whether any went."""
        fits = [a for a in self._idle if keep and a.nbytes >= keep]
        kept = min(fits, key=lambda a: a.nbytes) if fits else None
        going = [a for a in self._idle if a is not kept]
        self._idle = [kept] if kept is not None else []
        if self._arenas is not None:
            for arena in going:
                self._arenas.discard(arena)
        return bool(going)

    def _warn_if_short(self, nbytes: int) -> None:
        """(caller holds the lock) With nothing in flight under the default
        budget, a warning where the host's available memory is short of nbytes."""
        if self.in_flight or self._budget_set:
            return
        available = host_available_bytes()
        if available is not None and nbytes > available - self._margin:
            LOG.warning("a synthesis of %.1f GiB starts although %.1f GiB are available (less the margin of %.1f "
                        "GiB): the host may run out of memory (other processes hold what the plan counted on)",
                        nbytes / GIB, max(0, available - self._margin) / GIB, self._margin / GIB)

    def _fits(self, nbytes: int, reused: int = 0) -> bool:
        """The budget (caller holds the lock; reused: the bytes of an idle
        arena the partition takes over, counted in nbytes and no longer idle),
        and by default also the host's available memory: what is not yet
        allocated of the syntheses running plus nbytes must leave the margin
        free (other processes share the host). With nothing in flight the
        host's state alone never holds a synthesis back: its memory is what
        the plan counted."""
        if self.in_flight + nbytes > self._room() + reused:
            return False
        if self._budget_set or not self.in_flight:
            return True
        available = host_available_bytes()      # an idle arena taken over is in use already: not new memory
        return available is None or self.pending + nbytes - reused <= available - self._margin

    def _settle(self, allocated: int, released: int, arena: Arena | None = None) -> None:
        """allocated bytes are no longer pending; released bytes leave the count
        in flight; a released partition's arena kept idle (given back once closed)."""
        with self._cond:
            self.pending -= allocated
            self.in_flight -= released
            if arena is not None:
                if self._closed or self._arenas is None:
                    if self._arenas is not None:
                        self._arenas.discard(arena)
                else:
                    self._idle.append(arena)
            self._cond.notify_all()

    def close(self) -> None:
        """Wake every waiting synthesis: reserve returns None from now on; the idle arenas go back to the host."""
        with self._cond:
            self._closed = True
            self._give_back_idle()
            self._cond.notify_all()

    def status(self) -> dict[str, int]:
        """Bytes: memory_budget (the host budget), memory_held (the process's
        base and the loaded sets' holdings), memory_in_flight (partitions),
        memory_pending (of those, syntheses still allocating)."""
        with self._cond:
            return {"memory_budget": self._budget, "memory_held": self._base + sum(self._held.values()),
                    "memory_in_flight": self.in_flight, "memory_pending": self.pending,
                    "memory_idle_arenas": sum(a.nbytes for a in self._idle)}
