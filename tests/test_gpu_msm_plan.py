# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's plan, without a device: the stretches its fill is cut into
cover every row of the counting sort once, in launch order, and each stretch's
buckets are exactly those its rows fill (rows mapped to (window, part) as
msm_place maps them), so a stretch can be added up while the next one fills."""
import pytest

from porep_prover.backend.gpu_msm import GpuMsm, Stretch, overlapped


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
