# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's plan, without a device: the stretches its fill is cut into
cover every row of the counting sort once, in launch order, and each stretch's
buckets are exactly those its rows fill (rows mapped to (window, part) as
msm_place maps them), so a stretch can be added up while the next one fills;
the window width follows the scalars' bit lengths; a window table's plan
fits the copies it may have."""
import random

import pytest

from msm_model import signed_digits
from porep_prover.field.constants import R
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.plan import (BUCKET_COST, MsmTuning, digits_of, grouped, overlapped, table_copies,
                                       table_plan, window_bits, window_bits_for, windows_of)
from porep_prover.msm.gpu.sort import Sort, Stretch


def place_row(row, windows, sets, parts):
    """(window or None past the last, part, set) of a fill row, as msm_place reads blockIdx.y."""
    copies = -(-windows // sets)
    copy, part, set_ = row % copies, row // copies % parts, row // (copies * parts)
    w = set_ + copy * sets
    return (w if w < windows else None), part, set_


def row_buckets(row, windows, sets, parts, nb):
    """(the buckets a fill row writes, as a range; its window)."""
    w, part, set_ = place_row(row, windows, sets, parts)
    per = -(-nb // parts)
    base = set_ * nb
    if w is None:
        return range(0), w
    return range(base + min(part * per, nb), base + min(part * per + per, nb)), w


def plan(sets, windows, parts, nb, overlap, groups):
    ops = GpuMsm(None, MsmTuning(groups=groups))
    return ops.sort.stretches(Sort("", 1, 0, 100, 100, 0, windows, parts, nb, sets or windows, 0), overlap)


@pytest.mark.parametrize("sets", [0, 1, 2, 3], ids=["plain", "one set", "2 sets", "3 sets"])
@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("windows,parts,nb,groups", [(1, 1, 8, 4), (13, 1, 1 << 19, 4), (12, 4, 1 << 21, 4),
                                                      (11, 3, 1 << 23, 5), (64, 16, 8, 64), (7, 8, 4, 3)])
def test_stretches_cover_the_fill_in_order(sets, overlap, windows, parts, nb, groups):
    """Every row of (set, part, copy) once, in launch order; each stretch's
    buckets exactly those its rows fill, every window's rows filling its set;
    without a table whole windows."""
    sets = min(sets, windows)
    stretches = plan(sets, windows, parts, nb, overlap, groups)
    sets = sets or windows
    copies = -(-windows // sets)
    assert all(isinstance(s, Stretch) for s in stretches)
    rows = [r for s in stretches for r in s.rows]
    assert rows == list(range(sets * parts * copies))          # every row once, in launch order
    seen = sorted((place_row(r, windows, sets, parts)[:2]) for r in rows if place_row(r, windows, sets, parts)[0]
                  is not None)
    assert seen == [(w, p) for w in range(windows) for p in range(parts)]   # every window's every part once
    assert [s.buckets.start for s in stretches[1:]] == [s.buckets.stop for s in stretches[:-1]]
    assert (stretches[0].buckets.start, stretches[-1].buckets.stop) == (0, sets * nb)
    for s in stretches:
        got = [row_buckets(r, windows, sets, parts, nb) for r in s.rows]
        filled = sorted({(b.start, b.stop) for b, _ in got if len(b)})
        assert [lo for lo, _ in filled[1:]] == [hi for _, hi in filled[:-1]]   # no gap, no overlap
        assert range(filled[0][0], filled[-1][1]) == s.buckets if filled else not s.buckets
        if copies == 1:                                         # whole windows
            assert len(s.buckets) % nb == 0 and s.rows.start % parts == 0
    units = sets * parts if copies > 1 else windows              # a table's parts of sets, or whole windows
    if not overlap:
        assert len(stretches) == 1
    else:
        assert len(stretches) == min(units, groups)
        first = stretches[0].rows
        assert len(first) == (copies if copies > 1 else parts)   # one unit first: the accumulation waits for it alone


@pytest.mark.parametrize("log_n", [10, 20, 24, 27])
@pytest.mark.parametrize("copies", [None, 0, 1, 2, 3])
def test_table_plan_fits_its_copies(log_n, copies):
    """table_plan's (c, sets) needs at most the copies allowed (a copy for
    every window beyond the first set when unbounded), and costs no more
    than the plain windows of window_bits(n) (sets = windows)."""
    n = (1 << log_n) - 1
    c, sets = table_plan(n, 1, copies)
    windows = windows_of(c)
    assert 8 <= c <= 24 and 1 <= sets <= windows
    assert table_copies(c, sets) == -(-windows // sets) - 1
    assert table_copies(c, sets) <= (windows - 1 if copies is None else copies)
    if copies is None:
        assert sets == 1
    if copies == 0:
        assert sets == windows
    cost = lambda c_, s_: windows_of(c_) * n + BUCKET_COST[1] * s_ * (1 << (c_ - 1))  # noqa: E731
    plain = window_bits(n)
    assert cost(c, sets) <= cost(plain, windows_of(plain))
    assert table_plan(n, 1, copies, c=16)[0] == 16


def test_the_fill_runs_beside_only_at_large_g1_sizes():
    """Overlap where it was measured to pay (G1 2^26: 11 windows of 2^26
    entries) and not where it cost time (G1 2^24: 12 windows; G2)."""
    assert overlapped(1, 11 << 26) and not overlapped(1, 12 << 24)
    assert not overlapped(2, 11 << 26) and not overlapped(2, 13 << 24)


def nonzero_digits(k, c):
    """Nonzero signed base-2^c digits of k, as msm_digits makes them."""
    return sum(d != 0 for d in signed_digits(k, c, windows_of(c)))


def test_digits_of_bounds_the_signed_digits():
    """digits_of(bit length, c) is at least the digits msm_digits makes, and
    exact for full scalars and for values below 2^(c-1)."""
    rnd = random.Random(7)
    for c in (4, 5, 11, 16, 17, 22):
        for k in [rnd.randrange(1 << rnd.randrange(1, 256)) % R for _ in range(300)] + [1, R - 1, (1 << c) - 1]:
            assert nonzero_digits(k, c) <= digits_of(k.bit_length(), c)
            if k.bit_length() < c:
                assert nonzero_digits(k, c) == digits_of(k.bit_length(), c) == (k != 0)
        assert digits_of(0, c) == 0 and digits_of(255, c) == windows_of(c)


def lengths_of(shares, n):
    """A tally of n scalars' bit lengths from {bit length: share}."""
    out = [0] * 256
    for bits, share in shares.items():
        out[bits] += round(share * n)
    return out


