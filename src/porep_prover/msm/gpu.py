# SPDX-License-Identifier: Apache-2.0
"""MSMs and batch additions on the GPU (kernels in msm/kernels/msm.cu).

Pippenger with signed base-2^c digits: a counting sort of (point, bucket)
entries, chunked accumulation that does not care how the scalars spread over
the buckets (all-equal scalars cost the same as random ones), per-window
bucket reduction on the device, the windows combined on the host. Points
come from the backend's resident store (uploaded once per array) or, when an
array does not fit in device memory, are streamed through in chunks.

Large G1 MSMs (from 2^29 entries: 2^26 points) are filled and added up in
stretches of buckets: the sort's fill of the next stretch runs on the
backend's second stream beside the accumulation of the last.

Window tables (opt-in: GpuMsm.tables, from POREP_PROVER_GPU_MSM_TABLES=1;
msm/gpu_table.py): for the plain MSM of resident points, shifted
copies of the points made once, so that windows share sets of buckets; the
shared sorts (msm_shared) stay plain.
"""
from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np

from ..cuda.arrays import DeviceScalars, WorkBuffers
from ..curve import _curve
from ..errors import InvalidInputError, LengthMismatchError
from .gpu_plan import (MsmTuning, chunk_length, copies_of, fill_parts, grouped, overlapped, stretch_cuts, wide_rows,
                       window_bits_for, windows_of)
from .gpu_table import window_table

THREADS = 256
SMALL_THREADS = 64       # kernels heavy in curve arithmetic: fewer threads, more registers each
FOLD = 16
FINAL_LIST = 16          # partial lists this short are finished by one thread
REDUCE_RUN = 256         # buckets a reducing thread sums at most (each run ends in a multiple of its sum)
REPEATS = 3 + 256        # msm_classify's tally: zeros, ones, full, the scalars of each bit length, the repeats
COUNTERS = REPEATS + 1
NO_ROW = 0xFFFFFFFF      # a row map's entry for a scalar without a point (msm_shared)


class Sort(NamedTuple):
    """The counting sort's arguments to msm_place, shared by its count and fill:
    window 0's n keys, then each next window's m (the wide scalars', whose
    points wide lists, or n and wide 0: every point's); the windows add into
    `sets` sets of nb buckets (sets = windows without a window table)."""
    mod: str
    group: int
    keys: object
    n: int
    m: int
    wide: object
    windows: int
    parts: int
    nb: int
    sets: int
    grouped: int

    @property
    def copies(self) -> int:
        """The copies of the points the windows read (1 without a window table)."""
        return copies_of(self.windows, self.sets)


class Target(NamedTuple):
    """One array of points a sort's entries are added up over: its group, its
    device points, its row map (a device uint32 per scalar, or 0: scalar i's
    point is row i), its xyzz size and its window table's copies (0: none),
    copy k of point i being row (k - 1) n + i there."""
    group: int
    points: object
    rows: object
    proj_bytes: int
    table: object = 0
    n: int = 0


class Stretch(NamedTuple):
    """A run of the fill's rows (of windows x parts) and the buckets they complete."""
    rows: range
    buckets: range


