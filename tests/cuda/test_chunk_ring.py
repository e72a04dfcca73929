# SPDX-License-Identifier: Apache-2.0
"""The chunk ring's order without a GPU (cuda/chunk_ring.py): every chunk
arrives whole in its slot, the kernels' stream waits for each upload before
its chunk is read, and a slot is written again only after the kernels that
read its last chunk (the event recorded when its consumer was done)."""
import numpy as np
import pytest

from porep_prover.cuda.chunk_ring import ChunkRing


class Log:
    def __init__(self):
        self.ops, self.next_event = [], 0


class Event:
    def __init__(self, log):
        self.log, self.id, self.stream = log, None, None

    def record(self, stream):
        self.id, self.stream = self.log.next_event, stream
        self.log.next_event += 1
        self.log.ops.append(("record", stream.name, self.id))

    def synchronize(self):
        pass

    def elapsed_ms(self, start):
        assert start.stream is self.stream and start.id < self.id      # the later of two on one stream
        return 0.25 * (self.id - start.id)


class Stream:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def wait(self, event):
        self.log.ops.append(("wait", self.name, event.id))

    def synchronize(self):
        pass

    def close(self):
        pass


class Buffer:
    def __init__(self, log, nbytes, slot):
        self.log, self.data, self.ptr = log, np.zeros(nbytes, np.uint8), 1000 * (slot + 1)

    def upload(self, raw, offset, stream):
        self.data[offset:offset + len(raw)] = raw
        self.log.ops.append(("upload", stream.name, self.ptr, len(raw)))


class FakeDevice:
    def __init__(self):
        self.log = Log()
        self.stream = Stream(self.log, "kernels")
        self.ctx, self.bufs = None, []
        log = self.log

        class Drv:
            @staticmethod
            def Stream(ctx):
                return Stream(log, "ring")

            @staticmethod
            def Event(ctx):
                return Event(log)
        self.drv = Drv

    def alloc(self, nbytes):
        self.bufs.append(Buffer(self.log, nbytes, len(self.bufs)))
        return self.bufs[-1]

    def free(self, *bufs):
        pass


@pytest.mark.parametrize("rows,per,slot_rows", [(1, 5, 4), (10, 3, 4), (101, 7, 5), (64, 64, 8), (37, 100, 6)])
def test_chunks_arrive_whole_and_in_the_streams_order(rows, per, slot_rows, rng):
    device = FakeDevice()
    limbs = np.array([[rng.getrandbits(64) for _ in range(6)] for _ in range(rows)], dtype=np.uint64)
    ring = ChunkRing(device, slot_rows * 48)
    seen = []
    for start, stop, address in ring.chunks(limbs, per, device.stream):
        slot = next(b for b in device.bufs if b.ptr == address)
        assert stop - start <= min(per, slot_rows)
        got = slot.data[:(stop - start) * 48].view(np.uint64).reshape(-1, 6)
        assert np.array_equal(got, limbs[start:stop])              # the chunk is there when it is read
        seen.append((start, stop))
        device.log.ops.append(("read", address))
    assert seen[0][0] == 0 and seen[-1][1] == rows and all(a[1] == b[0] for a, b in zip(seen, seen[1:]))
    assert ring.uploaded == limbs.nbytes
    _check_order(device.log.ops)


def _check_order(ops):
    """Each read follows a kernels' wait on its upload's event; each upload
    into a slot read before follows a ring wait on the event recorded after
    that read."""
    arrival, last_read_done, waited = {}, {}, set()
    pending = None                 # the address of the last upload, until its event is recorded
    reading = None                 # the address of the last read, whose kernels' event is recorded next
    for i, op in enumerate(ops):
        if op[0] == "upload":
            address = op[2]
            if address in last_read_done:
                assert ("ring", last_read_done[address]) in waited, (i, op)
            pending = address
        elif op[0] == "record" and op[1] == "ring":
            arrival[pending] = op[2]
        elif op[0] == "record" and op[1] == "kernels" and reading is not None:
            last_read_done[reading] = op[2]      # the first kernels' event after a read marks it done
            reading = None
        elif op[0] == "wait":
            waited.add((op[1], op[2]))
        elif op[0] == "read":
            reading = op[1]
            assert ("kernels", arrival[reading]) in waited, (i, op)


def test_each_wait_for_a_chunk_is_timed_between_two_events():
    """waited_ms: per chunk read, an event on the kernels' stream just
    before its wait for the chunk and one just after, their elapsed times
    added once the reads are done (and kept across calls)."""
    device = FakeDevice()
    limbs = np.zeros((10, 6), dtype=np.uint64)
    ring = ChunkRing(device, 2 * 48)
    for _ in ring.chunks(limbs, 2, device.stream):
        pass
    ops = device.log.ops
    waits = [i for i, op in enumerate(ops) if op[:2] == ("wait", "kernels")]
    assert len(waits) == 5
    for i in waits:
        assert ops[i - 1][:2] == ("record", "kernels") and ops[i + 1][:2] == ("record", "kernels")
        assert ops[i + 1][2] == ops[i - 1][2] + 1
    assert ring.waited_ms() == 5 * 0.25
    assert ring.waited_ms() == 5 * 0.25          # nothing read since: the same total
    for _ in ring.chunks(limbs[:4], 2, device.stream):
        pass
    assert ring.waited_ms() == 7 * 0.25


