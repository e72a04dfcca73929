# SPDX-License-Identifier: Apache-2.0
"""The proving engine (see engine.core): jobs of many partitions on every device at once."""
from .config import EngineConfig, load_config
from .core import Engine
from .inline import InlineCircuit, inline_job
from .jobs import Job, JobHandle, JobResult
from .registry import Registry

__all__ = ["Engine", "EngineConfig", "InlineCircuit", "Job", "JobHandle", "JobResult", "Registry", "inline_job",
           "load_config"]
