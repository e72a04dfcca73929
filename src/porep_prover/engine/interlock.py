# SPDX-License-Identifier: Apache-2.0
"""One lock per physical device, held only around the kernel region.

Workers of a device (gpu_workers_per_device of them) share its lock, found
by the device's identity (a GPU's UUID, "cpu" for the host), never by
worker: two engines or two workers that name the same device get the same
lock. While one worker holds it and runs kernels, the others prepare their
next partition or finish their last one.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from .timeline import Timeline

_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def device_lock(identity: str) -> threading.Lock:
    """The process-wide lock of the device with this identity."""
    with _GUARD:
        lock = _LOCKS.get(identity)
        if lock is None:
            lock = _LOCKS[identity] = threading.Lock()
        return lock


@dataclasses.dataclass
class Region:
    """A kernel region's moments (seconds since the epoch): the lock taken
    (start) and released (end; 0.0 while the block runs)."""
    start: float = 0.0
    end: float = 0.0


@contextlib.contextmanager
def kernel_region(identity: str, timeline: Timeline | None = None, job: str = "", partition: int = -1,
                  worker: str = "") -> Iterator[Region]:
    """Hold the device's lock for the block, which gets a Region; with a
    timeline, LOCK_WAIT when asking, GPU_START once held, GPU_END when
    released (the Region's moments are those events')."""
    lock = device_lock(identity)
    region = Region()
    if timeline is not None:
        timeline.emit("LOCK_WAIT", job, partition, worker, identity)
    with lock:
        region.start = timeline.emit("GPU_START", job, partition, worker, identity).t if timeline is not None \
            else time.time()
        try:
            yield region
        finally:
            region.end = timeline.emit("GPU_END", job, partition, worker, identity).t if timeline is not None \
                else time.time()
