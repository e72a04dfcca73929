# SPDX-License-Identifier: Apache-2.0
"""NTTs and the H pipeline on the GPU (kernels in ntt/kernels/ntt.cu).

Conventions equal the CPU backend's: roots 7^((r-1)/n) (bellman) or
5^((r-1)/n) (snarkjs), forward natural order in and out, inverse with 1/n,
cosets by the shift's powers. A transform is planned as passes of up to
PASS_STAGES radix-2 stages through shared memory; the bit reversal and every
scaling ride on the first or last pass (see ntt.cu).
"""
from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..cuda.arrays import DeviceScalars
from ..cuda.modules import register_module
from ..errors import InvalidInputError
from ..field.constants import FR_GENERATOR, FR_SNARKJS_NQR, FR_TWO_ADICITY, R
from ..field.fr_array import FrArray
from ..memory.costs import split_lengths
from .flavor import Flavor

if TYPE_CHECKING:
    from ..cuda.kernel_host import BufferHost, DeviceBuffer, Kernel

register_module("ntt", pathlib.Path(__file__).resolve().parent / "kernels" / "ntt.cu")    # this package's kernels

PASS_STAGES = 10
BLOCK_LOG = 10          # elements a block (the measured best on an H200: BENCHMARKS.md)
THREADS = 128
SHARED_LOG = 11         # PASS_MAX_LOG in ntt.cu: larger blocks opt in to more shared memory
GATHER, SCATTER, SCALE_LOAD, SCALE_STORE, DIF = 1, 2, 4, 8, 16


