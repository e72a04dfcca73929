# SPDX-License-Identifier: Apache-2.0
"""The GPU MSM against the CPU backend's, bit for bit: sizes, special scalars,
points at infinity, builds, window tables, the fill's parts, memory running
out (marked gpu: skipped without a CUDA device). The MsmTunings the tests
run with are made in the parametrize lists, at collection, which CI runs
without a device: a bound that refuses one fails there."""
import dataclasses

import numpy as np
import pytest

from gpu_inputs import random_fr, random_points
import porep_prover as pp
from porep_prover import FrArray, G1Array, G2Array
from porep_prover.backend import get_backend, gpu_available
from porep_prover.cuda.arrays import DeviceScalars
from porep_prover.errors import DeviceMemoryError
from porep_prover.field.constants import R
from porep_prover.msm.gpu import GpuMsm
from porep_prover.msm.gpu.plan import MsmTuning, table_copies, table_plan

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no CUDA device")]

CPU = get_backend("cpu")


def tuning_id(value):
    """A test id for an MsmTuning parameter: its fields away from their
    defaults ("plan": none); None (pytest's own id) for other values."""
    if not isinstance(value, MsmTuning):
        return None
    return ",".join(f"{f.name}={getattr(value, f.name)}" for f in dataclasses.fields(value)
                    if getattr(value, f.name) != f.default) or "plan"


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("n", [1, 2, 3, 31, 100, 257, 1000, 4099, 70001])
def test_msm_random(gpu, cls, n, rng):
    if cls is G2Array and n > 5000:
        n //= 8
    pts, sc = random_points(cls, rng, n), random_fr(n, rng)
    got, stats = gpu.msm(pts, sc, 1)
    want, cpu_stats = CPU.msm(pts, sc, 2)
    assert got == want
    assert {k: stats[k] for k in ("zeros", "ones", "full")} == {k: cpu_stats[k] for k in ("zeros", "ones", "full")}


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("kind", ["zeros", "ones", "repeated", "mixed", "small", "minus_one"])
def test_msm_special_scalars(gpu, cls, kind, rng):
    n = 20000 if cls is G1Array else 3000
    pts = random_points(cls, rng, n)
    if kind == "zeros":
        sc = FrArray.zeros(n)
    elif kind == "ones":
        sc = FrArray.from_ints([1] * n)
    elif kind == "repeated":
        sc = FrArray.from_ints([rng.randrange(R)] * n)
    elif kind == "small":
        sc = FrArray.from_ints([rng.randrange(4) for _ in range(n)])
    elif kind == "minus_one":
        sc = FrArray.from_ints([R - 1] * n)
    else:
        pick = [0, 1, rng.randrange(R)]
        sc = FrArray.from_ints([pick[rng.randrange(3)] for _ in range(n)])
    got, stats = gpu.msm(pts, sc, 1)
    want, cpu_stats = CPU.msm(pts, sc, 2)
    assert got == want
    assert stats["ones"] == cpu_stats["ones"] and stats["zeros"] == cpu_stats["zeros"]


def _fill_device(gpu, leave: int):
    """Device buffers holding all but about `leave` bytes of the free memory
    (the memory pool's unused part given back first: none left there either)."""
    gpu.device.synchronize()
    gpu.device.ctx.trim_pool()
    held, step = [], 1 << 30
    while step >= 1 << 20:
        free, _ = gpu.device.ctx.mem_info()
        want = min(step, free - leave)
        if want < 1 << 20:
            break
        try:
            held.append(gpu.device.drv.DeviceBuffer(gpu.device.ctx, want))
        except DeviceMemoryError:
            step //= 2
    return held


def test_memory_running_out_inside_an_msm_is_a_clean_error(gpu, rng):
    """The MSM's points stay resident when its work buffers do not fit (freeing
    them would leave its kernels reading freed memory): a DeviceMemoryError,
    and the device still gives the CPU's sums once memory is back."""
    n = 1 << 16
    pts = random_points(G1Array, rng, n)
    sc = FrArray.from_ints([rng.randrange(R) for _ in range(n)])
    gpu.memory.resident.resident(pts)
    blockers = _fill_device(gpu, 4 << 20)      # the MSM's buffers need ~30 MB
    try:
        with pytest.raises(DeviceMemoryError):
            gpu.msm(pts, sc, 1)
        assert gpu.memory.resident.resident_bytes() >= pts.limbs.nbytes and not gpu.memory.resident._busy
    finally:
        for buf in blockers:
            buf.close()
    assert gpu.msm(pts, sc, 1)[0] == CPU.msm(pts, sc, 2)[0]


