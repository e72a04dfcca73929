# SPDX-License-Identifier: Apache-2.0
"""The GPU backend's host-side preparation (pinned arenas), with host memory
standing in for page-locked memory: it runs without a GPU."""
import numpy as np
import pytest

from porep_prover.backend.gpu import prepare
from porep_prover.cuda.pinned import PinnedPool
from porep_prover.memory.sizes import aligned
from porep_prover.circuits import porep_like
from porep_prover.groth16 import insecure_setup
from porep_prover.groth16.prover import synthesize


class _Pinned(bytearray):
    closed = False
    has_views = False           # a real buffer's count of live views (close refuses while there are some)

    def __init__(self, ctx, nbytes):
        super().__init__(nbytes)

    def close(self):
        if self.has_views:
            raise BufferError("pinned buffer still has views")
        self.closed = True


class _Driver:
    PinnedBuffer = _Pinned


@pytest.fixture(scope="module")
def partition():
    import random
    r1cs, w, _ = porep_like(700 + random.Random().randrange(300), seed=random.Random().randrange(1 << 20))
    return r1cs, w, insecure_setup(r1cs, warn=False)


@pytest.mark.parametrize("abc_on_device", [False, True])
def test_prepare_copies_each_held_array_once(partition, abc_on_device):
    r1cs, w, params = partition
    synth = synthesize(params, r1cs, w, 1, abc_on_device=abc_on_device)
    pool = PinnedPool(_Driver(), None)
    try:
        staged = prepare(pool, synth)
        held = synth.arrays()
        for f, arr in held.items():
            got = getattr(staged.assignment, f)
            assert np.array_equal(got.limbs, arr.limbs)
            assert pool.contains(got.limbs.reshape(-1).view(np.uint8)), f"{f} is not in the arena"
            assert not np.shares_memory(got.limbs, arr.limbs)
        want = sum(aligned(arr.limbs.nbytes) for arr in held.values())
        assert staged.arena.nbytes == want
        if abc_on_device:      # the device takes every query's scalars from the witness: it alone is staged
            assert list(held) == ["witness"] and synth.nbytes == w.limbs.nbytes
        else:
            assert "witness" not in held and synth.nbytes == sum(a.limbs.nbytes for a in held.values())
    finally:
        pool.close()


def test_an_arena_still_viewed_leaves_the_pool_without_an_error():
    """An arena given back while arrays of its last partition are still alive:
    the pool lets it go (its memory freed once they go), never raising into the
    admission that gives it back, and hands out a fresh arena next."""
    pool = PinnedPool(_Driver(), None, keep=1)
    try:
        first, second = pool.acquire(1000), pool.acquire(1000)
        first.buffer.has_views = True                 # a partition's a, b, c still alive somewhere
        pool.release(first)
        pool.discard(first)
        assert not first.buffer.closed and not pool.contains(first.view)
        pool.release(second)
        pool.discard(second)
        assert second.buffer.closed
        assert pool.acquire(1000) is not first
    finally:
        pool.close()
