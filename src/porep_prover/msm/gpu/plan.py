# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's plan, host arithmetic only (msm/gpu/msm.py runs it):
the window width for the scalars at hand, with window tables and without,
the parts the sort's fill is cut into, whether the fill runs beside the
accumulation, the accumulating threads' chunks, which windows keep a key
for every point, and whether the sort groups its atomics; MsmTuning, those
choices fixed from outside (the benchmarks' sweeps).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numpy.typing import NDArray

from ...errors import InvalidInputError
# a window's cost beside its additions and the windows of a c-bit split: the cost model the device's memory plan
# weighs too (memory.costs)
from ...memory.costs import BUCKET_COST as BUCKET_COST, KEY_COST as KEY_COST, windows_of as windows_of

FILL_SPAN = 32 << 20     # bytes of entries one fill part writes at a time: well inside an H200's 50 MB L2
MAX_FILL_PARTS = 4       # each part reads all of its window's keys again
OVERLAP_GROUPS = 4       # stretches of whole windows the plain MSM is filled and added up in
OVERLAP_ENTRIES = 1 << 29  # from this many sorted entries (full scalars: about windows x points) the fill runs beside
MAX_CHUNK = 256          # entries an accumulating thread adds at most
COMPACT_SHARE = 0.5      # windows above the first keep keys only for the wide scalars when at most this share is
REPEAT_SHARE = 1 / 64    # the sort groups a warp's atomics by key when repeated keys may be more than this share


def fill_parts(n: int, windows: int = 1) -> int:
    """Parts a window's buckets are filled in: the entries one part's writes
    span (4 bytes a point at most, over `windows` windows: all of them with
    window tables, whose windows share one set of buckets) in stretches of
    FILL_SPAN, at most MAX_FILL_PARTS (G1 2^24 with tables on an H200: the
    fill 12.1 ms in 2 parts, 11.0 in 4)."""
    return max(1, min(MAX_FILL_PARTS, -(-4 * n * windows // FILL_SPAN)))


def window_bits(n: int) -> int:
    """The c minimising the additions of an n-point MSM: ceil(256/c) windows of
    n bucket additions, plus about 3 per bucket in the reduction."""
    if n <= 1:
        return 4
    best = min(range(4, 23), key=lambda c: windows_of(c) * (n + 3 * (1 << (c - 1))))
    return best


def digits_of(length: int, c: int) -> int:
    """Nonzero signed c-bit digits of a scalar of this bit length, at most
    (a top digit of 2^(c-1) or more carries into one more window)."""
    return 0 if length == 0 else min(windows_of(c), (length + c) // c)


def window_bits_for(lengths: NDArray[np.int64], n: int, group: int) -> int:
    """The c minimising an n-point MSM's cost for scalars whose bit lengths
    are tallied in lengths (lengths[b]: scalars of b bits): the nonzero
    digits' bucket additions, the sort's passes over every window's keys and
    the reductions' bucket sums. Full scalars give window_bits(n); a witness
    of mostly bits and small words, narrower windows (fewer buckets to sum)."""
    used = [(b, int(k)) for b, k in enumerate(lengths) if k]

    def cost(c: int) -> float:
        windows = windows_of(c)
        entries = sum(k * digits_of(b, c) for b, k in used)
        keys = n + (windows - 1) * wide_rows(sum(k for b, k in used if b >= c), n)
        return entries + KEY_COST[group] * keys + BUCKET_COST[group] * windows * (1 << (c - 1))

    return min(range(4, 23), key=cost)


def wide_rows(wide: int, n: int, share: float = COMPACT_SHARE) -> int:
    """Keys a window above the first holds, for `wide` scalars of n with
    digits there: only theirs where they are at most share of them (share
    0: never), else one per point."""
    return wide if share > 0 and wide <= share * n else n


def grouped(lengths: NDArray[np.int64], repeats: int, n: int, c: int) -> bool:
    """Whether the sort's atomics are grouped by key a warp at a time: where
    a warp's keys may repeat, i.e. where more than REPEAT_SHARE of the n
    scalars are narrower than c bits (ones and small words: window 0's
    buckets repeat) or equal their neighbour (repeats, msm_classify's
    count). Full distinct scalars (H) rarely share a key within a warp, and
    grouping them only costs."""
    narrow = int(sum(lengths[1:c]))
    return max(narrow, repeats) > REPEAT_SHARE * n


def table_plan(n: int, group: int, copies: int | None = None, c: int | None = None) -> tuple[int, int]:
    """(c, sets) minimising an n-point MSM's cost with a window table of at
    most `copies` shifted copies of the points (None: as many as the windows
    need): windows_of(c) x n bucket additions and the reduction of sets x
    2^(c - 1) buckets, the windows sharing `sets` sets of buckets, so that
    ceil(windows / sets) copies, the points' own the first, serve them. c at
    most 24 (2^23 buckets a set: counters in L2), or the given c. Full
    copies give one set; copies 0, a set a window (no table)."""
    def plan(bits: int) -> tuple[float, int, int]:
        windows = windows_of(bits)
        sets = copies_of(windows, windows if copies is None else min(windows, copies + 1))
        return windows * n + BUCKET_COST[group] * sets * (1 << (bits - 1)), bits, sets

    _, bits, sets = min(plan(b) for b in ([c] if c else range(8, 25)))
    return bits, sets


def copies_of(windows: int, sets: int) -> int:
    """Copies of the points (theirs the first) that windows sharing `sets` sets of buckets read."""
    return -(-windows // sets)


def table_copies(c: int, sets: int) -> int:
    """Shifted copies a table of c-bit windows in `sets` sets holds beside the points."""
    return copies_of(windows_of(c), sets) - 1


def stretch_cuts(units: int, groups: int) -> list[int]:
    """Where the fill's units (windows, or a window table's parts of sets)
    are cut into at most `groups` stretches: the first a single unit, so the
    accumulation waits for only its fill, the rest in even runs (each
    stretch's combine levels cost launches). G1 2^27 with a table: the first
    of 4 even stretches left 29 ms of fill in view, of 16 one-unit ones 8 ms
    but 13 ms more of combine levels."""
    if units <= groups:
        return list(range(units + 1))
    if groups <= 1:
        return [0, units]
    return [0] + [1 + g * (units - 1) // (groups - 1) for g in range(groups)]


def overlapped(group: int, entries: int) -> bool:
    """Whether the sort's fill of the next stretch of buckets runs beside the
    accumulation of the last (GpuBuckets.buckets): where the fill is large
    enough to pay for what it takes from the accumulation beside it (G1 on an
    H200: 2^26 points 8-14 ms faster, 2^24 3-7 ms slower). Not in G2, whose
    accumulation lost more than the whole fill (2^24: 20 ms, the fill 9)."""
    return group == 1 and entries >= OVERLAP_ENTRIES


def chunk_length(entries: int, threads_wanted: int, most: int = MAX_CHUNK) -> int:
    """Entries per accumulating thread: enough threads to fill the device, at
    least 4, at most `most` (the longer a chunk, the fewer open runs its ends
    leave to the combine levels' general additions)."""
    return max(4, min(most, entries // max(1, threads_wanted)))


@dataclasses.dataclass(frozen=True)
class MsmTuning:
    """Choices the MSM's plan makes for itself, fixed instead: what a benchmark
    sweeps or a test pins (dataclasses.replace(MsmTuning(), fill_parts=2)). The
    defaults leave every choice to the plan (its measured best): production's
    launches. GpuMsm takes one when it is made.

    variant: "" (the backend's own build), or the build msm_g1.VARIANT /
    msm_g2.VARIANT that a benchmark added (cuda.modules.add_variant). None
    leaves the plan's: window_bits (window_bits_for the scalars, 4 to 22),
    table_bits (table_plan's, 4 to 24: the kernels take a window table from
    window_bits' least width up; table_plan searches only 8 to 24, narrower
    tables being valid but slow), fill_parts (fill_parts, 1 to 64), overlap
    (overlapped) and grouped (grouped: the sort's atomics grouped by key).
    max_chunk: entries an accumulating thread adds at most (1 to 4096);
    compact_share: windows above the first keep keys for the wide scalars
    only where they are at most this share (0 to 1; 0: every point's keys);
    groups: stretches of whole windows a plain MSM is filled and added up
    in (1 to 256). A value out of range raises InvalidInputError."""
    variant: str = ""
    window_bits: int | None = None
    table_bits: int | None = None
    fill_parts: int | None = None
    overlap: bool | None = None
    grouped: bool | None = None
    max_chunk: int = MAX_CHUNK
    compact_share: float = COMPACT_SHARE
    groups: int = OVERLAP_GROUPS

    def __post_init__(self) -> None:
        if not isinstance(self.variant, str) or not (self.variant == "" or self.variant.isidentifier()):
            raise InvalidInputError(f"MsmTuning: variant {self.variant!r} is not a build's name")
        for name, low, high, optional in (("window_bits", 4, 22, True), ("table_bits", 4, 24, True),
                                          ("fill_parts", 1, 64, True), ("max_chunk", 1, 4096, False),
                                          ("groups", 1, 256, False)):
            value = getattr(self, name)
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidInputError(f"MsmTuning: {name} {value!r} is not "
                                        f"{'None or ' if optional else ''}an integer from {low} to {high}")
        for name in ("overlap", "grouped"):
            if getattr(self, name) not in (None, True, False):
                raise InvalidInputError(f"MsmTuning: {name} {getattr(self, name)!r} is not None, True or False")
        share = self.compact_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            raise InvalidInputError(f"MsmTuning: compact_share {share!r} is not a share from 0 to 1")

    def module(self, group: int) -> str:
        """The kernel module that runs group's MSM: the backend's own build, or the variant's."""
        return f"msm_g{group}" + (f".{self.variant}" if self.variant else "")
