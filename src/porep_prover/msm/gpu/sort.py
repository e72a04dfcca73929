# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's counting sort of (point, bucket) entries (kernels in
msm/kernels/msm.cu; msm/gpu/msm.py runs it): every window's keys from the
scalars, the count, the scan and the fill, and the stretches of buckets the
fill is cut into so that the accumulation of one stretch can run beside the
fill of the next (msm/gpu/buckets.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .plan import MsmTuning, copies_of, fill_parts, grouped, stretch_cuts, wide_rows, windows_of

if TYPE_CHECKING:
    from ...cuda.kernel_host import DeviceBuffer, Launches, Stream

THREADS = 256
REPEATS = 3 + 256        # msm_classify's tally: zeros, ones, full, the scalars of each bit length, the repeats
COUNTERS = REPEATS + 1


class Sort(NamedTuple):
    """The counting sort's arguments to msm_place, shared by its count and fill:
    window 0's n keys, then each next window's m (the wide scalars', whose
    points wide lists, or n and wide 0: every point's); the windows add into
    `sets` sets of nb buckets (sets = windows without a window table)."""
    mod: str
    group: int
    keys: DeviceBuffer
    n: int
    m: int
    wide: DeviceBuffer | int
    windows: int
    parts: int
    nb: int
    sets: int
    grouped: int

    @property
    def copies(self) -> int:
        """The copies of the points the windows read (1 without a window table)."""
        return copies_of(self.windows, self.sets)


class Stretch(NamedTuple):
    """A run of the fill's rows (of windows x parts) and the buckets they complete."""
    rows: range
    buckets: range


class GpuSort:
    """The sort's launches on gpu (a cuda.device.Device, or a view of it on
    another stream) under tuning (plan.MsmTuning): the host side of
    msm_digits, msm_place and the scan."""

    def __init__(self, gpu: Launches, tuning: MsmTuning):
        self.gpu, self.tuning = gpu, tuning

    def digits(self, mod: str, group: int, canon: DeviceBuffer, n: int, c: int, lengths: NDArray[np.int64],
               repeats: int, sets: int, alloc: Callable[[int], DeviceBuffer]) -> Sort:
        """Every window's keys (msm_digits), above window 0 only for the
        scalars of at least c bits (the only ones with digits there) where
        they are few and there is no window table (sets 0); the sort over
        them, its atomics grouped where keys may repeat."""
        gpu, tuning, windows, nb = self.gpu, self.tuning, windows_of(c), 1 << (c - 1)
        wide, sets = int(lengths[c:].sum()), sets or windows
        m = n if sets < windows else wide_rows(wide, n, tuning.compact_share)
        keys = alloc(4 * max(1, n + (windows - 1) * m))
        listed: DeviceBuffer | int
        taken: DeviceBuffer | int
        listed, taken, wide_bits = 0, 0, 0                # the dense layout: every point in every window
        if m < n:
            listed, taken, wide_bits = alloc(4 * max(1, m)), alloc(4), c
            taken.zero(gpu.stream)
        gpu.launch(mod, f"g{group}_msm_digits", n, [canon, n, c, windows, sets, wide_bits, m, listed, taken, keys])
        parts = tuning.fill_parts or fill_parts(n, copies_of(windows, sets))
        together = tuning.grouped if tuning.grouped is not None else grouped(lengths, repeats, n, c)
        return Sort(mod, group, keys, n, m, listed, windows, parts, nb, sets, int(together))

    def stretches(self, sort: Sort, overlap: bool) -> list[Stretch]:
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

    def place(self, sort: Sort, rows: range, cursor: DeviceBuffer, entries: DeviceBuffer | int,
              stream: Stream) -> None:
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

    def offsets_at(self, offsets: DeviceBuffer, buckets: list[int], total: int) -> list[int]:
        """offsets[b] for each b, total past the last bucket (after the scan:
        the caller has downloaded its total, so the stream is done)."""
        out = np.full(len(buckets), total, dtype=np.uint32)
        for i, b in enumerate(buckets):
            if 4 * b < offsets.nbytes:
                offsets.download(out[i:i + 1].view(np.uint8), 4 * b)
        return [int(v) for v in out]

    def scan(self, mod: str, group: int, counts: DeviceBuffer, offsets: DeviceBuffer, length: int,
             total_buf: DeviceBuffer, alloc: Callable[[int], DeviceBuffer]) -> None:
        """offsets = the exclusive prefix sums of counts' length entries, their total into total_buf."""
        gpu = self.gpu
        tiles = -(-length // 1024)
        tile_sums = alloc(4 * tiles)
        gpu.kernel(mod, f"g{group}_scan_tiles").launch((tiles,), (256,), [counts, offsets, length, tile_sums],
                                                         gpu.stream)
        gpu.kernel(mod, f"g{group}_scan_sums").launch((1,), (1024,), [tile_sums, tiles, total_buf], gpu.stream)
        gpu.launch(mod, f"g{group}_scan_add", length, [offsets, length, tile_sums])
