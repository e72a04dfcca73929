# SPDX-License-Identifier: Apache-2.0
"""MSMs and batch additions on the GPU (kernels in msm/kernels/msm.cu).

Pippenger with signed base-2^c digits: a counting sort of (point, bucket)
entries, chunked accumulation that does not care how the scalars spread over
the buckets (all-equal scalars cost the same as random ones), per-window
bucket reduction on the device, the windows combined on the host. Points
come from the backend's resident store (uploaded once per array), in
passes of at most the device's pass_points, or, when an array is streamed
(the device-memory plan's, or one over the resident budget), through the
chunk ring in chunks (cuda/chunk_ring.py). An MSM of more than one pass
keeps one set of buckets a scalar set for all its passes: each pass's
entries are added into it (the window width fixed by the first pass's
scalars) and its windows are reduced once, at the end, not once a pass.

Large G1 MSMs (from 2^29 entries: 2^26 points) are filled and added up in
stretches of buckets: the sort's fill of the next stretch runs on the
backend's second stream beside the accumulation of the last.

GpuMsm runs an MSM's steps and combines its windows on the host; the sort's
launches are msm/gpu/sort.py's, the buckets' (accumulation, reduction,
batch sums) msm/gpu/buckets.py's, the plan msm/gpu/plan.py's.

Window tables (opt-in: GpuMsm.tables, from POREP_PROVER_GPU_MSM_TABLES=1;
msm/gpu/table.py): for the plain MSM of resident points, shifted
copies of the points made once, so that windows share sets of buckets; the
shared sorts (msm_shared) stay plain.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ...cuda.arrays import DeviceScalars, WorkBuffers
from ...curve import _curve
from ...errors import InvalidInputError, LengthMismatchError
from .buckets import SMALL_THREADS, GpuBuckets, Target, point_type, proj_bytes
from .plan import MsmTuning, overlapped, window_bits_for
from .sort import COUNTERS, REPEATS, GpuSort
from .table import Table, TableOptions, window_table

if TYPE_CHECKING:
    from ...cuda.kernel_host import DeviceBuffer, Event, KernelHost, Stream
    from ...curve.points import G1Array, G1Point, G2Array, G2Point
    from ...field.fr_array import FrArray

NO_ROW = 0xFFFFFFFF      # a row map's entry for a scalar without a point (msm_shared)
DEFAULT_TUNING = MsmTuning()   # GpuMsm's unless one is given: every choice left to the plan


class Accumulation:
    """One scalar set's buckets kept across an MSM's passes (GpuMsm.msm_sets
    over an array of more than one pass): made by the first pass that has
    entries, which fixes the window width c for the others; each pass adds
    its buckets' sums into them; reduce gives the window sums once, at the
    end. alloc: where the buckets come from (work buffers that outlive the
    passes)."""

    def __init__(self, alloc: Callable[[int], DeviceBuffer]) -> None:
        self.alloc = alloc
        self.c = 0                     # 0 until the first pass: that pass's scalars pick it
        self.nb = self.sets = self.proj_bytes = 0
        self.sums: DeviceBuffer | None = None

    def begin(self, c: int, nb: int, sets: int, proj_bytes: int) -> None:
        """Fix the buckets' shape at the first pass; every later pass must sort the same way."""
        if self.c == 0:
            self.c, self.nb, self.sets, self.proj_bytes = c, nb, sets, proj_bytes
        # _pippenger passes every later pass the first's c, and the buckets' shape follows from it
        assert (c, nb, sets, proj_bytes) == (self.c, self.nb, self.sets, self.proj_bytes), "buckets reshaped"

    def buckets(self, stream: Stream) -> DeviceBuffer:
        """The buckets (identity to begin with), made on first use, zeroed on stream (the passes')."""
        if self.sums is None:
            self.sums = self.alloc(self.proj_bytes * self.sets * self.nb)
            self.sums.zero(stream)
        return self.sums

    def reduce(self, msm: GpuMsm, group: int) -> NDArray[np.uint64] | None:
        """The window sums (sets x xyzz rows) of every pass's entries; None where no pass had one."""
        if self.sums is None:
            return None
        with WorkBuffers(msm.gpu.memory) as bufs:
            return msm.buckets.reduce(msm.tuning.module(group), group, self.sums, self.nb, self.sets,
                                      self.proj_bytes, bufs.alloc)


