# SPDX-License-Identifier: Apache-2.0
"""The devices an engine proves on: each GPU, or the host's CPU backend as a
device of its own (same interlock, so the engine runs without a GPU)."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .. import cuda
from ..backend import Backend, get_backend, gpu_available, gpu_backend
from ..errors import EngineError

if TYPE_CHECKING:
    from ..groth16.keys import Parameters


@dataclasses.dataclass(frozen=True)
class ProvingDevice:
    """One place the engine proves partitions on, a GPU or the host, with the
    backend that runs its kernel regions (for a GPU, a GpuBackend: a
    cuda.device.Device, which owns the context and streams)."""
    identity: str   # what its lock is keyed by: a GPU's UUID, "cpu" for the host
    label: str      # short name in logs: cpu, gpu0, gpu1 ...
    kind: str       # "cpu" or "gpu"
    backend: Backend = dataclasses.field(compare=False, repr=False)


def cpu_device() -> ProvingDevice:
    return ProvingDevice("cpu", "cpu", "cpu", get_backend("cpu"))


def gpu_device(ordinal: int) -> ProvingDevice:
    be = gpu_backend(ordinal)
    return ProvingDevice(f"gpu-{be.info.uuid}", f"gpu{ordinal}", "gpu", be)


def discover(names: list[str]) -> list[ProvingDevice]:
    """Devices for the setting engine.devices: [] means every GPU, else the CPU;
    "gpu" every GPU; "gpu:N" one; "cpu" the host. Asking for a GPU that is not
    there is an EngineError."""
    if not names:
        names = ["gpu"] if gpu_available() else ["cpu"]
    out: list[ProvingDevice] = []
    for name in names:
        if name == "cpu":
            out.append(cpu_device())
            continue
        if not gpu_available():
            raise EngineError(f"device {name!r} asked for, but no usable CUDA device is here")
        count = len(cuda.devices())
        ordinals = range(count) if name == "gpu" else [int(name[4:])]
        for i in ordinals:
            if i >= count:
                raise EngineError(f"device {name!r}: there are {count} CUDA devices")
            out.append(gpu_device(i))
    unique = {d.identity: d for d in out}
    return list(unique.values())


def release_parameters(devices: list[ProvingDevice], params: Parameters) -> None:
    """A parameter set's copies on the devices dropped (the SRS manager evicted it)."""
    for device in devices:
        for points in (params.h, params.l, params.a, params.b_g1, params.b_g2):
            device.backend.release_points(points)
