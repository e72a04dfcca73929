# SPDX-License-Identifier: Apache-2.0
"""The device-memory plan: from a budget and a circuit's arrays, what stays
resident on a device, what is streamed from pinned host memory, how many
points one MSM pass may sort at once, and whether the circuit's matrices and
the H points' window tables fit. Host arithmetic only: `porep-prover gpu plan`
prints one without a GPU; the GPU backend runs by one (backend/gpu_memory.py).

The model, in bytes (G1 affine 96 per point, G2 192; a scalar 32):

    held      resident arrays + the streamed arrays' chunk ring + the NTT's
              twiddle tables (w^e for e < n/2, forward and inverse)
    per partition on the device: its upload (the witness, or a, b, c and
              the scalars when A w, B w, C w are evaluated on the host), once
              for the region and once for the partition copied ahead
    H phase   three domain-sized vectors (a, b, c; H is left in one of them)
    MSM phase H's scalars, the sort of one pass (keys and entries, 4 bytes a
              point a window) and its buckets (xyzz sums and three counters a
              bucket a window)

and the budget must cover held + uploads + the larger phase + a margin (the
context, the kernels) + the small buffers no phase names (SMALL_BUFFERS). Every array read once per partition
costs its bytes over the bus when streamed, so the plan weighs each choice's
seconds: bytes streamed at the upload rate against the bucket additions more
passes add (an H100 or H200 adds about 2.4 G bucket entries a second).
"""
from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol, cast

from ..cuda.chunk_ring import RING
from ..errors import DeviceMemoryError, InvalidInputError
from ..msm.gpu.plan import BUCKET_COST, windows_of
from .device_costs import (SCALAR_BYTES, bucket_bytes, compact_twiddle_seconds, matrix_bytes, pass_bytes,
                           pass_cost, pass_window_bits, twiddle_bytes)

if TYPE_CHECKING:
    from ..curve.points import G1Array, G2Array
    from ..r1cs.system import R1CS

GIB = 1 << 30
MARGIN = 3 << 29             # 1.5 GiB: the context, the kernel modules and the pool's slack
# inside the budget's limit, beside what the model names: the split power tables, the MSMs' counters, sums and
# reductions, the pool's rounding (a 16 GiB plan of exactly its limit failed by 4.7 MB on an H100)
SMALL_BUFFERS = 128 << 20
POINT_BYTES = {1: 96, 2: 192}
UPLOAD_RATE = 50e9           # bytes a second from pinned pages (an H100 host: 55 GB/s, bench_gpu --sections xfer)
ENTRY_SECONDS = 0.41e-9      # a bucket entry added (the scale-1 H MSM: 0.66 s for 12 x 2^27)
# Fitted to an H100's scale-1 kernel regions streamed in 810 MiB to 1 GiB chunks, a ring of three (16, 24 and
# 32 GiB budgets: 3.64, 3.36 and 2.47 s against 1.65 s resident; BENCHMARKS.md): an MSM pass more over an array
# (a streamed chunk is one: its sort's host round trips, its reduction of every window, a narrower window) costs
# about 13 ms; a streamed array's first chunk arrived before any of its kernels could run (exposed whole: the ring
# now uploads it while the array before ends, so the plan counts one a region), and of the rest of its bytes'
# upload, hidden behind the kernels, a quarter is not
PASS_SECONDS = 13e-3
STREAM_EXPOSED = 0.25
MIN_PASS = 1 << 20           # the fewest points a pass sorts: below, launches and reductions dominate
MIN_CHUNK_BYTES = 64 << 20
MAX_CHUNK_BYTES = 2 << 30
# the order arrays are made resident in when all cannot be, for equal bytes saved: the cheapest MSM a byte
# first (its transfer could hide behind the least work), H (full scalars, the most work a byte) last
ORDER = ("b_g2", "b_g1", "a", "l", "h")


class SrsArrays(Protocol):
    """What a plan reads of a parameter set (groth16.keys.Parameters): its
    SRS point arrays, by name."""

    @property
    def h(self) -> G1Array: ...

    @property
    def l(self) -> G1Array: ...  # noqa: E743 (the parameter set's own name)

    @property
    def a(self) -> G1Array: ...

    @property
    def b_g1(self) -> G1Array: ...

    @property
    def b_g2(self) -> G2Array: ...


