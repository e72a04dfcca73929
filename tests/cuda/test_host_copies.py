# SPDX-License-Identifier: Apache-2.0
"""host_memory's copies: in slices on threads, and a file's bytes read into memory."""
import random
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from porep_prover.host_memory import copy_in_slices, read_into


@pytest.mark.parametrize("threads", [0, 1, 3])
def test_a_copy_in_slices_is_the_plain_copy(threads):
    rng = np.random.default_rng(random.randrange(1 << 32))
    n = int(rng.integers(1, 5 << 20))                  # not a multiple of the slice
    src = rng.integers(0, 256, n, dtype=np.uint8)
    dst = np.zeros(n, np.uint8)
    slice_bytes = int(rng.integers(1, 1 << 20))
    if threads:
        with ThreadPoolExecutor(threads) as pool:
            copy_in_slices(pool, dst, src, slice_bytes)
    else:
        copy_in_slices(None, dst, src, slice_bytes)
    assert np.array_equal(dst, src)


def test_read_into_reads_the_files_bytes_at_an_offset(tmp_path):
    rng = np.random.default_rng(random.randrange(1 << 32))
    data = rng.integers(0, 256, int(rng.integers(1 << 20, 3 << 20)), dtype=np.uint8)
    path = tmp_path / "bytes"
    path.write_bytes(data.tobytes())
    offset = int(rng.integers(0, 1 << 16))
    dst = np.empty(len(data) - offset, np.uint8)
    read_into(dst, str(path), offset, threads=2)
    assert np.array_equal(dst, data[offset:])
    with pytest.raises(OSError):                       # a file shorter than asked
        read_into(np.empty(len(data) + 1, np.uint8), str(path), 0)
