# SPDX-License-Identifier: Apache-2.0
"""GpuMsm.msm_sets without a GPU: one pass over the points serves every
scalar set (a streamed array's chunks are asked for once, each chunk's
MSMs for every set run before the next chunk arrives, each set's adding
into buckets of its own that are reduced once), each set's sum and split
are its own, and msm is msm_sets of one set. The kernels' part of a
pass (_pippenger) is a stand-in here that sums in the integers mod a prime;
its launches are checked on the emulated device (test_gpu_msm_emulated.py)."""
import random

import numpy as np
import pytest

from emulated_gpu import InPasses
from porep_prover.curve.points import G1Array
from porep_prover.errors import LengthMismatchError
from porep_prover.field.fr_array import FrArray
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.msm import Accumulation

P = (1 << 61) - 1


class StreamingDevice(InPasses):
    """A device whose point arrays are streamed in chunks of `per` points: every chunk asked for is logged."""

    def __init__(self, per):
        self.per, self.log = per, []

    def chunk(self, start, stop):
        self.log.append(("chunk", start, stop))
        return ("chunk", start)

    def upload(self, data):
        return ("scalars", data.copy())

    def work_alloc(self, nbytes):
        raise AssertionError("the stand-in passes make no buckets")

    def free(self, *bufs):
        pass


def stand_in(weights, log):
    """_pippenger over (points' weights) x (the scalars' low limbs) mod P,
    logging each call: a pass with buckets kept across passes (into) adds
    its sum into them (into.total, which the stand-in reduce returns)."""
    def pippenger(group, pts, sc, n, proj, table=None, into=None):
        start = pts[1]
        scalars = sc[1][:, 0]
        log.append(("pass", start, int(scalars[0]) if n else None))
        got = sum(int(w) * int(s) for w, s in zip(weights[start:start + n], scalars)) % P
        counts = np.array([int((scalars == 0).sum()), int((scalars == 1).sum()), int((scalars > 1).sum())])
        if into is not None:
            into.c, into.total = 7, (getattr(into, "total", 0) + got) % P
            return None, 7, counts
        return np.array([[got]], dtype=np.uint64), 7, counts
    return pippenger


def reduce_stand_in(self, msm, group):
    return np.array([[self.total]], dtype=object) if hasattr(self, "total") else None


@pytest.mark.parametrize("sets", [1, 2, 3])
def test_one_pass_serves_every_set(sets, monkeypatch):
    rnd = random.Random()
    n, per = rnd.randrange(50, 400), rnd.randrange(7, 60)
    dev = StreamingDevice(per)
    msm = GpuMsm(dev)
    weights = [rnd.randrange(P) for _ in range(n)]
    monkeypatch.setattr(msm, "_pippenger", stand_in(weights, dev.log))
    monkeypatch.setattr(Accumulation, "reduce", reduce_stand_in)
    monkeypatch.setattr(msm, "_finish", lambda point, group, parts: sum(int(r[0][0]) for r, _ in parts) % P)
    scalar_sets = [FrArray(np.array([[rnd.choice([0, 1, rnd.randrange(2, 1 << 60)]), 0, 0, 0] for _ in range(n)],
                                    dtype=np.uint64)) for _ in range(sets)]
    got = msm.msm_sets(G1Array.zeros(n), scalar_sets)
    chunks = [e for e in dev.log if e[0] == "chunk"]
    assert len(chunks) == -(-n // per)                                   # each chunk once, whatever the sets
    order = [e[0] for e in dev.log]
    assert order == (["chunk"] + ["pass"] * sets) * len(chunks)          # a chunk's sets before the next chunk
    for (total, stats), scalars in zip(got, scalar_sets, strict=True):
        low = scalars.limbs[:, 0]
        assert total == sum(w * int(s) for w, s in zip(weights, low)) % P
        assert (stats["zeros"], stats["ones"], stats["full"]) == ((low == 0).sum(), (low == 1).sum(), (low > 1).sum())
        assert stats["window_bits"] == 7
    if sets == 1:
        dev.log.clear()
        assert msm.msm(G1Array.zeros(n), scalar_sets[0]) == got[0]


def test_every_set_must_match_the_points():
    msm = GpuMsm(StreamingDevice(8))
    good, short = FrArray.zeros(10), FrArray.zeros(9)
    with pytest.raises(LengthMismatchError):
        msm.msm_sets(G1Array.zeros(10), [good, short])
    assert [s["zeros"] for _, s in msm.msm_sets(G1Array.zeros(0), [FrArray.zeros(0)] * 2)] == [0, 0]
