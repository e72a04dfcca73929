# SPDX-License-Identifier: Apache-2.0
"""One engine per node: NodeEngine runs, as a Ray actor placed on its node,
a porep_prover Engine that owns the node's devices (the interlock, the
resident parameters, the synthesis workers). A partition arrives as its
job's payload and index; it is synthesized, proved and verified here, and
only its proof, public inputs and timings go back.

The node's engine is made from the head's settings, with engine.cluster
off, prover.max_retries 0 (a failed partition goes back at once, and the
head tries it again, on whichever node is free) and no result sinks or
notification hooks (the head's run, once a job); of the head's settings
only the sections the node's own plugins declare (a plugin the head alone
has, a sink's say, has nothing to do here).
"""
from __future__ import annotations

import dataclasses
import itertools
import logging
import pickle
import threading
import time

from porep_prover import Engine, Job, load_config
from porep_prover.errors import EngineError, JobFailedError
from porep_prover.hooks import collect_registry, collect_settings, plugin_manager

STOP_SECONDS = 10.0        # a node engine's shutdown, at most
FIGURES_SECONDS = 60.0     # the window each device's figures are computed over
LOG = logging.getLogger("porep_prover.ray")


def device_figures(window: dict) -> list[dict]:
    """Each device's figures from an engine's timeline window
    (Engine.timeline_window): [{"label", "efficiency" (None: no kernel
    region ended in the window), "busy_seconds", "regions",
    "longest_gap_seconds", "longest_gap_cause" (both None: fewer than two
    regions apart)}], in the window's order; small enough to travel at every look."""
    out = []
    for d in window["devices"]:
        gap = d["longest_gap"]
        out.append({"label": d["label"], "efficiency": d["efficiency"], "busy_seconds": d["busy_seconds"],
                    "regions": d["regions"], "longest_gap_seconds": gap["seconds"] if gap else None,
                    "longest_gap_cause": gap["cause"] if gap else None})
    return out


class NodeEngine:
    """The engine of one node (Ray places the actor there and gives it the
    node's GPUs). config_values: the head's settings (EngineConfig.values);
    node_id: Ray's id of the node. ConfigError or EngineError from the
    engine's start (a device asked for that the node lacks, ...)."""

    def __init__(self, config_values: dict, node_id: str):
        import ray     # on the node: a Ray worker

        # results go to the head's sinks and hooks, once a job; a node's engine proves partitions
        values = {**config_values, "engine.cluster": "", "prover.max_retries": 0, "engine.result_sinks": []}
        if not values.get("engine.scheduler"):
            values["engine.scheduler"] = "priority"      # the node keeps the head's order too
        pm = plugin_manager()
        sections = collect_settings(pm)
        self.registry = collect_registry(pm)
        known = {k: v for k, v in values.items() if sections.setting(k) is not None}
        self.engine = Engine(load_config(overrides=known, sections=sections), registry=self.registry)
        self.node_id = node_id
        self.address = ray.util.get_node_ip_address()
        self.done = self.failed = 0
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def _adopt(self, kind: str, provider_ref: list) -> None:
        """The head's provider of kind, where this node has no plugin serving it."""
        import ray

        with self._lock:
            if kind not in self.registry.providers:
                self.registry.add_provider(ray.get(provider_ref[0]))

    def _job(self, spec: dict, only: frozenset | None) -> Job:
        import ray

        self._adopt(spec["kind"], spec["provider"])
        payload = ray.get(spec["payload"][0])      # once per node: the object store keeps it here
        return Job(spec["kind"], spec["partitions"], payload, priority=spec["priority"],
                   id=f"{spec['job_id']}.{next(self._seq)}", only=only)

    def prove(self, spec: dict, index: int, timeout: float) -> dict:
        """Prove partition index of the job spec describes ({"kind",
        "partitions", "payload": [its object ref], "priority", "job_id",
        "provider": [the head's provider's ref]}), within timeout seconds.
        {"proof": 192 bytes, "public": [int], "timings": PartitionTimings as
        a dict, "seconds": this call's time here}, or {"error": the exception}
        (its cause, for a failed job)."""
        start = time.monotonic()
        try:
            job = self._job(spec, frozenset({index}))
            handle = self.engine.submit(job)
            try:
                result = handle.result(timeout)
            except TimeoutError:
                self.engine.cancel(job.id)
                raise EngineError(f"partition {index} of job {spec['job_id']} took more than {timeout:.0f} s "
                                  "(ray.partition_timeout_seconds)") from None
        except JobFailedError as exc:
            return self._failure(exc.__cause__ or exc)
        except Exception as exc:  # noqa: BLE001 - the head decides what a failure means
            return self._failure(exc)
        with self._lock:
            self.done += 1
        return {"proof": result.proofs[index].to_bytes(), "public": list(result.public_inputs[index]),
                "timings": dataclasses.asdict(result.timings[index]), "seconds": time.monotonic() - start}

    def _failure(self, exc: BaseException) -> dict:
        with self._lock:
            self.failed += 1
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - an exception that cannot travel goes as its words
            exc = EngineError(f"{type(exc).__name__}: {exc}")
        return {"error": exc}

    def preload(self, spec: dict) -> dict:
        """The job's parameters loaded here (Engine.preload's answer)."""
        return self.engine.preload(self._job(spec, None))

    def evict(self, key: str) -> int | None:
        return self.engine.evict_srs(key)

    def status(self) -> dict:
        """{"node_id", "address", "devices": [label], "device_figures": each
        device's figures over the last FIGURES_SECONDS of this node's timeline
        (device_figures; [] when they cannot be computed, logged here),
        "figures_seconds", "srs": [{"key", "bytes", "loads"}],
        "partitions_done", "partitions_failed", "jobs_active"}."""
        s = self.engine.status()
        try:
            figures = device_figures(self.engine.timeline_window(FIGURES_SECONDS))
        except Exception:  # noqa: BLE001 - the figures are for the operator: the node's status still answers
            LOG.exception("node %s: the devices' figures could not be computed", self.node_id)
            figures = []
        with self._lock:
            done, failed = self.done, self.failed
        return {"node_id": self.node_id, "address": self.address,
                "devices": [d["label"] for d in s["devices"]], "device_figures": figures,
                "figures_seconds": FIGURES_SECONDS,
                "srs": [{"key": e["key"], "bytes": e["bytes"], "loads": e["loads"]} for e in s["srs"]],
                "partitions_done": done, "partitions_failed": failed, "jobs_active": s["jobs_active"]}

    def stop(self) -> None:
        self.engine.shutdown(wait=False, timeout=STOP_SECONDS)
