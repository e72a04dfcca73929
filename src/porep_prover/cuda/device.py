# SPDX-License-Identifier: Apache-2.0
"""One CUDA device as the kernels' host code uses it (msm/gpu/msm.py, ntt/gpu.py,
r1cs/gpu.py): its context and streams, the kernel modules (cuda.modules)
compiled by NVRTC for the device's own arch and cached on disk, launches,
and memory: work buffers from the device's pool, uploads through the staging
buffers or from pinned arenas (cuda.pinned), copies made ahead, and the
resident arrays (cuda.resident). The GPU backend (backend/gpu.py) is one of
these with the kernels' host code composed on it.

Work buffers are allocated per call; when an allocation fails the resident
arrays are dropped and it is tried once more, then DeviceMemoryError.
"""
from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar, overload

import numpy as np

from .._version import __version__
from ..errors import DeviceMemoryError
from . import DeviceInfo, devices, driver
from .cache import KernelCache
from .compiler import compile_cubin
from .modules import INCLUDE, MODULES, VARIANTS
from .pinned import HostPins, PinnedPool
from .resident import STREAM_CHUNK, ResidentMemory
from .staging import Staging

if TYPE_CHECKING:
    import numpy.typing as npt

    from ..config import GpuEnvironment
    from . import _driver

LOG = logging.getLogger(__name__)
THREADS = 256
RESERVE = 8 << 30          # device bytes left for work buffers when the budget is automatic

Item = TypeVar("Item", bound=np.generic)     # the item type of a downloaded array


def host_key(raw: npt.NDArray[np.generic]) -> tuple[int, int]:
    """(address, bytes) of contiguous host bytes: how a copy made ahead is found again."""
    return raw.ctypes.data, raw.nbytes