@pytest.mark.parametrize("cls,tuning", [(cls, MsmTuning(variant=variant)) for cls, variant in
                                        ((G1Array, "lohi"), (G1Array, "fq_inline"), (G2Array, "fq_inline"),
                                         (G1Array, "align4"), (G2Array, "fq2_sqr_mul"))],
                         ids=["g1-lohi", "g1-inline", "g2-inline", "g1-align4", "g2-fq2-sqr-mul"])
@pytest.mark.usefixtures("benchmark_modules")
def test_msm_build_variants_match_cpu(gpu, cls, tuning, rng):
    """The benchmarks' other builds of the MSM give the CPU's sums."""
    n = 9001 if cls is G1Array else 2001
    pts = random_points(cls, rng, n)
    sc = FrArray.from_ints([rng.randrange(R) for _ in range(n)])
    got, _ = GpuMsm(gpu.device, tuning).msm(pts, sc)
    assert got == CPU.msm(pts, sc, 2)[0]


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
def test_msm_points_at_infinity_and_cancelling(gpu, cls, rng):
    n = 5000
    pts = random_points(cls, rng, n)
    limbs = pts.limbs.copy()
    limbs[::7] = 0                      # points at infinity
    pts = cls(limbs)
    sc = random_fr(n, rng)
    got, stats = gpu.msm(pts, sc, 1)
    assert got == CPU.msm(pts, sc, 2)[0]
    assert stats["zeros"] >= len(range(0, n, 7))
    # P and -P with the same scalar: the sum is the identity
    half = random_points(cls, rng, 100)
    both = cls(np.concatenate([half.limbs, (-half).limbs]))
    k = FrArray.from_ints([rng.randrange(R)] * 200)
    assert gpu.msm(both, k, 1)[0] == cls.POINT.identity()


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("tuning,n,copies",
                         [(MsmTuning(), 70001, None), (MsmTuning(table_bits=8), 4099, None),
                          (MsmTuning(table_bits=13), 1000, None), (MsmTuning(table_bits=24), 5, None),
                          (MsmTuning(), 70001, 2), (MsmTuning(table_bits=9), 4099, 3),
                          (MsmTuning(table_bits=13), 1000, 1), (MsmTuning(table_bits=24), 5, 4)], ids=tuning_id)
