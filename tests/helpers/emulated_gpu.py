# SPDX-License-Identifier: Apache-2.0
"""An emulated GPU for the GPU MSM's host side (GpuMsm._pippenger, GpuSort,
GpuBuckets) without a GPU: each kernel of msm/kernels/msm.cu written again
in Python over a group where the sums are checkable, the integers mod a
prime (a point is an integer, infinity 0); and run(), one MSM on it against
the plain sum. What tests/msm/test_gpu_msm_emulated.py and
tests/backend/test_gpu_overlap_emulated.py run on."""
import contextlib
import functools
import pathlib
import random
import re
import sys
import threading
import types

import numpy as np

from msm_model import signed_digits
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.plan import MsmTuning, windows_of
from porep_prover.msm.gpu.sort import REPEATS
from porep_prover.msm.gpu.table import Table

P = (1 << 61) - 1                 # the emulated group: integers mod P under addition
SIGN, NO_KEY = 1 << 31, 0xFFFFFFFF
ELEM = {"u32": 4, "fr": 32, "point": 96, "proj": 192}


class Memory:
    """Device memory as sparse typed cells: address -> value (0 where never written)."""

    def __init__(self):
        self.cells, self.bufs, self.next = {}, {}, 1 << 20

    def read(self, addr, i, kind):
        return self.cells.get(addr + ELEM[kind] * i, 0)

    def write(self, addr, i, kind, value):
        self.cells[addr + ELEM[kind] * i] = value


class Buffer:
    def __init__(self, mem, nbytes):
        self.mem, self.nbytes, self.ptr = mem, nbytes, mem.next
        mem.next += nbytes + 4096
        mem.bufs[self.ptr] = self

    def view(self, offset):
        assert offset <= self.nbytes
        return self.ptr + offset

    def _clear(self, nbytes):
        for a in [a for a in self.mem.cells if self.ptr <= a < self.ptr + nbytes]:
            del self.mem.cells[a]

    def zero(self, stream):
        self._clear(self.nbytes)

    def copy_from(self, src, nbytes, stream=None):
        self._clear(nbytes)
        for a, v in list(self.mem.cells.items()):
            if src.ptr <= a < src.ptr + nbytes:
                self.mem.cells[self.ptr + a - src.ptr] = v

    def download(self, out, offset=0, stream=None):
        value = self.mem.cells.get(self.ptr + offset, 0)
        out[:] = np.frombuffer(np.uint32(value).tobytes(), np.uint8)

    def close(self):
        pass


class Stream:
    """A stream that logs its waits: ("wait", this stream, the stream the event was recorded on)."""

    def __init__(self, log):
        self.log = log

    def wait(self, event):
        self.log.append(("wait", self, event.stream))

    def synchronize(self):
        pass


class Event:
    def __init__(self, ctx=None):
        self.stream = None

    def record(self, stream):
        self.stream = stream


@functools.cache
def cuda_parameters() -> dict[str, int]:
    """msm.cu's entry points (PREFIX(name)) -> how many parameters each takes.
    A real launch passes its arguments as they come (cuda._driver.Kernel.launch),
    so a count that differs from the kernel's is caught here or nowhere
    without a GPU."""
    import porep_prover.msm  # noqa: F401  (the package, not its msm function)
    source = (pathlib.Path(sys.modules["porep_prover.msm"].__file__).parent / "kernels" / "msm.cu").read_text()
    found = re.findall(r'extern "C" __global__ void PREFIX\((\w+)\)\(([^)]*)\)', source)
    return {name: len([p for p in params.split(",") if p.strip()]) for name, params in found}


class Kernel:
    def __init__(self, dev, name):
        self.entry = name.split("_", 1)[1]
        self.dev, self.fn = dev, getattr(dev, "k_" + self.entry)

    def launch(self, grid, block, args, stream=None):
        expected = cuda_parameters()[self.entry]
        assert len(args) == expected, f"{self.entry} takes {expected} parameters in msm.cu, launched with {len(args)}"
        self.dev.launches.append((self.fn.__name__, stream))
        self.dev.order.append(("launch", self.fn.__name__, stream))
        self.fn(grid, block, *[a.ptr if isinstance(a, Buffer) else a for a in args])


class OwnMemory:
    """A stand-in device whose memory (cuda.kernel_host.KernelMemory: its
    buffers) and resident arrays are its own methods: memory and
    memory.resident are the device itself."""

    @property
    def memory(self):
        return self

    @property
    def resident(self):
        return self


