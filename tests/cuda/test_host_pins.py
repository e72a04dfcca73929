# SPDX-License-Identifier: Apache-2.0
"""HostPins without a GPU (cuda/pinned.py), on a driver that records what it
is asked: anonymous arrays are registered in place and streamed from
themselves; a file mapping is never registered but copied once into
page-locked memory, which is what is streamed from then; a refusal leaves
the array pageable; unpinning, collection and close unlock what was locked."""
import gc

import numpy as np
import pytest

from porep_prover.cuda.pinned import HostPins
from porep_prover.errors import CudaError
from porep_prover.host_memory import is_mapped


class Driver:
    def __init__(self, refuse=False):
        self.refuse, self.registered, self.buffers = refuse, [], []
        drv = self

        class HostRegistration:
            def __init__(self, ctx, data):
                if drv.refuse:
                    raise CudaError("cuMemHostRegister: CUDA_ERROR_NOT_PERMITTED")
                self.address, self.nbytes, self.closed = data.ctypes.data, data.nbytes, False
                drv.registered.append(self)

            def close(self):
                self.closed = True

        class PinnedBuffer(bytearray):
            def __init__(self, ctx, nbytes):
                if drv.refuse:
                    raise CudaError("cuMemHostAlloc: CUDA_ERROR_OUT_OF_MEMORY")
                super().__init__(nbytes)
                self.closed, self.busy = False, False
                drv.buffers.append(self)

            @property
            def nbytes(self):
                return len(self)

            def close(self):
                if self.busy:
                    raise BufferError("pinned buffer still has views")
                self.closed = True

        self.HostRegistration, self.PinnedBuffer = HostRegistration, PinnedBuffer


@pytest.fixture
def mapped(tmp_path, rng):
    """A (rows, 6) uint64 array of a file, mapped copy-on-write as mapped parameters are."""
    rows = 100_003
    data = np.array([rng.getrandbits(64) for _ in range(rows * 6)], np.uint64).reshape(rows, 6)
    path = tmp_path / "points.bin"
    data.tofile(path)
    return np.memmap(path, dtype=np.uint64, mode="c", shape=data.shape), data


def test_anonymous_memory_is_registered_in_place(rng):
    drv = Driver()
    pins = HostPins(drv, None)
    array = np.arange(3 * 1001, dtype=np.uint64).reshape(1001, 3)
    assert pins.pin(array) and pins.pin(array)            # once
    assert len(drv.registered) == 1 and not drv.buffers
    assert drv.registered[0].address == array.ctypes.data and pins.pinned_bytes() == array.nbytes
    assert pins.source(array) is array
    pins.unpin(array)
    assert drv.registered[0].closed and pins.pinned_bytes() == 0


def test_a_file_mapping_is_copied_not_registered(mapped):
    array, data = mapped
    assert is_mapped(array) and not is_mapped(data)
    drv = Driver()
    pins = HostPins(drv, None)
    assert pins.pin(array)
    assert not drv.registered and len(drv.buffers) == 1 and drv.buffers[0].nbytes == array.nbytes
    source = pins.source(array)
    assert source is not array and source.shape == array.shape and source.dtype == array.dtype
    assert np.shares_memory(source, np.frombuffer(drv.buffers[0], np.uint8))      # in the page-locked buffer
    assert np.array_equal(source, data)
    assert pins.pinned_bytes() == array.nbytes
    pins.close()
    assert drv.buffers[0].closed and pins.source(array) is array


def test_a_copy_still_read_is_left_to_its_last_view(mapped):
    array, data = mapped
    drv = Driver()
    pins = HostPins(drv, None)
    pins.pin(array)
    held = pins.source(array)
    drv.buffers[0].busy = True           # a stream's view of the copy is alive
    pins.unpin(array)                    # no error: the buffer goes with its last view
    assert not drv.buffers[0].closed and np.array_equal(held, data)
    assert pins.pinned_bytes() == 0 and pins.source(array) is array


@pytest.mark.parametrize("kind", ["anonymous", "mapped"])
def test_a_refusal_leaves_the_array_pageable(kind, mapped, caplog):
    array = mapped[0] if kind == "mapped" else np.ones((10, 4), np.uint64)
    pins = HostPins(Driver(refuse=True), None)
    assert not pins.pin(array)
    assert pins.source(array) is array and pins.pinned_bytes() == 0
    assert "streaming" in caplog.text and "pageable" in caplog.text


def test_collection_unpins_and_strided_arrays_are_not_pinned():
    drv = Driver()
    pins = HostPins(drv, None)
    array = np.zeros((64, 4), np.uint64)
    assert not pins.pin(array[:, :2])     # not contiguous: streamed from pageable memory
    pins.pin(array)
    del array
    gc.collect()
    assert drv.registered[0].closed and pins.pinned_bytes() == 0
