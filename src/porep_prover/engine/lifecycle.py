# SPDX-License-Identifier: Apache-2.0
"""An engine's threads from start to shutdown, and the one process-wide
setting an engine needs: Python's thread switch interval.
"""
from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from typing import TYPE_CHECKING, Callable, TypeVarTuple

from .stages import STOP

if TYPE_CHECKING:
    from .devices import ProvingDevice
    from .settings import EngineSettings
    from .stages import Stages

_Ts = TypeVarTuple("_Ts")

LOG = logging.getLogger("porep_prover.engine")

JOIN_SECONDS = 30.0        # the longest a shutdown waits for its workers to end (a kernel region running, ...)
STOP_GRACE_SECONDS = 1.0   # what it gives them past its deadline to see the stop
MAX_RESTART_PAUSE_SECONDS = 5.0   # the longest pause before a failed worker's loop starts again


class SwitchInterval:
    """Python's thread switch interval (sys.setswitchinterval), held short
    while any engine runs, as one process-wide knob counted by its holders.

    A device worker woken by its device lock's release needs the interpreter
    lock to launch its kernels; at the default 5 ms interval the GPU idles
    that long. The interval is the interpreter's, not an engine's: it cannot
    be made per engine, and an engine that set it and put it back at
    shutdown would undo what another engine still running asked for. So
    each running engine holds a request (engine.switch_interval_ms), the
    interval is the shortest of them (never longer than the interpreter's
    own), and when the last holder lets go the interval is put back, unless
    someone else changed it meanwhile (theirs is kept)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, float] = {}
        self._original = sys.getswitchinterval()    # what to put back (read again as the first holder asks)
        self._set: float | None = None     # what this knob last set
        self._tokens = iter(range(1, sys.maxsize))

    def hold(self, seconds: float) -> int | None:
        """Ask for at most seconds (0: no request); a token for release(), None when nothing was asked."""
        if seconds <= 0:
            return None
        with self._lock:
            if not self._held:
                self._original = sys.getswitchinterval()
            token = next(self._tokens)
            self._held[token] = seconds
            self._apply()
            return token

    def release(self, token: int | None) -> None:
        if token is None:
            return
        with self._lock:
            if self._held.pop(token, None) is None:
                return
            if self._held:
                self._apply()
                return
            if sys.getswitchinterval() == self._set:
                sys.setswitchinterval(self._original)
            self._set = None

    def _apply(self) -> None:
        if self._set is not None and sys.getswitchinterval() != self._set:
            self._original = sys.getswitchinterval()     # changed by someone else: theirs is the one to restore
        sys.setswitchinterval(min(self._original, *self._held.values()))
        self._set = sys.getswitchinterval()       # as the interpreter keeps it (whole microseconds)


SWITCH_INTERVAL = SwitchInterval()


URGENT = "synth_urgent"     # the name of the synthesis worker of urgent partitions (stages.Stages)


class WorkerThreads:
    """The threads of an engine's stages: partition_workers synthesis
    workers (synth0, ...), from the first urgent partition on one more, of
    urgent partitions alone (synth_urgent: see stages; started by the job
    table's on_urgent), gpu_workers_per_device device workers per device
    (gpu0.w0, gpu0.w1, ...) and one finalizer per device worker
    (finalize_0, ...): the names the timeline's events carry.

    A worker whose loop raises (its partition failed first, see stages) is
    replaced: the loop starts again on the same thread, logged, after a
    pause that grows with its failures (a loop that always fails does not
    spin). A synthesis worker stalled in a provider's call gets a stand-in
    (stand_in: synth0.1, ...), for at most partition_workers stalled at once."""

    def __init__(self, stages: Stages, settings: EngineSettings, devices: list[ProvingDevice]):
        self.stages, self.settings, self.devices = stages, settings, devices
        self._synthesis: list[threading.Thread] = []
        self._device: list[threading.Thread] = []
        self._finalizers: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._relieved: list[threading.Thread] = []     # stalled workers with a stand-in, until they end
        self._stand_in_names = iter(range(1, sys.maxsize))
        stages.stand_in = self.stand_in
        stages.table.on_urgent = self.start_urgent

    def start_urgent(self) -> None:
        """The synthesis worker of urgent partitions started (once: the job
        table calls this the first time one waits; nothing once stopping)."""
        with self._lock:
            if not self.stages.table.stopping:
                self._synthesis.append(self._spawn(URGENT, self.stages.synthesis_loop, True))

    def start(self) -> None:
        for i in range(self.settings.partition_workers):
            self._synthesis.append(self._spawn(f"synth{i}", self.stages.synthesis_loop))
        for device in self.devices:
            for w in range(self.settings.gpu_workers_per_device):
                self._device.append(self._spawn(f"{device.label}.w{w}", self.stages.device_loop, device))
        for i in range(max(1, len(self._device))):
            self._finalizers.append(self._spawn(f"finalize_{i}", self.stages.finalizers.loop))

    def stand_in(self, stalled: str) -> bool:
        """A synthesis worker in place of `stalled`, the calling thread (which
        ends once its call returns); False when partition_workers stalled
        workers wait on their calls already (the threads stay bounded
        whatever a provider does), or the engine is stopping."""
        with self._lock:
            self._relieved = [t for t in self._relieved if t.is_alive()]
            if self.stages.table.stopping or len(self._relieved) >= self.settings.partition_workers:
                return False
            kind = stalled.split('.')[0]
            name = f"{kind}.{next(self._stand_in_names)}"
            LOG.warning("synthesis worker %s stalled in a provider's call past %.3g s "
                        "(engine.provider_stall_seconds): %s takes its place", stalled,
                        self.settings.provider_stall, name)
            self._relieved.append(threading.current_thread())
            self._synthesis.append(self._spawn(name, self.stages.synthesis_loop, kind == URGENT))
            return True

    def is_device_worker(self, name: str) -> bool:
        return any(t.name == name for t in self._device)

    def _spawn(self, name: str, target: Callable[[str, *_Ts], None], *args: *_Ts) -> threading.Thread:
        thread = threading.Thread(target=self._supervise, args=(name, target, args), name=name, daemon=True)
        thread.start()
        return thread

    def _supervise(self, name: str, target: Callable[[str, *_Ts], None], args: tuple[*_Ts]) -> None:
        """target(name, *args) until it returns; started again while it raises and the engine runs."""
        failures = 0
        while True:
            try:
                target(name, *args)
                return
            except BaseException:  # noqa: BLE001 - a worker outlives what kills its loop
                if self.stages.table.stopping:
                    return
                failures += 1
                LOG.exception("worker %s failed (%d times); a fresh loop takes its place", name, failures)
                time.sleep(min(MAX_RESTART_PAUSE_SECONDS, 0.05 * 2 ** min(failures, 10)))

    def lanes(self) -> list[tuple[str, str, str]]:
        """(name, role: "synthesis" | "device" | "finalizer", device label or
        "") of every worker, synthesis workers first (the timeline's lanes)."""
        per_device = self.settings.gpu_workers_per_device
        return ([(t.name, "synthesis", "") for t in self._synthesis]
                + [(t.name, "device", self.devices[i // per_device].label) for i, t in enumerate(self._device)]
                + [(t.name, "finalizer", "") for t in self._finalizers])

    def stop(self, deadline: float) -> list[str]:
        """End every worker (the caller has stopped the job table: the
        synthesis workers end by themselves): the device workers after what
        the ready queue holds, then the finalizers after what they were
        handed. Waits until deadline (time.monotonic()) at most; returns the
        names of the workers still running then (daemon threads, left)."""
        for _ in self._device:
            try:
                self.stages.ready.put(STOP, timeout=_left(deadline))
            except queue.Full:
                break
        for thread in self._synthesis + self._device:
            thread.join(_left(deadline))
        for _ in self._finalizers:
            self.stages.proved.put(STOP)
        for thread in self._finalizers:
            thread.join(_left(deadline))
        return [t.name for t in self._synthesis + self._device + self._finalizers if t.is_alive()]


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())
