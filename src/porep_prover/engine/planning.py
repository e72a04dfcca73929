# SPDX-License-Identifier: Apache-2.0
"""The engine's memory plans: one for each parameter set loaded, made when
the set is loaded (memory.plan_set: the host plan, memory.host_plan, beside
each device's plan under the budget the engine's settings give it,
memory.device_plan, the way chosen among the ways the settings allow),
kept while it is, and the admission's holding of it.

A set is planned from its shape (memory.workload.SrsShape): where its provider
says the shape (srs_shape), before the set is loaded at all, else from the
set once loaded. A set whose plan does not fit is refused
(HostMemoryError: its job fails, nothing of it stays): alone under the
budget, once for good (the settings and the devices do not change while
the engine runs: a later job of its key is refused at once, its parameters
neither loaded nor made again); beside the sets already loaded, until they
are dropped. Its partitions are admitted by the plan's bytes a partition;
the devices' kernel regions run by the devices' plans
(groth16.prover.prove_device's plan); where the devices evaluate A w, B w,
C w, where the queries' scalars are gathered and whether partitions are
laid out in arenas are the plan's choice.
"""
from __future__ import annotations

import collections
import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..errors import HostMemoryError, PluginError
from ..host_memory import is_mapped
from ..memory.choice import DeviceAsk, Ways, plan_set
from ..memory.host_plan import NO_SCRATCH, MemoryPlan, Synthesis, Workers
from ..memory.workload import SrsShape, Workload
from ..r1cs.system import R1CS
from .interlock import kernel_region

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..groth16.keys import Parameters
    from ..memory.device_plan import DevicePlan
    from .devices import ProvingDevice
    from .jobs import Job
    from .memory import MemoryAdmission
    from .registry import SynthesisProvider
    from .settings import EngineSettings

# how a provider's method is called for a job: call(what, method) -> method(job)'s result (a lane's call, within
# the provider's time limit, or a plain call)
ProviderCall = Callable[[str, Callable[["Job"], Any]], Any]

LOG = logging.getLogger("porep_prover.engine")
KEEP_REFUSALS = 64          # refused keys remembered (the oldest forgotten: asked again, refused again)


@dataclasses.dataclass(frozen=True)
class Circuit:
    """What a provider says of a set's circuit before a partition: its R1CS
    (None: not given), the bytes it keeps for it where more than the R1CS's
    own (circuit_bytes; None: not said), what a synthesis holds."""
    r1cs: R1CS | None = None
    held: int | None = None
    synthesis: Synthesis = NO_SCRATCH


