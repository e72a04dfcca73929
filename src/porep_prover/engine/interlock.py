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
import threading

_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def device_lock(identity: str) -> threading.Lock:
    """The process-wide lock of the device with this identity."""
    with _GUARD:
        lock = _LOCKS.get(identity)
        if lock is None:
            lock = _LOCKS[identity] = threading.Lock()
        return lock


@contextlib.contextmanager
def kernel_region(identity: str, timeline=None, job: str = "", partition: int = -1, worker: str = ""):
    """Hold the device's lock for the block; with a timeline, LOCK_WAIT when
    asking, GPU_START once held, GPU_END when released."""
    lock = device_lock(identity)
    if timeline is not None:
        timeline.emit("LOCK_WAIT", job, partition, worker, identity)
    with lock:
        if timeline is not None:
            timeline.emit("GPU_START", job, partition, worker, identity)
        try:
            yield
        finally:
            if timeline is not None:
                timeline.emit("GPU_END", job, partition, worker, identity)
