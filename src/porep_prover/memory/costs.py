# SPDX-License-Identifier: Apache-2.0
"""The device's cost model in bytes and seconds, what its plan weighs
(memory.device_plan): the NTT's twiddle tables, an MSM pass's windows,
bucket additions and work bytes, and the seconds a region waits for the
bus or spends in passes more. The MSM's own plan (msm.gpu.plan) reads the
same figures: windows_of, KEY_COST and BUCKET_COST are its model of a
window's cost, measured on an H200."""
from __future__ import annotations

import math
from collections.abc import Iterable

from .sizes import POINT_BYTES, PROJ_BYTES, SCALAR_BYTES
from .workload import PointArray

# What a window costs beside its additions, in bucket additions (G1 / G2 on an H200, from the
# scale-1 partition's phases): the sort's passes over one window's keys, per point, and the
# reduction, per bucket
KEY_COST: dict[int, float] = {1: 0.06, 2: 0.02}
BUCKET_COST: dict[int, float] = {1: 2.7, 2: 2.9}
UPLOAD_RATE = 50e9           # bytes a second from pinned pages (an H100 host: 55 GB/s, bench_gpu --sections xfer)
ENTRY_SECONDS = 0.41e-9      # a bucket entry added (the scale-1 H MSM: 0.66 s for 12 x 2^27)
# Fitted to an H100's scale-1 kernel regions streamed in 810 MiB to 1 GiB chunks, a ring of three (16, 24 and
# 32 GiB budgets: 3.64, 3.36 and 2.47 s against 1.65 s resident; BENCHMARKS.md): an MSM pass more over an array
# (a streamed chunk is one: its sort's host round trips, its reduction of every window, a narrower window) costs
# about 13 ms; a streamed array's first chunk arrived before any of its kernels could run (exposed whole: the ring
# now uploads it while the array before ends, so the plan counts one a region), and of the rest of its bytes'
# upload, hidden behind the kernels, a quarter is not
PASS_SECONDS = 13e-3
STREAM_EXPOSED = 0.25
TWIDDLE_PRODUCT_SECONDS = 5e-12   # an Fr product a butterfly more, the transforms' other work beside it


def windows_of(c: int) -> int:
    """Windows of signed c-bit digits of a 255-bit scalar (the last takes the carry)."""
    return 255 // c + 1


def split_lengths(count: int) -> tuple[int, int, int]:
    """(lo_bits, lo's entries, hi's entries) of two tables whose products
    lo[e & (2^lo_bits - 1)] hi[e >> lo_bits] cover the exponents e < count:
    about sqrt(count) entries each (the NTT's compact twiddles, ntt.gpu)."""
    lo_bits = (max(1, (count - 1).bit_length()) + 1) // 2
    return lo_bits, 1 << lo_bits, max(1, -(-count >> lo_bits))


def twiddle_bytes(domain: int, compact: bool = False) -> int:
    """Device bytes of the NTT's twiddle tables over a domain, kept while
    the device lives (ntt.gpu.GpuNtt.twiddles): w^e for e < domain / 2,
    forward and inverse, whole (4 GiB at 2^27) or compact, each direction
    two tables of about sqrt(domain / 2) entries (1 MiB at 2^27)."""
    count = max(1, domain // 2)
    if not compact:
        return 2 * SCALAR_BYTES * count
    _, lo_len, hi_len = split_lengths(count)
    return 2 * SCALAR_BYTES * (lo_len + hi_len)


def compact_twiddle_seconds(domain: int) -> float:
    """What compact twiddles add to a partition: a product a butterfly, in
    H's six transforms of the domain."""
    return TWIDDLE_PRODUCT_SECONDS * 6 * (domain // 2) * max(1, domain.bit_length() - 1)


def pass_window_bits(points: int, group: int = 1) -> int:
    """The window width of a full-scalar pass over this many points (as
    msm.gpu.plan.window_bits_for picks it for 255-bit scalars)."""
    return min(range(4, 23), key=lambda c: pass_cost(points, c, group))


def pass_cost(points: int, c: int, group: int = 1) -> float:
    """A full-scalar pass's cost in bucket additions (window_bits_for's model)."""
    windows = windows_of(c)
    return windows * points * (1 + KEY_COST[group]) + BUCKET_COST[group] * windows * (1 << (c - 1))


def bucket_bytes(points: int, group: int = 1) -> int:
    """The xyzz sums of a full-scalar pass's buckets over this many points,
    every window's: an MSM of several passes keeps them across its passes
    (GpuMsm's Accumulation), a set for each scalar set."""
    c = pass_window_bits(points, group)
    return windows_of(c) * (1 << (c - 1)) * PROJ_BYTES[group]


def pass_bytes(points: int, group: int = 1) -> int:
    """Device work bytes of one full-scalar MSM pass over this many points:
    its buckets' sums (bucket_bytes) beside the sort's keys and entries and
    the buckets' three counters, or, before, the canonical scalars beside
    the keys, whichever is larger."""
    c = pass_window_bits(points, group)
    buckets, keys = windows_of(c) * (1 << (c - 1)), 4 * points * windows_of(c)
    return bucket_bytes(points, group) + max(SCALAR_BYTES * points + keys, 2 * keys + 12 * buckets)


def region_seconds(arrays: Iterable[PointArray], points: int, moved: float, rate: float,
                   streamed: set[str] | None = None, chunk: int = 0) -> float:
    """A plan's cost over every array resident in one pass (arrays: those
    a partition's MSMs read once): the bytes the kernel region waits for at
    the upload rate (moved: what it uploads before its kernels can start,
    and STREAM_EXPOSED of what streams beside them, and a streamed array's
    first chunk, which its kernels wait for whole where the ring did not
    upload it while the array before ended: once a region) plus what its
    passes cost over one pass an array, PASS_SECONDS each and their bucket
    additions: H's full scalars by the MSM's model, the witness-fed arrays
    (narrow scalars, few entries above window 0) a reduction of 16-bit
    windows a pass more. A streamed array's pass is its chunk (chunk bytes;
    a chunk is sorted and summed as it arrives), a resident one's at most
    points."""
    extra, passes, first = 0.0, 0, 0
    for a in arrays:
        name, group, count = a.name, a.group, a.count
        size = min(points, max(1, chunk // POINT_BYTES[group])) if name in (streamed or ()) else points
        split = math.ceil(count / size)
        passes += split - 1
        if name in (streamed or ()):    # the ring uploads the next array's first chunks as one ends: one waited for
            first = max(first, min(size, count) * POINT_BYTES[group])
        if name != "h":
            extra += (split - 1) * BUCKET_COST[group] * windows_of(16) * (1 << 15)
            continue
        per = -(-count // split)
        whole = pass_cost(count, pass_window_bits(count, group), group)
        extra += split * pass_cost(per, pass_window_bits(per, group), group) - whole
    return (moved + first) / rate + ENTRY_SECONDS * max(0.0, extra) + PASS_SECONDS * passes
