# SPDX-License-Identifier: Apache-2.0
"""Window tables for the GPU MSM of resident points (GpuMsm.tables).

The SRS is fixed, so for resident points shifted copies 2^(c sets k) P_i,
k = 1 .. copies, can be made once on the device and kept beside them. Window
w then adds copy w // sets of its point into bucket set w % sets: windows
share sets of buckets, so fewer reductions are left and wider windows pay
(fewer windows, so fewer entries to add). With a copy a window every window
shares one set and no Horner step is left; with fewer copies (memory) the
windows fall into several sets, each reduced and combined by Horner with c
doublings between them, as plain windows are. The copies cost their
memory, so a table is made only where it fits the resident budget beside
what is already there, never evicting for it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

from ...errors import DeviceMemoryError
from .fixed_base import normalize
from .plan import MsmTuning, table_copies, table_plan

if TYPE_CHECKING:
    from ...cuda.kernel_host import DeviceBuffer, KernelHost
    from ...curve.points import G1Array, G2Array

TABLE_CHUNK = 1 << 22    # points a table step doubles at once (its work buffers: 240 B a point)


class Table(NamedTuple):
    """A window table: the shifted copies (copy k at (k - 1) n points), the
    window width, the sets of buckets the windows share."""
    buf: DeviceBuffer
    c: int
    sets: int


class TableOptions(Protocol):
    """Whether MSMs over resident points use window tables, and their most
    copies (None: one a window): a caller's MsmOptions, or the MSM side's own."""

    @property
    def tables(self) -> bool: ...

    @property
    def table_copies(self) -> int | None: ...


class TableOps(TableOptions, Protocol):
    """The MSM side a table is made for (GpuMsm): its device, its settings
    and tuning, and its shift (a copy's doublings)."""

    @property
    def gpu(self) -> KernelHost: ...

    @property
    def tuning(self) -> MsmTuning: ...

    def shift(self, group: int, src: int, count: int, doublings: int, out: DeviceBuffer) -> None: ...


def window_table(ops: TableOps, points: G1Array | G2Array, options: TableOptions | None = None) -> Table | None:
    """The table of resident points under ops' settings (tables on, c from
    ops.tuning.table_bits or table_plan, at most ops.table_copies copies), or
    under options' tables and table_copies (a caller's MsmOptions) when given;
    made on first use and kept with the points; None where tables are off, a
    table would not help (no copy) or does not fit. The caller holds points
    (ResidentStore.holding)."""
    n, gpu = len(points), ops.gpu
    tables, most = (ops.tables, ops.table_copies) if options is None else (options.tables, options.table_copies)
    if not tables or n < 2:
        return None
    c, sets = table_plan(n, points.GROUP, most, ops.tuning.table_bits)
    copies, nbytes = table_copies(c, sets), points.limbs.nbytes
    if copies == 0 or (copies + 1) * n >= 1 << 31 or (copies + 1) * nbytes > gpu.memory.resident.budget:
        return None
    gpu.memory.resident.resident(points)             # first: the table must fit beside its points
    buf = gpu.memory.resident.resident_derived(points.limbs, ("msm_table", c, sets), copies * nbytes,
                               lambda dst: _make_table(ops, points, c * sets, copies, dst))
    return Table(buf, c, sets) if buf is not None else None


def _make_table(ops: TableOps, points: G1Array | G2Array, shift: int, copies: int, dst: DeviceBuffer) -> None:
    """dst's copy k (k = 1 .. copies, at (k - 1) n points) = 2^(shift k) points,
    affine: each `shift` doublings of the last, made affine a run at a time
    (fixed_base.normalize)."""
    gpu, group, n = ops.gpu, points.GROUP, len(points)
    width = points.limbs.shape[1] * 8
    per, points_buf = min(n, TABLE_CHUNK), gpu.memory.resident.resident(points)
    proj, pref = gpu.memory.try_alloc(2 * width * per), gpu.memory.try_alloc(width // 2 * per)
    try:
        if proj is None or pref is None:   # a table is worth making only with memory to spare
            raise DeviceMemoryError(f"window table of {n} points: no room for its work buffers")
        for k in range(1, copies + 1):
            for start in range(0, n, per):
                count = min(per, n - start)
                src = points_buf.view(width * start) if k == 1 else dst.view(width * ((k - 2) * n + start))
                ops.shift(group, src, count, shift, proj)
                normalize(gpu, group, proj, count, pref, dst.view(width * ((k - 1) * n + start)))
    finally:
        gpu.memory.free(proj, pref)