class GpuMsm:
    """The MSM side of one GPU backend (its cuda.device.Device supplies alloc / launch / kernel / resident).
    tuning: the plan's choices fixed (a benchmark's GpuMsm(gpu, replace(MsmTuning(), ...)));
    the default leaves them to the plan. InvalidInputError unless an MsmTuning.
    tables, table_copies: the window tables of MSMs over resident points when
    a call gives no MsmOptions (the backend passes the environment's:
    config.GpuEnvironment.msm_tables / msm_table_copies)."""

    def __init__(self, gpu, tuning: MsmTuning = MsmTuning(), tables: bool = False, table_copies: int | None = None):
        if not isinstance(tuning, MsmTuning):
            raise InvalidInputError(f"GpuMsm: tuning is an MsmTuning, not {type(tuning).__name__}")
        self.gpu = gpu
        self.tuning = tuning
        self.profile: dict[str, float] | None = None  # set to a dict: ms per phase are added to it
        self.tables = bool(tables)                     # window tables for resident points (see the module)
        self.table_copies = table_copies               # None: a copy for every window; else at most this many
        self._rows_checked: dict = {}                  # id(rows) -> (weak reference, rows it needs)

    def _marker(self):
        """mark(name) ends the phase called name (CUDA events; a no-op unless profiling)."""
        if self.profile is None:
            return lambda name: None, lambda: None
        gpu, events = self.gpu, []

        def mark(name):
            events.append((name, self._event(gpu.stream)))

        def collect():
            gpu.stream.synchronize()
            for (_, a), (name, b) in zip(events, events[1:]):
                self.profile[name] = self.profile.get(name, 0.0) + b.elapsed_ms(a)

        mark("start")
        return mark, collect

    def _module(self, group: int) -> str:
        variant = self.tuning.variant
        return f"msm_g{group}" + (f".{variant}" if variant else "")

    def _proj_bytes(self, points) -> int:
        return 2 * points.WIDTH * 8  # xyzz: four coordinates, twice the affine two

    def msm(self, points, scalars, options=None) -> tuple[object, dict]:
        """(sum scalars[i] points[i], the scalars' split); options: a caller's
        MsmOptions for the window tables (None: this side's tables / table_copies)."""
        n = len(points)
        stats = {"zeros": n, "ones": 0, "full": 0, "window_bits": 0}
        if len(scalars) != n:
            raise LengthMismatchError(f"msm: {n} points but {len(scalars)} scalars")
        if n == 0:
            return type(points).POINT.identity(), stats
        if n >= 1 << 28:
            raise InvalidInputError(f"GPU MSM of {n} points: at most 2^28 - 1 per call")
        partials, totals = [], np.zeros(3, dtype=np.int64)
        on_device = isinstance(scalars, DeviceScalars)
        with self.gpu.holding(points.limbs):   # its resident copy stays while chunks run
            table = window_table(self, points, options)
            for start, stop, pts in self.gpu.point_chunks(points):
                sc = scalars.address(start) if on_device else self.gpu.upload(scalars.limbs[start:stop])
                try:
                    got, used, counts = self._pippenger(points.GROUP, pts, sc, stop - start,
                                                        self._proj_bytes(points), table)
                finally:
                    if not on_device:
                        self.gpu.free(sc)
                totals += counts
                if got is not None:
                    partials.append((got, used))
        stats.update(zeros=int(totals[0]), ones=int(totals[1]), full=int(totals[2]),
                     window_bits=max((used for _, used in partials), default=0))
        return self._finish(type(points).POINT, points.GROUP, partials), stats

    def msm_shared(self, sets, scalars):
        """[sum_i scalars[i] P_i for each (points, rows) of sets] from one sort
        of the scalars: classify, digits, count, scan and fill once, each
        array's accumulation, combine levels and reduction its own (the first
        array's group picks the window width). rows None: P_i = points[i]
        (len(points) == len(scalars)); else a 1-D uint32 host array of
        len(scalars), kept resident like a query index: P_i = points[rows[i]],
        or no term where rows[i] is NO_ROW. scalars: DeviceScalars or an
        FrArray. None where the arrays cannot be resident at once: the
        caller takes the MSMs apart. No window tables here (the witness's
        scalars, mostly narrow, leave most windows empty)."""
        gpu, n = self.gpu, len(scalars)
        for points, rows in sets:
            if rows is None and len(points) != n:
                raise LengthMismatchError(f"msm_shared: {len(points)} points but {n} scalars")
            if rows is not None:
                self._check_rows(rows, n, len(points))
        if not sets or n == 0:
            return [type(p).POINT.identity() for p, _ in sets]
        arrays = [p.limbs for p, _ in sets] + [r for _, r in sets if r is not None]
        if n >= 1 << 28 or sum(a.nbytes for a in arrays) > gpu.resident_budget:
            return None
        on_device = isinstance(scalars, DeviceScalars)
        with gpu.holding(*arrays):              # uploading one must not evict another
            targets = [Target(p.GROUP, gpu.resident(p), 0 if r is None else gpu.resident_array(r),
                              self._proj_bytes(p)) for p, r in sets]
            sc = scalars.address() if on_device else gpu.upload(scalars.limbs)
            try:
                sums, c, _ = self._pippenger_targets(targets, sc, n, self.tuning.window_bits, 0)
            finally:
                if not on_device:
                    gpu.free(sc)
        return [self._finish(type(p).POINT, p.GROUP, [] if rows is None else [(rows, c)])
                for (p, _), rows in zip(sets, sums)]

    def _check_rows(self, rows: np.ndarray, n: int, length: int) -> None:
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

    def msm_device(self, points, scalars_buf):
        """sum scalars[i] points[i] with the scalars already on the device and the
        points resident (what the benchmarks time as device-resident)."""
        with self.gpu.holding(points.limbs):
            table = window_table(self, points)
            got, c, _ = self._pippenger(points.GROUP, self.gpu.resident(points), scalars_buf, len(points),
                                        self._proj_bytes(points), table)
        return self._finish(type(points).POINT, points.GROUP, [(got, c)] if got is not None else [])

    def _finish(self, point, group, partials):
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

    def shift(self, group: int, src, count: int, doublings: int, out) -> None:
        """out[i] = 2^doublings src[i] (xyzz) for i < count: a window table's next copy (gpu_table)."""
        self.gpu.launch(self._module(group), f"g{group}_msm_shift", count, [src, count, doublings, out],
                        block=SMALL_THREADS)

    # ------------------------------------------------------------ one chunk

    def _pippenger(self, group, pts, sc, n, proj_bytes, table=None):
        """(window sums, c, (zeros, ones, full) counts) of one chunk: the sums
        windows x xyzz rows, or None when the chunk has no nonzero term; c
        the tuning's window_bits, or window_bits_for its scalars when None. With a
        window table (gpu_table.Table) c is the table's and the rows are
        its sets' sums."""
        target = Target(group, pts, 0, proj_bytes, table.buf if table else 0, n)
        c = table.c if table else self.tuning.window_bits
        sums, c, split = self._pippenger_targets([target], sc, n, c, pts, table.sets if table else 0)
        return sums[0], c, split

    def _pippenger_targets(self, targets: list[Target], sc, n, c, classify_pts, sets: int = 0):
        """_pippenger for each of targets from one sort of the n scalars (the
        first target's group picks c and runs the sort): a list of window sums
        (or Nones), c, the counts. classify_pts: points whose infinities zero
        their scalars (0 where several arrays share the scalars). sets: the
        window table's (its copies in each target), 0 without one."""
        gpu, group = self.gpu, targets[0].group
        mod = self._module(group)
        mark, collect = self._marker()
        with WorkBuffers(gpu) as bufs:
            alloc = bufs.alloc
            canon, counters = alloc(32 * n), alloc(4 * COUNTERS)
            counters.zero(gpu.stream)
            gpu.launch(mod, f"g{group}_msm_classify", n, [sc, classify_pts, n, canon, counters])
            mark("classify")
            tally = gpu.download_array(counters, (COUNTERS,), np.uint32).astype(np.int64)
            split = tally[:3]
            lengths = tally[3:REPEATS]
            c = c or window_bits_for(lengths, n, group)
            if self.profile is not None:
                self.profile["c"] = c
            sort = self._digits(mod, group, canon, n, c, lengths, int(tally[REPEATS]), sets, alloc)
            keys_n = sort.sets * sort.nb
            counts = alloc(4 * keys_n)
            counts.zero(gpu.stream)
            # the buckets' sizes in one part a window: the sizes do not depend on the parts, which
            # keep the fill's writes in L2 but would read the keys once per part (G1 2^26: 22 ms in 4)
            self._place(sort._replace(parts=1), range(sort.sets * sort.copies), counts, 0, gpu.stream)
            mark("count")
            offsets, total_buf = alloc(4 * keys_n), alloc(4)
            self._scan(mod, group, counts, offsets, keys_n, total_buf, alloc)
            mark("scan")
            total = int(gpu.download_array(total_buf, (1,), np.uint32)[0])
            bufs.free(canon)                            # the keys carry what fill needs
            if total == 0:
                return [None] * len(targets), c, split
            ends, entries = alloc(4 * keys_n), alloc(4 * total)
            ends.copy_from(offsets, 4 * keys_n, stream=gpu.stream)
            sums = [alloc(t.proj_bytes * keys_n) for t in targets]
            for buf in sums:
                buf.zero(gpu.stream)
            overlap = self.tuning.overlap if self.tuning.overlap is not None else overlapped(group, total)
            stretches = self._stretches(sort, overlap)
            bounds = self._offsets_at(offsets, [s.buckets.start for s in stretches], total) + [total]
            aux = gpu.aux_stream if overlap else gpu.stream
            self._buckets(sort, targets, (entries, offsets, ends), sums, stretches, bounds, alloc, mark, aux)
            rows = [self._reduce(self._module(t.group), t.group, buf, sort.nb, sort.sets, t.proj_bytes, alloc)
                    for t, buf in zip(targets, sums)]
            mark("reduce")
            collect()
            return rows, c, split

    def _digits(self, mod, group, canon, n, c, lengths, repeats: int, sets: int, alloc) -> Sort:
        """Every window's keys (msm_digits), above window 0 only for the
        scalars of at least c bits (the only ones with digits there) where
        they are few and there is no window table (sets 0); the sort over
        them, its atomics grouped where keys may repeat."""
        gpu, tuning, windows, nb = self.gpu, self.tuning, windows_of(c), 1 << (c - 1)
        wide, sets = int(lengths[c:].sum()), sets or windows
        m = n if sets < windows else wide_rows(wide, n, tuning.compact_share)
        keys = alloc(4 * max(1, n + (windows - 1) * m))
        listed, taken, wide_bits = 0, 0, 0                # the dense layout: every point in every window
        if m < n:
            listed, taken, wide_bits = alloc(4 * max(1, m)), alloc(4), c
            taken.zero(gpu.stream)
        gpu.launch(mod, f"g{group}_msm_digits", n, [canon, n, c, windows, sets, wide_bits, m, listed, taken, keys])
        parts = tuning.fill_parts or fill_parts(n, copies_of(windows, sets))
        together = tuning.grouped if tuning.grouped is not None else grouped(lengths, repeats, n, c)
        return Sort(mod, group, keys, n, m, listed, windows, parts, nb, sets, int(together))

    def _stretches(self, sort: Sort, overlap: bool) -> list[Stretch]:
        """The fill's rows (msm_place's: set, part, copy) cut where they
        complete a stretch of buckets: with overlap, the accumulation adds up
        one stretch while the next one fills. Without a window table a run of
        whole windows; with one, a part of a set (its copies' rows); one
        stretch of all without overlap."""
        sets, parts, nb, copies = sort.sets, sort.parts, sort.nb, sort.copies
        if not overlap:
            return [Stretch(range(sets * parts * copies), range(sets * nb))]
        if copies == 1:                     # units: whole windows
            cuts = stretch_cuts(sets, self.tuning.groups)
            return [Stretch(range(w0 * parts, w1 * parts), range(w0 * nb, w1 * nb)) for w0, w1 in zip(cuts, cuts[1:])]
        # units: a part of a set, its copies' rows
        per, units = -(-nb // parts), sets * parts
        cuts = stretch_cuts(units, self.tuning.groups)
        start = [t * nb + min(p * per, nb) for t in range(sets) for p in range(parts)] + [sets * nb]
        return [Stretch(range(u0 * copies, u1 * copies), range(start[u0], start[u1])) for u0, u1 in zip(cuts, cuts[1:])]

    def _place(self, sort: Sort, rows: range, cursor, entries, stream) -> None:
        """msm_place over rows of the windows x parts: counts (entries 0) or
        fills. Window 0's rows (window-major without a table: the first
        parts) span n keys, the others m: launched apart where m < n (no
        window table then)."""
        cut = min(max(rows.start, sort.parts), rows.stop) if sort.m < sort.n else rows.stop
        for span, length in ((range(rows.start, cut), sort.n), (range(cut, rows.stop), sort.m)):
            if len(span) and length:
                self.gpu.kernel(sort.mod, f"g{sort.group}_msm_place").launch(
                    (-(-length // THREADS), len(span)), (THREADS,),
                    [sort.keys, sort.n, sort.m, sort.wide, sort.windows, sort.parts, span.start, sort.nb,
                     sort.sets, sort.grouped, cursor, entries], stream)

    def _offsets_at(self, offsets, buckets: list[int], total: int) -> list[int]:
        """offsets[b] for each b, total past the last bucket (after the scan:
        the caller has downloaded its total, so the stream is done)."""
        out = np.full(len(buckets), total, dtype=np.uint32)
        for i, b in enumerate(buckets):
            if 4 * b < offsets.nbytes:
                offsets.download(out[i:i + 1].view(np.uint8), 4 * b)
        return [int(v) for v in out]

    def _scan(self, mod, group, counts, offsets, length, total_buf, alloc):
        gpu = self.gpu
        tiles = -(-length // 1024)
        tile_sums = alloc(4 * tiles)
        gpu.kernel(mod, f"g{group}_scan_tiles").launch((tiles,), (256,), [counts, offsets, length, tile_sums],
                                                         gpu.stream)
        gpu.kernel(mod, f"g{group}_scan_sums").launch((1,), (1024,), [tile_sums, tiles, total_buf], gpu.stream)
        gpu.launch(mod, f"g{group}_scan_add", length, [offsets, length, tile_sums])

    def _buckets(self, sort: Sort, targets, sorted_, sums, stretches, bounds, alloc, mark, aux) -> None:
        """Every bucket's sum into sums (one buffer a target), stretch by
        stretch: the fill on aux (the backend's stream, or the one beside it,
        which fills the next stretch while this one adds up the last), each
        target's accumulation and combine levels on the backend's stream once
        the stretch is filled."""
        gpu, main = self.gpu, self.gpu.stream
        entries, _, ends = sorted_
        aux.wait(self._event(main))                                   # the sort's buffers are ready
        fills = []
        for s in stretches:
            self._place(sort, s.rows, ends, entries, aux)
            fills.append(self._event(aux))
        chunk = chunk_length(bounds[-1], gpu.info.multiprocessors * 1024, self.tuning.max_chunk)
        for i, s in enumerate(stretches):
            main.wait(fills[i])
            if i == 0:
                mark("fill")
            if bounds[i + 1] <= bounds[i]:
                continue
            for t, buf in zip(targets, sums):
                self._accumulate(t, sorted_ + (buf,), s.buckets, bounds[i], bounds[i + 1] - bounds[i], chunk, alloc,
                                 mark)

    def _event(self, stream):
        """An event recorded on stream now."""
        ev = self.gpu.drv.Event(self.gpu.ctx)
        ev.record(stream)
        return ev

    def _accumulate(self, target: Target, sorted_, buckets: range, base, count, chunk, alloc, mark):
        """The target's sums of buckets, whose entries are [base, base + count):
        chunked level 1, then combine levels until one chunk is left."""
        gpu, group, proj_bytes = self.gpu, target.group, target.proj_bytes
        mod = self._module(group)
        entries, offsets, ends, sums = sorted_
        want = gpu.info.multiprocessors * 1024
        chunks = -(-count // chunk)
        next_keys, nxt = alloc(8 * chunks), alloc(2 * proj_bytes * chunks)
        tail = [entries, offsets, ends, buckets.start, buckets.stop, base, count, chunk, sums, next_keys, nxt]
        if target.rows:
            gpu.launch(mod, f"g{group}_msm_accumulate_rows", chunks, [target.points, target.rows] + tail,
                       block=SMALL_THREADS)
        elif target.table:
            gpu.launch(mod, f"g{group}_msm_accumulate_table", chunks,
                       [target.points, target.table, target.n] + tail, block=SMALL_THREADS)
        else:
            gpu.launch(mod, f"g{group}_msm_accumulate", chunks, [target.points] + tail, block=SMALL_THREADS)
        mark("accumulate")
        length = 2 * chunks
        while length > FINAL_LIST:
            chunk = chunk_length(length, want)
            chunks = -(-length // chunk)
            k2, v2 = alloc(8 * chunks), alloc(2 * proj_bytes * chunks)
            gpu.launch(mod, f"g{group}_msm_combine", chunks, [next_keys, nxt, length, chunk, sums, k2, v2],
                       block=SMALL_THREADS)
            next_keys, nxt, length = k2, v2, 2 * chunks
        # one chunk holds the rest: every run in it is closed and is written
        k2, v2 = alloc(8), alloc(2 * proj_bytes)
        gpu.launch(mod, f"g{group}_msm_combine", 1, [next_keys, nxt, length, length, sums, k2, v2],
                   block=SMALL_THREADS)
        mark("combine")

    def _reduce(self, mod, group, sums, nb, windows, proj_bytes, alloc) -> np.ndarray:
        """Per window (or set) sum (b + 1) B_b, as windows rows of xyzz."""
        gpu = self.gpu
        want = gpu.info.multiprocessors * 512
        per = max(2, min(REDUCE_RUN, windows * nb // want))
        segments = -(-nb // per)
        partial = alloc(proj_bytes * windows * segments)
        gpu.launch(mod, f"g{group}_msm_reduce", windows * segments, [sums, nb, windows, segments, partial],
                   block=SMALL_THREADS)
        partial = self._fold(mod, group, partial, windows, segments, proj_bytes, alloc)
        return gpu.download_array(partial, (windows, proj_bytes // 8), np.uint64)

    def _fold(self, mod, group, partial, groups, per_group, proj_bytes, alloc):
        """groups rows: each group's per_group consecutive rows summed (msm_fold, FOLD at a time)."""
        while per_group > 1:
            nxt = -(-per_group // FOLD)
            folded = alloc(proj_bytes * groups * nxt)
            self.gpu.launch(mod, f"g{group}_msm_fold", groups * nxt, [partial, groups, per_group, nxt, folded],
                            block=SMALL_THREADS)
            partial, per_group = folded, nxt
        return partial

    def batch_sum(self, points):
        n = len(points)
        out = type(points).POINT.identity()
        if n == 0:
            return out
        gpu, group = self.gpu, points.GROUP
        mod, proj_bytes = self._module(group), self._proj_bytes(points)
        rows = []
        with gpu.holding(points.limbs):   # its resident copy stays while chunks run
            for start, stop, pts in gpu.point_chunks(points):
                count = stop - start
                block = SMALL_THREADS
                grid = max(1, min(-(-count // block), gpu.info.multiprocessors * 8))
                launched = grid * block
                with WorkBuffers(gpu) as bufs:
                    partial = bufs.alloc(proj_bytes * launched)
                    gpu.kernel(mod, f"g{group}_msm_sum").launch((grid,), (block,), [pts, count, partial], gpu.stream)
                    total = self._fold(mod, group, partial, 1, launched, proj_bytes, bufs.alloc)
                    rows.append(gpu.download_array(total, (1, proj_bytes // 8), np.uint64))
        extra = np.concatenate(rows)
        _curve.xyzz_windows(group, np.zeros((0, extra.shape[1]), np.uint64), 0, 1, 0, extra, out.limbs)
        return out
