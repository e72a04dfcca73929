# SPDX-License-Identifier: Apache-2.0
"""The proving engine (see engine.core): jobs of many partitions on every device at once.

What plugins implement: SynthesisProvider, Scheduler (it orders PartitionTasks;
FifoScheduler is the built-in one), ResultSink; they register them on a Registry
(see porep_prover.hooks)."""
from .config import EngineConfig, host_memory_bytes, load_config
from .core import Engine
from .inline import InlineCircuit, inline_job
from .jobs import Job, JobHandle, JobResult, PartitionTask
from .registry import FifoScheduler, PluginRecord, Registry, ResultSink, Scheduler, SynthesisProvider

__all__ = ["Engine", "EngineConfig", "FifoScheduler", "InlineCircuit", "Job", "JobHandle", "JobResult",
           "PartitionTask", "PluginRecord", "Registry", "ResultSink", "Scheduler", "SynthesisProvider",
           "host_memory_bytes", "inline_job", "load_config"]
