# SPDX-License-Identifier: Apache-2.0
"""The proving engine (see engine.core and its parts): jobs of many partitions on every device at once.

What plugins implement: SynthesisProvider (with SrsShape, the shape of the
parameters it would load, and KeptParams, its loaded sets kept while in
use), Scheduler (it orders PartitionTasks; FifoScheduler is the built-in
one), ResultSink, Cluster (it proves partitions handed out through a
ClusterWork on other hosts); they register them on a Registry (see
porep_prover.hooks)."""
from ..memory.budgets import host_memory_bytes
from ..memory.workload import SrsShape
from .cluster import Cluster, ClusterWork
from .config import EngineConfig, load_config
from .core import Engine
from .inline import InlineCircuit, inline_job
from .jobs import Job, JobHandle, JobResult, PartitionResult, PartitionTask, PartitionTimings
from .kept_params import KeptParams
from .registry import FifoScheduler, PluginRecord, PriorityScheduler, Registry, ResultSink, Scheduler, SynthesisProvider
from .settings import EngineSettings

__all__ = ["Cluster", "ClusterWork", "Engine", "EngineConfig", "EngineSettings", "FifoScheduler", "PriorityScheduler",
           "InlineCircuit", "Job", "JobHandle", "JobResult", "KeptParams", "PartitionResult", "PartitionTask",
           "PartitionTimings", "PluginRecord", "Registry", "ResultSink", "Scheduler", "SrsShape", "SynthesisProvider",
           "host_memory_bytes", "inline_job", "load_config"]