class Device(ResidentMemory):
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
        self.copy_stream = drv.Stream(self.ctx)   # uploads ahead of a kernel region (prepare(ahead=True))
        # an operation's work buffers come from the device's pool in the stream's order (work_alloc): no
        # cuMemAlloc / cuMemFree (which waits for the device and unmaps) on the clock
        self.pooled = self.ctx.keep_pool()
        self.staging = Staging(drv, self.ctx, self.stream)
        self.pinned = PinnedPool(drv, self.ctx)
        self.cache = KernelCache(environment.kernel_cache_dir)
        self.lock = threading.RLock()
        self._modules: dict[str, _driver.Module] = {}
        self._kernels: dict[tuple[str, str], _driver.Kernel] = {}
        # id(limbs), or (id(limbs), tag) for a buffer derived from it -> (buffer, finalizer)
        self._resident = collections.OrderedDict()
        # (host address, bytes) -> its device copy, made ahead
        self._ahead: dict[tuple[int, int], _driver.DeviceBuffer] = {}
        self._busy = collections.Counter()               # id(limbs) of resident arrays in use
        self.pins = HostPins(drv, self.ctx)
        self._streamed: set[int] = set()                 # id(limbs) of the arrays streamed (stream_arrays)
        self.ring = None                                 # the chunk ring of streamed arrays, made on first use
        self.ring_bytes = STREAM_CHUNK                   # its slots' size
        self.ring_waited_ms = 0.0                        # kernels' waits for chunks of rings since closed
        self.copy_wait_seen_ms = 0.0                     # copy_wait_ms when the last kernel region ended
        self.pass_points = 0                             # the most points an MSM pass sorts (0: no limit)
        self.dropped = 0                                 # resident bytes dropped for want of memory, so far
        budget = environment.resident_bytes
        self.resident_budget = budget if budget is not None else max(0, self.ctx.mem_info()[0] - RESERVE)
        self.default_resident_budget = self.resident_budget   # what it is again when no plan is in use

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
        """A grid-stride kernel over n items on stream (the backend's by default)."""
        grid = max(1, min(-(-n // block), self.info.multiprocessors * 32))
        self.kernel(module, name).launch((grid,), (block,), args, stream or self.stream)

    def synchronize(self) -> None:
        """Wait for the kernel region's streams (the backend's and the one beside it)."""
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

    # ------------------------------------------------------------ memory

    def alloc(self, nbytes: int) -> _driver.DeviceBuffer:
        """Device memory; on exhaustion wait for the streams (work buffers
        freed in their order reach the pool only then, and the pool gives
        them back), then drop the resident arrays not in use and retry once."""
        buf = self.try_alloc(nbytes)
        if buf is not None:
            return buf
        self.synchronize()
        if self.pooled:
            buf = self.try_alloc(nbytes)
            if buf is not None:
                return buf
        held = self.resident_bytes()
        self.release_resident()
        self.dropped += held - self.resident_bytes()
        LOG.warning("device %d: %d bytes asked for did not fit (%d of a budget of %s held): %d resident bytes "
                    "dropped", self.info.ordinal, nbytes, self.ctx.allocated, self.ctx.limit or "the card",
                    held - self.resident_bytes())
        try:
            return self.drv.DeviceBuffer(self.ctx, nbytes)
        except DeviceMemoryError as exc:
            free, total = self.ctx.mem_info()
            limit = f"; {self.ctx.allocated} of the budget's {self.ctx.limit} held" if self.ctx.limit else ""
            raise DeviceMemoryError(f"{nbytes} bytes of device memory asked for, {free} of {total} free{limit}",
                                    code=exc.code, name=exc.name) from None

    def try_alloc(self, nbytes: int) -> _driver.DeviceBuffer | None:
        """Device memory, or None when there is none: evicts nothing (for work
        that is worth doing only when memory is to spare); what the pool keeps
        unused is given back first."""
        for attempt in range(2 if self.pooled else 1):
            try:
                return self.drv.DeviceBuffer(self.ctx, nbytes)
            except DeviceMemoryError:
                if attempt == 0 and self.pooled:
                    self.ctx.trim_pool()
        return None

    def work_alloc(self, nbytes: int) -> _driver.DeviceBuffer:
        """A work buffer for the kernel region's stream, from the pool (free
        gives it back there); as alloc where the device has no pools or the
        pool cannot grow."""
        if self.pooled:
            try:
                return self.drv.DeviceBuffer(self.ctx, nbytes, self.stream)
            except DeviceMemoryError:
                pass
        return self.alloc(nbytes)

    def upload(self, data: npt.NDArray[np.generic]) -> _driver.DeviceBuffer:
        """A new device buffer holding data (any contiguous numpy array); the
        copy made ahead by prepare, handed over, when data is what it copied."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        ahead = self.take_ahead(raw)
        if ahead is not None:
            return ahead
        buf = self.alloc(len(raw))
        with self.lock:
            if self.pinned.contains(raw):   # prepared: one DMA, no host copy
                buf.upload(raw, 0, self.stream)
            else:
                self.staging.upload(buf, raw)
        return buf

    def take_ahead(self, raw: npt.NDArray[np.uint8]) -> _driver.DeviceBuffer | None:
        """The device copy prepare made ahead of raw (contiguous bytes), handed over, or None."""
        with self.lock:
            return self._ahead.pop(host_key(raw), None)

    @overload
    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...], dtype: type[Item],
                       stream: _driver.Stream | None = None) -> npt.NDArray[Item]: ...

    @overload
    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...], *,
                       stream: _driver.Stream | None = None) -> npt.NDArray[np.uint64]: ...

    def download_array(self, buf: _driver.DeviceBuffer, shape: int | tuple[int, ...],
                       dtype: type[np.generic] = np.uint64, stream: _driver.Stream | None = None
                       ) -> npt.NDArray[np.generic]:
        """The first prod(shape) items of buf, after the stream's work is done.
        stream: another stream, whose work alone is waited for (a direct copy,
        for results of a few kilobytes: the staging buffers wait for this one)."""
        out = np.empty(shape, dtype=dtype)
        if stream is not None:
            stream.synchronize()
            buf.download(out.reshape(-1).view(np.uint8), 0)
            return out
        with self.lock:
            self.staging.download(buf, out.reshape(-1).view(np.uint8))
        return out

    def free(self, *bufs: _driver.DeviceBuffer | None) -> None:
        """Close buffers once the kernel region's streams no longer use them."""
        self.synchronize()
        for buf in bufs:
            if buf is not None:
                buf.close()

    def memory(self) -> tuple[int, int]:
        """(free, total) device bytes."""
        return self.ctx.mem_info()

    def close(self) -> None:
        """Free everything this device object holds: resident arrays, the
        chunk ring, modules, staging, pinned arenas and pins, streams."""
        self.release_resident()
        if self.ring is not None:
            self.ring.close()
            self.ring = None
        self.pins.close()
        with self.lock:
            self._kernels.clear()
            for module in self._modules.values():
                module.close()
            self._modules.clear()
            self.staging.close()
            self.pinned.close()
        if self.pooled:      # what the pool kept of the work buffers, back to the device
            self.synchronize()
            self.ctx.trim_pool()
        self.stream.close()
        self.aux_stream.close()
        if self._side_fill is not None:
            self._side_fill.close()