def test_the_record_of_waits_is_bounded(monkeypatch):
    from porep_prover.cuda import chunk_ring
    monkeypatch.setattr(chunk_ring, "MAX_STALLS", 4)
    device = FakeDevice()
    ring = ChunkRing(device, 48)
    for _ in ring.chunks(np.zeros((25, 6), dtype=np.uint64), 1, device.stream):
        assert len(ring._stalls) <= 4
    assert ring.waited_ms() == 25 * 0.25       # the older waits added up as they were dropped


def test_ring_refuses_a_shape_it_cannot_run():
    with pytest.raises(ValueError):
        ChunkRing(FakeDevice(), 0)
    with pytest.raises(ValueError):
        ChunkRing(FakeDevice(), 1024, slots=1)


def _read(ring, device, limbs, per):
    """Every chunk of limbs through the ring, each checked whole in its slot when read."""
    seen = []
    for start, stop, address in ring.chunks(limbs, per, device.stream):
        slot = next(b for b in device.bufs if b.ptr == address)
        got = slot.data[:(stop - start) * 48].view(np.uint64).reshape(-1, 6)
        assert np.array_equal(got, limbs[start:stop])
        seen.append((start, stop))
        device.log.ops.append(("read", address))
    assert seen[0][0] == 0 and seen[-1][1] == len(limbs)


def _uploads(device):
    return sum(op[3] for op in device.log.ops if op[0] == "upload")


@pytest.mark.parametrize("slots", [2, 3])
def test_the_next_array_s_first_chunks_are_uploaded_while_the_last_one_ends(slots, rng):
    """A region reads its streamed arrays in one order: once the ring has
    seen B follow A, the end of A's reading uploads B's first chunks (one a
    slot, into the slots that drain first), and B's reading uses them
    instead of uploading them again; every chunk is whole when read and
    every byte crosses once a reading."""
    device = FakeDevice()
    a, b = (np.array([[rng.getrandbits(64) for _ in range(6)] for _ in range(rows)], dtype=np.uint64)
            for rows in (rng.randrange(13, 30), rng.randrange(13, 30)))          # more chunks than slots
    ring = ChunkRing(device, 4 * 48, slots=slots)
    _read(ring, device, a, 3)
    _read(ring, device, b, 4)                     # learnt: b after a
    before = len(device.log.ops)
    _read(ring, device, a, 3)
    ops = device.log.ops[before:]
    last_read = max(i for i, op in enumerate(ops) if op[0] == "read")
    ahead = [op for op in ops[last_read:] if op[0] == "upload"]
    assert len(ahead) == slots and all(op[3] == 4 * 48 for op in ahead)    # b's first chunks, after a's last read
    before = len(device.log.ops)
    _read(ring, device, b, 4)
    again = [op for op in device.log.ops[before:] if op[0] == "upload"]
    chunks_of_b = -(-len(b) // 4)
    assert len(again) == (chunks_of_b - slots) + slots      # b's chunks past the preloaded, then a's first ones
    assert ring.uploaded == 2 * (a.nbytes + b.nbytes) + sum(op[3] for op in again[-slots:])
    _check_order(device.log.ops)


def test_a_missed_guess_costs_uploads_not_chunks(rng):
    """After A (which B followed), C is read: C's chunks are all uploaded
    and whole when read; B's preloaded chunks are never read as C's. After
    forget(), nothing is preloaded."""
    device = FakeDevice()
    a, b, c = (np.array([[rng.getrandbits(64) for _ in range(6)] for _ in range(rows)], dtype=np.uint64)
               for rows in (17, 11, 13))
    ring = ChunkRing(device, 4 * 48)
    for x in (a, b, a):
        _read(ring, device, x, 4)
    preloaded = ring.uploaded - 2 * a.nbytes - b.nbytes
    assert preloaded == 2 * 4 * 48
    _read(ring, device, c, 4)
    assert ring.uploaded >= 2 * a.nbytes + b.nbytes + preloaded + c.nbytes
    _check_order(device.log.ops)
    ring.forget()
    before = ring.uploaded
    _read(ring, device, a, 4)
    assert ring.uploaded - before == a.nbytes        # no order known: nothing ahead


def test_an_empty_array_has_no_chunks():
    device = FakeDevice()
    ring = ChunkRing(device, 4 * 48)
    assert list(ring.chunks(np.zeros((0, 6), dtype=np.uint64), 4, device.stream)) == []
    assert ring.uploaded == 0
