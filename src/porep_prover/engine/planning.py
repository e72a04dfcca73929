# SPDX-License-Identifier: Apache-2.0
"""The engine's memory plans: one for each parameter set loaded, made when
the set is loaded (engine.memory_plan.MemoryPlan, with each device's
DevicePlan from its backend), kept while it is, and the admission's
holding of it.

A set whose plan does not fit beside the sets already loaded is refused as
it loads (HostMemoryError: its job fails, nothing of it stays). Its
partitions are admitted by the plan's bytes a partition; the devices'
kernel regions run by the devices' plans (groth16.prover.prove_device's
plan); where the devices evaluate A w, B w, C w is the plan's choice.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..errors import PluginError
from ..host_memory import is_mapped
from ..r1cs.system import R1CS
from .memory_plan import NO_SCRATCH, HostWorkload, MemoryPlan, Synthesis, Variant, Workers, best_plan

if TYPE_CHECKING:
    from ..backend.device_plan import DevicePlan
    from ..groth16.keys import Parameters
    from .devices import ProvingDevice
    from .jobs import Job
    from .memory import MemoryAdmission
    from .registry import SynthesisProvider
    from .settings import EngineSettings

# how a provider's method is called for a job: call(what, method) -> method(job)'s result (a lane's call, within
# the provider's time limit, or a plain call)
ProviderCall = Callable[[str, Callable[["Job"], Any]], Any]

LOG = logging.getLogger("porep_prover.engine")


class SetPlans:
    """The plans of the loaded sets by key. devices: the engine's (set when it starts)."""

    def __init__(self, settings: EngineSettings, admission: MemoryAdmission) -> None:
        self.settings, self.admission = settings, admission
        self.devices: list[ProvingDevice] = []
        self._plans: dict[str, tuple[MemoryPlan, dict[str, DevicePlan]]] = {}
        self._unknown_circuit: set[str] = set()      # keys whose circuit is counted at its first partition
        self._lock = threading.Lock()

    def workers(self) -> Workers:
        s = self.settings
        gpus = sum(1 for d in self.devices if d.kind == "gpu")
        return Workers(s.partition_workers, gpus, s.gpu_workers_per_device, s.b_g2_on_device, s.stage_in_arenas)

    def load(self, key: str, provider: SynthesisProvider, job: Job, call: ProviderCall) -> Parameters:
        """The job's parameters from its provider (load_srs), and their plan
        made (with the provider's circuit where it gives one before a
        partition: provider.circuit(job)); HostMemoryError when the plan does
        not fit, PluginError when circuit returns no R1CS."""
        name = type(provider).__name__
        params = call(f"load_srs of provider {name} (job {job.id})", provider.load_srs)
        circuit = getattr(provider, "circuit", None)
        r1cs, held, scratch = None, None, 0
        if callable(circuit):
            r1cs = call(f"circuit of provider {name} (job {job.id})", circuit)
            if not isinstance(r1cs, R1CS):
                raise PluginError(f"circuit of provider {name} (job {job.id}) returned {type(r1cs).__name__}, "
                                  "not an R1CS")
            held = _bytes_of(provider, "circuit_bytes", job, call)
        scratch = _bytes_of(provider, "synthesis_bytes", job, call) or 0
        self.make(key, params, r1cs, f"job {job.id} (kind {job.kind!r}, parameters {key})", held,
                  Synthesis(scratch, callable(getattr(provider, "synthesize_into", None))))
        return cast("Parameters", params)

    def make(self, key: str, params: Parameters, r1cs: R1CS | None, what: str,
             circuit_bytes: int | None = None, synthesis: Synthesis = NO_SCRATCH) -> MemoryPlan:
        """The plan of the set of key (its circuit r1cs where the provider
        gives it before a partition; circuit_bytes: what the provider says it
        keeps for it, where more than the R1CS's own; synthesis: what a
        synthesis of its provider holds), held by the admission;
        HostMemoryError when it does not fit (nothing is held then)."""
        workers = self.workers()
        workload = HostWorkload.of(params, is_mapped(params.h.limbs), r1cs)
        if circuit_bytes is not None and r1cs is not None:
            workload = dataclasses.replace(workload, circuit_bytes=max(r1cs.host_bytes, circuit_bytes))
        # with prover.gather = device, the devices' plans both ways: the one whose host plan admits more partitions
        # (where host memory is short, a, b, c and the witness alone a partition), then the quicker one
        tried = [self._device_plans(params, r1cs, workers, gather)
                 for gather in ((False, True) if self.settings.gather_on_device else (False,))]
        index, chosen_plan = best_plan(workload, workers, self.settings.memory_budget_bytes,
                                       [self._variant(by, r1cs) for by in tried], what, synthesis)
        by_device = tried[index]
        self.admission.hold(key, chosen_plan.held_bytes, chosen_plan.partition.total, what)
        with self._lock:
            self._plans[key] = (chosen_plan, by_device)
            if r1cs is None:
                self._unknown_circuit.add(key)
        for line in chosen_plan.describe():
            LOG.info("memory plan of %s: %s", key, line)
        return chosen_plan

    def _device_plans(self, params: Parameters, r1cs: R1CS | None, workers: Workers, gathers: bool
                      ) -> dict[str, DevicePlan]:
        """Each device's plan (by identity; none for a device that plans no memory)."""
        matrices = r1cs if self.settings.matvec_on_device else None
        by_device: dict[str, DevicePlan] = {}
        for d in self.devices:
            chosen = d.backend.device_plan(params, matrices, workers.per_device, g2=workers.b_g2_on_device,
                                           gathers=gathers)
            if chosen is not None:
                by_device[d.identity] = chosen
        return by_device

    def _variant(self, by_device: dict[str, DevicePlan], r1cs: R1CS | None) -> Variant:
        """(the devices' plans, matvec, gathers): A w, B w, C w on the devices
        where asked, every device can, and every plan keeps the circuit's
        matrices (a device's plan without the circuit keeps none); the
        queries' scalars gathered there where every plan says so."""
        matvec = self.settings.matvec_on_device and bool(self.devices) and (r1cs is not None or not by_device) \
            and all(d.backend.capabilities.evaluates_witness for d in self.devices) \
            and all(p.matrices for p in by_device.values())
        gathers = not matvec and bool(by_device) and all(p.gathers for p in by_device.values())
        return tuple(by_device.values()), matvec, gathers

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