@pytest.mark.parametrize("log_n", [16, 20, 24, 27])
def test_full_scalars_keep_the_width_of_their_count(log_n):
    n = 1 << log_n
    c = window_bits_for(lengths_of({255: 1.0}, n), n, 1)
    assert abs(c - window_bits(n)) <= 1
    assert c == window_bits_for(lengths_of({254: 0.5, 255: 0.5}, n), n, 1)


@pytest.mark.parametrize("group", [1, 2])
def test_narrow_scalars_take_narrower_windows(group):
    """A witness of mostly bits and small words (the porep-shaped L and A
    queries: 42 % zero, 35 % one, 18 % words, 5 % full) is bucketed in
    narrower windows than full scalars of the same count, yet wide enough
    that every word is one digit; all-zero scalars still get a valid width,
    and all-one scalars (every digit in window 0) the narrowest."""
    n = 130_000_000 if group == 1 else 33_000_000
    mix = lengths_of({0: 0.42, 1: 0.35, 9: 0.09, 11: 0.09, 255: 0.05}, n)
    narrow, full = window_bits_for(mix, n, group), window_bits(n)
    assert 11 < narrow < full
    assert window_bits_for(lengths_of({0: 1.0}, n), n, group) >= 4
    assert window_bits_for(lengths_of({1: 1.0}, 1000), 1000, group) == 4    # every digit in window 0


def test_the_sort_groups_where_keys_may_repeat():
    """Distinct full scalars: one atomic a key; ones, small words or repeats
    past 1/64 of the scalars: grouped."""
    n = 1 << 20
    full = lengths_of({254: 0.5, 255: 0.5}, n)
    assert not grouped(full, 0, n, 22)
    assert not grouped(full, n // 100, n, 22)
    assert grouped(full, n // 32, n, 22)                       # repeated scalars
    assert grouped(lengths_of({1: 0.05, 255: 0.95}, n), 0, n, 22)
    assert grouped(lengths_of({16: 0.1, 255: 0.9}, n), 0, n, 22)
    assert not grouped(lengths_of({16: 0.1, 255: 0.9}, n), 0, n, 16)   # 16-bit words are wide at c = 16
