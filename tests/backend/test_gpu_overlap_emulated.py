# SPDX-License-Identifier: Apache-2.0
"""The prover's overlap mode on the emulated device (tests/helpers/emulated_gpu.py):
an MSM made on the device's second stream (cuda.second_stream) launches
every kernel there, its sort's fill beside it on a third stream, and its
sums are right; a GpuRegion in overlap mode (GpuBackend.region) queues
H's transforms on the first stream (its main lane), runs the MSMs beside
them on the second (its side lane), and joins the streams (the first waits
for an event of the second) before H's MSM and before H's other buffers
are freed."""
import random
import types

import pytest
from emulated_gpu import Device, P, run

from porep_prover.backend.gpu import GpuBackend
from porep_prover.cuda.second_stream import SecondStream
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.plan import MsmTuning

SIDE_KERNELS = {"k_msm_classify", "k_msm_digits", "k_scan_tiles", "k_scan_sums", "k_scan_add", "k_msm_accumulate",
                "k_msm_combine", "k_msm_reduce", "k_msm_fold"}


@pytest.mark.parametrize("overlap", [False, True], ids=["one stream", "fill beside"])
@pytest.mark.parametrize("n,c,mix", [(157, 6, "random"), (90, 5, "narrow")])
def test_an_msm_on_the_second_stream_keeps_off_the_first(overlap, n, c, mix):
    dev = Device()
    got, want, split, launches, _, _ = run(n, c, 0, overlap, 2, 3, seed=n + c + overlap, mix=mix, dev=dev,
                                           view=SecondStream(dev))
    assert got == want and sum(split) == n
    assert not [k for k, s in launches if s is dev.stream]           # nothing waits behind H's transforms
    assert {s for k, s in launches if k in SIDE_KERNELS} == {dev.aux_stream}
    places = [s for k, s in launches if k == "k_msm_place"]             # the count's, then the fill's
    assert set(places) == ({dev.aux_stream, dev.side_fill} if overlap else {dev.aux_stream})
    if overlap:
        first_fill = places.index(dev.side_fill)
        assert set(places[:first_fill]) == {dev.aux_stream} and set(places[first_fill:]) == {dev.side_fill}
    waits = [(w, r) for kind, w, r in dev.order if kind == "wait"]
    assert all(w is not dev.stream and r is not dev.stream for w, r in waits)


class EmulatedNtt:
    """H's transforms as the region's main lane sees them: one launch on the first
    stream, the buffers a free would wait for handed to hold."""

    def __init__(self, dev):
        self.dev = dev

    def h_scalars(self, a, b, c, flavor, hold):
        self.dev.order.append(("launch", "ntt", self.dev.stream))
        hold.extend(["a's buffer", "c's buffer"])
        return "h"


class EmulatedBackend:
    """What a GpuRegion reads of a GpuBackend, over the emulated device:
    its device, its memory (the device's frees, the chunk ring's waits),
    its MSM and NTT sides, and no memory plan to lay out."""

    region = GpuBackend.region

    def __init__(self, dev):
        self.device, self.msm_ops, self.ntt_ops = dev, GpuMsm(dev, MsmTuning(groups=3)), EmulatedNtt(dev)
        self.waited_ms = 0.0
        self.memory = types.SimpleNamespace(copy_wait_seen_ms=0.0, free=lambda *bufs: dev.memory.free(*bufs),
                                            resident=types.SimpleNamespace(copy_wait_ms=lambda: self.waited_ms))

    def _lay_out(self, plan, arrays):
        assert plan is None and arrays is None


def emulated_backend():
    """The emulated device (its frees recorded) and a backend over it."""
    dev = Device()
    dev.free = lambda *bufs: dev.order.append(("free", bufs))
    return dev, EmulatedBackend(dev)


