# SPDX-License-Identifier: Apache-2.0
"""A fake card for the GPU backend's host code without a GPU: a driver
whose DeviceBuffer counts bytes against a capacity (FakeDevice; with a
memory pool, PooledDevice), streams that do nothing (Idle; Settling lets
the pool's frees arrive), the real cuda.device_memory.DeviceMemory over
them (fake_memory: budgets, layouts, limits, the resident store as on a
GPU) and a GpuBackend made on it (fake_backend: no kernels). What
tests/backend/test_gpu_memory.py and tests/engine's engines on a fake
card run on."""
import threading
import types

from porep_prover.cuda.device_memory import DeviceMemory
from porep_prover.errors import DeviceMemoryError


class FakeBuffer:
    pooled = False

    def __init__(self, device, nbytes):
        self.device, self.nbytes, self.open = device, nbytes, True

    def close(self):
        if self.open:
            self.device.used -= self.nbytes
            self.open = False


class FakeDevice:
    """DeviceBuffer of a device with `capacity` bytes; mem_info as the context gives it."""

    def __init__(self, capacity):
        self.capacity, self.used = capacity, 0
        self.limit = 0                 # the context's budget (none)

    @property
    def allocated(self):
        return self.used

    def DeviceBuffer(self, ctx, nbytes):
        if self.used + nbytes > self.capacity:
            raise DeviceMemoryError(f"cuMemAlloc({nbytes} bytes)", code=2, name="CUDA_ERROR_OUT_OF_MEMORY")
        self.used += nbytes
        return FakeBuffer(self, nbytes)

    def mem_info(self):
        return self.capacity - self.used, self.capacity


class Idle:
    def synchronize(self):
        pass

    def upload(self, buf, raw):
        pass

    def contains(self, raw):
        return False


class PooledBuffer(FakeBuffer):
    pooled = True

    def close(self):
        if self.open:                 # back to the pool, which keeps it (once its stream gets there, where modelled)
            if self.device.pending is None:
                self.device.pool_free += self.nbytes
            else:
                self.device.pending += self.nbytes
            self.open = False


class Settling(Idle):
    """A stream whose synchronize lets the frees queued on it reach the pool."""

    def __init__(self, device):
        self.device = device

    def synchronize(self):
        self.device.pool_free += self.device.pending
        self.device.pending = 0


class PooledDevice(FakeDevice):
    """FakeDevice with a memory pool: a buffer with a stream comes from what the
    pool keeps, else the pool grows by it; trim_pool gives the kept memory back."""

    def __init__(self, capacity):
        super().__init__(capacity)
        self.pool_free = 0
        self.pending = None            # an int: frees wait for a stream's synchronize (Settling) to reach the pool

    def DeviceBuffer(self, ctx, nbytes, stream=None):
        if stream is None:
            return super().DeviceBuffer(ctx, nbytes)
        if self.pool_free < nbytes:   # grow the pool (the fake does not split what it keeps)
            super().DeviceBuffer(ctx, nbytes - self.pool_free)
            self.pool_free = nbytes
        self.pool_free -= nbytes
        return PooledBuffer(self, nbytes)

    def trim_pool(self):
        self.used -= self.pool_free
        self.pool_free = 0


class FakeOwner:
    """What a DeviceMemory takes of its device: driver and context (the fake), lock, stream, info, a wait."""

    def __init__(self, fake):
        self.drv = self.ctx = fake
        self.lock = threading.RLock()
        self.stream = self.aux_stream = self.copy_stream = Idle()
        self.info = types.SimpleNamespace(ordinal=0)

    def synchronize(self):
        self.stream.synchronize()


def fake_memory(capacity: int, pooled: bool = False) -> DeviceMemory:
    """A DeviceMemory over a fake card of capacity bytes (pooled: with a memory pool); uploads copy nothing."""
    fake = (PooledDevice if pooled else FakeDevice)(capacity)
    fake.keep_pool = lambda: pooled
    fake.peak = 0
    fake.reset_peak = lambda: None
    memory = DeviceMemory(FakeOwner(fake), capacity)
    memory.staging = memory.pinned = Idle()
    return memory


def fake_backend(capacity: int, pooled: bool = False):
    """A GpuBackend whose device is FakeOwner with a fake_memory (no kernels: its NTT records the twiddles asked)."""
    from porep_prover.backend.gpu import GpuBackend
    memory = fake_memory(capacity, pooled)
    be = GpuBackend.__new__(GpuBackend)
    be.device, be.memory = memory.device, memory
    be.device.memory = memory
    be.ntt_ops = types.SimpleNamespace(compact=[])
    be.ntt_ops.set_compact_twiddles = be.ntt_ops.compact.append                 # the plans' twiddle choices
    return be