class GpuMsm:
    """The MSM side of one GPU backend (its cuda.device.Device supplies alloc / launch / kernel / resident).
    tuning: the plan's choices fixed (a benchmark's GpuMsm(gpu, replace(MsmTuning(), ...)));
    the default leaves them to the plan. InvalidInputError unless an MsmTuning.
    tables, table_copies: the window tables of MSMs over resident points when
    a call gives no MsmOptions (the backend passes the environment's:
    config.GpuEnvironment.msm_tables / msm_table_copies). onto: an MSM of
    several passes adds each later pass's entries onto its buckets by
    msm_accumulate_onto (runs start from what their bucket holds; the
    default) rather than msm_accumulate_into (a general addition as each
    run ends; config.GpuEnvironment.msm_onto)."""

    def __init__(self, gpu: KernelHost, tuning: MsmTuning = DEFAULT_TUNING, tables: bool = False,
                 table_copies: int | None = None, onto: bool = True):
        if not isinstance(tuning, MsmTuning):
            raise InvalidInputError(f"GpuMsm: tuning is an MsmTuning, not {type(tuning).__name__}")
        self.gpu = gpu
        self.tuning = tuning
        self.profile: dict[str, float] | None = None  # set to a dict: ms per phase are added to it
        self._last_sort: tuple[dict[str, float], Event] | None = None    # (its profile, the last sort's end)
        self.tables = bool(tables)                     # window tables for resident points (see the module)
        self.table_copies = table_copies               # None: a copy for every window; else at most this many
        self.onto = bool(onto)                         # later passes' runs start from their buckets' sums
        # id(rows) -> (weak reference, rows it needs)
        self._rows_checked: dict[int, tuple[weakref.ref[NDArray[np.uint32]], int]] = {}
        self.sort = GpuSort(gpu, tuning)
        self.buckets = GpuBuckets(gpu, tuning, self.sort)

    def on(self, gpu: KernelHost) -> GpuMsm:
        """This MSM side's settings on another view of its device (cuda.second_stream.SecondStream)."""
        other = GpuMsm(gpu, self.tuning, self.tables, self.table_copies, self.onto)
        other.profile, other._rows_checked = self.profile, self._rows_checked
        return other

    def _marker(self) -> tuple[Callable[[str], None], Callable[[], None]]:
        """mark(name) ends the phase called name (CUDA events; a no-op unless
        profiling). Beside the phases, "passes" counts the sorts and
        "between" adds the device time from one sort's end to the next one's
        start under the same profile (chunk waits, gathers, the host's round
        trips), of sorts on this side's stream."""
        if self.profile is None:
            return lambda name: None, lambda: None
        gpu, profile = self.gpu, self.profile
        events: list[tuple[str, Event]] = []

        def mark(name: str) -> None:
            events.append((name, self.buckets.event(gpu.stream)))

        def collect() -> None:
            gpu.stream.synchronize()
            for (_, a), (name, b) in zip(events, events[1:]):
                profile[name] = profile.get(name, 0.0) + b.elapsed_ms(a)
            profile["passes"] = profile.get("passes", 0) + 1
            last = self._last_sort
            if last is not None and last[0] is profile:
                profile["between"] = profile.get("between", 0.0) + events[0][1].elapsed_ms(last[1])
            self._last_sort = (profile, events[-1][1])

        mark("start")
        return mark, collect

    def msm(self, points: G1Array | G2Array, scalars: FrArray | DeviceScalars, options: TableOptions | None = None
            ) -> tuple[G1Point | G2Point, dict[str, int]]:
        """(sum scalars[i] points[i], the scalars' split); options: a caller's
        MsmOptions for the window tables (None: this side's tables / table_copies)."""
        return self.msm_sets(points, [scalars], options)[0]

    def msm_sets(self, points: G1Array | G2Array, scalar_sets: Sequence[FrArray | DeviceScalars],
                 options: TableOptions | None = None) -> list[tuple[G1Point | G2Point, dict[str, int]]]:
        """[msm(points, scalars, options) for scalars in scalar_sets] from one
        pass over the points: each pass's points (a streamed array's chunk,
        uploaded once) serve every set in turn before the next, so the
        transfer of a streamed array is divided by the sets' number (two
        partitions' regions sharing a pass: memory.device_plan's pairs)."""
        n = len(points)
        for scalars in scalar_sets:
            if len(scalars) != n:
                raise LengthMismatchError(f"msm: {n} points but {len(scalars)} scalars")
        if n == 0:
            return [(point_type(points).identity(), {"zeros": 0, "ones": 0, "full": 0, "window_bits": 0})
                    for _ in scalar_sets]
        if n >= 1 << 28:
            raise InvalidInputError(f"GPU MSM of {n} points: at most 2^28 - 1 per call")
        partials: list[list[tuple[NDArray[np.uint64], int]]] = [[] for _ in scalar_sets]
        totals = np.zeros((len(scalar_sets), 3), dtype=np.int64)
        resident = self.gpu.memory.resident
        # the points' resident copy stays while their chunks run
        with resident.holding(points.limbs), WorkBuffers(self.gpu.memory) as kept:
            one_pass = resident.in_one_pass(points)
            table = window_table(self, points, options) if one_pass else None
            # more than one pass (or a streamed array): a set of buckets a scalar set, kept across the passes
            shared = None if one_pass else [Accumulation(kept.alloc) for _ in scalar_sets]
            for start, stop, pts in resident.point_chunks(points):
                for k, scalars in enumerate(scalar_sets):
                    got, used, counts = self._chunk(points, pts, scalars, start, stop, table,
                                                    shared[k] if shared else None)
                    totals[k] += counts
                    if got is not None:
                        partials[k].append((got, used))
            for k, acc in enumerate(shared or ()):
                rows = acc.reduce(self, points.GROUP)
                if rows is not None:
                    partials[k].append((rows, acc.c))
        out = []
        for k, parts in enumerate(partials):
            stats = {"zeros": int(totals[k, 0]), "ones": int(totals[k, 1]), "full": int(totals[k, 2]),
                     "window_bits": max((used for _, used in parts), default=0)}
            out.append((self._finish(point_type(points), points.GROUP, parts), stats))
        return out

    def _chunk(self, points: G1Array | G2Array, pts: DeviceBuffer | int, scalars: FrArray | DeviceScalars,
               start: int, stop: int, table: Table | None, into: Accumulation | None = None
               ) -> tuple[NDArray[np.uint64] | None, int, NDArray[np.int64]]:
        """One pass's _pippenger over points[start:stop] (at pts) with their
        scalars (uploaded here from the host); into: the buckets it adds into
        (the window sums then come from into.reduce, and None here)."""
        uploaded = None
        if isinstance(scalars, DeviceScalars):
            sc: DeviceBuffer | int = scalars.address(start)
        else:
            sc = uploaded = self.gpu.memory.upload(scalars.limbs[start:stop])
        try:
            return self._pippenger(points.GROUP, pts, sc, stop - start, proj_bytes(points), table, into)
        finally:
            if uploaded is not None:
                self.gpu.memory.free(uploaded)

    def msm_shared(self, sets: Sequence[tuple[G1Array | G2Array, NDArray[np.uint32] | None]],
                   scalars: FrArray | DeviceScalars) -> list[G1Point | G2Point] | None:
        """[sum_i scalars[i] P_i for each (points, rows) of sets] from one sort
        of the scalars: classify, digits, count, scan and fill once, each
        array's accumulation, combine levels and reduction its own (the first
        array's group picks the window width). rows None: P_i = points[i]
        (len(points) == len(scalars)); else a 1-D uint32 host array of
        len(scalars), kept resident like a query index: P_i = points[rows[i]],
        or no term where rows[i] is NO_ROW. scalars: DeviceScalars or an
        FrArray. None where the arrays cannot be resident at once, one is
        streamed, or the scalars are more than a pass (ResidentStore.pass_points):
        the caller takes the MSMs apart. No window tables here (the witness's
        scalars, mostly narrow, leave most windows empty)."""
        memory, n = self.gpu.memory, len(scalars)
        resident = memory.resident
        for points, rows in sets:
            if rows is None and len(points) != n:
                raise LengthMismatchError(f"msm_shared: {len(points)} points but {n} scalars")
            if rows is not None:
                self._check_rows(rows, n, len(points))
        if not sets or n == 0:
            return [point_type(p).identity() for p, _ in sets]
        arrays = [p.limbs for p, _ in sets] + [r for _, r in sets if r is not None]
        if n >= 1 << 28 or sum(a.nbytes for a in arrays) > resident.budget \
                or (resident.pass_points and n > resident.pass_points) \
                or not all(resident.in_one_pass(p) for p, _ in sets):
            return None
        with resident.holding(*arrays):              # uploading one must not evict another
            targets = [Target(p.GROUP, resident.resident(p), 0 if r is None else resident.resident_array(r),
                              proj_bytes(p)) for p, r in sets]
            uploaded = None
            if isinstance(scalars, DeviceScalars):
                sc: DeviceBuffer | int = scalars.address()
            else:
                sc = uploaded = memory.upload(scalars.limbs)
            try:
                sums, c, _ = self._pippenger_targets(targets, sc, n, self.tuning.window_bits, 0)
            finally:
                if uploaded is not None:
                    memory.free(uploaded)
        return [self._finish(point_type(p), p.GROUP, [] if rows is None else [(rows, c)])
                for (p, _), rows in zip(sets, sums)]

    def _check_rows(self, rows: NDArray[np.uint32], n: int, length: int) -> None:
        """Raise InvalidInputError unless rows is n uint32 entries, each below
        length or NO_ROW (the kernel reads the points there unchecked); an
        array passes once (it must not change after)."""
        if not isinstance(rows, np.ndarray) or rows.dtype != np.uint32 or rows.shape != (n,):
            raise InvalidInputError(f"msm_shared: rows is a uint32 array of {n}, not {getattr(rows, 'dtype', rows)}")
        seen = self._rows_checked.get(id(rows))
        if seen is not None and seen[0]() is rows and seen[1] <= length:
            return
        valid = rows[rows != NO_ROW]
        top = int(valid.max()) + 1 if len(valid) else 0
        if top > length:
            raise InvalidInputError(f"msm_shared: a row {top - 1} past the {length} points")
        self._rows_checked[id(rows)] = (weakref.ref(rows), top)

    def msm_device(self, points: G1Array | G2Array, scalars_buf: DeviceBuffer | int) -> G1Point | G2Point:
        """sum scalars[i] points[i] with the scalars already on the device and the
        points resident (what the benchmarks time as device-resident)."""
        resident = self.gpu.memory.resident
        with resident.holding(points.limbs):
            table = window_table(self, points)
            got, c, _ = self._pippenger(points.GROUP, resident.resident(points), scalars_buf, len(points),
                                        proj_bytes(points), table)
        return self._finish(point_type(points), points.GROUP, [(got, c)] if got is not None else [])

    def _finish(self, point: type[G1Point] | type[G2Point], group: int,
                partials: Sequence[tuple[NDArray[np.uint64], int]]) -> G1Point | G2Point:
        """The affine sum of the chunks' (rows, c): each chunk's windows combined
        (Horner, c doublings apart; its rows are its windows' sums, or with a
        window table its sets' sums), the chunks added."""
        total = point.identity()
        for rows, c in partials:
            got = point.identity()
            _curve.xyzz_windows(group, np.ascontiguousarray(rows), rows.shape[0], 1, c,
                                np.zeros((0, rows.shape[1]), np.uint64), got.limbs)
            total = total + got
        return total

    def shift(self, group: int, src: int, count: int, doublings: int, out: DeviceBuffer) -> None:
        """out[i] = 2^doublings src[i] (xyzz) for i < count: a window table's next copy (table)."""
        self.gpu.launch(self.tuning.module(group), f"g{group}_msm_shift", count, [src, count, doublings, out],
                        block=SMALL_THREADS)

    # ------------------------------------------------------------ one chunk

    def _pippenger(self, group: int, pts: DeviceBuffer | int, sc: DeviceBuffer | int, n: int, proj_bytes: int,
                   table: Table | None = None, into: Accumulation | None = None
                   ) -> tuple[NDArray[np.uint64] | None, int, NDArray[np.int64]]:
        """(window sums, c, (zeros, ones, full) counts) of one chunk: the sums
        windows x xyzz rows, or None when the chunk has no nonzero term; c
        the tuning's window_bits, or window_bits_for its scalars when None. With a
        window table (table.Table) c is the table's and the rows are
        its sets' sums. into (no table): the buckets of earlier passes, this
        one's entries added into them and nothing reduced (rows None)."""
        target = Target(group, pts, 0, proj_bytes, table.buf if table else 0, n)
        c = table.c if table else (into.c if into is not None and into.c else self.tuning.window_bits)
        sums, c, split = self._pippenger_targets([target], sc, n, c, pts, table.sets if table else 0, into)
        return sums[0], c, split

    def _pippenger_targets(self, targets: list[Target], sc: DeviceBuffer | int, n: int, c: int | None,
                           classify_pts: DeviceBuffer | int, sets: int = 0, into: Accumulation | None = None
                           ) -> tuple[list[NDArray[np.uint64] | None], int, NDArray[np.int64]]:
        """_pippenger for each of targets from one sort of the n scalars (the
        first target's group picks c and runs the sort): a list of window sums
        (or Nones), c, the counts. classify_pts: points whose infinities zero
        their scalars (0 where several arrays share the scalars). sets: the
        window table's (its copies in each target), 0 without one. into (one
        target, no table): buckets kept across passes, made by the first
        (its c then every pass's); the entries are added into them, and the
        window sums are left to into.reduce (None here)."""
        gpu, group = self.gpu, targets[0].group
        mod = self.tuning.module(group)
        mark, collect = self._marker()
        with WorkBuffers(gpu.memory) as bufs:
            alloc = bufs.alloc
            canon, counters = alloc(32 * n), alloc(4 * COUNTERS)
            counters.zero(gpu.stream)
            gpu.launch(mod, f"g{group}_msm_classify", n, [sc, classify_pts, n, canon, counters])
            mark("classify")
            tally = gpu.memory.download_array(counters, (COUNTERS,), np.uint32).astype(np.int64)
            split = tally[:3]
            lengths = tally[3:REPEATS]
            c = c or window_bits_for(lengths, n, group)
            if self.profile is not None:
                self.profile["c"] = c
            sort = self.sort.digits(mod, group, canon, n, c, lengths, int(tally[REPEATS]), sets, alloc)
            keys_n = sort.sets * sort.nb
            if into is not None:
                into.begin(c, sort.nb, sort.sets, targets[0].proj_bytes)
            counts = alloc(4 * keys_n)
            counts.zero(gpu.stream)
            # the buckets' sizes in one part a window: the sizes do not depend on the parts, which
            # keep the fill's writes in L2 but would read the keys once per part (G1 2^26: 22 ms in 4)
            self.sort.place(sort._replace(parts=1), range(sort.sets * sort.copies), counts, 0, gpu.stream)
            mark("count")
            offsets, total_buf = alloc(4 * keys_n), alloc(4)
            self.sort.scan(mod, group, counts, offsets, keys_n, total_buf, alloc)
            mark("scan")
            total = int(gpu.memory.download_array(total_buf, (1,), np.uint32)[0])
            bufs.free(canon)                            # the keys carry what fill needs
            if total == 0:
                return [None] * len(targets), c, split
            ends, entries = alloc(4 * keys_n), alloc(4 * total)
            ends.copy_from(offsets, 4 * keys_n, stream=gpu.stream)
            if into is not None:
                sums = [into.buckets(gpu.stream)]
            else:
                sums = [alloc(t.proj_bytes * keys_n) for t in targets]
                for buf in sums:
                    buf.zero(gpu.stream)
            overlap = self.tuning.overlap if self.tuning.overlap is not None else overlapped(group, total)
            stretches = self.sort.stretches(sort, overlap)
            bounds = self.sort.offsets_at(offsets, [s.buckets.start for s in stretches], total) + [total]
            aux = gpu.aux_stream if overlap else gpu.stream
            self.buckets.buckets(sort, targets, (entries, offsets, ends), sums, stretches, bounds, alloc, mark, aux,
                                 into is not None, self.onto)
            if into is not None:
                collect()
                return [None], c, split
            rows: list[NDArray[np.uint64] | None] = [
                self.buckets.reduce(self.tuning.module(t.group), t.group, buf, sort.nb, sort.sets, t.proj_bytes, alloc)
                for t, buf in zip(targets, sums)]
            mark("reduce")
            collect()
            return rows, c, split

    def batch_sum(self, points: G1Array | G2Array) -> G1Point | G2Point:
        """sum points[i] (GpuBuckets.batch_sum)."""
        return self.buckets.batch_sum(points)
