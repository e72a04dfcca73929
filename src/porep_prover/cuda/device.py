# SPDX-License-Identifier: Apache-2.0
"""One CUDA device as the kernels' host code uses it (msm/gpu/msm.py, ntt/gpu.py,
r1cs/gpu.py; the cuda.kernel_host.KernelHost protocol). It owns its
context and streams, the kernel modules (cuda.modules) compiled by NVRTC
for the device's own arch and cached on disk, their launches, the lock of
its tables, and its memory, one object the host code reaches as it is
(memory: cuda.device_memory.DeviceMemory, its work buffers, uploads,
copies made ahead, layouts, and its resident store and chunk ring). The
GPU backend (backend/gpu.py) owns one Device and composes the kernels'
host code on it.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._version import __version__
from . import DeviceInfo, devices, driver
from .cache import KernelCache
from .compiler import compile_cubin
from .device_memory import DeviceMemory
from .modules import INCLUDE, MODULES, VARIANTS

if TYPE_CHECKING:
    from ..config import GpuEnvironment
    from . import _driver

LOG = logging.getLogger(__name__)
THREADS = 256


class Device:
    """One CUDA device's context, streams, kernels and memory. environment:
    what the process's environment sets for it (config.gpu_environment():
    the kernel cache's folder and the resident budget)."""

    _side_fill: _driver.Stream | None = None          # a third stream, made on first use (side_fill_stream)

    def __init__(self, ordinal: int, environment: GpuEnvironment) -> None:
        drv = driver()
        self.info: DeviceInfo = devices()[ordinal]
        self.drv = drv
        self.ctx = drv.Context(ordinal)
        least, greatest = self.ctx.stream_priorities()
        # the kernel region's stream, served first; beside it, the MSM's sort fills the next stretch of
        # buckets while this one adds up the last (GpuBuckets.buckets), or, in the prover's overlap mode,
        # the MSMs that do not depend on H run while H's transforms run here (cuda.second_stream)
        self.stream = drv.Stream(self.ctx, greatest)
        self.aux_stream = drv.Stream(self.ctx, least)
        self.copy_stream = drv.Stream(self.ctx)   # uploads ahead of a kernel region (a partition copied ahead)
        self.cache = KernelCache(environment.kernel_cache_dir)
        self.lock = threading.RLock()
        self._modules: dict[str, _driver.Module] = {}
        self._kernels: dict[tuple[str, str], _driver.Kernel] = {}
        self.memory = DeviceMemory(self, environment.resident_bytes, environment.async_free)

    # ------------------------------------------------------------ kernels

    def kernel(self, module: str, name: str) -> _driver.Kernel:
        """A kernel by module and name, compiling (or reading the cache) on first use."""
        with self.lock:
            key = (module, name)
            if key not in self._kernels:
                if module not in self._modules:
                    src, defines = MODULES[module] if module in MODULES else VARIANTS[module]
                    image = compile_cubin(src, INCLUDE, self.info.arch, defines, self.cache, __version__)
                    self._modules[module] = self.drv.Module(self.ctx, image)
                k = self._modules[module].kernel(name)
                if name == "ntt_pass":
                    k.set_max_dynamic_shared(64 << 10)
                self._kernels[key] = k
            return self._kernels[key]

    def launch(self, module: str, name: str, n: int, args: Sequence[_driver.DeviceBuffer | int], block: int = THREADS,
               stream: _driver.Stream | None = None) -> None:
        """A grid-stride kernel over n items on stream (the device's by default)."""
        grid = max(1, min(-(-n // block), self.info.multiprocessors * 32))
        self.kernel(module, name).launch((grid,), (block,), args, stream or self.stream)

    def synchronize(self) -> None:
        """Wait for the kernel region's streams (the device's and the one beside it)."""
        self.stream.synchronize()
        self.aux_stream.synchronize()
        if self._side_fill is not None:
            self._side_fill.synchronize()

    def side_fill_stream(self) -> _driver.Stream:
        """A third stream, made on first use: the sort's fill of an MSM that
        runs on the second stream (cuda.second_stream), beside its accumulation
        there, as aux_stream is beside the first's."""
        with self.lock:
            if self._side_fill is None:
                self._side_fill = self.drv.Stream(self.ctx, self.ctx.stream_priorities()[0])
            return self._side_fill

    def close(self) -> None:
        """Free everything this device object holds: its memory (cuda.device_memory), modules, streams."""
        self.memory.close()
        with self.lock:
            self._kernels.clear()
            for module in self._modules.values():
                module.close()
            self._modules.clear()
        self.stream.close()
        self.aux_stream.close()
        self.copy_stream.close()
        if self._side_fill is not None:
            self._side_fill.close()
