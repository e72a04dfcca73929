# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's host side (GpuMsm._pippenger, GpuSort, GpuBuckets: the sort's passes, the
stretches, the streams' order, the chunked accumulation, the reductions and
folds) run against an emulated device, without a GPU: each kernel of
msm/kernels/msm.cu written again in Python over a group where the sums are
checkable, the integers mod a prime (a point is an integer, infinity 0). The
Pippenger sums it returns, combined over the windows, must equal the plain
sum of scalar times point; the device tests check the kernels themselves."""
import random

import numpy as np
import pytest

from emulated_gpu import NO_KEY, Device, InPasses, Kernel, P, cuda_parameters, draw, run

from porep_prover.curve.points import G1Array
from porep_prover.field.constants import R
from porep_prover.field.fr_array import FrArray
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.buckets import Target
from porep_prover.msm.gpu.msm import Accumulation
from porep_prover.msm.gpu.plan import MsmTuning


@pytest.mark.parametrize("tables", [0, 1, 2, 5], ids=["plain", "one set", "2 sets", "5 sets"])
@pytest.mark.parametrize("overlap", [False, True], ids=["one stream", "fill beside"])
@pytest.mark.parametrize("n,c,parts,groups", [(257, 6, 1, 4), (40, 5, 3, 64), (123, 7, 5, 3), (9, 4, 16, 4)])
def test_pippenger_sums_on_an_emulated_device(tables, overlap, n, c, parts, groups):
    got, want, split, launches, _, _ = run(n, c, tables, overlap, parts, groups, seed=n * c + parts)
    assert got == want
    assert sum(split) == n
    level1 = "k_msm_accumulate_table" if tables else "k_msm_accumulate"     # a table's copies beside the points
    launches = [("k_msm_accumulate" if k == level1 else k, s) for k, s in launches]
    streams = {name: {s for k, s in launches if k == name} for name in ("k_msm_place", "k_msm_accumulate",
                                                                        "k_msm_combine", "k_msm_reduce")}
    assert len(streams["k_msm_place"]) == (2 if overlap else 1)   # with overlap the count on one, the fill beside
    assert streams["k_msm_accumulate"] == streams["k_msm_combine"] == streams["k_msm_reduce"]
    assert len(streams["k_msm_accumulate"]) == 1
    fills = [i for i, (k, _) in enumerate(launches) if k == "k_msm_place"][1:]
    adds = [i for i, (k, _) in enumerate(launches) if k == "k_msm_accumulate"]
    assert fills[-1] < adds[0]                      # every fill is queued before the first accumulation waits


@pytest.mark.parametrize("overlap", [False, True], ids=["one stream", "fill beside"])
@pytest.mark.parametrize("mix", ["random", "narrow"])
def test_window_bits_from_the_scalars_lengths(overlap, mix):
    """c None: the window width comes from classify's tally of bit lengths
    (window_bits_for), and the windows' sums, combined at that width, are right."""
    got, want, split, _, c, _ = run(150, None, False, overlap, None, 4, seed=31, mix=mix)
    assert got == want
    assert 4 <= c <= 22 and sum(split) == 150


@pytest.mark.parametrize("tables", [0, 1, 3], ids=["plain", "one set", "3 sets"])
@pytest.mark.parametrize("overlap", [False, True], ids=["one stream", "fill beside"])
@pytest.mark.parametrize("n,c,parts", [(300, 6, 1), (257, 12, 3), (200, 8, None), (61, 4, 2)])
def test_narrow_scalars_keep_keys_above_window_0_for_the_wide_ones(tables, overlap, n, c, parts):
    """Mostly bits and small words: windows above the first hold keys only for
    the scalars of at least c bits (listed in any order), and the sums are
    right; window tables keep every point's keys."""
    got, want, split, _, _, _ = run(n, c, tables, overlap, parts, 4, seed=n + (c or 0), mix="narrow")
    assert got == want and sum(split) == n


@pytest.mark.parametrize("mix,together", [("full", 0), ("equal", 1), ("narrow", 1), ("random", 1)])
def test_the_sort_groups_its_atomics_where_keys_repeat(mix, together):
    """Distinct full scalars: one atomic a key; equal ones (msm_classify's
    repeats), bits and small words: a warp's equal keys grouped. The sums
    are right either way."""
    got, want, split, _, _, grouped = run(130, 6, False, False, None, 4, seed=5, mix=mix)
    assert got == want and sum(split) == 130
    assert grouped == {together}