def test_msm_window_tables_match_cpu(gpu, cls, tuning, n, copies, rng):
    """Window tables (a copy of the points for every window, one set of
    buckets; or at most `copies`, the windows sharing several sets): the
    CPU's sums with points at infinity and zero / one / -1 / random scalars;
    the table is made once, kept with the points and dropped with them."""
    if cls is G2Array and n > 5000:
        n //= 8
    limbs = random_points(cls, rng, n).limbs.copy()
    limbs[3::11] = 0                                  # points at infinity
    pts = cls(limbs)
    pick = [0, 1, R - 1]
    sc = FrArray.from_ints([pick[i % 4] if i % 4 < 3 else rng.randrange(R) for i in range(n)])
    bits = tuning.table_bits
    ops, before = GpuMsm(gpu.device, tuning), gpu.memory.resident.resident_bytes()
    ops.tables, ops.table_copies = True, copies
    got, stats = ops.msm(pts, sc)
    c = stats["window_bits"]
    made = gpu.memory.resident.resident_bytes()
    held = table_copies(*table_plan(n, cls.GROUP, copies, bits))
    assert 1 <= held <= (255 // c if copies is None else copies)
    assert made == before + (1 + held) * pts.limbs.nbytes       # the points and their copies
    sc2 = random_fr(n, rng)
    assert ops.msm(pts, sc2)[0] == CPU.msm(pts, sc2, 2)[0]
    assert gpu.memory.resident.resident_bytes() == made
    assert got == CPU.msm(pts, sc, 2)[0]
    if bits is not None:
        assert c == bits
    gpu.release_points(pts)
    assert gpu.memory.resident.resident_bytes() == before


@pytest.mark.parametrize("tables", [False, True], ids=["plain", "tables"])
@pytest.mark.parametrize("tuning", [MsmTuning(fill_parts=parts) for parts in (2, 3, 8)], ids=tuning_id)
def test_msm_fill_in_parts_matches_cpu(gpu, tables, tuning, rng):
    """A window's buckets filled in parts (the large sizes' fill; small ones take
    one part), with and without window tables, where a part spans every
    window's entries: the CPU's sums on random and on small scalars."""
    n = 70001
    pts = random_points(G1Array, rng, n)
    ops = GpuMsm(gpu.device, tuning)
    ops.tables = tables
    for sc in (random_fr(n, rng), FrArray.from_ints([rng.randrange(5) for _ in range(n)])):
        assert ops.msm(pts, sc)[0] == CPU.msm(pts, sc, 2)[0]
    gpu.release_points(pts)


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("tables", [False, True], ids=["plain", "tables"])
@pytest.mark.parametrize("tuning", [MsmTuning(overlap=False, groups=4), MsmTuning(overlap=True, groups=1, fill_parts=2),
                                    MsmTuning(overlap=True, groups=3, fill_parts=5),
                                    MsmTuning(overlap=True, groups=64, fill_parts=3),
                                    MsmTuning(overlap=True, groups=4, fill_parts=16, table_bits=4)], ids=tuning_id)
def test_msm_overlapped_stretches_match_cpu(gpu, cls, tables, tuning, rng):
    """The sort's fill stretch by stretch beside the accumulation (and all of
    it on one stream): the CPU's sums, with points at infinity, small and
    random scalars, one stretch per window, stretches without buckets (16
    parts of 8 buckets)."""
    n = 20011 if cls is G1Array else 2003
    limbs = random_points(cls, rng, n).limbs.copy()
    limbs[5::13] = 0
    pts = cls(limbs)
    ops = GpuMsm(gpu.device, tuning)
    ops.tables = tables
    for sc in (random_fr(n, rng), FrArray.from_ints([rng.randrange(7) for _ in range(n)])):
        got, stats = ops.msm(pts, sc)
        assert got == CPU.msm(pts, sc, 2)[0]
        if tables and tuning.table_bits:
            assert stats["window_bits"] == tuning.table_bits
    gpu.release_points(pts)


def test_msm_window_table_that_does_not_fit_is_not_made(gpu, rng):
    n = 20000
    pts, sc = random_points(G1Array, rng, n), random_fr(n, rng)
    budget, ops = gpu.memory.resident.budget, gpu.msm_ops
    gpu.memory.resident.budget = gpu.memory.resident.resident_bytes() + 3 * pts.limbs.nbytes
    ops.tables = True
    try:
        got, _ = gpu.msm(pts, sc, 1)
        assert id(pts.limbs) in gpu.memory.resident._resident
        assert not [key for key in gpu.memory.resident._resident if not isinstance(key, int)]   # no table beside them
    finally:
        ops.tables, gpu.memory.resident.budget = False, budget
    assert got == CPU.msm(pts, sc, 2)[0]
    gpu.release_points(pts)


def test_msm_streams_chunks_when_over_budget(gpu, rng):
    n = 30000
    pts, sc = random_points(G1Array, rng, n), random_fr(n, rng)
    want = CPU.msm(pts, sc, 2)[0]
    budget = gpu.memory.resident.budget
    gpu.memory.resident.budget = 96 * 7000      # forces chunks of 7000 points
    try:
        got, _ = gpu.msm(pts, sc, 1)
    finally:
        gpu.memory.resident.budget = budget
    assert got == want


def test_resident_points_are_reused_and_released(gpu, rng):
    import gc
    gc.collect()             # earlier tests' arrays left in cycles go now, not inside the count below
    pts = random_points(G1Array, rng, 3000)
    before = gpu.memory.resident.resident_bytes()
    gpu.msm(pts, random_fr(3000, rng), 1)
    first = gpu.memory.resident.resident_bytes()
    assert first == before + pts.limbs.nbytes
    gpu.msm(pts, random_fr(3000, rng), 1)
    assert gpu.memory.resident.resident_bytes() == first
    del pts
    gc.collect()
    assert gpu.memory.resident.resident_bytes() == before


def test_device_memory_exhaustion_is_a_named_error(gpu, rng):
    with pytest.raises(DeviceMemoryError):
        gpu.memory.alloc(2 * gpu.info.memory_bytes)
    pts, sc = random_points(G1Array, rng, 500), random_fr(500, rng)   # the device still works
    assert gpu.msm(pts, sc, 1)[0] == CPU.msm(pts, sc, 2)[0]


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 9999])
def test_batch_sum(gpu, cls, n, rng):
    pts = random_points(cls, rng, n)
    assert gpu.batch_sum(pts, 1) == CPU.batch_sum(pts, 2)
    assert pp.batch_sum(pts, backend="gpu") == CPU.batch_sum(pts, 2)


