# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's plan, without a device: the stretches its fill is cut into
cover every row of the counting sort once, in launch order, and each stretch's
buckets are exactly those its rows fill (rows mapped to (window, part) as
msm_place maps them), so a stretch can be added up while the next one fills;
the window width follows the scalars' bit lengths."""
import random

import pytest

from msm_model import signed_digits
from porep_prover.backend.gpu_msm import GpuMsm, Stretch
from porep_prover.backend.gpu_msm_plan import digits_of, grouped, overlapped, window_bits, window_bits_for, windows_of
from porep_prover.field.constants import R


def place_row(row, windows, parts, tables):
    """(window, part) of a fill row, as msm_place reads blockIdx.y."""
    return (row % windows, row // windows) if tables else (row // parts, row % parts)


def row_buckets(row, windows, parts, nb, tables):
    """(the buckets a fill row writes, as a range; its window)."""
    w, part = place_row(row, windows, parts, tables)
    per = -(-nb // parts)
    base = 0 if tables else w * nb
    return range(base + min(part * per, nb), base + min(part * per + per, nb)), w


def plan(tables, windows, parts, nb, overlap, groups):
    ops = GpuMsm.__new__(GpuMsm)
    ops.groups = groups
    return ops._stretches(tables, windows, parts, nb, overlap)


@pytest.mark.parametrize("tables", [False, True], ids=["plain", "tables"])
@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("windows,parts,nb,groups", [(1, 1, 8, 4), (13, 1, 1 << 19, 4), (12, 4, 1 << 21, 4),
                                                      (11, 3, 1 << 23, 5), (64, 16, 8, 64), (7, 8, 4, 3)])
def test_stretches_cover_the_fill_in_order(tables, overlap, windows, parts, nb, groups):
    stretches = plan(tables, windows, parts, nb, overlap, groups)
    assert all(isinstance(s, Stretch) for s in stretches)
    rows = [r for s in stretches for r in s.rows]
    assert rows == list(range(windows * parts))                 # every row once, in launch order
    keys_n = nb if tables else windows * nb
    assert [s.buckets.start for s in stretches[1:]] == [s.buckets.stop for s in stretches[:-1]]
    assert (stretches[0].buckets.start, stretches[-1].buckets.stop) == (0, keys_n)
    for s in stretches:
        got = [row_buckets(r, windows, parts, nb, tables) for r in s.rows]
        filled = sorted({(b.start, b.stop) for b, _ in got if len(b)})
        assert [lo for lo, _ in filled[1:]] == [hi for _, hi in filled[:-1]]   # no gap, no overlap
        assert range(filled[0][0], filled[-1][1]) == s.buckets if filled else not s.buckets
        if not tables:                                          # whole windows
            assert len(s.buckets) % nb == 0 and s.rows.start % parts == 0
    if not overlap:
        assert len(stretches) == 1
    elif tables:
        assert len(stretches) == parts
    else:
        assert len(stretches) == min(windows, groups)


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
