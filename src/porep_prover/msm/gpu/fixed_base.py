# SPDX-License-Identifier: Apache-2.0
"""Fixed-base products s_i G on the GPU (kernels in msm/kernels/fixed_base.cu),
for parameter generation: a table of d 2^(8j) G (j < 32, d < 256; made once
per base on the CPU, 8160 points) turns each product into at most 32 mixed
additions; the points are then made affine a run at a time with one field
inversion per run. Scalars are processed in chunks so that any count fits.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...config import resolve_threads
from ...errors import DeviceResultError, NativeMemoryError
from ...field.constants import R
from ...field.fr_array import FrArray
from .. import _cpu as msm_cpu

if TYPE_CHECKING:
    from ...cuda.kernel_host import BufferHost, DeviceBuffer, Launches
    from ...curve.points import G1Array, G2Array

WINDOWS, DIGITS = 32, 256
PER = 32                     # points made affine per thread (one inversion each run)
CHUNK = 1 << 22              # scalars per round trip
SPOT_CHECKS = 6              # random products recomputed on the CPU per call


def cpu_products(base: G1Array | G2Array, scalars: FrArray, threads: int) -> G1Array | G2Array:
    """scalars[i] base[0] on the CPU, as CpuBackend.fixed_base makes them (the
    same native call; the backends sit a layer above this module)."""
    out = type(base).zeros(len(scalars))
    rc = msm_cpu.fixed_base(base.GROUP, base.limbs, scalars.limbs, out.limbs, resolve_threads(threads))
    if rc:
        raise NativeMemoryError("fixed-base products: " + ("out of memory" if rc == -1 else f"native error {rc}"))
    return out


def touched(rows: int, width: int) -> np.ndarray:
    """An uninitialised (rows, width) uint64 array whose pages are already
    faulted in, on every core at once (a first touch of fresh memory costs
    more than the copy that follows it, and one thread's faults run one at a
    time)."""
    out = np.empty((rows, width), np.uint64)
    flat = out.reshape(-1)
    threads = max(1, min(os.cpu_count() or 1, len(flat) >> 20))
    bounds = np.linspace(0, len(flat), threads + 1).astype(np.int64)
    with ThreadPoolExecutor(threads, thread_name_prefix="touch") as pool:
        list(pool.map(lambda lo, hi: flat[lo:hi].fill(0), bounds[:-1], bounds[1:]))   # fills run without the GIL
    return out


def normalize(gpu: Launches, group: int, proj: DeviceBuffer, count: int, pref: DeviceBuffer,
              dst: DeviceBuffer | int) -> None:
    """dst = the count xyzz points of proj made affine on gpu (fb_normalize: one
    field inversion a run of PER points); pref: work space of one field element
    a point; dst a buffer or an address in one."""
    runs = -(-count // PER)
    gpu.kernel(f"fixed_base_g{group}", f"g{group}_fb_normalize").launch(
        (-(-runs // 64),), (64,), [proj, count, PER, pref, dst], gpu.stream)


class GpuFixedBase:
    """The fixed-base side of one GPU backend (its cuda.device.Device supplies alloc / launch / kernel / upload)."""

    def __init__(self, gpu: BufferHost):
        self.gpu = gpu
        self._tables: dict[tuple[int, bytes], DeviceBuffer] = {}

    def table(self, base: G1Array | G2Array) -> DeviceBuffer:
        """The device table for base (a one-point G1Array or G2Array), made on first use."""
        key = (base.GROUP, base.limbs.tobytes())
        if key not in self._tables:
            scalars = FrArray.from_ints((d << (8 * j)) % R for j in range(WINDOWS) for d in range(DIGITS))
            points = cpu_products(base, scalars, resolve_threads(None))
            self._tables[key] = self.gpu.memory.upload(points.limbs)
        return self._tables[key]

    def fixed_base(self, base: G1Array | G2Array, scalars: FrArray) -> G1Array | G2Array:
        """scalars[i] base[0] for every i, affine, equal to the CPU's."""
        gpu, group = self.gpu, base.GROUP
        n = len(scalars)
        out = type(base).zeros(n)
        if n == 0:
            return out
        table = self.table(base)
        mod = f"fixed_base_g{group}"
        width = out.limbs.shape[1] * 8          # affine bytes; xyzz is twice that, a field half
        for start in range(0, n, CHUNK):
            count = min(CHUNK, n - start)
            sc = gpu.memory.upload(scalars.limbs[start:start + count])
            proj = pref = dst = None
            try:
                proj = gpu.memory.alloc(2 * width * count)         # xyzz: four coordinates
                pref = gpu.memory.alloc(width // 2 * count)        # one field element each
                dst = gpu.memory.alloc(width * count)
                gpu.launch(mod, f"g{group}_fb_mul", count, [sc, count, table, proj], block=64)
                self.normalize(group, proj, count, pref, dst)
                out.limbs[start:start + count] = gpu.memory.download_array(dst, (count, out.limbs.shape[1]))
            finally:
                gpu.memory.free(sc, proj, pref, dst)
        self._spot_check(base, scalars, out)
        return out

    def fixed_base_into(self, base: G1Array | G2Array, scalars: FrArray,
                        done: Callable[[int], None] | None = None) -> G1Array | G2Array:
        """The points fixed_base makes, each chunk downloaded from the device
        straight into the result (its pages touched first, on every core),
        through one set of device buffers for all chunks; done(count), when
        given, after each chunk with the points made so far. DeviceMemoryError
        where the buffers do not fit; DeviceResultError as fixed_base."""
        gpu, group, n = self.gpu, base.GROUP, len(scalars)
        out = type(base)(touched(n, base.WIDTH))
        if n == 0:
            return out
        table = self.table(base)
        mod, width, size = f"fixed_base_g{group}", out.limbs.shape[1] * 8, min(CHUNK, n)
        host = out.limbs.reshape(-1).view(np.uint8)
        sc = proj = pref = dst = None
        try:
            sc, proj = gpu.memory.alloc(32 * size), gpu.memory.alloc(2 * width * size)
            pref, dst = gpu.memory.alloc(width // 2 * size), gpu.memory.alloc(width * size)
            for start in range(0, n, CHUNK):
                count = min(CHUNK, n - start)
                # on the stream, after the last chunk's kernels have read the buffers
                sc.upload(scalars.limbs[start:start + count].reshape(-1).view(np.uint8), 0, gpu.stream)
                gpu.launch(mod, f"g{group}_fb_mul", count, [sc, count, table, proj], block=64)
                self.normalize(group, proj, count, pref, dst)
                dst.download(host[width * start:width * (start + count)], 0, gpu.stream)
                if done is not None:
                    done(start + count)
        finally:
            gpu.memory.free(sc, proj, pref, dst)
        self._spot_check(base, scalars, out)
        return out

    def normalize(self, group: int, proj: DeviceBuffer, count: int, pref: DeviceBuffer,
                  dst: DeviceBuffer | int) -> None:
        """The module's normalize on this side's device."""
        normalize(self.gpu, group, proj, count, pref, dst)

    @staticmethod
    def _spot_check(base: G1Array | G2Array, scalars: FrArray, out: G1Array | G2Array) -> None:
        """A few products (the first, the last, random ones) recomputed on the
        CPU: parameters are made once and used for every proof after, so a
        wrong one must stop here, loudly."""
        n = len(scalars)
        idx = np.unique(np.concatenate([[0, n - 1], np.random.default_rng().integers(0, n, SPOT_CHECKS)]))
        want = cpu_products(base, FrArray(scalars.limbs[idx]), 1)
        bad = np.flatnonzero((want.limbs != out.limbs[idx]).any(axis=1))
        if len(bad):
            raise DeviceResultError(f"GPU fixed-base product {int(idx[bad[0]])} differs from the CPU's")

    def close(self) -> None:
        for buf in self._tables.values():
            buf.close()
        self._tables.clear()