def test_msm_public_api(rng):
    pts, sc = random_points(G1Array, rng, 777), random_fr(777, rng)
    stats = {}
    assert pp.msm(pts, sc, backend="gpu", stats=stats) == pp.msm(pts, sc, backend="cpu")
    assert stats["full"] + stats["ones"] + stats["zeros"] == 777


@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("tuning", [MsmTuning(), MsmTuning(overlap=True, max_chunk=4),
                                    MsmTuning(overlap=False, window_bits=9, max_chunk=512),
                                    MsmTuning(overlap=True, window_bits=16, max_chunk=64)], ids=tuning_id)
def test_msm_narrow_scalars_match_cpu(gpu, cls, tuning, rng):
    """A witness-like mix (zeros, ones, small words, a few full scalars, points
    at infinity), where windows above the first keep keys only for the wide
    scalars: the CPU's sums, with the window width picked from the bit
    lengths or set, the fill beside or not, short and long chunks."""
    n = 90001 if cls is G1Array else 7001
    limbs = random_points(cls, rng, n).limbs.copy()
    limbs[7::17] = 0
    pts = cls(limbs)
    pick = rng.random
    values = [0 if r < 0.4 else 1 if r < 0.75 else rng.randrange(2, 1 << 11) if r < 0.95 else rng.randrange(R)
              for r in (pick() for _ in range(n))]
    sc = FrArray.from_ints(values)
    ops = GpuMsm(gpu.device, tuning)
    ops.profile = {}
    got, stats = ops.msm(pts, sc)
    assert got == CPU.msm(pts, sc, 2)[0]
    assert stats["window_bits"] == (tuning.window_bits or ops.profile["c"])
    gpu.release_points(pts)


def _mixed_scalars(n, rng):
    """Zeros, ones, small words and full values, as a witness has them."""
    full = random_fr(n, rng)
    pick = np.array([rng.randrange(4) for _ in range(n)])
    out = FrArray.from_ints([0 if p == 0 else 1 if p == 1 else rng.randrange(2, 1 << 16) if p == 2 else 0
                             for p in pick])
    out.limbs[pick == 3] = full.limbs[pick == 3]
    return out


@pytest.mark.parametrize("apart", [False, True], ids=["one sort", "apart"])
@pytest.mark.parametrize("n", [5, 3001, 70001])
def test_msm_shared_matches_the_msms_apart(gpu, apart, n, rng, monkeypatch):
    """One sort of the scalars for L-like points row for row (some at
    infinity) and A-like points through a row map into a longer array (some
    scalars without a row): each sum as the CPU's MSM of the points with the
    scalars they get. apart: the arrays cannot share (not resident together),
    so each MSM runs alone, the mapped one over its scalars scattered to rows.
    Window tables on leave the shared sort as it is."""
    sc = _mixed_scalars(n, rng)
    l_pts = random_points(G1Array, rng, n)
    l_pts.limbs[::5] = 0                                   # infinity
    a_pts = random_points(G1Array, rng, n + 17)
    rows = np.array(rng.sample(range(n + 17), n), dtype=np.uint32)
    rows[1::7] = 0xFFFFFFFF
    monkeypatch.setattr(gpu.msm_ops, "tables", True)
    if apart:
        monkeypatch.setattr(gpu.memory.resident, "budget", l_pts.limbs.nbytes + a_pts.limbs.nbytes + rows.nbytes - 1)
        assert gpu.msm_ops.msm_shared([(l_pts, None), (a_pts, rows)], sc) is None
    # DeviceScalars and an FrArray both taken
    on_device = DeviceScalars(gpu.memory, gpu.memory.upload(sc.limbs), len(sc)) if n > 5 else sc
    try:
        got_l, got_a = gpu.msm_shared([(l_pts, None), (a_pts, rows)], on_device, 1)
    finally:
        if on_device is not sc:
            on_device.close()
    keep = rows != 0xFFFFFFFF
    assert got_l == CPU.msm(l_pts, sc, 2)[0]
    assert got_a == CPU.msm(a_pts[rows[keep]], FrArray(sc.limbs[keep]), 2)[0]