def passes(log_n: int) -> list[tuple[int, int]]:
    """(b_lo, k) of each pass, low bits first: as even a split as fits."""
    count = -(-log_n // PASS_STAGES)
    out: list[tuple[int, int]] = []
    b = 0
    for p in range(count):
        k = (log_n - b) // (count - p)
        out.append((b, k))
        b += k
    return out


@dataclasses.dataclass(frozen=True)
class NttTuning:
    """The pass kernel's build and shape, fixed: what a benchmark sweeps or a
    test pins (dataclasses.replace(NttTuning(), block_log=11)); the defaults
    are the measured best, production's launches. GpuNtt takes one when it
    is made.

    module: "ntt" (the backend's build) or another build of ntt.cu that a
    benchmark added (cuda.modules.add_variant); block_log: log2 elements a
    block, PASS_STAGES to 12; threads: threads a block, 1 to 1024. A value
    out of range raises InvalidInputError."""
    module: str = "ntt"
    block_log: int = BLOCK_LOG
    threads: int = THREADS

    def __post_init__(self) -> None:
        if not isinstance(self.module, str) or self.module.split(".")[0] != "ntt":
            raise InvalidInputError(f"NttTuning: module {self.module!r} is not a build of ntt.cu")
        for name, low, high in (("block_log", PASS_STAGES, 12), ("threads", 1, 1024)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidInputError(f"NttTuning: {name} {value!r} is not an integer from {low} to {high}")


def _powers(base: int, count: int, factor: int = 1) -> list[int]:
    out: list[int] = []
    x = factor % R
    for _ in range(count):
        out.append(x)
        x = x * base % R
    return out


class Twiddles(NamedTuple):
    """A direction's twiddles w_N^e (e < N/2) on the device: the whole table
    in lo (hi 0, bits 0), or compact, w_N^e = lo[e & (2^bits - 1)] hi[e >> bits];
    log_big: log N, the largest domain they serve."""
    lo: DeviceBuffer
    hi: DeviceBuffer | int
    bits: int
    log_big: int

    def buffers(self) -> list[DeviceBuffer]:
        return [self.lo] + ([self.hi] if not isinstance(self.hi, int) else [])


class GpuNtt:
    """The NTT side of one GPU backend (its cuda.device.Device supplies alloc / launch / kernel).
    tuning: the pass kernel's build and shape (a benchmark's GpuNtt(gpu,
    NttTuning(...)); the default is the measured best). InvalidInputError
    unless an NttTuning. compact_twiddles: each direction's twiddles as two
    small tables and one product a butterfly more, instead of the whole
    table (2 GiB a direction at 2^27): what a device-memory plan that needs
    the room sets (set_compact_twiddles)."""

    def __init__(self, gpu: BufferHost, tuning: NttTuning = NttTuning()):
        if not isinstance(tuning, NttTuning):
            raise InvalidInputError(f"GpuNtt: tuning is an NttTuning, not {type(tuning).__name__}")
        self.gpu = gpu
        self.tuning = tuning
        self.compact_twiddles = False
        self._twiddles: dict[tuple[int, bool], Twiddles] = {}  # (nqr, inverse) -> the direction's twiddles
        # (base, factor, log n) -> scale's tables (lo, hi, lo_bits)
        self._scales: dict[tuple[int, int, int], tuple[DeviceBuffer, DeviceBuffer, int]] = {}

    # ------------------------------------------------------------ tables

    def set_compact_twiddles(self, compact: bool) -> None:
        """Keep the twiddles compact (two small tables a direction) or whole
        from now on; the tables of the other kind are freed (made again on
        next use)."""
        with self.gpu.lock:
            if compact == self.compact_twiddles:
                return
            self.compact_twiddles = compact
            tables, self._twiddles = list(self._twiddles.values()), {}
        for tw in tables:
            self.gpu.memory.free(*tw.buffers())

    def twiddles(self, nqr: int, log_n: int, inverse: bool) -> Twiddles:
        """A direction's twiddles w_N^e for e < N/2 with N >= n, w_N =
        nqr^((r-1)/N), inverted when inverse: whole, or compact (see
        compact_twiddles)."""
        key = (nqr, inverse)
        with self.gpu.lock:
            have = self._twiddles.get(key)
            if have is not None and have.log_big >= log_n:
                return have
            if have is not None:
                self.gpu.memory.free(*have.buffers())
            log_big = max(log_n, 1)
            w = pow(nqr, (R - 1) >> log_big, R)
            if inverse:
                w = pow(w, -1, R)
            count = 1 << (log_big - 1)
            lo, hi, lo_bits = self._split_tables(w, 1, count)
            if self.compact_twiddles:
                made = Twiddles(lo, hi, lo_bits, log_big)
            else:
                table = self.gpu.memory.alloc(32 * count)
                self.gpu.launch("ntt", "fr_powers", count, [table, count, lo, hi, lo_bits])
                self.gpu.memory.free(lo, hi)
                made = Twiddles(table, 0, 0, log_big)
            self._twiddles[key] = made
            return made

    def _split_tables(self, base: int, factor: int, count: int) -> tuple[DeviceBuffer, DeviceBuffer, int]:
        """Device tables lo[i] = factor base^i, hi[j] = base^(j 2^lo_bits) covering exponents < count."""
        lo_bits, lo_len, hi_len = split_lengths(count)
        lo = FrArray.from_ints(_powers(base, lo_len, factor))
        hi = FrArray.from_ints(_powers(pow(base, 1 << lo_bits, R), hi_len))
        return self.gpu.memory.upload(lo.limbs), self.gpu.memory.upload(hi.limbs), lo_bits

    def scale(self, base: int, factor: int, log_n: int) -> tuple[DeviceBuffer, DeviceBuffer, int]:
        """Tables for x_i *= factor base^i, i < 2^log_n (cached)."""
        key = (base % R, factor % R, log_n)
        with self.gpu.lock:
            if key not in self._scales:
                self._scales[key] = self._split_tables(base % R, factor, 1 << log_n)
            return self._scales[key]

    # ------------------------------------------------------------ transforms

    def forward(self, src: DeviceBuffer, dst: DeviceBuffer, log_n: int, nqr: int, shift: int | None) -> None:
        """dst = NTT(src) natural -> natural, on the coset shift when given (src is read only)."""
        tw = self.twiddles(nqr, log_n, False)
        scale = self.scale(shift, 1, log_n) if shift else None
        self._dit_gather(src, dst, log_n, tw, scale)

    def _dit_gather(self, src: DeviceBuffer, dst: DeviceBuffer, log_n: int, tw: Twiddles,
                    scale: tuple[DeviceBuffer, DeviceBuffer, int] | None) -> None:
        s_lo, s_hi, s_bits = scale if scale is not None else (0, 0, 0)
        kernel = self._pass_kernel()
        for idx, (b_lo, k) in enumerate(passes(log_n)):
            m = min(b_lo, self.tuning.block_log - k)
            flags = (GATHER | (SCALE_LOAD if scale is not None else 0)) if idx == 0 else 0
            self._launch_pass(kernel, src if idx == 0 else dst, dst, tw, s_lo, s_hi, log_n, b_lo, k, m, s_bits, flags)

    def _pass_kernel(self) -> Kernel:
        """ntt_pass of the tuning's module, allowed the shared memory of a 2^block_log block."""
        block_log = self.tuning.block_log
        kernel = self.gpu.kernel(self.tuning.module, "ntt_pass")
        if block_log > SHARED_LOG:               # past the 64 KiB Device.kernel allows every ntt_pass
            kernel.set_max_dynamic_shared(32 << block_log)
        return kernel

    def _launch_pass(self, kernel: Kernel, inp: DeviceBuffer, out: DeviceBuffer, tw: Twiddles,
                     s_lo: DeviceBuffer | int, s_hi: DeviceBuffer | int, log_n: int, b_lo: int, k: int, m: int,
                     s_bits: int, flags: int) -> None:
        count = 1 << (k + m)
        kernel.launch((1 << (log_n - k - m),), (min(self.tuning.threads, max(1, count // 2)),),
                      [inp, out, tw.lo, tw.hi, s_lo, s_hi, log_n, b_lo, k, m, tw.log_big - log_n, tw.bits, s_bits,
                       flags], self.gpu.stream, 32 * count)

    def inverse(self, buf: DeviceBuffer, dst: DeviceBuffer, log_n: int, nqr: int, shift: int | None,
                factor: int = 1) -> None:
        """dst = factor NTT^-1(buf) natural -> natural (coset shift undone when
        given); buf is clobbered, and dst is another buffer (the last pass
        scatters across the whole array)."""
        tw = self.twiddles(nqr, log_n, True)
        inv_shift = pow(shift, -1, R) if shift else 1
        scale = self.scale(inv_shift, factor * pow(1 << log_n, -1, R), log_n)
        self._dif(buf, dst, log_n, tw, scale, SCATTER | SCALE_STORE)

    def _dif(self, buf: DeviceBuffer, dst: DeviceBuffer, log_n: int, tw: Twiddles,
             scale: tuple[DeviceBuffer, DeviceBuffer, int], last_flags: int) -> None:
        """DIF passes in place on buf (natural -> bit-reversed); the last writes dst with last_flags."""
        s_lo, s_hi, s_bits = scale
        kernel = self._pass_kernel()
        plan = passes(log_n)[::-1]
        for idx, (b_lo, k) in enumerate(plan):
            m = min(b_lo, self.tuning.block_log - k)
            last = idx == len(plan) - 1
            self._launch_pass(kernel, buf, dst if last else buf, tw, s_lo, s_hi, log_n, b_lo, k, m, s_bits,
                              DIF | (last_flags if last else 0))

    def _coefficients(self, buf: DeviceBuffer, log_n: int, nqr: int, base: int, factor: int) -> None:
        """In place: evaluations on <w> (natural order) -> the coefficients
        times factor base^i, in bit-reversed order."""
        inv = self.twiddles(nqr, log_n, True)
        self._dif(buf, buf, log_n, inv, self.scale(base, factor * pow(1 << log_n, -1, R), log_n), SCALE_STORE)

    def to_coset(self, buf: DeviceBuffer, log_n: int, nqr: int, shift: int) -> None:
        """In place: evaluations on <w> -> evaluations on shift <w> (iNTT, scale, NTT; both natural order)."""
        self._coefficients(buf, log_n, nqr, shift, 1)
        tw = self.twiddles(nqr, log_n, False)
        kernel = self._pass_kernel()
        for b_lo, k in passes(log_n):
            m = min(b_lo, self.tuning.block_log - k)
            self._launch_pass(kernel, buf, buf, tw, 0, 0, log_n, b_lo, k, m, 0, 0)

    # ------------------------------------------------------------ entry points

    def ntt(self, values: FrArray, inverse: bool, coset: bool) -> FrArray:
        n = len(values)
        log_n = n.bit_length() - 1
        if n <= 1:
            return values.copy()
        gpu = self.gpu
        src, dst = gpu.memory.upload(values.limbs), gpu.memory.alloc(32 * n)
        try:
            shift = FR_GENERATOR if coset else None
            if inverse:
                self.inverse(src, dst, log_n, FR_GENERATOR, shift)
            else:
                self.forward(src, dst, log_n, FR_GENERATOR, shift)
            return FrArray(gpu.memory.download_array(dst, (n, 4)))
        finally:
            gpu.memory.free(src, dst)

    def h_poly(self, a: FrArray, b: FrArray, c: FrArray, flavor: Flavor) -> FrArray:
        """As CpuBackend.h_poly (bellman: n - 1 coefficients; snarkjs: n coset values)."""
        n = len(a)
        if n == 1:  # constant polynomials: the coset values are the values; H = 0 has no coefficients
            return a * b - c if flavor == Flavor.SNARKJS else FrArray.zeros(0)
        gpu = self.gpu
        bufs = [gpu.memory.upload(x.limbs) for x in (a, b, c)]
        try:
            a_buf, b_buf, c_buf = bufs
            out = self.h_device(a_buf, b_buf, c_buf, n.bit_length() - 1, flavor)
            values = gpu.memory.download_array(out, (n, 4))
            return FrArray(values if flavor == Flavor.SNARKJS else values[: n - 1])
        finally:
            gpu.memory.free(*bufs)

    def h_scalars(self, a: FrArray, b: FrArray, c: FrArray, flavor: Flavor, hold: list[DeviceBuffer] | None = None
                  ) -> FrArray | DeviceScalars:
        """h_poly's result as DeviceScalars (it owns the buffer; the others are freed, or held: see h_owned)."""
        n = len(a)
        if n == 1:
            return self.h_poly(a, b, c, flavor)
        return self.h_owned([self.gpu.memory.upload(x.limbs) for x in (a, b, c)], n, flavor, hold)

    def h_owned(self, bufs: Sequence[DeviceBuffer], n: int, flavor: Flavor, hold: list[DeviceBuffer] | None = None
                ) -> DeviceScalars:
        """h_scalars from device buffers a, b, c of n elements (n >= 2), which
        it takes over: the one holding H is returned as DeviceScalars, the
        others freed; with hold, appended to it instead, for the caller to
        free (a free waits for the device: the transforms are then left
        running when this returns)."""
        gpu = self.gpu
        try:
            a, b, c = bufs
            out = self.h_device(a, b, c, n.bit_length() - 1, flavor)
        except BaseException:
            gpu.memory.free(*bufs)
            raise
        others = [x for x in bufs if x is not out]
        if hold is not None:
            hold.extend(others)
        else:
            gpu.memory.free(*others)
        return DeviceScalars(gpu.memory, out, n if flavor == Flavor.SNARKJS else n - 1)

    def h_device(self, a: DeviceBuffer, b: DeviceBuffer, c: DeviceBuffer, log_n: int, flavor: Flavor) -> DeviceBuffer:
        """The H pipeline on device buffers of 2^log_n elements (log_n >= 1): the
        buffer holding the result (a for snarkjs; for bellman b, its last element
        zero); a, b and c are clobbered.

        bellman, in six transforms instead of seven: on the coset Z is the
        constant z0 = shift^n - 1, so H = (A B - C) / Z interpolated there is
        (P - C) / z0 with P the coset interpolation of A B, and C, of degree
        below n, is its own interpolation from the domain: one inverse
        transform for c instead of two transforms and a share of the last."""
        n = 1 << log_n
        if flavor == Flavor.SNARKJS:
            shift = pow(FR_SNARKJS_NQR, (R - 1) >> (log_n + 1), R) if log_n < FR_TWO_ADICITY else 25
            for buf in (a, b, c):
                self.to_coset(buf, log_n, FR_SNARKJS_NQR, shift)
            self.gpu.launch("ntt", "h_combine", n, [a, b, c, n])
            return a
        shift = FR_GENERATOR
        z_inv = pow((pow(shift, n, R) - 1) % R, -1, R)
        self._coefficients(c, log_n, FR_GENERATOR, 1, z_inv)   # C / z0
        for buf in (a, b):
            self.to_coset(buf, log_n, FR_GENERATOR, shift)
        self.gpu.launch("ntt", "fr_mul_vec", n, [a, a, b, n])
        self.inverse(a, b, log_n, FR_GENERATOR, shift, z_inv)  # P / z0
        self.gpu.launch("ntt", "h_finish", n, [b, b, c, log_n])
        return b

    def close(self) -> None:
        for tw in self._twiddles.values():
            for buf in tw.buffers():
                buf.close()
        for lo, hi, _ in self._scales.values():
            lo.close()
            hi.close()
        self._twiddles.clear()
        self._scales.clear()
