# SPDX-License-Identifier: Apache-2.0
"""DeviceScalars' ownership and views, with a stand-in device buffer: it runs
without a GPU."""
import random

import pytest

from porep_prover.cuda.arrays import DeviceScalars
from porep_prover.errors import InvalidInputError


class _Buffer:
    def __init__(self, nbytes):
        self.ptr, self.nbytes = random.randrange(1 << 20, 1 << 40) * 256, nbytes

    def view(self, offset):
        assert offset <= self.nbytes
        return self.ptr + offset

    def close(self):
        self.ptr = 0


class _Gpu:
    def free(self, *bufs):
        for b in bufs:
            b.close()


def test_views_address_their_rows_and_free_nothing():
    n, k = random.randrange(100, 1000), random.randrange(1, 50)
    owner = DeviceScalars(_Gpu(), _Buffer(32 * n), n)
    tail = owner[k:]
    assert len(tail) == n - k and tail.address() == owner.address(k)
    mid = tail[3:10]
    assert len(mid) == 7 and mid.address(2) == owner.address(k + 5)
    assert len(owner[n + 5:]) == 0
    with pytest.raises(InvalidInputError):
        owner[::2]
    with pytest.raises(InvalidInputError):
        tail.address(n)                  # past the view's end
    tail.close()                         # a view frees nothing
    assert owner.buffer.ptr and owner.address(1) == owner.buffer.ptr + 32
    mid_later = owner[1:]
    owner.close()
    with pytest.raises(InvalidInputError):
        owner.address()
    with pytest.raises(InvalidInputError):
        mid_later.address()              # a view outliving its owner is refused, not dereferenced
