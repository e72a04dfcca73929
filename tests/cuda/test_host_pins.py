# SPDX-License-Identifier: Apache-2.0
"""HostPins without a GPU (cuda/pinned.py), on a driver that records what it
is asked: anonymous arrays are registered in place and streamed from
themselves; a file mapping is never registered: its anonymous copy, made
once and shared by every device's pins, is registered and streamed from; a
refusal leaves the array pageable and gives the copy back; unpinning,
collection and close unlock what was locked and drop the copy with its
last user."""
import gc
import threading

import numpy as np
import pytest

from porep_prover.cuda.pinned import MAPPED_COPIES, HostPins
from porep_prover.errors import CudaError
from porep_prover.host_memory import is_mapped


class Driver:
    def __init__(self, refuse=False):
        self.refuse, self.registered = refuse, []
        drv = self

        class HostRegistration:
            def __init__(self, ctx, data):
                if drv.refuse:
                    raise CudaError("cuMemHostRegister: CUDA_ERROR_NOT_PERMITTED")
                self.address, self.nbytes, self.closed = data.ctypes.data, data.nbytes, False
                drv.registered.append(self)

            def close(self):
                self.closed = True

        self.HostRegistration = HostRegistration


@pytest.fixture
def mapped(tmp_path, rng):
    """A (rows, 6) uint64 array of a file, mapped copy-on-write as mapped parameters are, and its values."""
    rows = 100_003
    data = np.array([rng.getrandbits(64) for _ in range(rows * 6)], np.uint64).reshape(rows, 6)
    path = tmp_path / "points.bin"
    data.tofile(path)
    yield np.memmap(path, dtype=np.uint64, mode="c", shape=data.shape), data
    assert MAPPED_COPIES.held_bytes() == 0           # every test gives its copies back


def test_anonymous_memory_is_registered_in_place():
    drv = Driver()
    pins = HostPins(drv, None)
    array = np.arange(3 * 1001, dtype=np.uint64).reshape(1001, 3)
    assert pins.pin(array) and pins.pin(array)            # once
    assert len(drv.registered) == 1 and drv.registered[0].address == array.ctypes.data
    assert pins.source(array) is array and pins.pinned_bytes() == array.nbytes
    assert MAPPED_COPIES.held_bytes() == 0
    pins.unpin(array)
    assert drv.registered[0].closed and pins.pinned_bytes() == 0


def test_a_file_mapping_is_copied_and_the_copy_registered(mapped):
    array, data = mapped
    assert is_mapped(array) and not is_mapped(data)
    drv = Driver()
    pins = HostPins(drv, None)
    assert pins.pin(array)
    source = pins.source(array)
    assert source is not array and not is_mapped(source) and not np.shares_memory(source, array)
    assert source.shape == array.shape and source.dtype == array.dtype and np.array_equal(source, data)
    assert [r.address for r in drv.registered] == [source.ctypes.data]     # the copy's pages, not the mapping's
    assert pins.pinned_bytes() == array.nbytes and MAPPED_COPIES.held_bytes() == array.nbytes
    pins.close()
    assert drv.registered[0].closed and pins.source(array) is array


def test_devices_share_one_copy_until_the_last_is_done(mapped):
    array, data = mapped
    first, second = HostPins(Driver(), None), HostPins(Driver(), None)
    first.pin(array)
    second.pin(array)
    assert first.source(array) is second.source(array)
    assert MAPPED_COPIES.held_bytes() == array.nbytes          # one copy for both
    held = first.source(array)
    first.unpin(array)
    assert MAPPED_COPIES.held_bytes() == array.nbytes and second.source(array) is held
    second.unpin(array)
    assert MAPPED_COPIES.held_bytes() == 0
    assert np.array_equal(held, data)         # a view still read lives on with its reader


def test_pinning_at_once_from_two_threads_keeps_one_pin(mapped):
    array, _ = mapped
    drv = Driver()
    pins = HostPins(drv, None)
    threads = [threading.Thread(target=pins.pin, args=(array,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert pins.pinned_bytes() == array.nbytes and MAPPED_COPIES.held_bytes() == array.nbytes
    assert sum(not r.closed for r in drv.registered) == 1
    pins.close()


@pytest.mark.parametrize("kind", ["anonymous", "mapped"])
def test_a_refusal_leaves_the_array_pageable(kind, mapped, caplog):
    array = mapped[0] if kind == "mapped" else np.ones((10, 4), np.uint64)
    pins = HostPins(Driver(refuse=True), None)
    assert not pins.pin(array)
    assert pins.source(array) is array and pins.pinned_bytes() == 0
    assert "streaming" in caplog.text and "pageable" in caplog.text


def test_collection_unpins_and_strided_arrays_are_not_pinned(tmp_path):
    drv = Driver()
    pins = HostPins(drv, None)
    array = np.zeros((64, 4), np.uint64)
    assert not pins.pin(array[:, :2])     # not contiguous: streamed from pageable memory
    array.tofile(tmp_path / "zeros.bin")
    mapped = np.memmap(tmp_path / "zeros.bin", dtype=np.uint64, mode="c", shape=array.shape)
    pins.pin(array)
    pins.pin(mapped)
    assert MAPPED_COPIES.held_bytes() == mapped.nbytes
    del array, mapped
    gc.collect()
    assert len(drv.registered) == 2 and all(r.closed for r in drv.registered)
    assert pins.pinned_bytes() == 0 and MAPPED_COPIES.held_bytes() == 0
