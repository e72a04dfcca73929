# SPDX-License-Identifier: Apache-2.0
"""One device's plan: from a budget and a workload, what stays resident on
the device, what is streamed from pinned host memory, how many points one
MSM pass may sort at once, and whether the circuit's matrices and the H
points' window tables fit. Arithmetic only: `porep-prover plan` prints one
without a GPU; a GPU backend's region runs by one (memory.layout).

The model, in bytes (memory.sizes; memory.costs for the seconds):

    held      resident arrays + the streamed arrays' chunk ring + the NTT's
              twiddle tables (w^e for e < n/2, forward and inverse)
    per partition on the device: its upload (the witness, or a, b, c and
              the scalars when A w, B w, C w are evaluated on the host), once
              for the region and once for the partition copied ahead
    H phase   three domain-sized vectors (a, b, c; H is left in one of them)
    MSM phase H's scalars, the sort of one pass (keys and entries, 4 bytes a
              point a window) and its buckets (xyzz sums and three counters a
              bucket a window)

and the budget must cover held + uploads + the larger phase + MARGIN (the
context, the kernels) + SMALL_BUFFERS (what no phase names). Every array
read once per partition costs its bytes over the bus when streamed, so the
plan weighs each choice's seconds: bytes streamed at the upload rate
against the bucket additions more passes add (an H100 or H200 adds about
2.4 G bucket entries a second).
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator

from ..errors import DeviceMemoryError, InvalidInputError
from .costs import (STREAM_EXPOSED, UPLOAD_RATE, bucket_bytes, compact_twiddle_seconds, pass_bytes, region_seconds,
                    twiddle_bytes)
from .sizes import GIB, MARGIN, POINT_BYTES, SCALAR_BYTES, SMALL_BUFFERS
from .workload import PointArray, Workload

# slots of the chunk ring streamed arrays pass through (cuda.chunk_ring): one written while the kernels read the
# other. A slot is written again once its last reader is done, so with two the bus stays busy whichever is slower,
# the copies or the kernels, and a ring's bytes give chunks half its size, not a third: fewer passes
RING = 2
MIN_PASS = 1 << 20           # the fewest points a pass sorts: below, launches and reductions dominate
MIN_CHUNK_BYTES = 64 << 20
MAX_CHUNK_BYTES = 2 << 30
# the order arrays are made resident in when all cannot be, for equal bytes saved: the cheapest MSM a byte
# first (its transfer could hide behind the least work), H (full scalars, the most work a byte) last
ORDER = ("b_g2", "b_g1", "a", "l", "h")
# the chunk sizes a plan weighs: MIN_CHUNK_BYTES to MAX_CHUNK_BYTES in quarter octaves, the same for every budget
# (so a larger budget can always choose what a smaller one chose: more memory never costs more)
CHUNK_LADDER = tuple(sorted({min(MAX_CHUNK_BYTES, round(MIN_CHUNK_BYTES * 2 ** (k / 4)))
                             for k in range(4 * (MAX_CHUNK_BYTES // MIN_CHUNK_BYTES).bit_length())}))


@dataclasses.dataclass(frozen=True)
class DevicePlan:
    """One device's plan for one workload under a budget (bytes).

    workload: the set as the plan reads it (its shape and its matrices'
    device bytes; the circuit's host bytes are the host plan's, left out,
    so that one set's plans compare equal whoever counted them); workers:
    the device workers sharing the device (each may hold a
    partition copied ahead); g2: B's G2 MSM runs on the device (else b_g2
    is no part of the plan); resident, streamed: the SRS arrays' names;
    matrices: A w, B w, C w on the device (the workload's matrices
    resident); ahead: a partition's uploads are copied to the device ahead
    of its region (one a worker beside the running one); table_copies: the
    H points' window-table copies kept; pass_points: the most points one
    MSM pass sorts; chunk_bytes: a streamed chunk's size (a ring of RING);
    planned_bytes: what the plan holds at its peak; seconds: its cost
    estimate a partition (exposed transfers and extra passes); paired: two
    partitions a region, each streamed chunk uploaded once for both scalar
    sets (their scalars held at once: the streamed bytes a partition
    halve); compact_twiddles: the NTT's twiddles as two small tables a
    direction (GpuNtt.compact_twiddles), their room given to the rest;
    gathers: with the matrices off the device, the witness uploaded beside
    a, b, c and the queries' scalars taken from it on the device (the
    queries' maps resident), rather than gathered on the host and
    uploaded."""
    budget: int
    workload: Workload
    workers: int
    g2: bool
    resident: tuple[str, ...]
    streamed: tuple[str, ...]
    matrices: bool
    ahead: bool
    table_copies: int
    pass_points: int
    chunk_bytes: int
    planned_bytes: int
    seconds: float
    paired: bool = False
    compact_twiddles: bool = False
    gathers: bool = False

    @property
    def arrays(self) -> tuple[PointArray, ...]:
        """The SRS arrays the device holds or streams (b_g2 only where B's G2 MSM runs on it)."""
        return on_device(self.workload, self.g2)

    def array(self, name: str) -> PointArray | None:
        return next((a for a in self.arrays if a.name == name), None)

    @property
    def resident_bytes(self) -> int:
        """Device bytes of what the plan keeps between partitions: resident arrays, the table, the matrices."""
        w = self.workload
        table = self.table_copies * w.array("h").nbytes
        return sum(w.array(n).nbytes for n in self.resident) + table \
            + (w.matrix_bytes if self.matrices else 0) + (w.map_bytes if self.gathers else 0)

    @property
    def ring_bytes(self) -> int:
        return RING * self.chunk_bytes if self.streamed else 0

    @property
    def streamed_bytes(self) -> int:
        """Bytes uploaded per partition for the streamed arrays."""
        return sum(self.workload.array(n).nbytes for n in self.streamed)

    @property
    def streamed_per_partition(self) -> float:
        """Bytes the streamed arrays cost one partition: all of them, or half where a pair shares each pass."""
        return self.streamed_bytes / (2 if self.paired else 1)

    @property
    def upload_bytes(self) -> int:
        """Bytes one partition uploads (upload_bytes of its way)."""
        return upload_bytes(self.workload, self.matrices, self.gathers)

    def chunk_points(self, group: int) -> int:
        """Points of a group in one streamed chunk (at most a pass)."""
        return max(1, min(self.pass_points, self.chunk_bytes // POINT_BYTES[group]))

    def transfer_seconds(self, rate: float = UPLOAD_RATE) -> float:
        """The floor one partition's streamed bytes set at an upload rate."""
        return self.streamed_per_partition / rate

    def describe(self, rate: float = UPLOAD_RATE) -> list[str]:
        """The plan in lines, for a terminal or a log."""
        w, g = self.workload, GIB
        srs = sum(a.nbytes for a in self.arrays)
        lines = [f"device budget {self.budget / g:.1f} GiB; planned peak {self.planned_bytes / g:.1f} GiB "
                 f"(SRS {srs / g:.1f} GiB, domain 2^{w.domain.bit_length() - 1}, {self.workers} workers)"]
        for a in self.arrays:
            where = "resident" if a.name in self.resident else "streamed"
            lines.append(f"  {a.name:5} {a.count:>12,} points {a.nbytes / g:7.2f} GiB  {where}")
        if w.matrix_bytes:
            lines.append(f"  matrices {w.matrix_bytes / g:.2f} GiB  "
                         + ("resident (A w, B w, C w on the device)" if self.matrices else
                            "not on the device (A w, B w, C w on the host)"))
        if self.compact_twiddles:
            lines.append(f"  NTT twiddles compact: {twiddle_bytes(w.domain, True) / 2**20:.1f} MiB (a product a "
                         f"butterfly more, {compact_twiddle_seconds(w.domain) * 1e3:.0f} ms a partition)")
        else:
            lines.append(f"  NTT twiddles {twiddle_bytes(w.domain) / g:.2f} GiB (forward and inverse)")
        if self.table_copies:
            lines.append(f"  H window table: {self.table_copies} copies")
        lines.append(f"  MSM passes of at most {self.pass_points:,} points")
        if self.gathers:
            lines.append(f"  the queries' scalars gathered on the device from the witness (their maps "
                         f"{w.map_bytes / g:.2f} GiB resident)")
        lines.append(f"  uploads: {self.upload_bytes / g:.2f} GiB a partition, "
                     + ("copied ahead while another partition's kernels run" if self.ahead
                        else "in the kernel region (no room to copy ahead)"))
        if self.paired:
            lines.append("  paired: two partitions a region, each streamed chunk uploaded once for both "
                         "(their scalars held at once)")
        if self.streamed:
            lines.append(f"  streamed: {self.streamed_per_partition / g:.2f} GiB a partition in chunks of "
                         f"{self.chunk_bytes / 2**20:.0f} MiB (ring of {RING}); at {rate / 1e9:.1f} GB/s "
                         f"{self.transfer_seconds(rate) * 1e3:.0f} ms a partition")
        else:
            lines.append("  streamed: nothing")
        return lines


@dataclasses.dataclass(frozen=True)
class DeviceModel:
    """A device as its plan sees it: the H points' window-table copies its
    MSMs want (0: none), the upload rate from pinned pages, and whether two
    partitions a region sharing each streamed pass are weighed (pairs; the
    engine runs one partition a region). A GPU backend plans by one
    (GpuBackend.device_plan), `porep-prover plan` by one of its arguments:
    the same model, so that the two choose alike."""
    table_copies: int = 0
    rate: float = UPLOAD_RATE
    pairs: bool = False

    def device_plan(self, workload: Workload, budget: int, workers: int, g2: bool, gathers: bool) -> DevicePlan:
        """plan(workload, budget, ...) by this model (see plan)."""
        return plan(workload, budget, workers, self.table_copies, g2, self.rate, pairs=self.pairs, gathers=gathers)


def on_device(workload: Workload, g2: bool) -> tuple[PointArray, ...]:
    """The SRS arrays a device holds or streams: every one, b_g2 only where B's G2 MSM runs there."""
    return workload.arrays if g2 else tuple(a for a in workload.arrays if a.name != "b_g2")


def plan(workload: Workload, budget: int, workers: int = 2, table_copies: int = 0, g2: bool = True,
         rate: float = UPLOAD_RATE, matrices: bool | None = None, pairs: bool = False,
         gathers: bool = False) -> DevicePlan:
    """The cheapest DevicePlan for workload within budget bytes, for
    workers device workers sharing the device, with table_copies H
    window-table copies wanted (as many as fit beside what the plan holds
    are kept) and g2 (B's G2 MSM on the device): every split of the arrays
    into resident and streamed (in ORDER's priority), every pass size from
    the largest array down to MIN_PASS, the matrices on the device (where
    the workload has them; matrices: only on, or only off) or not,
    partitions copied ahead or not, and with pairs (two workers or more)
    two partitions a region sharing each streamed pass; with gathers, the
    matrices off the device, the queries' scalars gathered on the device
    from an uploaded witness (else on the host); the one of least
    estimated seconds a partition, unpaired and then the most resident
    bytes among equals. InvalidInputError for a budget of nothing, a domain
    below 2 or no worker; DeviceMemoryError when even the H phase does not
    fit (a budget too small for the domain), naming the least budget that
    would."""
    if budget <= 0:
        raise InvalidInputError(f"a device-memory budget of {budget} bytes")
    if workload.domain < 2 or workers < 1 or table_copies < 0:
        raise InvalidInputError(f"a device plan needs a domain of at least 2 and one worker: {workload}, "
                                f"{workers} workers, {table_copies} table copies")
    workload = dataclasses.replace(workload, circuit_bytes=None)      # the host plan's figure, not the device's
    ask = _Ask(workload, on_device(workload, g2), workers, g2)
    best = None
    choices = [(True, False)] if workload.matrix_bytes else []
    choices += [(False, True)] if gathers and workload.variables else [(False, False)]
    modes = [(True, False), (False, False)] + ([(False, True)] if pairs and workers >= 2 else [])
    for on, gather in [c for c in choices if matrices is None or c[0] == matrices]:
        for (ahead, paired), compact in itertools.product(modes, (False, True)):
            for candidate in _candidates(ask, budget, (on, gather), ahead, rate, paired, compact):
                key = (round(candidate.seconds, 6), paired, not candidate.matrices, -candidate.resident_bytes)
                if best is None or key < best[0]:
                    best = (key, candidate)
    if best is None:
        # everything streamed through the least ring beside the larger phase of the least pass
        floor = MARGIN + SMALL_BUFFERS + twiddle_bytes(workload.domain, True) + RING * MIN_CHUNK_BYTES \
            + max(_phases(ask, bool(matrices), MIN_PASS)) + (workload.matrix_bytes if matrices else 0)
        least = math.ceil(floor / GIB * 10) / 10
        raise DeviceMemoryError(f"a device budget of {budget / GIB:.1f} GiB is too small for a domain of "
                                f"2^{workload.domain.bit_length() - 1}: at least {least:.1f} GiB (the H phase, "
                                f"compact NTT twiddles, the least chunk ring and the margin)")
    return _with_tables(best[1], table_copies)


def upload_bytes(w: Workload, matrices: bool, gathers: bool = False) -> int:
    """Bytes one partition uploads: with the matrices on the device, its
    witness; else a, b, c and every query's scalars (gathers: a, b, c and
    the witness, the queries' scalars taken from it on the device)."""
    if gathers and not matrices:
        return SCALAR_BYTES * (3 * w.domain + w.variables)
    if matrices:
        return SCALAR_BYTES * w.variables
    return SCALAR_BYTES * (3 * w.domain + w.shape.l + w.a_count + w.b_count)


@dataclasses.dataclass(frozen=True)
class _Ask:
    """What a plan is asked for: the workload, its arrays on the device, the
    device workers, g2; base_upload: what a partition uploads as the
    workload comes (its witness where it has matrices, else the host's
    arrays), the share a copy ahead takes off the region."""
    workload: Workload
    arrays: tuple[PointArray, ...]
    workers: int
    g2: bool

    @property
    def base_upload(self) -> int:
        return upload_bytes(self.workload, bool(self.workload.matrix_bytes))


def _phases(ask: _Ask, matrices: bool, points: int, paired: bool = False, gathers: bool = False
            ) -> tuple[int, int]:
    """(H phase, MSM phase) device bytes of the running partition: with the
    matrices, its witness beside a, b, c, then beside H's scalars and a
    pass; without, a, b, c (uploaded, transformed in place), then H's
    scalars, a pass and its scalars, or with gathers the witness (uploaded
    after H's transforms) beside a query's gathered scalars and a pass.
    Paired, the other partition's witness and H's scalars beside either,
    and in the MSM phase its buckets (a pass's other work buffers serve
    both in turn)."""
    w = ask.workload
    n, ntt, witness = w.domain, 3 * SCALAR_BYTES * w.domain, ask.base_upload
    if paired:
        other = (witness if matrices else 0) + SCALAR_BYTES * n
        h, msm = _phases(ask, matrices, points)
        return h + other, msm + other + bucket_bytes(points)
    # beside the witness: H's scalars, or a query's scalars gathered from the witness (B's; A's scattered
    # to its rows when its MSM is taken apart from L's), whichever is larger
    gathered = max([a.count for a in ask.arrays if a.name in ("a", "b_g1")] + [n])
    if matrices:
        return witness + ntt, witness + SCALAR_BYTES * gathered + pass_bytes(points)
    if gathers:
        return ntt, SCALAR_BYTES * (w.variables + gathered) + pass_bytes(points)
    return ntt, SCALAR_BYTES * (n + points) + pass_bytes(points)


def _candidates(ask: _Ask, budget: int, mode: tuple[bool, bool], ahead: bool, rate: float, paired: bool = False,
                compact: bool = False) -> Iterator[DevicePlan]:
    """Per pass size, every split of the arrays into resident (in ORDER's
    priority) and streamed that fits the budget (see plan); mode: (the
    matrices on the device, the queries' scalars gathered there)."""
    matrices, gathers = mode
    w = ask.workload
    largest = max(a.count for a in ask.arrays)
    upload = upload_bytes(w, matrices, gathers)
    fixed = MARGIN + SMALL_BUFFERS + twiddle_bytes(w.domain, compact) + (w.matrix_bytes if matrices else 0) \
        + (w.map_bytes if gathers else 0) + ((ask.workers - 1) * upload if ahead else 0)
    passes = [largest]
    while passes[-1] > MIN_PASS:
        passes.append(max(MIN_PASS, passes[-1] // 2))
    order = sorted(ask.arrays, key=lambda a: ORDER.index(a.name) if a.name in ORDER else -1)
    for points in passes:
        work = max(_phases(ask, matrices, points, paired, gathers))
        room = budget - fixed - work
        if room < 0:
            continue
        for kept in range(len(order), -1, -1):
            resident, streamed = order[:kept], order[kept:]
            held = sum(a.nbytes for a in resident)
            largest_chunk = _chunk_bytes(room - held, points) if streamed else 0
            if (streamed and largest_chunk == 0) or held + RING * largest_chunk > room or (paired and not streamed):
                continue
            # in the region: the whole upload, or, copied ahead, what the host path uploads beyond the witness;
            # while chunks stream, a copy ahead shares their bus: exposed as they are
            in_region = max(0, upload - (upload if gathers else ask.base_upload)) if ahead else upload
            shared = sum(a.nbytes for a in streamed) // (2 if paired else 1) + (upload - in_region if streamed else 0)
            moved = in_region + STREAM_EXPOSED * shared
            # smaller chunks too: more passes, but each array's first chunk, which its kernels wait for, arrives sooner
            for chunk in _chunk_sizes(largest_chunk) if streamed else [0]:
                seconds = region_seconds(ask.arrays, points, moved, rate, {a.name for a in streamed}, chunk) \
                    + (compact_twiddle_seconds(w.domain) if compact else 0.0)
                yield DevicePlan(budget, w, ask.workers, ask.g2, tuple(a.name for a in resident),
                                 tuple(a.name for a in streamed), matrices, ahead, 0, points, chunk,
                                 fixed + work + held + RING * chunk, seconds, paired, compact, gathers)
            # no break: fewer resident arrays stream more but in larger chunks (fewer passes), which may cost less


def _chunk_bytes(room: int, points: int) -> int:
    """The largest streamed chunk's bytes: a slot of the ring (RING of them)
    in the room left, within the chunk bounds and at most one pass of G2
    points; 0 when below the least."""
    chunk = min(MAX_CHUNK_BYTES, room // RING, POINT_BYTES[2] * points)
    return chunk if chunk >= MIN_CHUNK_BYTES else 0


def _chunk_sizes(largest: int) -> list[int]:
    """The chunk sizes weighed for a split: those of CHUNK_LADDER that fit in largest bytes."""
    return [size for size in CHUNK_LADDER if size <= largest]


def _with_tables(p: DevicePlan, wanted: int) -> DevicePlan:
    """The plan with as many of the wanted H window-table copies as fit beside what it holds."""
    if not wanted or "h" not in p.resident:
        return p
    h = p.workload.array("h")
    fit = min(wanted, max(0, p.budget - p.planned_bytes) // h.nbytes)
    return dataclasses.replace(p, table_copies=fit, planned_bytes=p.planned_bytes + fit * h.nbytes)
