# SPDX-License-Identifier: Apache-2.0
"""An engine's settings resolved once, when the engine is made: the numbers
its parts use, each default of 0 replaced by what it stands for on this host
(thread counts from the cores, the memory budget from the host's memory,
time limits of 0 as None). EngineConfig is what was written; EngineSettings
is what runs, frozen for the engine's life.
"""
from __future__ import annotations

import dataclasses
import os

from ..backend import MsmOptions
from ..config import MAX_THREADS, resolve_threads
from ..memory.budgets import default_host_budget
from ..memory.sizes import GIB
from .config import MAX_PARTITION_WORKERS, EngineConfig


@dataclasses.dataclass(frozen=True)
class EngineSettings:
    """What an engine runs with.

    devices: the setting engine.devices (names); gpu_workers_per_device,
    partition_workers, synthesis_lookahead: worker and queue counts.
    threads: native threads of each kernel call of a device worker or a
    finalizer; synthesis_threads: those of each synthesis worker.
    memory_budget_bytes: host bytes the whole process may hold (the memory
    plans' budget); memory_budget_set: it is the setting's (else the host's
    memory, or its cgroup's limit, less a margin: memory.budgets, and the
    host's available memory counts too). device_memory_bytes: what
    the process may hold on each GPU (0: the card's memory).
    switch_interval: seconds of Python's switch interval while the engine
    runs (0: the interpreter's own). provider_timeout / sink_timeout:
    seconds a provider's call / a sink's or hook's call may take (None: no
    limit). provider_stall: seconds a synthesis worker's provider call runs
    before a stand-in worker takes its place (None: never). timeline_events: events kept in memory (the log keeps all).
    gather: prover.gather, where the devices keep no matrices: "device"
    (the witness crosses beside a, b, c and the queries' scalars are
    gathered from it on the device), "host", or "auto" (each set's plan
    weighs both: memory.choice).
    stage: prover.stage, with GPUs: "arena" (a partition synthesized
    straight into a device's page-locked arena), "prepare" (copied into
    one by prepare before its kernel region), or "auto" (each set's plan
    weighs both); stage_in_arenas: partitions may be laid out in arenas
    (any but "prepare").
    msm_options: the MSM options of this engine's kernel regions (prove_device's
    options; None: the backends' own). overlap_msms: the MSMs that do not
    depend on H run beside H's transforms (prove_device's overlap).
    cluster: the registered cluster whose node engines prove this engine's
    partitions ("": this host's devices).
    """
    devices: tuple[str, ...]
    gpu_workers_per_device: int
    partition_workers: int
    synthesis_lookahead: int
    threads: int
    synthesis_threads: int
    memory_budget_bytes: int
    memory_budget_set: bool
    device_memory_bytes: int
    scheduler: str
    result_sinks: tuple[str, ...]
    switch_interval: float
    provider_timeout: float | None
    provider_stall: float | None
    sink_timeout: float
    timeline_events: int
    verify: bool
    check_witness: bool
    max_retries: int
    b_g2_on_device: bool
    matvec_on_device: bool
    gather: str
    stage: str
    upload_ahead: bool
    msm_options: MsmOptions | None
    overlap_msms: bool
    srs_preload: tuple[str, ...]
    srs_idle_evict_seconds: float
    srs_budget_bytes: int
    cluster: str = ""

    @property
    def stage_in_arenas(self) -> bool:
        """Partitions may be laid out in the devices' arenas (each set's plan says whether they are)."""
        return self.stage != "prepare"

    @classmethod
    def resolve(cls, config: EngineConfig) -> "EngineSettings":
        """config's values with every default resolved on this host."""
        get = config.get
        workers = get("engine.partition_workers") or max(1, min(_cores() // 2, MAX_PARTITION_WORKERS))
        budget_gib = get("engine.memory_budget_gib")
        return cls(
            devices=tuple(get("engine.devices")),
            gpu_workers_per_device=get("engine.gpu_workers_per_device"),
            partition_workers=workers,
            synthesis_lookahead=get("engine.synthesis_lookahead"),
            threads=resolve_threads(get("engine.threads") or None),
            # the cores shared among the synthesis workers: each worker's OpenMP team on every core would
            # oversubscribe them, and teams that spin while waiting stall one another
            synthesis_threads=get("engine.synthesis_threads") or max(1, min(_cores() // workers, MAX_THREADS)),
            memory_budget_bytes=int(budget_gib * GIB) if budget_gib else default_host_budget(),
            memory_budget_set=bool(budget_gib),
            device_memory_bytes=int(get("engine.device_memory_gib") * GIB),
            scheduler=get("engine.scheduler"),
            result_sinks=tuple(dict.fromkeys(get("engine.result_sinks"))),
            switch_interval=get("engine.switch_interval_ms") / 1e3,
            provider_timeout=get("engine.provider_timeout_seconds") or None,
            provider_stall=get("engine.provider_stall_seconds") or None,
            sink_timeout=get("engine.sink_timeout_seconds"),
            timeline_events=get("engine.timeline_events"),
            verify=get("prover.verify"),
            check_witness=get("prover.check_witness"),
            max_retries=get("prover.max_retries"),
            b_g2_on_device=get("prover.b_g2") == "device",
            matvec_on_device=get("prover.matvec") == "device",
            gather=get("prover.gather"),
            stage=get("prover.stage"),
            upload_ahead=get("prover.upload") == "ahead",
            msm_options=MsmOptions(tables=True, table_copies=get("prover.msm_table_copies") or None)
            if get("prover.msm_tables") else None,
            overlap_msms=get("prover.overlap_msms"),
            srs_preload=tuple(get("srs.preload")),
            srs_idle_evict_seconds=get("srs.idle_evict_seconds"),
            srs_budget_bytes=int(get("srs.budget_gib") * GIB),
            cluster=get("engine.cluster"),
        )


def _cores() -> int:
    return os.cpu_count() or 2
