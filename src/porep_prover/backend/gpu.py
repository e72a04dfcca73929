# SPDX-License-Identifier: Apache-2.0
"""The GPU backend: CUDA kernels (ntt/kernels, msm/kernels) compiled by NVRTC
for the device's own arch, cached on disk, launched through the driver layer
(cuda._driver). Results equal the CPU backend's bit for bit.

Device memory. Point arrays given to msm / batch_sum are kept resident on the
device (keyed by their limbs array, dropped when it is collected), so a
parameter set is uploaded once and reused by every proof; they must not be
modified in place while resident. Resident points may take the budget
(POREP_PROVER_GPU_RESIDENT_BYTES, given as GpuEnvironment.resident_bytes;
default what was free at start less a reserve);
past it the least recently used arrays are dropped, and an array larger than
the budget is streamed through in chunks. Work buffers are allocated per
call; when an allocation fails the resident arrays are dropped and it is
tried once more, then DeviceMemoryError.
"""
from __future__ import annotations

import collections
import contextlib
import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np

from .._version import __version__
from ..cuda import DeviceInfo, devices, driver
from ..cuda.cache import KernelCache
from ..cuda.compiler import compile_cubin
from ..cuda.staging import Staging
from ..errors import DeviceMemoryError, InvalidInputError
from .gpu_fixed_base import GpuFixedBase
from .gpu_modules import INCLUDE, MODULES, VARIANTS
from .gpu_arrays import DeviceScalars
from .gpu_msm import GpuMsm
from .gpu_ntt import GpuNtt
from .base import Capabilities, Flavor, MsmOptions, Prepared
from .gpu_prepare import PinnedPool, prepare
from .gpu_r1cs import GpuR1cs

if TYPE_CHECKING:
    from ..config import GpuEnvironment

THREADS = 256
RESERVE = 8 << 30          # device bytes left for work buffers when the budget is automatic
STREAM_CHUNK = 1 << 30     # bytes of points per chunk when an array is streamed


def _host_key(raw: np.ndarray) -> tuple[int, int]:
    """(address, bytes) of contiguous host bytes: how a copy made ahead is found again."""
    return raw.ctypes.data, raw.nbytes


