# SPDX-License-Identifier: Apache-2.0
"""Fixed-base products s_i G on the GPU (kernels in msm/kernels/fixed_base.cu),
for parameter generation: a table of d 2^(8j) G (j < 32, d < 256; made once
per base on the CPU, 8160 points) turns each product into at most 32 mixed
additions; the points are then made affine a run at a time with one field
inversion per run. Scalars are processed in chunks so that any count fits.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...config import resolve_threads
from ...errors import DeviceResultError, NativeMemoryError
from ...field.constants import R
from ...field.fr_array import FrArray
from .. import _cpu as msm_cpu

if TYPE_CHECKING:
    from ...cuda.kernel_host import DeviceBuffer, KernelHost
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


def normalize(gpu: KernelHost, group: int, proj: DeviceBuffer, count: int, pref: DeviceBuffer,
              dst: DeviceBuffer | int) -> None:
    """dst = the count xyzz points of proj made affine on gpu (fb_normalize: one
    field inversion a run of PER points); pref: work space of one field element
    a point; dst a buffer or an address in one."""
    runs = -(-count // PER)
    gpu.kernel(f"fixed_base_g{group}", f"g{group}_fb_normalize").launch(
        (-(-runs // 64),), (64,), [proj, count, PER, pref, dst], gpu.stream)


class GpuFixedBase:
    """The fixed-base side of one GPU backend (its cuda.device.Device supplies alloc / launch / kernel / upload)."""

    def __init__(self, gpu: KernelHost):
        self.gpu = gpu
        self._tables: dict[tuple[int, bytes], DeviceBuffer] = {}

    def table(self, base: G1Array | G2Array) -> DeviceBuffer:
        """The device table for base (a one-point G1Array or G2Array), made on first use."""
        key = (base.GROUP, base.limbs.tobytes())
        if key not in self._tables:
            scalars = FrArray.from_ints((d << (8 * j)) % R for j in range(WINDOWS) for d in range(DIGITS))
            points = cpu_products(base, scalars, resolve_threads(None))
            self._tables[key] = self.gpu.upload(points.limbs)
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
            sc = gpu.upload(scalars.limbs[start:start + count])
            proj = pref = dst = None
            try:
                proj = gpu.alloc(2 * width * count)         # xyzz: four coordinates
                pref = gpu.alloc(width // 2 * count)        # one field element each
                dst = gpu.alloc(width * count)
                gpu.launch(mod, f"g{group}_fb_mul", count, [sc, count, table, proj], block=64)
                self.normalize(group, proj, count, pref, dst)
                out.limbs[start:start + count] = gpu.download_array(dst, (count, out.limbs.shape[1]))
            finally:
                gpu.free(sc, proj, pref, dst)
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