def test_msm_shared_g1_beside_g2(gpu, rng):
    """B_1 and B_2 from one sort of the B query's scalars."""
    n = 4099
    sc = _mixed_scalars(n, rng)
    b1, b2 = random_points(G1Array, rng, n), random_points(G2Array, rng, n)
    got1, got2 = gpu.msm_shared([(b1, None), (b2, None)], sc, 1)
    assert got1 == CPU.msm(b1, sc, 2)[0] and got2 == CPU.msm(b2, sc, 2)[0]


def test_msm_shared_refuses_bad_rows(gpu, rng):
    """A row past the points, a map of the wrong length or type, an array of
    the wrong length: named errors before any kernel reads there."""
    from porep_prover.errors import InvalidInputError, LengthMismatchError
    n = 100
    sc, pts = random_fr(n, rng), random_points(G1Array, rng, n)
    rows = np.arange(n, dtype=np.uint32)
    rows[37] = n
    with pytest.raises(InvalidInputError, match="row 100 past the 100 points"):
        gpu.msm_shared([(pts, rows)], sc, 1)
    with pytest.raises(InvalidInputError):
        gpu.msm_shared([(pts, np.arange(n - 1, dtype=np.uint32))], sc, 1)
    with pytest.raises(InvalidInputError):
        gpu.msm_shared([(pts, np.arange(n, dtype=np.int64))], sc, 1)
    with pytest.raises(LengthMismatchError):
        gpu.msm_shared([(pts[:50], None)], sc, 1)
    on_device = DeviceScalars(gpu.memory, gpu.memory.upload(sc.limbs), len(sc))
    try:
        with pytest.raises(InvalidInputError, match="past the 100 rows"):
            gpu.r1cs_ops.put(on_device, rows, n)
    finally:
        on_device.close()


@pytest.mark.usefixtures("benchmark_modules")
def test_batch_affine_sums_match_cpu(gpu, rng):
    """The batch-affine benchmark's kernels: one round of affine pair sums
    (runs of pairs sharing an inversion, the last run cut short) and XYZZ
    run sums (made affine after) give the CPU's sums."""
    pairs, per, run = 333, 32, 10
    pts = G1Array.generator().scale([rng.randrange(1, R) for _ in range(2 * pairs)])
    runs = -(-2 * pairs // run)
    src, pref, out = gpu.memory.upload(pts.limbs), gpu.memory.alloc(48 * pairs), gpu.memory.alloc(96 * pairs)
    proj, dst = gpu.memory.alloc(192 * runs), gpu.memory.alloc(96 * runs)
    try:
        mod = "batch_affine"
        gpu.device.kernel(mod, "g1_affine_pair_sums").launch((-(-pairs // (per * 64)),), (64,),
                                                             [src, pairs, per, pref, out], gpu.device.stream)
        got = G1Array(gpu.memory.download_array(out, (pairs, 12)))
        gpu.device.kernel(mod, "g1_xyzz_run_sums").launch((-(-runs // 64),), (64,), [src, 2 * pairs, run, proj],
                                                          gpu.device.stream)
        gpu.fixed_base_ops.normalize(1, proj, runs, pref, dst)
        got_runs = G1Array(gpu.memory.download_array(dst, (runs, 12)))
    finally:
        gpu.memory.free(src, pref, out, proj, dst)
    assert got == G1Array(pts.limbs[0::2]) + G1Array(pts.limbs[1::2])
    want_runs = [CPU.batch_sum(G1Array(pts.limbs[k * run:(k + 1) * run]), 1).limbs[0] for k in range(runs)]
    assert got_runs == G1Array(np.array(want_runs))
