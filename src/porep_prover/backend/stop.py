# SPDX-License-Identifier: Apache-2.0
"""A job's stop flag, and the scope in which the work for one job reads it.

A StopFlag is one int32 in an array of its own, so that native loops read
it without the GIL, by address, between their pieces of work (an MSM's
window tasks, an NTT pass, a witness's instances): set once when its job
ends, never cleared. An engine runs a partition's synthesis and kernel
region inside stop_scope(job.stop); the host's backend hands the scope's
flag to its native kernels, and the region's runner checks it between
steps. A kernel that sees it set returns early with STOPPED, which the
backend raises as JobCancelledError: the partition's work is dropped, its
result never used.

    flag = StopFlag()
    with stop_scope(flag):
        ...                      current_stop() is flag; raise_if_stopped() raises once flag.set()
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from ..errors import JobCancelledError

STOPPED = -3          # what a native kernel returns when it saw its stop flag set

_CURRENT: contextvars.ContextVar[StopFlag | None] = contextvars.ContextVar("porep_prover_stop", default=None)


class StopFlag:
    """Whether the work for one job is to stop: array, one int32 (0: go on,
    1: stop) that native code reads by address; set() from any thread."""

    __slots__ = ("array",)

    def __init__(self) -> None:
        self.array: NDArray[np.int32] = np.zeros(1, np.int32)

    def set(self) -> None:
        self.array[0] = 1

    @property
    def is_set(self) -> bool:
        return bool(self.array[0])

    def __repr__(self) -> str:
        return f"StopFlag({'set' if self.is_set else 'clear'})"


@contextlib.contextmanager
def stop_scope(flag: StopFlag | None) -> Iterator[StopFlag | None]:
    """The calling thread's work reads flag (None: nothing stops it) until the block ends."""
    token = _CURRENT.set(flag)
    try:
        yield flag
    finally:
        _CURRENT.reset(token)


def current_stop() -> StopFlag | None:
    """The flag of the calling thread's scope, None outside any."""
    return _CURRENT.get()


def stop_array() -> NDArray[np.int32] | None:
    """The current scope's flag as native code takes it (None outside any scope)."""
    flag = _CURRENT.get()
    return flag.array if flag is not None else None


def raise_if_stopped(what: str = "the work") -> None:
    """JobCancelledError once the current scope's flag is set."""
    flag = _CURRENT.get()
    if flag is not None and flag.is_set:
        raise JobCancelledError(f"{what} stopped: its job has ended")


def check_native(rc: int, what: str) -> bool:
    """JobCancelledError when a native kernel returned STOPPED; else whether rc is 0."""
    if rc == STOPPED:
        raise JobCancelledError(f"{what} stopped: its job has ended")
    return rc == 0