@dataclasses.dataclass(frozen=True)
class PointArray:
    """One array of SRS points a partition's MSMs read once: its name, group and length."""
    name: str
    group: int
    count: int

    @property
    def nbytes(self) -> int:
        return POINT_BYTES[self.group] * self.count


@dataclasses.dataclass(frozen=True)
class Workload:
    """What a circuit asks of a device: its SRS arrays, its domain, the
    bytes of its matrices on the device (0: A w, B w, C w evaluated on the
    host), the bytes a partition uploads, the device workers sharing the
    device (each may hold a partition copied ahead), the window-table
    copies of the H points wanted (0: none), the witness's variables and
    the bytes of the queries' maps a device keeps to gather the queries'
    scalars from the witness itself (A's rows, B's index)."""
    arrays: tuple[PointArray, ...]
    domain: int
    matrix_bytes: int
    upload_bytes: int
    workers: int = 2
    table_copies: int = 0
    variables: int = 0
    map_bytes: int = 0

    def __post_init__(self) -> None:
        if not self.arrays or self.domain < 2 or self.workers < 1 or self.matrix_bytes < 0 \
                or self.upload_bytes < 0 or self.table_copies < 0:
            raise InvalidInputError(f"a device workload needs arrays, a domain of at least 2 and one worker: {self}")

    def array(self, name: str) -> PointArray | None:
        return next((a for a in self.arrays if a.name == name), None)

    @property
    def srs_bytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    @classmethod
    def of(cls, params: SrsArrays, r1cs: R1CS | None = None, workers: int = 2,
           table_copies: int = 0, g2: bool = True) -> Workload:
        """The workload of a parameter set (groth16.keys.Parameters); with
        r1cs, A w, B w, C w on the device (its matrices resident, the
        witness uploaded), else on the host (a, b, c and the scalars); g2:
        B's G2 MSM runs on the device (else on the host: b_g2 is not the
        device's to hold or stream)."""
        arrays = tuple(PointArray(name, getattr(params, name).GROUP, len(getattr(params, name)))
                       for name in ("h", "l", "a", "b_g1", "b_g2")[:5 if g2 else 4])
        domain = len(params.h) + 1
        inputs = getattr(getattr(params, "vk", None), "num_inputs", 1)      # a Parameters' verifying key's
        variables, maps = inputs + len(params.l), 4 * (len(params.l) + len(params.b_g1))
        if r1cs is not None:
            return cls(arrays, domain, matrix_bytes(r1cs), SCALAR_BYTES * r1cs.num_variables, workers, table_copies,
                       variables, maps)
        scalars = len(params.l) + len(params.a) + len(params.b_g1)
        return cls(arrays, domain, 0, SCALAR_BYTES * (3 * domain + scalars), workers, table_copies, variables, maps)

    @classmethod
    def estimated(cls, constraints: int, inputs: int, aux: int, a_density: float, b_density: float,
                  nonzeros: tuple[float, float, float], on_device: bool = True, workers: int = 2,
                  table_copies: int = 0, g2: bool = True) -> Workload:
        """The workload of a circuit known by its statistics alone (no
        circuit built): constraints, inputs (the constant one included),
        aux variables, the share of aux variables A and B read, the nonzeros
        a row of A, B, C; on_device as Workload.of with an r1cs; g2 as Workload.of's."""
        domain = 1 << max(1, (constraints + inputs - 1).bit_length())
        a_count, b_count = inputs + round(a_density * aux), inputs + round(b_density * aux)
        arrays = (PointArray("h", 1, domain - 1), PointArray("l", 1, aux), PointArray("a", 1, a_count),
                  PointArray("b_g1", 1, b_count)) + ((PointArray("b_g2", 2, b_count),) if g2 else ())
        nnz = round(sum(nonzeros) * constraints)
        # CSR: an int64 row pointer a row, a uint32 column and a uint16 coefficient id an entry; the
        # queries' uint32 maps (A's rows, B's gather)
        matrices = 3 * 8 * (constraints + 1) + 6 * nnz + 4 * (a_count + b_count) if on_device else 0
        upload = SCALAR_BYTES * (1 + inputs + aux if on_device else 3 * domain + aux + a_count + b_count)
        return cls(arrays, domain, matrices, upload, workers, table_copies, inputs + aux, 4 * (aux + b_count))


