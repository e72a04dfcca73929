# SPDX-License-Identifier: Apache-2.0
"""The CPU backend: native C kernels through Cython, run without the GIL."""
from __future__ import annotations

from ..config import resolve_threads, simd_wanted
from ..curve.points import G1Array, G2Array
from ..errors import NativeMemoryError
from ..field.fr_array import FrArray
from ..msm import _cpu as msm_cpu
from ..ntt import _cpu as ntt_cpu


def _check(rc: int, what: str) -> None:
    if rc == -1:
        raise NativeMemoryError(f"{what}: out of memory")
    if rc:
        raise NativeMemoryError(f"{what}: native error {rc}")


class CpuBackend:
    """Reference implementation of `Backend` and the default one.

    MSMs and NTTs use AVX-512 IFMA where the CPU has it (see `simd`), with identical results.
    Every threads argument goes through config.resolve_threads (None: the
    default; outside 1..MAX_THREADS: InvalidInputError) before native code.
    """

    name = "cpu"

    def __init__(self):
        self.simd(simd_wanted())

    @staticmethod
    def simd(enable: bool | None = None) -> bool:
        """Query, or turn on/off, the AVX-512 IFMA MSM and NTT paths; returns their state."""
        if enable is None:
            return msm_cpu.simd_enabled()
        ntt_cpu.set_simd(enable)
        return msm_cpu.set_simd(enable)

    def msm(self, points, scalars, threads):
        out = type(points).POINT.identity()
        rc, stats = msm_cpu.msm(points.GROUP, points.limbs, scalars.limbs, out.limbs, resolve_threads(threads))
        _check(rc, f"{points.NAME} MSM of {len(points)}")
        return out, stats

    def msm_many(self, parts, threads):
        """sum of msm(points, scalars) over parts: one MSM over the concatenation
        (one plan, larger windows)."""
        points = type(parts[0][0]).concat([p for p, _ in parts])
        return self.msm(points, FrArray.concat([s for _, s in parts]), threads)[0]

    def msm_naive(self, points, scalars):
        out = type(points).POINT.identity()
        msm_cpu.msm_naive(points.GROUP, points.limbs, scalars.limbs, out.limbs)
        return out

    def batch_sum(self, points, threads):
        out = type(points).POINT.identity()
        _check(msm_cpu.batch_sum(points.GROUP, points.limbs, out.limbs, resolve_threads(threads)), f"{points.NAME} sum")
        return out

    def ntt(self, values, inverse, coset, threads):
        out = values.copy()
        if len(out):
            _check(ntt_cpu.ntt(out.limbs, len(out).bit_length() - 1, inverse, coset, resolve_threads(threads)), "NTT")
        return out

    def h_poly(self, a, b, c, threads, flavor="bellman"):
        log_n = len(a).bit_length() - 1
        snarkjs = flavor == "snarkjs"
        _check(ntt_cpu.h_poly(a.limbs, b.limbs, c.limbs, log_n, snarkjs, resolve_threads(threads)), "H polynomial")
        return FrArray(a.limbs if snarkjs else a.limbs[: len(a) - 1])

    def fixed_base(self, base, scalars, threads):
        out = type(base).zeros(len(scalars)) if isinstance(base, (G1Array, G2Array)) else None
        _check(msm_cpu.fixed_base(base.GROUP, base.limbs, scalars.limbs, out.limbs, resolve_threads(threads)),
               "fixed-base products")
        return out