class SetPlans:
    """The plans of the loaded sets by key, and the keys refused for good,
    for an engine's settings and devices (made as it starts): each device
    planned under the budget engine.device_memory_gib gives it there
    (Backend.device_budget; InvalidInputError here for a budget too small),
    handed its plan of a set by for_device, never kept on the device."""

    def __init__(self, settings: EngineSettings, admission: MemoryAdmission,
                 devices: Sequence[ProvingDevice]) -> None:
        self.settings, self.admission = settings, admission
        self.devices = tuple(devices)
        self.asks = tuple(DeviceAsk(d.identity, d.backend, budget) for d in self.devices
                          if (budget := d.backend.device_budget(settings.device_memory_bytes)) is not None)
        self._plans: dict[str, tuple[MemoryPlan, dict[str, DevicePlan]]] = {}
        self._unknown_circuit: set[str] = set()      # keys whose circuit is counted at its first partition
        self._refused: collections.OrderedDict[str, str] = collections.OrderedDict()   # key -> the refusal
        self._lock = threading.Lock()

    def workers(self) -> Workers:
        s = self.settings
        gpus = sum(1 for d in self.devices if d.kind == "gpu")
        return Workers(s.partition_workers, gpus, s.gpu_workers_per_device, s.b_g2_on_device, s.stage == "arena")

    def ways(self) -> Ways:
        """The ways each set's plan weighs (prover.gather, prover.stage) on the engine's devices."""
        lent = any(d.backend.host_arenas() is not None for d in self.devices)
        return Ways.of(self.settings.gather, self.settings.stage, self.workers().devices, lent)

    def load(self, key: str, provider: SynthesisProvider, job: Job, call: ProviderCall) -> Parameters:
        """The job's parameters from its provider (load_srs), planned from
        their shape, with the provider's circuit where it gives one before a
        partition (circuit(job), circuit_bytes, synthesis_bytes): where the
        provider says the shape (srs_shape(job)), planned and held before
        load_srs is called, so that a set that does not fit is never loaded.
        HostMemoryError when the plan does not fit (at once, with no call,
        for a key refused for good before); PluginError when circuit
        returns no R1CS or srs_shape no SrsShape."""
        with self._lock:
            refused = self._refused.get(key)
        if refused is not None:
            raise HostMemoryError(refused)
        name = type(provider).__name__
        what = f"the parameter set {key} (kind {job.kind!r})"
        circuit = _circuit(provider, job, call)
        said = _shape(provider, job, call)
        if said is not None:
            self._plan(key, said, circuit, what)
        try:
            params = call(f"load_srs of provider {name} (job {job.id})", provider.load_srs)
            loaded = SrsShape.of(params, is_mapped(params.h.limbs))
            if loaded != said:
                if said is not None:
                    LOG.warning("provider %s said the shape %s of %s, and loaded %s: planned again", name, said,
                                key, loaded)
                self._plan(key, loaded, circuit, what)
        except BaseException:
            if said is not None:
                self.drop(key)
            raise
        return cast("Parameters", params)

    def make(self, key: str, params: Parameters, r1cs: R1CS | None, what: str) -> MemoryPlan:
        """The plan of the loaded set of key (its circuit r1cs where known),
        held by the admission; HostMemoryError when it does not fit (nothing
        is held then)."""
        return self._plan(key, SrsShape.of(params, is_mapped(params.h.limbs)), Circuit(r1cs), what)

    def _plan(self, key: str, shape: SrsShape, circuit: Circuit, what: str) -> MemoryPlan:
        """The plan of the set of key by its shape, held by the admission (the
        key's plan and holding replaced); HostMemoryError when it does not
        fit, remembered where it does not fit alone (nothing is held then)."""
        settings, r1cs = self.settings, circuit.r1cs
        # the circuit's host bytes first (its device bytes make the queries' maps, which it then holds too)
        held = None if r1cs is None else max(r1cs.host_bytes, circuit.held or 0)
        matrices = r1cs.device_bytes if r1cs is not None and settings.matvec_on_device else 0
        # A w, B w, C w asked of the devices where the settings ask it and every device can
        matvec = settings.matvec_on_device and bool(self.devices) \
            and all(d.backend.capabilities.evaluates_witness for d in self.devices)
        try:
            choice = plan_set(Workload(shape, held, matrices), self.workers(), settings.memory_budget_bytes,
                              self.ways(), self.asks, matvec, what, circuit.synthesis)
        except HostMemoryError as exc:
            self._refuse(key, str(exc))
            raise
        chosen = choice.plan
        self.admission.hold(key, chosen.held_bytes, chosen.partition.total, what)
        with self._lock:
            self._plans[key] = (chosen, dict(choice.by_device))
            if r1cs is None:
                self._unknown_circuit.add(key)
        for line in chosen.describe():
            LOG.info("memory plan of %s: %s", key, line)
        return chosen

    def _refuse(self, key: str, text: str) -> None:
        """The set of key does not fit alone: later loads of it are refused at once."""
        LOG.warning("%s; refused for as long as the engine runs", text)
        with self._lock:
            self._refused[key] = text
            self._refused.move_to_end(key)
            while len(self._refused) > KEEP_REFUSALS:
                self._refused.popitem(last=False)

    def get(self, key: str) -> MemoryPlan | None:
        with self._lock:
            held = self._plans.get(key)
        return held[0] if held is not None else None

    def for_device(self, key: str, identity: str) -> DevicePlan | None:
        """The device plan a device's kernel regions of set key run by (None: none made)."""
        with self._lock:
            held = self._plans.get(key)
        return held[1].get(identity) if held is not None else None

    def circuit_seen(self, key: str, r1cs: R1CS) -> None:
        """A partition of set key was synthesized with circuit r1cs: where
        its plan did not know the circuit, its bytes are held from now on."""
        with self._lock:
            if key not in self._unknown_circuit:
                return
            self._unknown_circuit.discard(key)
        self.admission.add_held(key, r1cs.host_bytes)

    def drop(self, key: str) -> None:
        """The set of key was unloaded: its plan and its holding go."""
        with self._lock:
            self._plans.pop(key, None)
            self._unknown_circuit.discard(key)
        self.admission.release_held(key)

    def close(self) -> None:
        """The engine stops: each device laid out unplanned, at its card's
        memory (Backend.release_plan), between regions (another engine's may
        be running on it: its interlock held), so that nothing of these plans
        outlives them."""
        for device in self.devices:
            with kernel_region(device.identity):
                device.backend.release_plan()


def _circuit(provider: SynthesisProvider, job: Job, call: ProviderCall) -> Circuit:
    """What provider says of job's circuit before a partition (Circuit);
    PluginError when circuit returns no R1CS."""
    fn = getattr(provider, "circuit", None)
    r1cs, held = None, None
    if callable(fn):
        what = f"circuit of provider {type(provider).__name__} (job {job.id})"
        r1cs = call(what, fn)
        if not isinstance(r1cs, R1CS):
            raise PluginError(f"{what} returned {type(r1cs).__name__}, not an R1CS")
        held = _bytes_of(provider, "circuit_bytes", job, call)
    scratch = _bytes_of(provider, "synthesis_bytes", job, call) or 0
    return Circuit(r1cs, held, Synthesis(scratch, callable(getattr(provider, "synthesize_into", None))))


def _shape(provider: SynthesisProvider, job: Job, call: ProviderCall) -> SrsShape | None:
    """The shape of job's parameters as provider says it before loading
    them (srs_shape; None: it has no such method); PluginError when it
    answers something other than an SrsShape."""
    fn = getattr(provider, "srs_shape", None)
    if not callable(fn):
        return None
    what = f"srs_shape of provider {type(provider).__name__} (job {job.id})"
    got = call(what, fn)
    if not isinstance(got, SrsShape):
        raise PluginError(f"{what} returned {type(got).__name__}, not an SrsShape")
    return got


def _bytes_of(provider: SynthesisProvider, method: str, job: Job, call: ProviderCall) -> int | None:
    """A provider's optional count of bytes for job (None: it has no such
    method); PluginError when it answers something other than a number of
    bytes."""
    fn = getattr(provider, method, None)
    if not callable(fn):
        return None
    what = f"{method} of provider {type(provider).__name__} (job {job.id})"
    got = call(what, fn)
    if isinstance(got, bool) or not isinstance(got, int) or not 0 <= got < 1 << 50:
        raise PluginError(f"{what} returned {got!r}, not a number of bytes")
    return got