@dataclasses.dataclass(frozen=True)
class DevicePlan:
    """One device's plan for one workload under a budget (bytes).

    resident, streamed: the SRS arrays' names; matrices: A w, B w, C w on
    the device (the workload's matrices resident); table_copies: the H
    points' window-table copies kept; pass_points: the most points one MSM
    pass sorts; ahead: a partition's uploads are copied to the device
    ahead of its region (one a worker beside the running one); chunk_bytes: a streamed chunk's size (a ring of RING);
    planned_bytes: what the plan holds at its peak; seconds: its cost
    estimate a partition (exposed transfers and extra passes); paired: two
    partitions a region, each streamed chunk uploaded once for both scalar
    sets (their scalars held at once: the streamed bytes a partition halve);
    compact_twiddles: the NTT's twiddles as two small tables a direction
    (GpuNtt.compact_twiddles), their room given to the rest; gathers: with
    the matrices off the device, the witness uploaded beside a, b, c and
    the queries' scalars taken from it on the device (the queries' maps
    resident), rather than gathered on the host and uploaded."""
    budget: int
    workload: Workload
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
    def resident_bytes(self) -> int:
        """Device bytes of what the plan keeps between partitions: resident arrays, the table, the matrices."""
        w = self.workload
        h = w.array("h")
        table = self.table_copies * h.nbytes if h is not None else 0
        # resident and streamed name the workload's own arrays (_candidates takes them from it): never None
        return sum(cast(PointArray, w.array(n)).nbytes for n in self.resident) + table \
            + (w.matrix_bytes if self.matrices else 0) + (w.map_bytes if self.gathers else 0)

    @property
    def ring_bytes(self) -> int:
        return RING * self.chunk_bytes if self.streamed else 0

    @property
    def streamed_bytes(self) -> int:
        """Bytes uploaded per partition for the streamed arrays."""
        return sum(cast(PointArray, self.workload.array(n)).nbytes for n in self.streamed)   # as resident_bytes

    @property
    def streamed_per_partition(self) -> float:
        """Bytes the streamed arrays cost one partition: all of them, or half where a pair shares each pass."""
        return self.streamed_bytes / (2 if self.paired else 1)

    def chunk_points(self, group: int) -> int:
        """Points of a group in one streamed chunk (at most a pass)."""
        return max(1, min(self.pass_points, self.chunk_bytes // POINT_BYTES[group]))

    def transfer_seconds(self, rate: float = UPLOAD_RATE) -> float:
        """The floor one partition's streamed bytes set at an upload rate."""
        return self.streamed_per_partition / rate

    def describe(self, rate: float = UPLOAD_RATE) -> list[str]:
        """The plan in lines, for a terminal or a log."""
        w, g = self.workload, GIB
        lines = [f"device budget {self.budget / g:.1f} GiB; planned peak {self.planned_bytes / g:.1f} GiB "
                 f"(SRS {w.srs_bytes / g:.1f} GiB, domain 2^{w.domain.bit_length() - 1}, {w.workers} workers)"]
        for a in w.arrays:
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
        upload = _upload(w, self.matrices, self.gathers)
        if self.gathers:
            lines.append(f"  the queries' scalars gathered on the device from the witness (their maps "
                         f"{w.map_bytes / g:.2f} GiB resident)")
        lines.append(f"  uploads: {upload / g:.2f} GiB a partition, "
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


def plan(workload: Workload, budget: int, rate: float = UPLOAD_RATE, matrices: bool | None = None,
         pairs: bool = False, gathers: bool = False) -> DevicePlan:
    """The cheapest DevicePlan for workload within budget bytes: every split
    of the arrays into resident and streamed (in ORDER's priority), every
    pass size from the largest array down to MIN_PASS, the matrices on the
    device (where the workload has them; matrices: only on, or only off) or
    not, partitions copied ahead or not, and with pairs (two workers or
    more) two partitions a region sharing each streamed pass; with gathers,
    the matrices off the device, the queries' scalars gathered on the
    device from an uploaded witness (else on the host); the one of least
    estimated seconds
    a partition, unpaired and then the most resident bytes among equals.
    DeviceMemoryError when even the H phase does not fit (a budget too small
    for the domain), naming the least budget that would."""
    if budget <= 0:
        raise InvalidInputError(f"a device-memory budget of {budget} bytes")
    best = None
    choices = [(True, False)] if workload.matrix_bytes else []
    choices += [(False, True)] if gathers and workload.variables else [(False, False)]
    modes = [(True, False), (False, False)] + ([(False, True)] if pairs and workload.workers >= 2 else [])
    for on, gather in [c for c in choices if matrices is None or c[0] == matrices]:
        for (ahead, paired), compact in itertools.product(modes, (False, True)):
            for candidate in _candidates(workload, budget, (on, gather), ahead, rate, paired, compact):
                matrices_on = candidate.matrices
                key = (round(candidate.seconds, 6), paired, not matrices_on, -candidate.resident_bytes)
                if best is None or key < best[0]:
                    best = (key, candidate)
    if best is None:
        # everything streamed through the least ring beside the larger phase of the least pass
        floor = MARGIN + SMALL_BUFFERS + twiddle_bytes(workload.domain, True) + RING * MIN_CHUNK_BYTES \
            + max(_phases(workload, bool(matrices), MIN_PASS)) + (workload.matrix_bytes if matrices else 0)
        least = math.ceil(floor / GIB * 10) / 10
        raise DeviceMemoryError(f"a device budget of {budget / GIB:.1f} GiB is too small for a domain of "
                                f"2^{workload.domain.bit_length() - 1}: at least {least:.1f} GiB (the H phase, "
                                f"compact NTT twiddles, the least chunk ring and the margin)")
    return _with_tables(best[1])


def _upload(w: Workload, matrices: bool, gathers: bool = False) -> int:
    """Bytes one partition uploads: the workload's, or with the matrices off
    the device, a, b, c and every query's scalars (gathers: and the witness,
    the queries' scalars taken from it on the device)."""
    if gathers and not matrices:
        return SCALAR_BYTES * (3 * w.domain + w.variables)
    if matrices or not w.matrix_bytes:
        return w.upload_bytes
    scalars = sum(a.count for a in w.arrays if a.name in ("l", "a", "b_g1"))
    return SCALAR_BYTES * (3 * w.domain + scalars)


def _phases(w: Workload, matrices: bool, points: int, paired: bool = False, gathers: bool = False
            ) -> tuple[int, int]:
    """(H phase, MSM phase) device bytes of the running partition: with the
    matrices, its witness beside a, b, c, then beside H's scalars and a
    pass; without, a, b, c (uploaded, transformed in place), then H's
    scalars, a pass and its scalars, or with gathers the witness (uploaded
    after H's transforms) beside a query's gathered scalars and a pass.
    Paired, the other partition's witness and H's scalars beside either,
    and in the MSM phase its buckets (a pass's other work buffers serve
    both in turn)."""
    n, ntt = w.domain, 3 * SCALAR_BYTES * w.domain
    if paired:
        other = (w.upload_bytes if matrices else 0) + SCALAR_BYTES * n
        h, msm = _phases(w, matrices, points)
        return h + other, msm + other + bucket_bytes(points)
    # beside the witness: H's scalars, or a query's scalars gathered from the witness (B's; A's scattered
    # to its rows when its MSM is taken apart from L's), whichever is larger
    gathered = max([a.count for a in w.arrays if a.name in ("a", "b_g1")] + [n])
    if matrices:
        return w.upload_bytes + ntt, w.upload_bytes + SCALAR_BYTES * gathered + pass_bytes(points)
    if gathers:
        return ntt, SCALAR_BYTES * (w.variables + gathered) + pass_bytes(points)
    return ntt, SCALAR_BYTES * (n + points) + pass_bytes(points)


def _candidates(w: Workload, budget: int, mode: tuple[bool, bool], ahead: bool, rate: float, paired: bool = False,
                compact: bool = False) -> Iterator[DevicePlan]:
    """Per pass size, every split of the arrays into resident (in ORDER's
    priority) and streamed that fits the budget (see plan); mode: (the
    matrices on the device, the queries' scalars gathered there)."""
    matrices, gathers = mode
    largest = max(a.count for a in w.arrays)
    upload = _upload(w, matrices, gathers)
    fixed = MARGIN + SMALL_BUFFERS + twiddle_bytes(w.domain, compact) + (w.matrix_bytes if matrices else 0) \
        + (w.map_bytes if gathers else 0) + ((w.workers - 1) * upload if ahead else 0)
    passes = [largest]
    while passes[-1] > MIN_PASS:
        passes.append(max(MIN_PASS, passes[-1] // 2))
    order = sorted(w.arrays, key=lambda a: ORDER.index(a.name) if a.name in ORDER else -1)
    for points in passes:
        work = max(_phases(w, matrices, points, paired, gathers))
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
            in_region = max(0, upload - (upload if gathers else w.upload_bytes)) if ahead else upload
            shared = sum(a.nbytes for a in streamed) // (2 if paired else 1) + (upload - in_region if streamed else 0)
            moved = in_region + STREAM_EXPOSED * shared
            # smaller chunks too: more passes, but each array's first chunk, which its kernels wait for, arrives sooner
            for chunk in _chunk_sizes(largest_chunk) if streamed else [0]:
                yield DevicePlan(budget, w, tuple(a.name for a in resident), tuple(a.name for a in streamed),
                                 matrices, ahead, 0, points, chunk, fixed + work + held + RING * chunk,
                                 _seconds(w, points, moved, rate, {a.name for a in streamed}, chunk)
                                 + (compact_twiddle_seconds(w.domain) if compact else 0.0), paired, compact,
                                 gathers)
            # no break: fewer resident arrays stream more but in larger chunks (fewer passes), which may cost less


def _chunk_bytes(room: int, points: int) -> int:
    """The largest streamed chunk's bytes: a slot of the ring (RING of them)
    in the room left, within the chunk bounds and at most one pass of G2
    points; 0 when below the least."""
    chunk = min(MAX_CHUNK_BYTES, room // RING, POINT_BYTES[2] * points)
    return chunk if chunk >= MIN_CHUNK_BYTES else 0


# the chunk sizes a plan weighs: MIN_CHUNK_BYTES to MAX_CHUNK_BYTES in quarter octaves, the same for every budget
# (so a larger budget can always choose what a smaller one chose: more memory never costs more)
CHUNK_LADDER = tuple(sorted({min(MAX_CHUNK_BYTES, round(MIN_CHUNK_BYTES * 2 ** (k / 4)))
                             for k in range(4 * (MAX_CHUNK_BYTES // MIN_CHUNK_BYTES).bit_length())}))


def _chunk_sizes(largest: int) -> list[int]:
    """The chunk sizes weighed for a split: those of CHUNK_LADDER that fit in largest bytes."""
    return [size for size in CHUNK_LADDER if size <= largest]


def _seconds(w: Workload, points: int, moved: float, rate: float, streamed: set[str] | None = None,
             chunk: int = 0) -> float:
    """A plan's cost over every array resident in one pass: the bytes the
    kernel region waits for at the upload rate (moved: what it uploads
    before its kernels can start, and STREAM_EXPOSED of what streams beside
    them, and a streamed array's first chunk, which its kernels wait for
    whole where the ring did not upload it while the array before ended:
    once a region) plus what its passes cost over one pass an array, PASS_SECONDS
    each and their bucket additions: H's full scalars by the MSM's model, the
    witness-fed arrays (narrow scalars, few entries above window 0) a
    reduction of 16-bit windows a pass more. A streamed array's pass is
    its chunk (chunk bytes; a chunk is sorted and summed as it arrives),
    a resident one's at most points."""
    extra, passes, first = 0.0, 0, 0
    for a in w.arrays:
        size = min(points, max(1, chunk // POINT_BYTES[a.group])) if a.name in (streamed or ()) else points
        split = math.ceil(a.count / size)
        passes += split - 1
        if a.name in (streamed or ()):    # the ring uploads the next array's first chunks as one ends: one waited for
            first = max(first, min(size, a.count) * POINT_BYTES[a.group])
        if a.name != "h":
            extra += (split - 1) * BUCKET_COST[a.group] * windows_of(16) * (1 << 15)
            continue
        per = -(-a.count // split)
        whole = pass_cost(a.count, pass_window_bits(a.count, a.group), a.group)
        extra += split * pass_cost(per, pass_window_bits(per, a.group), a.group) - whole
    return (moved + first) / rate + ENTRY_SECONDS * max(0.0, extra) + PASS_SECONDS * passes


def _with_tables(p: DevicePlan) -> DevicePlan:
    """The plan with as many of the wanted H window-table copies as fit beside what it holds."""
    h = p.workload.array("h")
    if not p.workload.table_copies or h is None or "h" not in p.resident:
        return p
    fit = min(p.workload.table_copies, max(0, p.budget - p.planned_bytes) // h.nbytes)
    return dataclasses.replace(p, table_copies=fit, planned_bytes=p.planned_bytes + fit * h.nbytes)
