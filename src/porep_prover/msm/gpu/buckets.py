# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM's buckets (kernels in msm/kernels/msm.cu; msm/gpu/msm.py runs
them): the sorted entries added up into their buckets stretch by stretch
(the fill of the next stretch beside the accumulation of the last), the
chunked accumulation and its combine levels, each window's reduction and
the folds of partial sums; the batch sum, which is such a fold.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np
from numpy.typing import NDArray

from ...cuda.arrays import WorkBuffers
from ...curve import _curve
from ...errors import InvalidInputError
from .plan import MsmTuning, chunk_length
from .sort import GpuSort, Sort, Stretch

if TYPE_CHECKING:
    from ...cuda.kernel_host import DeviceBuffer, Event, KernelHost, Stream
    from ...curve.points import G1Array, G1Point, G2Array, G2Point

SMALL_THREADS = 64       # kernels heavy in curve arithmetic: fewer threads, more registers each
FOLD = 16
FINAL_LIST = 16          # partial lists this short are finished by one thread
REDUCE_RUN = 256         # buckets a reducing thread sums at most (each run ends in a multiple of its sum)


def proj_bytes(points: G1Array | G2Array) -> int:
    """Bytes of one xyzz point of points' group: four coordinates, twice the affine two."""
    return 2 * points.WIDTH * 8


def point_type(points: G1Array | G2Array) -> type[G1Point] | type[G2Point]:
    """points' one-point class, G1Point or G2Point (their POINT, which
    curve.points types as the two's common base)."""
    return cast("type[G1Point] | type[G2Point]", type(points).POINT)


class Target(NamedTuple):
    """One array of points a sort's entries are added up over: its group, its
    device points, its row map (a device uint32 per scalar, or 0: scalar i's
    point is row i), its xyzz size and its window table's copies (0: none),
    copy k of point i being row (k - 1) n + i there."""
    group: int
    points: DeviceBuffer | int
    rows: DeviceBuffer | int
    proj_bytes: int
    table: DeviceBuffer | int = 0
    n: int = 0