@pytest.mark.parametrize("overlap", [False, True], ids=["one stream", "fill beside"])
@pytest.mark.parametrize("mix", ["random", "narrow"])
def test_one_sort_serves_several_arrays(overlap, mix):
    """_pippenger_targets over two arrays of points from one sort of the
    scalars: the first row for row (some points at infinity: they must not
    zero the scalars the second array still needs), the second through a row
    map into a longer array, some scalars without a row. Each array's window
    sums combine to its own sum; the sort's passes run once, each array's
    accumulation, combine levels and reduction apart."""
    rnd, n, c = random.Random(7 + overlap), 180, 6
    dev = Device()
    ops = GpuMsm(dev, MsmTuning(overlap=overlap, groups=3))
    first = [0 if i % 7 == 3 else rnd.randrange(1, P) for i in range(n)]
    second = [rnd.randrange(1, P) for _ in range(n + 40)]
    rows = rnd.sample(range(n + 40), n)
    rows = [NO_KEY if i % 11 == 5 else r for i, r in enumerate(rows)]
    scalars = [draw(rnd, mix) for _ in range(n)]
    sc, pts1, pts2, rbuf = dev.alloc(32 * n), dev.alloc(96 * n), dev.alloc(96 * (n + 40)), dev.alloc(4 * n)
    for i in range(n):
        dev.mem.write(sc.ptr, i, "fr", scalars[i])
        dev.mem.write(pts1.ptr, i, "point", first[i])
        dev.mem.write(rbuf.ptr, i, "u32", rows[i])
    for i, p in enumerate(second):
        dev.mem.write(pts2.ptr, i, "point", p)
    targets = [Target(1, pts1.ptr, 0, 192), Target(1, pts2.ptr, rbuf.ptr, 192)]
    sums, c, split = ops._pippenger_targets(targets, sc.ptr, n, c, 0, False)
    got = [sum(int(r) * pow(2, c * w, P) for w, r in enumerate(rows_)) % P for rows_ in sums]
    assert got[0] == sum(k % P * p for k, p in zip(scalars, first)) % P
    assert got[1] == sum(k % P * second[r] for k, r in zip(scalars, rows) if r != NO_KEY) % P
    assert sum(split) == n and split[0] == sum(k == 0 for k in scalars)   # no infinity zeroed a scalar
    names = [k for k, _ in dev.launches]
    assert names.count("k_msm_classify") == names.count("k_msm_digits") == 1
    assert names.count("k_msm_accumulate") == names.count("k_msm_accumulate_rows") >= 1
    assert names.count("k_msm_reduce") == 2


@pytest.mark.parametrize("onto,max_chunk", [(False, 256), (True, 256), (True, 4)],
                         ids=["added at each run's end", "runs start from the buckets", "onto, short chunks"])
@pytest.mark.parametrize("overlap", [False, True], ids=["one stream", "fill beside"])
def test_passes_add_into_one_set_of_buckets(overlap, onto, max_chunk):
    """An MSM of several passes (a streamed array's chunks, of sizes not
    powers of two): each pass's entries are added into one set of buckets,
    whose window width the first pass with scalars picks for every pass
    (later passes of other scalars sort with it), a pass of zeros adds
    nothing, and the windows are reduced once, at the end. Their sum is the
    plain sum of scalar times point, whether a pass adds a run's sum into its
    bucket as the run ends (msm_accumulate_into) or starts the bucket's runs
    from what it holds (onto; short chunks split buckets across chunks, so
    the plain combine levels finish them)."""
    rnd = random.Random()
    dev = Device()
    ops = GpuMsm(dev, MsmTuning(overlap=overlap, groups=3, max_chunk=max_chunk), onto=onto)
    spans = [(0, 97, "narrow"), (97, 110, "zero"), (110, 241, "full"), (241, 330, "random")]
    n = spans[-1][1]
    points = [0 if i % 13 == 6 else rnd.randrange(1, P) for i in range(n)]
    scalars = [0 if mix == "zero" else draw(rnd, mix) for start, stop, mix in spans for _ in range(start, stop)]
    pts, sc = dev.alloc(96 * n), dev.alloc(32 * n)
    for i in range(n):
        dev.mem.write(sc.ptr, i, "fr", scalars[i])
        dev.mem.write(pts.ptr, i, "point", points[i])
    acc = Accumulation(dev.alloc)
    for start, stop, _ in spans:
        rows, c, split = ops._pippenger(1, pts.ptr + 96 * start, sc.ptr + 32 * start, stop - start, 192, None, acc)
        assert rows is None and c == acc.c > 0
        assert sum(split) == stop - start
    got = sum(int(r) * pow(2, acc.c * w, P) for w, r in enumerate(acc.reduce(ops, 1))) % P
    assert got == sum(k % P * p for k, p in zip(scalars, points)) % P
    names = [k for k, _ in dev.launches]
    assert names.count("k_msm_classify") == len(spans)
    assert names.count("k_msm_reduce") == 1
    later = "k_msm_accumulate_onto" if onto else "k_msm_accumulate_into"
    assert names.count(later) >= len(spans) - 1 and "k_msm_accumulate" not in names
    assert ("k_msm_combine_into" in names) is not onto


