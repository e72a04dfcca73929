# SPDX-License-Identifier: Apache-2.0
"""The device-memory plan's cost model in bytes and seconds
(backend/device_plan.py): the NTT's twiddle tables, the matrices of the
device MatVec, an MSM pass's window, bucket additions and work bytes."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..msm.gpu.plan import BUCKET_COST, KEY_COST, windows_of
from ..ntt.gpu import split_lengths

if TYPE_CHECKING:
    from ..r1cs.system import R1CS

SCALAR_BYTES = 32
PROJ_BYTES = {1: 192, 2: 384}
TWIDDLE_PRODUCT_SECONDS = 5e-12   # an Fr product a butterfly more, the transforms' other work beside it


def twiddle_bytes(domain: int, compact: bool = False) -> int:
    """Device bytes of the NTT's twiddle tables over a domain, kept while
    the device lives (ntt.gpu.GpuNtt.twiddles): w^e for e < domain / 2,
    forward and inverse, whole (4 GiB at 2^27) or compact, each direction
    two tables of about sqrt(domain / 2) entries (1 MiB at 2^27)."""
    count = max(1, domain // 2)
    if not compact:
        return 2 * SCALAR_BYTES * count
    _, lo_len, hi_len = split_lengths(count)
    return 2 * SCALAR_BYTES * (lo_len + hi_len)


def compact_twiddle_seconds(domain: int) -> float:
    """What compact twiddles add to a partition: a product a butterfly, in
    H's six transforms of the domain."""
    return TWIDDLE_PRODUCT_SECONDS * 6 * (domain // 2) * max(1, domain.bit_length() - 1)


def matrix_bytes(r1cs: R1CS) -> int:
    """Device bytes of what the device evaluation of r1cs keeps resident:
    each matrix's CSR arrays and the queries' maps."""
    total = 0
    for matrix in (r1cs.a, r1cs.b, r1cs.c):
        total += matrix.indptr.nbytes + matrix.col.nbytes + matrix.coeff.limbs.nbytes
        total += matrix.coeff_id.nbytes if matrix.coeff_id is not None else 0
    return total + 4 * (len(r1cs.query_index("a")) + len(r1cs.query_index("b")))


def pass_window_bits(points: int, group: int = 1) -> int:
    """The window width of a full-scalar pass over this many points (as
    msm.plan.window_bits_for picks it for 255-bit scalars)."""
    return min(range(4, 23), key=lambda c: pass_cost(points, c, group))


def pass_cost(points: int, c: int, group: int = 1) -> float:
    """A full-scalar pass's cost in bucket additions (window_bits_for's model)."""
    windows = windows_of(c)
    return windows * points * (1 + KEY_COST[group]) + BUCKET_COST[group] * windows * (1 << (c - 1))


def bucket_bytes(points: int, group: int = 1) -> int:
    """The xyzz sums of a full-scalar pass's buckets over this many points,
    every window's: an MSM of several passes keeps them across its passes
    (GpuMsm's Accumulation), a set for each scalar set."""
    c = pass_window_bits(points, group)
    return windows_of(c) * (1 << (c - 1)) * PROJ_BYTES[group]


def pass_bytes(points: int, group: int = 1) -> int:
    """Device work bytes of one full-scalar MSM pass over this many points:
    its buckets' sums (bucket_bytes) beside the sort's keys and entries and
    the buckets' three counters, or, before, the canonical scalars beside
    the keys, whichever is larger."""
    c = pass_window_bits(points, group)
    buckets, keys = windows_of(c) * (1 << (c - 1)), 4 * points * windows_of(c)
    return bucket_bytes(points, group) + max(SCALAR_BYTES * points + keys, 2 * keys + 12 * buckets)