class GpuBuckets:
    """The bucket launches on gpu (a cuda.device.Device, or a view of it on
    another stream) under tuning (plan.MsmTuning); sort: the GpuSort
    whose msm_place fills the stretches."""

    def __init__(self, gpu: KernelHost, tuning: MsmTuning, sort: GpuSort):
        self.gpu, self.tuning, self.sort = gpu, tuning, sort

    def buckets(self, sort: Sort, targets: list[Target], sorted_: tuple[DeviceBuffer, DeviceBuffer, DeviceBuffer],
                sums: list[DeviceBuffer], stretches: list[Stretch], bounds: list[int],
                alloc: Callable[[int], DeviceBuffer], mark: Callable[[str], None], aux: Stream,
                into: bool = False, onto: bool = False) -> None:
        """Every bucket's sum into sums (one buffer a target; into: added to
        what each bucket holds), stretch by stretch: the fill on aux (the
        backend's stream, or the one beside it, which fills the next stretch
        while this one adds up the last), each target's accumulation and
        combine levels on the backend's stream once the stretch is filled;
        onto (with into): the buckets' runs start from what they hold
        (msm_accumulate_onto) rather than being added to it at their end."""
        gpu, main = self.gpu, self.gpu.stream
        entries, _, ends = sorted_
        aux.wait(self.event(main))                                    # the sort's buffers are ready
        fills: list[Event] = []
        for s in stretches:
            self.sort.place(sort, s.rows, ends, entries, aux)
            fills.append(self.event(aux))
        chunk = chunk_length(bounds[-1], gpu.info.multiprocessors * 1024, self.tuning.max_chunk)
        for i, s in enumerate(stretches):
            main.wait(fills[i])
            if i == 0:
                mark("fill")
            if bounds[i + 1] <= bounds[i]:
                continue
            for t, buf in zip(targets, sums):
                self.accumulate(t, sorted_ + (buf,), s.buckets, bounds[i], bounds[i + 1] - bounds[i], chunk, alloc,
                                mark, into, onto)

    def event(self, stream: Stream) -> Event:
        """An event recorded on stream now."""
        ev: Event = self.gpu.drv.Event(self.gpu.ctx)
        ev.record(stream)
        return ev

    def accumulate(self, target: Target, sorted_: tuple[DeviceBuffer, DeviceBuffer, DeviceBuffer, DeviceBuffer],
                   buckets: range, base: int, count: int, chunk: int, alloc: Callable[[int], DeviceBuffer],
                   mark: Callable[[str], None], into: bool = False, onto: bool = False) -> None:
        """The target's sums of buckets, whose entries are [base, base + count):
        chunked level 1, then combine levels until one chunk is left; into:
        each bucket's sum added to what the target's sums hold there (onto:
        level 1's runs start from it, the combine levels plain)."""
        gpu, group, proj = self.gpu, target.group, target.proj_bytes
        mod = self.tuning.module(group)
        entries, offsets, ends, sums = sorted_
        want = gpu.info.multiprocessors * 1024
        chunks = -(-count // chunk)
        next_keys, nxt = alloc(8 * chunks), alloc(2 * proj * chunks)
        tail: list[DeviceBuffer | int] = [entries, offsets, ends, buckets.start, buckets.stop, base, count, chunk, sums,
                                          next_keys, nxt]
        # kernels of their own: the others keep their code and registers
        level1 = "_onto" if into and onto else "_into" if into else ""
        into_ = "_into" if into and not onto else ""
        if into and (target.rows or target.table):
            raise InvalidInputError("buckets kept across passes serve a plain MSM (no row map, no window table)")
        if target.rows:
            gpu.launch(mod, f"g{group}_msm_accumulate_rows", chunks, [target.points, target.rows] + tail,
                       block=SMALL_THREADS)
        elif target.table:
            gpu.launch(mod, f"g{group}_msm_accumulate_table", chunks,
                       [target.points, target.table, target.n] + tail, block=SMALL_THREADS)
        else:
            gpu.launch(mod, f"g{group}_msm_accumulate{level1}", chunks, [target.points] + tail, block=SMALL_THREADS)
        mark("accumulate")
        length = 2 * chunks
        while length > FINAL_LIST:
            chunk = chunk_length(length, want)
            chunks = -(-length // chunk)
            k2, v2 = alloc(8 * chunks), alloc(2 * proj * chunks)
            gpu.launch(mod, f"g{group}_msm_combine{into_}", chunks, [next_keys, nxt, length, chunk, sums, k2, v2],
                       block=SMALL_THREADS)
            next_keys, nxt, length = k2, v2, 2 * chunks
        # one chunk holds the rest: every run in it is closed and is written
        k2, v2 = alloc(8), alloc(2 * proj)
        gpu.launch(mod, f"g{group}_msm_combine{into_}", 1, [next_keys, nxt, length, length, sums, k2, v2],
                   block=SMALL_THREADS)
        mark("combine")

    def reduce(self, mod: str, group: int, sums: DeviceBuffer, nb: int, windows: int, proj: int,
               alloc: Callable[[int], DeviceBuffer]) -> NDArray[np.uint64]:
        """Per window (or set) sum (b + 1) B_b, as windows rows of xyzz."""
        gpu = self.gpu
        want = gpu.info.multiprocessors * 512
        per = max(2, min(REDUCE_RUN, windows * nb // want))
        segments = -(-nb // per)
        partial = alloc(proj * windows * segments)
        gpu.launch(mod, f"g{group}_msm_reduce", windows * segments, [sums, nb, windows, segments, partial],
                   block=SMALL_THREADS)
        partial = self.fold(mod, group, partial, windows, segments, proj, alloc)
        return gpu.memory.download_array(partial, (windows, proj // 8), np.uint64)

    def fold(self, mod: str, group: int, partial: DeviceBuffer, groups: int, per_group: int, proj: int,
             alloc: Callable[[int], DeviceBuffer]) -> DeviceBuffer:
        """groups rows: each group's per_group consecutive rows summed (msm_fold, FOLD at a time)."""
        while per_group > 1:
            nxt = -(-per_group // FOLD)
            folded = alloc(proj * groups * nxt)
            self.gpu.launch(mod, f"g{group}_msm_fold", groups * nxt, [partial, groups, per_group, nxt, folded],
                            block=SMALL_THREADS)
            partial, per_group = folded, nxt
        return partial

    def batch_sum(self, points: G1Array | G2Array) -> G1Point | G2Point:
        """sum points[i] (msm_sum's partial sums folded on the device, the chunks' added on the host)."""
        n = len(points)
        out = point_type(points).identity()
        if n == 0:
            return out
        gpu, group = self.gpu, points.GROUP
        mod, proj = self.tuning.module(group), proj_bytes(points)
        rows: list[NDArray[np.uint64]] = []
        with gpu.memory.resident.holding(points.limbs):   # its resident copy stays while chunks run
            for start, stop, pts in gpu.memory.resident.point_chunks(points):
                count = stop - start
                block = SMALL_THREADS
                grid = max(1, min(-(-count // block), gpu.info.multiprocessors * 8))
                launched = grid * block
                with WorkBuffers(gpu.memory) as bufs:
                    partial = bufs.alloc(proj * launched)
                    gpu.kernel(mod, f"g{group}_msm_sum").launch((grid,), (block,), [pts, count, partial], gpu.stream)
                    total = self.fold(mod, group, partial, 1, launched, proj, bufs.alloc)
                    rows.append(gpu.memory.download_array(total, (1, proj // 8), np.uint64))
        extra = np.concatenate(rows)
        _curve.xyzz_windows(group, np.zeros((0, extra.shape[1]), np.uint64), 0, 1, 0, extra, out.limbs)
        return out