def test_every_emulated_launch_passes_the_kernels_parameters():
    """Each emulated kernel is an entry point of msm.cu, and a launch whose
    argument count differs from the entry point's is stopped (a GPU would
    read what the slots happen to hold)."""
    entries = cuda_parameters()
    emulated = {name[2:] for name in dir(Device) if name.startswith("k_")}
    assert emulated and emulated <= set(entries), emulated - set(entries)
    assert entries["msm_accumulate_into"] == entries["msm_accumulate_onto"] == entries["msm_accumulate"]
    dev = Device()
    count = entries["msm_combine_into"]
    with pytest.raises(AssertionError, match=f"msm_combine_into takes {count} parameters"):
        Kernel(dev, "g1_msm_combine_into").launch(None, 256, [0] * (count + 1))


def test_buckets_no_pass_filled_reduce_to_nothing():
    assert Accumulation(Device().alloc).reduce(GpuMsm(Device()), 1) is None


def test_kept_buckets_serve_a_plain_msm_only():
    """A row map or a window table with buckets kept across passes is a named error, never a wrong sum."""
    from porep_prover.errors import InvalidInputError
    dev = Device()
    ops = GpuMsm(dev)
    for target in (Target(1, 0, 1, 192), Target(1, 0, 0, 192, 1, 5)):
        with pytest.raises(InvalidInputError, match="plain MSM"):
            ops.buckets.accumulate(target, (0, 0, 0, 0), range(0, 1), 0, 1, 1, dev.alloc, lambda name: None, True)


class PassingDevice(InPasses, Device):
    """The emulated device as a backend that runs an array in passes of `per`
    points: the points' stand-ins (integers mod P) live at `pts`; uploaded
    scalars arrive canonical, as msm_classify would make them."""

    def __init__(self, per):
        super().__init__()
        self.per, self.pts, self.passes = per, None, 0

    def chunk(self, start, stop):
        self.passes += 1
        return self.pts.ptr + 96 * start

    def upload(self, data):
        values = FrArray(np.ascontiguousarray(data).reshape(-1, 4)).to_ints()
        buf = self.alloc(32 * len(values))
        for i, k in enumerate(values):
            self.mem.write(buf.ptr, i, "fr", k)
        return buf


@pytest.mark.parametrize("onto", [False, True], ids=["into", "onto"])
@pytest.mark.parametrize("sets", [1, 2])
def test_msm_sets_in_passes_keep_a_set_of_buckets_each(sets, onto):
    """GpuMsm.msm_sets over an array of several passes on the emulated
    device: each scalar set adds every pass into buckets of its own, which
    are reduced once, and each set's windows combine to its plain sum."""
    rnd = random.Random()
    n, per = rnd.randrange(150, 260), rnd.randrange(40, 90)
    dev = PassingDevice(per)
    ops = GpuMsm(dev, MsmTuning(groups=3), onto=onto)
    points = [0 if i % 11 == 2 else rnd.randrange(1, P) for i in range(n)]
    dev.pts = dev.alloc(96 * n)
    for i, p in enumerate(points):
        dev.mem.write(dev.pts.ptr, i, "point", p)
    scalar_sets = [[draw(rnd, mix) % R for _ in range(n)] for mix in ("narrow", "random")[:sets]]
    ops._finish = lambda point, group, parts: sum(int(r) * pow(2, c * w, P) for rows, c in parts
                                                  for w, r in enumerate(rows)) % P
    got = ops.msm_sets(G1Array.zeros(n), [FrArray.from_ints(s) for s in scalar_sets])
    for (total, stats), scalars in zip(got, scalar_sets, strict=True):
        assert total == sum(k % P * p for k, p in zip(scalars, points)) % P
        assert stats["zeros"] + stats["ones"] + stats["full"] == n
    names = [k for k, _ in dev.launches]
    assert dev.passes == -(-n // per) and names.count("k_msm_reduce") == sets
    assert names.count("k_msm_classify") == sets * dev.passes
    assert "k_msm_accumulate" not in names        # every pass adds into its set's
    assert names.count("k_msm_accumulate_onto" if onto else "k_msm_accumulate_into") >= dev.passes
    assert ("k_msm_combine" in names) is onto and ("k_msm_combine_into" in names) is not onto