class InPasses(OwnMemory):
    """A stand-in device that runs every point array in passes of `per`
    points (as a streamed array's chunks, or passes over a resident copy):
    chunk(start, stop) gives a pass's points."""

    per = 1

    @contextlib.contextmanager
    def holding(self, *arrays):
        yield

    def in_one_pass(self, points):
        return False

    def point_chunks(self, points):
        for start in range(0, len(points), self.per):
            stop = min(len(points), start + self.per)
            yield start, stop, self.chunk(start, stop)

    def chunk(self, start, stop):
        raise NotImplementedError


class Device(OwnMemory):
    """What GpuMsm asks of a GpuBackend's device, with the kernels emulated
    in order; its memory is its own (OwnMemory): buffers, and no resident
    arrays (the MSMs here read buffers they are given)."""

    pooled = False                      # work buffers as alloc's (cuda.second_stream frees them after a wait)

    def __init__(self):
        self.mem = Memory()
        self.info = types.SimpleNamespace(multiprocessors=2)
        self.order = []                 # launches, waits (and what a test adds) in the order issued
        self.stream, self.aux_stream, self.side_fill = Stream(self.order), Stream(self.order), Stream(self.order)
        self.drv = types.SimpleNamespace(Event=Event)
        self.ctx, self.launches, self.grouped = None, [], set()
        self.lock = threading.RLock()

    def side_fill_stream(self):
        return self.side_fill

    def copy_wait_ms(self):
        return 0.0                      # no chunk ring here: nothing is streamed, nothing waited for

    def alloc(self, nbytes):
        return Buffer(self.mem, nbytes)

    def free(self, *bufs):
        pass

    work_alloc = try_alloc = alloc

    def take_ahead(self, raw):
        return None                     # no copies made ahead here

    @contextlib.contextmanager
    def holding(self, *arrays):
        yield

    def in_one_pass(self, points):
        return True

    def kernel(self, module, name):
        return Kernel(self, name)

    def launch(self, module, name, n, args, block=256, stream=None):
        Kernel(self, name).launch(None, block, args, stream or self.stream)

    def download_array(self, buf, shape, dtype=np.uint64, stream=None):
        count = int(np.prod(shape))
        if dtype == np.uint32:
            return np.array([self.mem.read(buf.ptr, i, "u32") for i in range(count)], dtype=np.uint32).reshape(shape)
        return np.array([self.mem.read(buf.ptr, i, "proj") for i in range(shape[0])], dtype=object)

    # ------------------------------------------------------------ kernels (msm.cu)

    def k_msm_classify(self, grid, block, scalars, points, n, canon, counters):
        last = None
        for i in range(n):
            k = self.mem.read(scalars, i, "fr")
            if points and self.mem.read(points, i, "point") == 0:     # null points: several arrays share them
                k = 0
            self.mem.write(canon, i, "fr", k)
            slots = [0 if k == 0 else 1 if k == 1 else 2, 3 + k.bit_length()]
            if k > 1 and i % 32 and k % 2**64 == last % 2**64:     # equal to the last lane's (low 64 bits)
                slots.append(REPEATS)
            last = k
            for slot in slots:
                self.mem.write(counters, slot, "u32", self.mem.read(counters, slot, "u32") + 1)

    def k_msm_digits(self, grid, block, canon, n, c, windows, sets, wide_bits, m, wide, taken, keys):
        self.layout = (wide_bits, m)
        order = list(range(n))
        random.Random(n + c).shuffle(order)            # the device's slots follow no order
        for i in order:
            k, j = self.mem.read(canon, i, "fr"), i
            if wide_bits:
                j = m
                if k.bit_length() >= wide_bits:
                    j = self.mem.read(taken, 0, "u32")
                    self.mem.write(taken, 0, "u32", j + 1)
                    self.mem.write(wide, j, "u32", i)
            for w, d in enumerate(signed_digits(k, c, windows)):
                key = NO_KEY if d == 0 else ((w % sets) << (c - 1)) + abs(d) - 1 | (SIGN if d < 0 else 0)
                if w == 0:
                    self.mem.write(keys, i, "u32", key)
                elif j < m:
                    self.mem.write(keys, n + (w - 1) * m + j, "u32", key)
                else:
                    assert key == NO_KEY, "a narrow scalar with a digit above window 0"

    def k_msm_place(self, grid, block, keys, n, m, wide, windows, parts, row0, nb, sets, grouped, cursor,
                    entries):
        self.grouped.add(grouped)
        copies = -(-windows // sets)
        for y in range(grid[1]):
            row = row0 + y
            copy, part, set_ = row % copies, row // copies % parts, row // (copies * parts)
            w = set_ + copy * sets
            if w >= windows:
                continue
            per, length = -(-nb // parts), n if w == 0 else m
            assert grid[0] * block[0] >= length          # the launch covers the window's keys
            for i in range(length):
                key = self.mem.read(keys, i if w == 0 else n + (w - 1) * m + i, "u32")
                p = self.mem.read(wide, i, "u32") if w and wide else i
                b = key & ~SIGN
                if key == NO_KEY or (b - set_ * nb) // per != part:
                    continue
                pos = self.mem.read(cursor, b, "u32")
                self.mem.write(cursor, b, "u32", pos + 1)
                if entries:
                    self.mem.write(entries, pos, "u32", (copy * n + p) | (key & SIGN))

    def k_scan_tiles(self, grid, block, counts, out, n, sums):
        run = 0
        for i in range(n):
            if i % 1024 == 0:
                run = 0
            self.mem.write(out, i, "u32", run)
            run += self.mem.read(counts, i, "u32")
            if i % 1024 == 1023 or i == n - 1:
                self.mem.write(sums, i >> 10, "u32", run)

    def k_scan_sums(self, grid, block, sums, tiles, total):
        run = 0
        for t in range(tiles):
            v = self.mem.read(sums, t, "u32")
            self.mem.write(sums, t, "u32", run)
            run += v
        self.mem.write(total, 0, "u32", run)

    def k_scan_add(self, grid, block, out, n, sums):
        for i in range(n):
            self.mem.write(out, i, "u32", self.mem.read(out, i, "u32") + self.mem.read(sums, i >> 10, "u32"))

    def _flush(self, sums, next_keys, nxt, t, key, dead, acc, open_, first, last, into):
        if not open_ and not dead:
            self.mem.write(sums, key, "proj", (self.mem.read(sums, key, "proj") + acc) % P if into else acc)
        k = key | (0 if open_ and not dead else SIGN)
        if first:
            self.mem.write(next_keys, 2 * t, "u32", k)
            self.mem.write(nxt, 2 * t, "proj", acc if open_ else 0)
        if last:
            self.mem.write(next_keys, 2 * t + 1, "u32", k)
            self.mem.write(nxt, 2 * t + 1, "proj", acc if open_ and not first else 0)

    def _bucket_at(self, ends, first, last, pos):
        return next(b for b in range(first, last) if self.mem.read(ends, b, "u32") > pos)

    def k_msm_accumulate(self, grid, block, points, entries, offsets, ends, first, last, base, count, chunk, sums,
                         next_keys, nxt, into=False):
        self.k_msm_accumulate_rows(grid, block, points, 0, entries, offsets, ends, first, last, base, count, chunk,
                                   sums, next_keys, nxt, into)

    def k_msm_accumulate_into(self, grid, block, *args):
        self.k_msm_accumulate(grid, block, *args, into=True)

    def k_msm_accumulate_onto(self, grid, block, points, entries, offsets, ends, first, last, base, count, chunk,
                              sums, next_keys, nxt):
        self.k_msm_accumulate_rows(grid, block, points, 0, entries, offsets, ends, first, last, base, count, chunk,
                                   sums, next_keys, nxt, onto=True)

    def k_msm_accumulate_table(self, grid, block, points, table, n, entries, offsets, ends, first, last, base, count,
                               chunk, sums, next_keys, nxt):
        self.k_msm_accumulate_rows(grid, block, points, 0, entries, offsets, ends, first, last, base, count, chunk,
                                   sums, next_keys, nxt, False, table, n)

    def k_msm_accumulate_rows(self, grid, block, points, rows, entries, offsets, ends, first, last, base, count,
                              chunk, sums, next_keys, nxt, into=False, table=0, n=0, onto=False):
        for t in range(-(-count // chunk)):
            lo = base + t * chunk
            hi = min(lo + chunk, base + count)
            key = self._bucket_at(ends, first, last, lo)
            end, open_left, first_run = self.mem.read(ends, key, "u32"), self.mem.read(offsets, key, "u32") < lo, True
            acc = self.mem.read(sums, key, "proj") if onto and not open_left else 0
            for pos in range(lo, hi):
                if pos == end:
                    self._flush(sums, next_keys, nxt, t, key, False, acc, open_left, first_run, False, into)
                    first_run = open_left = False
                    key = self._bucket_at(ends, key + 1, last, pos)
                    end = self.mem.read(ends, key, "u32")
                    acc = self.mem.read(sums, key, "proj") if onto else 0
                e = self.mem.read(entries, pos, "u32")
                row = self.mem.read(rows, e & ~SIGN, "u32") if rows else e & ~SIGN
                if table and row >= n:                     # a table's copies lie apart from the points
                    p = self.mem.read(table, row - n, "point")
                else:
                    p = self.mem.read(points, row, "point") if row != NO_KEY else 0
                acc = (acc - p if e & SIGN else acc + p) % P
            self._flush(sums, next_keys, nxt, t, key, False, acc, open_left or end > hi, first_run, True, into)

    def k_msm_combine_into(self, grid, block, *args):
        self.k_msm_combine(grid, block, *args, into=True)

    def k_msm_combine(self, grid, block, keys, values, total, chunk, sums, next_keys, nxt, into=False):
        rd = lambda i: self.mem.read(keys, i, "u32")  # noqa: E731
        for t in range(-(-total // chunk)):
            lo, hi = t * chunk, min(t * chunk + chunk, total)
            key, dead = rd(lo) & ~SIGN, bool(rd(lo) & SIGN)
            open_left, first, acc = lo > 0 and rd(lo - 1) & ~SIGN == key, True, 0
            for pos in range(lo, hi):
                k = rd(pos) & ~SIGN
                if k != key:
                    self._flush(sums, next_keys, nxt, t, key, dead, acc, open_left, first, False, into)
                    first = open_left = False
                    key, dead, acc = k, bool(rd(pos) & SIGN), 0
                if not dead:
                    acc = (acc + self.mem.read(values, pos, "proj")) % P
            open_right = hi < total and rd(hi) & ~SIGN == key
            self._flush(sums, next_keys, nxt, t, key, dead, acc, open_left or open_right, first, True, into)

    def k_msm_reduce(self, grid, block, sums, nb, windows, segments, partial):
        per = -(-nb // segments)
        for t in range(windows * segments):
            w, s = divmod(t, segments)
            lo, hi = min(s * per, nb), min(s * per + per, nb)
            acc = sum((b + 1) * self.mem.read(sums, w * nb + b, "proj") for b in range(lo, hi)) % P
            self.mem.write(partial, t, "proj", acc)

    def k_msm_fold(self, grid, block, src, groups, per_in, per_out, out):
        f = -(-per_in // per_out)
        for t in range(groups * per_out):
            g, j = divmod(t, per_out)
            acc = sum(self.mem.read(src, g * per_in + i, "proj") for i in range(j * f, min(j * f + f, per_in)))
            self.mem.write(out, t, "proj", acc % P)


def draw(rnd, mix):
    """A scalar: "random" (zero, one or full), "narrow" (mostly bits and
    small words, a few full) or "full" (wide and distinct)."""
    if mix == "random":
        return rnd.choice([0, 1, rnd.randrange(1 << 255), rnd.randrange(1 << 255)])
    if mix == "full":
        return rnd.randrange(1 << 250, 1 << 255)
    return rnd.choice([0, 0, 1, 1, 1, rnd.randrange(2, 1 << 5), rnd.randrange(2, 1 << 11), rnd.randrange(1 << 255)])


def run(n, c, tables, overlap, parts, groups, seed, mix="random", dev=None, view=None):
    """The emulated _pippenger's sum against the plain one. tables: None (no
    table) or the sets of buckets the windows share (a copy of the points
    for each ceil(windows / sets) - 1 windows beyond the first set). dev: the
    emulated device (a new one by default); view: what the MSM is made on
    (the device, or a view of it such as cuda.second_stream.SecondStream)."""
    rnd = random.Random(seed)
    dev = dev or Device()
    ops = GpuMsm(view or dev, MsmTuning(window_bits=c, overlap=overlap, groups=groups, fill_parts=parts))
    windows = windows_of(c or 4)
    copies = -(-windows // tables) - 1 if tables else 0
    points = [0 if i % 9 == 4 else rnd.randrange(1, P) for i in range(n)]
    scalars = [draw(rnd, mix) for _ in range(n)] if mix != "equal" else [rnd.randrange(1 << 250, 1 << 255)] * n
    pts, sc, table = dev.alloc(96 * n), dev.alloc(32 * n), dev.alloc(96 * n * max(1, copies))
    for i in range(n):
        dev.mem.write(sc.ptr, i, "fr", scalars[i])
        dev.mem.write(pts.ptr, i, "point", points[i])
        for k in range(1, copies + 1):                # copy k: 2^(c sets k) P_i
            dev.mem.write(table.ptr, (k - 1) * n + i, "point", points[i] * pow(2, c * tables * k, P) % P)
    rows, c, split = ops._pippenger(1, pts.ptr, sc.ptr, n, 192,
                                    Table(table.ptr, c, tables) if tables else None)
    assert len(rows) == (tables or windows_of(c))    # a row a set of buckets
    got = sum(int(r) * pow(2, c * w, P) for w, r in enumerate(rows)) % P
    want = sum(k % P * p for k, p in zip(scalars, points)) % P
    wide = sum(1 for k, p in zip(scalars, points) if p and k.bit_length() >= c)
    assert dev.layout == ((0, n) if tables or wide > n / 2 else (c, wide))     # keys above window 0: the wide ones'
    return got, want, split, dev.launches, c, dev.grouped