class GpuBackend:
    """`Backend` on one CUDA device. environment: what the process's
    environment sets for it (config.gpu_environment(), read once per process
    by backend.gpu_backend, which makes one backend per device)."""

    name = "gpu"
    capabilities = Capabilities(evaluates_witness=True, reference=False)
    msm_options: MsmOptions | None = None    # None: the MSM side's own settings (GpuMsm.tables ...)

    def __init__(self, ordinal: int, environment: "GpuEnvironment"):
        drv = driver()
        self.info: DeviceInfo = devices()[ordinal]
        self.drv = drv
        self.ctx = drv.Context(ordinal)
        least, greatest = self.ctx.stream_priorities()
        # the kernel region's stream, served first; beside it, the MSM's sort fills the next stretch of
        # buckets while this one adds up the last (GpuMsm.overlap)
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
        self._modules: dict[str, object] = {}
        self._kernels: dict[tuple[str, str], object] = {}
        # id(limbs), or (id(limbs), tag) for a buffer derived from it -> (buffer, finalizer)
        self._resident: collections.OrderedDict = collections.OrderedDict()
        self._ahead: dict[tuple[int, int], object] = {}  # (host address, bytes) -> its device copy, made ahead
        self._busy: collections.Counter = collections.Counter()  # id(limbs) of resident arrays in use
        budget = environment.resident_bytes
        self.resident_budget = budget if budget is not None else max(0, self.ctx.mem_info()[0] - RESERVE)
        self.ntt_ops = GpuNtt(self)
        self.msm_ops = GpuMsm(self, tables=environment.msm_tables, table_copies=environment.msm_table_copies)
        self.fixed_base_ops = GpuFixedBase(self)
        self.r1cs_ops = GpuR1cs(self)

    # ------------------------------------------------------------ kernels

    def kernel(self, module: str, name: str):
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

    def launch(self, module: str, name: str, n: int, args, block: int = THREADS, stream=None) -> None:
        """A grid-stride kernel over n items on stream (the backend's by default)."""
        grid = max(1, min(-(-n // block), self.info.multiprocessors * 32))
        self.kernel(module, name).launch((grid,), (block,), args, stream or self.stream)

    def synchronize(self) -> None:
        """Wait for the kernel region's streams (the backend's and the one beside it)."""
        self.stream.synchronize()
        self.aux_stream.synchronize()

    # ------------------------------------------------------------ memory

    def alloc(self, nbytes: int):
        """Device memory; on exhaustion drop the resident arrays not in use and retry once."""
        buf = self.try_alloc(nbytes)
        if buf is not None:
            return buf
        self.synchronize()
        self.release_resident()
        try:
            return self.drv.DeviceBuffer(self.ctx, nbytes)
        except DeviceMemoryError as exc:
            free, total = self.ctx.mem_info()
            raise DeviceMemoryError(f"{nbytes} bytes of device memory asked for, {free} of {total} free",
                                    code=exc.code, name=exc.name) from None

    def upload(self, data):
        """A new device buffer holding data (any contiguous numpy array); the
        copy made ahead by prepare, handed over, when data is what it copied."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        with self.lock:
            ahead = self._ahead.pop(_host_key(raw), None)
        if ahead is not None:
            return ahead
        buf = self.alloc(len(raw))
        with self.lock:
            if self.pinned.contains(raw):   # prepared: one DMA, no host copy
                buf.upload(raw, 0, self.stream)
            else:
                self.staging.upload(buf, raw)
        return buf

    def download_array(self, buf, shape, dtype=np.uint64) -> np.ndarray:
        """The first prod(shape) items of buf, after the stream's work is done."""
        out = np.empty(shape, dtype=dtype)
        with self.lock:
            self.staging.download(buf, out.reshape(-1).view(np.uint8))
        return out

    def free(self, *bufs) -> None:
        """Close buffers once the kernel region's streams no longer use them."""
        self.synchronize()
        for buf in bufs:
            if buf is not None:
                buf.close()

    def point_chunks(self, points):
        """(start, stop, device buffer) covering points: the resident copy in one
        piece, or, for an array over the budget, chunks uploaded one at a time."""
        nbytes = points.limbs.nbytes
        if nbytes <= self.resident_budget:
            yield 0, len(points), self.resident(points)   # callers hold points (see holding)
            return
        size = points.limbs.shape[1] * 8
        per = max(1, min(STREAM_CHUNK, max(self.resident_budget, 1 << 20)) // size)
        for start in range(0, len(points), per):
            stop = min(start + per, len(points))
            buf = self.upload(points.limbs[start:stop])
            try:
                yield start, stop, buf
            finally:
                self.free(buf)

    def resident(self, points):
        """The device copy of points, uploaded on first use."""
        return self.resident_array(points.limbs)

    def resident_array(self, limbs):
        """The device copy of a numpy array (points' limbs, a circuit's CSR
        arrays), uploaded on first use, kept under the resident budget and
        dropped when the array is collected; it must not change meanwhile."""
        key = id(limbs)
        with self.lock:
            buf = self._touch(key)
            if buf is None:
                self._make_room(limbs.nbytes)
                buf = self._keep(key, limbs, self.upload(limbs))
            return buf

    def resident_derived(self, limbs, tag, nbytes: int, make):
        """A device buffer of nbytes made from a resident array by make(buffer)
        (e.g. an MSM's window table), kept beside it under the resident budget
        and dropped with it; None when it does not fit beside what is resident
        (nothing is evicted for it) or the device runs out while it is made."""
        key = (id(limbs), tag)
        with self.lock:
            buf = self._touch(key)
            if buf is not None or self.resident_bytes() + nbytes > self.resident_budget:
                return buf
            buf = self.try_alloc(nbytes)
            if buf is None:
                return None
            try:
                make(buf)
                self.stream.synchronize()
            except DeviceMemoryError:
                self.free(buf)
                return None
            except BaseException:
                self.free(buf)
                raise
            return self._keep(key, limbs, buf)

    def _touch(self, key):
        """A resident entry's buffer, now the most recently used, or None (lock held)."""
        entry = self._resident.get(key)
        if entry is None:
            return None
        self._resident.move_to_end(key)
        return entry[0]

    def _keep(self, key, limbs, buf):
        """Record buf as resident under key, dropped when limbs is collected (lock held)."""
        self._resident[key] = (buf, weakref.finalize(limbs, self._evict, key))
        return buf

    def try_alloc(self, nbytes: int):
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

    def work_alloc(self, nbytes: int):
        """A work buffer for the kernel region's stream, from the pool (free
        gives it back there); as alloc where the device has no pools or the
        pool cannot grow."""
        if self.pooled:
            try:
                return self.drv.DeviceBuffer(self.ctx, nbytes, self.stream)
            except DeviceMemoryError:
                pass
        return self.alloc(nbytes)

    @contextlib.contextmanager
    def holding(self, *arrays):
        """While inside, the device copies of these arrays (resident_array's)
        are not evicted: neither to make room nor when an allocation runs out
        (freeing them would leave the kernels that use them reading freed
        memory). None stands for no array."""
        keys = [id(a) for a in arrays if a is not None]
        with self.lock:
            self._busy.update(keys)
        try:
            yield
        finally:
            with self.lock:
                self._busy.subtract(keys)
                self._busy = +self._busy        # drop the keys no longer held

    def resident_bytes(self) -> int:
        with self.lock:
            return sum(buf.nbytes for buf, _ in self._resident.values())

    def _make_room(self, nbytes: int) -> None:
        """Evict the least recently used arrays not in use until nbytes fit the budget (or none is left)."""
        while self.resident_bytes() + nbytes > self.resident_budget:
            victim = next((k for k in self._resident if not self._in_use(k)), None)
            if victim is None:
                return
            self._evict(victim)

    def _in_use(self, key) -> bool:
        """A resident entry is in use while its array is held (a derived entry's key is (array's key, tag))."""
        return bool(self._busy[key if isinstance(key, int) else key[0]])

    def _evict(self, key) -> None:
        """Drop a resident entry; an array's derived entries go with it."""
        with self.lock:
            entries = [self._resident.pop(key, None)]
            if isinstance(key, int):
                entries += [self._resident.pop(k) for k in list(self._resident)
                            if not isinstance(k, int) and k[0] == key]
        for entry in entries:
            if entry is not None:
                entry[1].detach()
                self.free(entry[0])

    def release_points(self, points) -> None:
        """Drop the device copy of one point array (the SRS manager evicts with it)."""
        self._evict(id(points.limbs))

    def release_resident(self) -> None:
        """Drop every resident array not in use (see holding)."""
        with self.lock:
            for key in [k for k in self._resident if not self._in_use(k)]:
                self._evict(key)

    def memory(self) -> tuple[int, int]:
        """(free, total) device bytes."""
        return self.ctx.mem_info()

    # ------------------------------------------------------------ Backend

    def ntt(self, values, inverse, coset, threads):
        return self.ntt_ops.ntt(values, inverse, coset)

    def h_poly(self, a, b, c, threads, flavor=Flavor.BELLMAN):
        return self.ntt_ops.h_poly(a, b, c, Flavor.of(flavor))

    def h_scalars(self, a, b, c, threads, flavor=Flavor.BELLMAN) -> DeviceScalars:
        """h_poly's result left on the device, for this backend's msm (close it after)."""
        return self.ntt_ops.h_scalars(a, b, c, Flavor.of(flavor))

    def h_from_witness(self, r1cs, witness, threads, flavor=Flavor.BELLMAN, check=True, keep_witness=False):
        """H for a witness with A w, B w, C w evaluated on the device (the
        circuit's matrices resident, only the witness uploaded); check raises
        UnsatisfiedError naming the first failing constraint. Bellman's layout.
        keep_witness: return (H, the witness's device copy) instead of H, so the
        queries' scalars come from it (its slices, take) without uploads."""
        n, flavor = r1cs.domain_size, Flavor.of(flavor)
        if n < 2:
            raise InvalidInputError("h_from_witness needs a domain of at least 2")
        r1cs.check_witness(witness)
        w = DeviceScalars(self, self.upload(witness.limbs), len(witness))
        try:
            h = self.ntt_ops.h_owned(self.r1cs_ops.evaluate(r1cs, w, n, check), n, flavor)
        except BaseException:
            w.close()
            raise
        if keep_witness:
            return h, w
        w.close()
        return h

    def take(self, values: DeviceScalars, index: np.ndarray) -> DeviceScalars:
        """values[index] gathered on the device (index: uint32 rows of values,
        resident once per array, e.g. R1CS.query_index(q, np.uint32)); owned."""
        return self.r1cs_ops.take(values, index)

    def release_scalars(self, values) -> None:
        if isinstance(values, DeviceScalars):     # h_scalars' of a domain of 1 are on the host
            values.close()

    def prepare(self, assignment, ahead: bool = False) -> Prepared:
        """Host work for a partition's kernel region, done outside the device's lock:
        its uploaded arrays copied into page-locked memory (give it back with
        release_prepared once the region is over). ahead: also copy them to the
        device now, on the copy stream, while another worker's kernels run (upload
        then hands these copies over); an array that does not fit is left to the
        region. The copies are on the device when prepare returns."""
        prepared = prepare(self.pinned, assignment)
        if ahead:
            try:
                self._copy_ahead(prepared)
            except BaseException:
                self.release_prepared(prepared)
                raise
        return prepared

    def _copy_ahead(self, prepared: Prepared) -> None:
        for arr in prepared.assignment.arrays().values():
            raw = arr.limbs.reshape(-1).view(np.uint8)
            key = _host_key(raw)
            buf = self.try_alloc(raw.nbytes)   # never alloc(): evicting resident points could pull them
            if buf is None:                    # from under the other worker's running kernels
                continue
            with self.lock:
                self._ahead[key] = buf
            prepared.ahead.append(key)
            buf.upload(raw, 0, self.copy_stream)
        self.copy_stream.synchronize()

    def release_prepared(self, prepared: Prepared) -> None:
        """The arena back to the pool; the copies made ahead that the region did not take, freed."""
        with self.lock:
            unused = [self._ahead.pop(key, None) for key in prepared.ahead]
        prepared.ahead = []
        if any(buf is not None for buf in unused):
            self.copy_stream.synchronize()   # a copy cut short by an error may still be running
            self.free(*unused)
        if prepared.arena is not None:
            self.stream.synchronize()
            self.pinned.release(prepared.arena)
            prepared.arena = None

    def msm(self, points, scalars, threads):
        return self.msm_ops.msm(points, scalars, self.msm_options)

    def msm_many(self, parts, threads):
        """sum of msm(points, scalars) over parts (each its own resident array)."""
        total = None
        for points, scalars in parts:
            got, _ = self.msm(points, scalars, threads)
            total = got if total is None else total + got
        return total

    def msm_shared(self, sets, scalars, threads):
        """GpuMsm.msm_shared: one sort of the scalars for every (points, rows)
        of sets; where the arrays cannot be resident at once, each MSM apart
        (an array with rows takes its scalars scattered to its rows first)."""
        got = self.msm_ops.msm_shared(sets, scalars)
        if got is not None:
            return got
        out, on_device = [], scalars       # the scatter reads them on the device: uploaded once
        if not isinstance(scalars, DeviceScalars) and any(rows is not None for _, rows in sets):
            on_device = DeviceScalars(self, self.upload(scalars.limbs), len(scalars))
        try:
            for points, rows in sets:
                if rows is None:
                    out.append(self.msm(points, scalars, threads)[0])
                    continue
                put = self.r1cs_ops.put(on_device, rows, len(points))
                try:
                    out.append(self.msm(points, put, threads)[0])
                finally:
                    put.close()
        finally:
            if on_device is not scalars:
                on_device.close()
        return out

    def with_options(self, options: MsmOptions) -> "GpuOptionsView":
        return GpuOptionsView(self, options)

    def batch_sum(self, points, threads):
        return self.msm_ops.batch_sum(points)

    def fixed_base(self, base, scalars, threads):
        return self.fixed_base_ops.fixed_base(base, scalars)

    def close(self) -> None:
        """Free everything this backend holds on the device."""
        self.release_resident()
        with self.lock:
            self.ntt_ops.close()
            self.fixed_base_ops.close()
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


class GpuOptionsView:
    """A GpuBackend with MSM options of its own (with_options): everything else,
    with_options too, is the backend's (device, lock, resident points, pools);
    the methods that run GpuMsm.msm run with the view as self."""

    msm, msm_many, msm_shared = GpuBackend.msm, GpuBackend.msm_many, GpuBackend.msm_shared

    def __init__(self, gpu: GpuBackend, options: MsmOptions):
        self.gpu, self.msm_options = gpu, options

    def __getattr__(self, name):
        return getattr(self.gpu, name)
