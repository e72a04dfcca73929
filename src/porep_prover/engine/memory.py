# SPDX-License-Identifier: Apache-2.0
"""Host memory admission: a synthesis starts only when the partition it makes
fits beside the partitions in flight (synthesized and not yet finalized).

The budget is the setting engine.memory_budget_gib, or by default 3/4 of the
host's memory less the parameters loaded now; by default a synthesis also
waits while the host's available memory, less 1/8 of the host, would not
cover it and the syntheses still allocating. With nothing in flight anything
is admitted (with a warning when it does not fit), so that the engine moves on.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ..groth16.keys import Parameters

LOG = logging.getLogger("porep_prover.engine")
WAIT_NOTICE_SECONDS = 5.0        # a synthesis waiting this long for memory is logged (the GPU may idle for it)


def host_memory_bytes() -> int:
    """The host's physical memory (16 GiB where the platform does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 16 << 30


def host_available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (what the kernel can hand out without
    swapping), or None where there is no such file."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def partition_bytes(params: Parameters, abc_on_device: bool = False) -> int:
    """Host bytes one synthesized partition of this circuit holds: a, b, c over
    the domain and the scalars of the l, a and b queries; or, when the device
    evaluates A, B, C and takes the scalars from the witness, the witness."""
    if abc_on_device:
        return 32 * (params.vk.num_inputs + len(params.l))
    return 32 * (3 * (len(params.h) + 1) + len(params.l) + len(params.a) + len(params.b_g1))


class Reservation:
    """One partition's bytes, counted in flight from its synthesis's start to
    its finalization's end. allocated(n): the synthesis ended and holds n
    bytes (the estimate's place); release(): the partition is gone (once;
    again does nothing)."""

    def __init__(self, admission: "MemoryAdmission", nbytes: int):
        self._admission, self.nbytes, self._allocating = admission, nbytes, nbytes

    def allocated(self, nbytes: int) -> None:
        self._admission._settle(self._allocating, self.nbytes - nbytes)
        self._allocating, self.nbytes = 0, nbytes

    def release(self) -> None:
        self._admission._settle(self._allocating, self.nbytes)
        self._allocating = self.nbytes = 0


class MemoryAdmission:
    """Bytes of partitions in flight against the budget.

    budget_bytes: the budget; budget_set: True when it is the setting (then
    neither the parameters loaded nor the host's available memory count);
    resident_bytes(): host bytes of the parameters loaded now."""

    def __init__(self, budget_bytes: int, budget_set: bool, resident_bytes: Callable[[], int]):
        self._budget, self._budget_set, self._resident_bytes = budget_bytes, budget_set, resident_bytes
        self._headroom = host_memory_bytes() // 8
        self._cond = threading.Condition()
        self.in_flight = 0          # bytes of the partitions admitted and not yet released
        self.pending = 0            # of those, bytes of syntheses still running (not yet allocated)
        self._closed = False

    def budget(self) -> int:
        """Bytes partitions in flight may hold now."""
        if self._budget_set:
            return self._budget
        return max(0, self._budget - self._resident_bytes())

    def reserve(self, nbytes: int) -> Reservation | None:
        """Block until a synthesis of nbytes fits (with nothing in flight,
        anything fits); None when the admission closed first."""
        with self._cond:
            since = time.monotonic()
            while self.in_flight and not self._fits(nbytes):
                if self._closed:
                    return None
                if since and time.monotonic() - since > WAIT_NOTICE_SECONDS:
                    since = 0.0     # once per wait
                    LOG.info("a synthesis of %.1f GiB waits for host memory: %.1f GiB in flight, budget %.1f GiB, "
                             "%.1f GiB available", nbytes / 2**30, self.in_flight / 2**30, self.budget() / 2**30,
                             (host_available_bytes() or 0) / 2**30)
                self._cond.wait(0.5)
            if self._closed:
                return None
            if not self.in_flight and not self._fits(nbytes):
                LOG.warning("a synthesis of %.1f GiB starts although %.1f GiB are available (less 1/8 of the "
                            "host kept free) and the budget is %.1f GiB: the host may run out of memory",
                            nbytes / 2**30, max(0, (host_available_bytes() or 0) - self._headroom) / 2**30,
                            self.budget() / 2**30)
            self.in_flight += nbytes
            self.pending += nbytes
            return Reservation(self, nbytes)

    def _fits(self, nbytes: int) -> bool:
        """The budget (caller holds the lock), and by default also the host's
        free memory: what is not yet allocated of the syntheses running plus
        nbytes must leave 1/8 of the host free, so that what else lives in the
        process (a provider's circuit, pinned arenas) is counted as it is."""
        if self.in_flight + nbytes > self.budget():
            return False
        if self._budget_set:
            return True
        available = host_available_bytes()
        return available is None or self.pending + nbytes <= available - self._headroom

    def _settle(self, allocated: int, released: int) -> None:
        """allocated bytes are no longer pending; released bytes leave the count in flight."""
        with self._cond:
            self.pending -= allocated
            self.in_flight -= released
            self._cond.notify_all()

    def close(self) -> None:
        """Wake every waiting synthesis: reserve returns None from now on."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def status(self) -> dict[str, int]:
        with self._cond:
            return {"memory_in_flight": self.in_flight, "memory_budget": self.budget(),
                    "memory_pending": self.pending}