def scalars_and_points(dev, rnd, n):
    pts, sc = dev.alloc(96 * n), dev.alloc(32 * n)
    points = [rnd.randrange(1, P) for _ in range(n)]
    scalars = [rnd.choice([0, 1, rnd.randrange(1 << 255)]) for _ in range(n)]
    for i in range(n):
        dev.mem.write(pts.ptr, i, "point", points[i])
        dev.mem.write(sc.ptr, i, "fr", scalars[i])
    return pts, sc, n, sum(k % P * p for k, p in zip(scalars, points)) % P


def combined(rows, c):
    return sum(int(r) * pow(2, c * w, P) for w, r in enumerate(rows)) % P


@pytest.mark.parametrize("overlap", [False, True], ids=["one stream", "fill beside"])
def test_the_side_lane_runs_the_msms_on_the_second_stream_and_joins_before_h(overlap):
    """H's transforms first on the first stream; l's and a's MSMs (right
    sums) on the second; the first stream waits for the second before H's
    MSM's first launch, and H's held buffers are freed at the join."""
    rnd, (dev, be) = random.Random(11 + overlap), emulated_backend()
    tuning = MsmTuning(window_bits=6, overlap=overlap, groups=3)
    inputs = [scalars_and_points(dev, rnd, n) for n in (101, 64, 77)]     # l, a, then H
    be.msm_ops = GpuMsm(dev, tuning)
    with be.region(overlap=True) as region:
        assert region.side.device is region.second and region.main.device is dev
        assert region.main.h_scalars(None, None, None, 1) == "h"
        for pts, sc, n, want in inputs[:2]:
            rows, c, _ = region.side.msm_ops._pippenger(1, pts.ptr, sc.ptr, n, 192)
            assert combined(rows, c) == want
        joined = len(dev.order)
    pts, sc, n, want = inputs[2]
    rows, c, _ = region.main.msm_ops._pippenger(1, pts.ptr, sc.ptr, n, 192)
    assert combined(rows, c) == want
    order = dev.order
    assert order[0] == ("wait", dev.aux_stream, dev.stream)          # the second stream after the region's uploads
    assert order[1] == ("launch", "ntt", dev.stream)
    side_part, after = order[2:joined], order[joined:]
    assert {e[2] for e in side_part if e[0] == "launch"} <= {dev.aux_stream, dev.side_fill}
    assert not [e for e in side_part if e[0] == "free"]                # nothing beside waits for the device
    assert [e for e in side_part if e[0] == "launch" and e[2] is dev.aux_stream]
    assert after[0] == ("wait", dev.stream, dev.aux_stream)           # the join
    assert after[1] == ("free", ("a's buffer", "c's buffer"))       # H's buffers, once joined
    assert after[2][0] == "free" and after[2][1]                      # the second stream's others (no pool here)
    h_launches = [e[2] for e in after[3:] if e[0] == "launch"]
    assert h_launches and dev.stream in h_launches and dev.side_fill not in h_launches
    assert region.held == []


def test_the_region_joins_when_the_block_fails():
    dev, be = emulated_backend()
    with pytest.raises(RuntimeError):
        with be.region(overlap=True) as region:
            region.main.h_scalars(None, None, None, 1)
            raise RuntimeError("an MSM beside failed")
    assert dev.order[-2:] == [("wait", dev.stream, dev.aux_stream), ("free", ("a's buffer", "c's buffer"))]


@pytest.mark.parametrize("overlap", [False, True])
def test_a_region_that_ends_notes_the_device_s_waits_for_chunks(overlap):
    """At a region's end the device's copy_wait_ms is read (its work is
    done, so nothing stalls) and kept for the status; a region that fails
    leaves the last figure as it was."""
    dev, be = emulated_backend()
    be.waited_ms = 12.5
    with be.region(overlap=overlap):
        pass
    assert be.memory.copy_wait_seen_ms == 12.5
    be.waited_ms = 40.0
    with pytest.raises(RuntimeError):
        with be.region(overlap=overlap):
            raise RuntimeError("a kernel failed")
    assert be.memory.copy_wait_seen_ms == 12.5
