# SPDX-License-Identifier: Apache-2.0
"""The GPU backend against the CPU backend, bit for bit (marked gpu: skipped
without a CUDA device). The option objects the tests run with (NttTuning,
the engines' settings) are made in the parametrize lists, at collection,
which CI runs without a device: a bound that refuses one fails there."""
import numpy as np
import pytest

from gpu_inputs import random_fr, random_points
import porep_prover as pp
from porep_prover import FrArray, G1Array, G2Array
from porep_prover.backend import get_backend, gpu_available
from porep_prover.circuits import porep_like, square_chain
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.field.constants import P, R
from porep_prover.groth16 import insecure_setup, prove, verify
from porep_prover.ntt.gpu import GpuNtt, NttTuning

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no CUDA device")]

CPU = get_backend("cpu")

# ---------------------------------------------------------------- field

@pytest.mark.parametrize("n", [1, 255, 4097])
def test_fr_products_match_cpu(gpu, n, rng):
    a, b = random_fr(n, rng), random_fr(n, rng)
    bufs = [gpu.memory.upload(a.limbs), gpu.memory.upload(b.limbs), gpu.memory.alloc(32 * n)]
    gpu.device.launch("ntt", "fr_mul_vec", n, [bufs[2], bufs[0], bufs[1], n])
    got = FrArray(gpu.memory.download_array(bufs[2], (n, 4)))
    gpu.memory.free(*bufs)
    assert got == a * b


def _limbs_to_ints(limbs):
    return [sum(int(w) << (64 * k) for k, w in enumerate(row)) for row in limbs]


def _ints_to_limbs(values, words):
    return np.array([[(v >> (64 * k)) & ((1 << 64) - 1) for k in range(words)] for v in values], dtype=np.uint64)


FQ_CHAIN, FR_CHAIN = (P, 6, "g1_fq_mul_chain"), (R, 4, "fr_mul_chain")
FQ64_CHAIN = (P, 6, "fq64_mul_chain")  # the same values through 8 x 48-bit limbs on the FP64 pipe


@pytest.mark.usefixtures("benchmark_modules")
@pytest.mark.parametrize("field,module", [(FQ_CHAIN, "msm_g1"), (FQ_CHAIN, "msm_g1.fq_inline"),
                                          (FQ_CHAIN, "msm_g1.lohi"), (FQ_CHAIN, "msm_g1.align4"),
                                          (FR_CHAIN, "ntt"), (FR_CHAIN, "ntt.lohi"), (FR_CHAIN, "ntt.align4"),
                                          (FR_CHAIN, "ntt.redc_generic"), (FQ64_CHAIN, "fq_pipes")])
@pytest.mark.parametrize("n,iters", [(1, 1), (333, 1), (1025, 3)])
def test_products_match_python(gpu, field, module, n, iters, rng):
    """x y^iters / R^iters mod m in Montgomery limbs (R = 2^(64 words)), by
    every build's product; edge values (0, 1, m - 1, R mod m, m - R mod m, and
    values whose halves are equal, or one of them zero or all ones) included."""
    m, words, kernel = field
    r_mont = (1 << (64 * words)) % m
    half = 32 * words
    k = (m >> half) - 1
    edge = [0, 1, m - 1, r_mont, m - r_mont, k * (1 + (1 << half)), k << half, (1 << half) - 1]
    x = (edge + [rng.randrange(m) for _ in range(n)])[:n]
    y = ([rng.randrange(m) for _ in range(n)][::-1] + edge)[-n:]
    bx, by = gpu.memory.upload(_ints_to_limbs(x, words)), gpu.memory.upload(_ints_to_limbs(y, words))
    gpu.device.kernel(module, kernel).launch((3,), (96,), [bx, by, n, iters], gpu.device.stream)
    got = _limbs_to_ints(gpu.memory.download_array(bx, (n, words)))
    gpu.memory.free(bx, by)
    r_inv = pow(1 << (64 * words), -1, m)
    assert got == [a * pow(b * r_inv, iters, m) % m for a, b in zip(x, y)]


@pytest.mark.usefixtures("benchmark_modules")
@pytest.mark.parametrize("fp64_warps", [0, 3, 8])
def test_products_on_both_pipes_match_python(gpu, fp64_warps, rng):
    """fp64_warps of every 8 warps multiply on the FP64 pipe, the rest on the
    integer pipe: every element gets x y^iters / R^iters mod p either way,
    long chains (whose signed limbs never pass through a canonical form)
    and values whose 48-bit limbs are all ones included."""
    n, iters = 1100, 40
    edge = [0, 1, P - 1, (1 << 384) % P, (1 << 336) - 1, P - ((1 << 288) - 1), ((1 << 48) - 1) << 288]
    x = (edge + [rng.randrange(P) for _ in range(n)])[:n]
    y = ([rng.randrange(P) for _ in range(n)][::-1] + edge)[-n:]
    bx, by = gpu.memory.upload(_ints_to_limbs(x, 6)), gpu.memory.upload(_ints_to_limbs(y, 6))
    gpu.device.kernel("fq_pipes", "fq_mul_chain_mixed").launch((4,), (128,), [bx, by, n, iters, fp64_warps],
                                                               gpu.device.stream)
    got = _limbs_to_ints(gpu.memory.download_array(bx, (n, 6)))
    gpu.memory.free(bx, by)
    r_inv = pow(1 << 384, -1, P)
    assert got == [a * pow(b * r_inv, iters, P) % P for a, b in zip(x, y)]


@pytest.mark.usefixtures("benchmark_modules")
@pytest.mark.parametrize("module", ["msm_g1", "msm_g1.fq_inline", "msm_g1.sqr_mul", "msm_g2"])
@pytest.mark.parametrize("n,iters", [(1, 1), (333, 1), (1025, 5)])
def test_squares_match_python(gpu, module, n, iters, rng):
    """x^(2^iters) / R^(2^iters - 1) mod p by repeated Montgomery squares (mont_sqr_wide,
    or the product in the sqr_mul build); edge values and values with all-ones
    limbs included (the square's carry chains at their longest)."""
    r_mont = (1 << 384) % P
    edge = [0, 1, 2, P - 1, P - 2, r_mont, P - r_mont, (1 << 380) - 1, (P >> 1), ((1 << 32) - 1) << 320]
    x = (edge + [rng.randrange(P) for _ in range(n)])[:n]
    bx = gpu.memory.upload(_ints_to_limbs(x, 6))
    gpu.device.kernel(module, f"g{module[5]}_fq_sqr_chain").launch((3,), (96,), [bx, n, iters], gpu.device.stream)
    got = _limbs_to_ints(gpu.memory.download_array(bx, (n, 6)))
    gpu.memory.free(bx)
    r_inv = pow(1 << 384, -1, P)
    want = []
    for v in x:
        for _ in range(iters):
            v = v * v * r_inv % P
        want.append(v)
    assert got == want


@pytest.mark.usefixtures("benchmark_modules")
@pytest.mark.parametrize("module", ["msm_g1", "msm_g1.fq_inline", "msm_g1.mul2_off", "msm_g2"])
@pytest.mark.parametrize("n", [1, 7, 1025])
def test_sums_of_products_match_python(gpu, module, n, rng):
    """(x y + z w) / R mod p in one reduction (mont_mul2_wide; two products in
    the mul2_off build), the four operands drawn apart, with edge values (p - 1
    in all four: the sum at its largest, 2 (p - 1)^2; 0; R mod p) mixed in."""
    r_mont = (1 << 384) % P
    edge = [P - 1, 0, 1, r_mont, P - r_mont, ((1 << 32) - 1) << 320]
    cols = []
    for k in range(4):
        col = [rng.randrange(P) for _ in range(n)]
        for i, v in enumerate(edge[:n]):
            col[i] = v if k % 2 == 0 or i == 0 else edge[(i + k) % len(edge)]
        cols.append(col)
    bufs = [gpu.memory.upload(_ints_to_limbs(col, 6)) for col in cols]
    gpu.device.kernel(module, f"g{module[5]}_fq_mul2_vec").launch((3,), (96,), bufs + [n], gpu.device.stream)
    got = _limbs_to_ints(gpu.memory.download_array(bufs[0], (n, 6)))
    gpu.memory.free(*bufs)
    r_inv = pow(1 << 384, -1, P)
    x, y, z, w = cols
    assert got == [(a * b + c * d) * r_inv % P for a, b, c, d in zip(x, y, z, w)]


@pytest.mark.parametrize("nbytes", [1, 1000, (1 << 20) + 1, 3 * (32 << 20) + 12345])
def test_staged_transfers_roundtrip(gpu, nbytes, rng):
    data = np.frombuffer(rng.randbytes(nbytes), dtype=np.uint8)
    buf = gpu.memory.upload(data)
    back = gpu.memory.download_array(buf, (nbytes,), np.uint8)
    gpu.memory.free(buf)
    assert np.array_equal(back, data)


def test_work_buffers_are_pooled_and_give_way(gpu, rng):
    """A work buffer comes from the pool and, given back, stays there for the
    next (no cuMemFree on the clock); an allocation the pool's unused memory
    would block still succeeds (the pool gives it back), and the data a pooled
    buffer carried through the stream arrives whole."""
    if not gpu.memory.pooled:
        pytest.skip("the device has no memory pools")
    size = 1 << 30
    data = np.frombuffer(rng.randbytes(3 * (1 << 20) + 17), dtype=np.uint8)
    buf = gpu.memory.work_alloc(size)
    assert buf.pooled
    buf.upload(data, 12345, gpu.device.stream)
    assert np.array_equal(gpu.memory.download_array(buf, (12345 + len(data),), np.uint8)[12345:], data)
    gpu.memory.free(buf)
    gpu.device.synchronize()
    kept = gpu.device.ctx.mem_info()[0]
    again = gpu.memory.work_alloc(size)                  # served from the pool: nothing more taken from the device
    assert gpu.device.ctx.mem_info()[0] >= kept - (64 << 20)
    gpu.memory.free(again)
    gpu.device.synchronize()
    limit, gpu.device.ctx.limit = gpu.device.ctx.limit, 0     # the card itself, not the budget, is what runs short
    try:
        big = gpu.memory.try_alloc(gpu.device.ctx.mem_info()[0] + size // 2)   # only with the pool's gigabyte back
        assert big is not None
        gpu.memory.free(big)
    finally:
        gpu.device.ctx.limit = limit


# ---------------------------------------------------------------- NTT

@pytest.mark.parametrize("log_n", [0, 1, 2, 5, 9, 10, 11, 12, 17, 21])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("coset", [False, True])
def test_ntt_matches_cpu(gpu, log_n, inverse, coset, rng):
    xs = random_fr(1 << log_n, rng)
    assert gpu.ntt(xs, inverse, coset, 1) == CPU.ntt(xs, inverse, coset, 2)


@pytest.mark.usefixtures("benchmark_modules")
@pytest.mark.parametrize("tuning", [NttTuning("ntt.align4", 11, 256), NttTuning("ntt", 11, 256),
                                    NttTuning("ntt", 12, 512), NttTuning("ntt.align4", 12, 128)],
                         ids=lambda t: f"{t.module}-{t.block_log}-{t.threads}")
@pytest.mark.parametrize("log_n", [1, 4, 13, 21])
def test_ntt_pass_builds_and_shapes_match_cpu(gpu, tuning, log_n, rng):
    """The pass kernel's other builds and block shapes (the benchmarks' sweep) give the same transforms."""
    xs = random_fr(1 << log_n, rng)
    ops = GpuNtt(gpu.device, tuning)
    try:
        for inverse, coset in ((False, False), (True, True), (False, True)):
            assert ops.ntt(xs, inverse, coset) == CPU.ntt(xs, inverse, coset, 2)
    finally:
        ops.close()


@pytest.mark.parametrize("log_n", [1, 3, 10, 13, 20])
@pytest.mark.parametrize("flavor", ["bellman", "snarkjs"])
def test_h_poly_matches_cpu(gpu, log_n, flavor, rng):
    n = 1 << log_n
    a, b, c = (random_fr(n, rng) for _ in range(3))
    want = CPU.h_poly(a.copy(), b.copy(), c.copy(), 2, flavor)
    assert gpu.h_poly(a, b, c, 1, flavor) == want


@pytest.mark.parametrize("tuning", [NttTuning(), NttTuning("ntt", 11, 256)], ids=["default", "ntt-11-256"])
@pytest.mark.parametrize("log_n", [1, 2, 9, 13, 14, 21])
def test_compact_twiddles_match_cpu(gpu, tuning, log_n, rng):
    """The twiddles as two small tables a direction (what a plan short of
    device memory sets): every transform and H the same as the CPU's, for
    domains whose tables split evenly and unevenly, the largest built first
    and a smaller one served from it after."""
    xs = random_fr(1 << log_n, rng)
    ops = GpuNtt(gpu.device, tuning)
    ops.set_compact_twiddles(True)
    try:
        for inverse, coset in ((False, False), (True, False), (True, True), (False, True)):
            assert ops.ntt(xs, inverse, coset) == CPU.ntt(xs, inverse, coset, 2)
        assert all(tw.bits > 0 for tw in ops._twiddles.values())
        small = random_fr(1 << max(1, log_n - 3), rng)         # served by the larger domain's tables, at a stride
        assert ops.ntt(small, False, True) == CPU.ntt(small, False, True, 2)
        a, b, c = (random_fr(1 << log_n, rng) for _ in range(3))
        for flavor in ("bellman", "snarkjs"):
            assert ops.h_poly(a, b, c, flavor) == CPU.h_poly(a.copy(), b.copy(), c.copy(), 2, flavor)
    finally:
        ops.close()


def test_ntt_public_api(rng):
    xs = random_fr(1 << 14, rng)
    assert pp.ntt(xs, coset=True, backend="gpu") == pp.ntt(xs, coset=True, backend="cpu")
    assert pp.ntt(pp.ntt(xs, backend="gpu"), inverse=True, backend="gpu") == xs


# ---------------------------------------------------------------- proofs

@pytest.mark.parametrize("make", [square_chain, porep_like], ids=["square_chain", "porep_like"])
def test_proof_on_gpu_verifies(make, rng):
    r1cs, witness, public = make(3000)
    params = insecure_setup(r1cs, rng=rng)
    proof = prove(params, r1cs, witness, backend="gpu", rng=rng)
    assert verify(params.vk, public, proof)
    assert not verify(params.vk, [(public[0] + 1) % R] + list(public[1:]), proof)


# ---------------------------------------------------------------- engine paths

@pytest.mark.parametrize("flavor", ["bellman", "snarkjs"])
def test_h_scalars_stay_on_device(gpu, flavor, rng):
    """H kept on the device feeds the MSM exactly as the downloaded H would."""
    n = 1 << 12
    a, b, c = (random_fr(n, rng) for _ in range(3))
    want = CPU.h_poly(a.copy(), b.copy(), c.copy(), 2, flavor)
    on_device = gpu.h_scalars(a, b, c, 1, flavor)
    try:
        assert len(on_device) == len(want)
        pts = random_points(G1Array, rng, len(want))
        assert gpu.msm(pts, on_device, 1)[0] == CPU.msm(pts, want, 2)[0]
    finally:
        on_device.close()


def _partition(rng):
    """A synthesized partition of random arrays, sizes not multiples of the arena alignment."""
    from porep_prover.groth16.prover import HostAssignment
    return HostAssignment(*(random_fr(k, rng) for k in (4096, 4096, 4096, 3001, 2999, 1001)))


def test_prepared_partition_is_pinned_and_equal(gpu, rng):
    synth = _partition(rng)
    staged = gpu.prepare(synth)
    first = staged.arena.address
    try:
        for f in ("a", "b", "c", "l_scalars", "a_scalars", "b_scalars"):
            got, want = getattr(staged.assignment, f), getattr(synth, f)
            assert got == want and got.limbs.ctypes.data != want.limbs.ctypes.data
            assert gpu.memory.pinned.contains(got.limbs.reshape(-1).view(np.uint8))
            assert not gpu.memory.pinned.contains(want.limbs.reshape(-1).view(np.uint8))
        buf = gpu.memory.upload(staged.assignment.l_scalars.limbs)      # the direct (DMA) path
        back = gpu.memory.download_array(buf, (3001, 4))
        gpu.memory.free(buf)
        assert np.array_equal(back, synth.l_scalars.limbs)
    finally:
        gpu.release_prepared(staged)
    again = gpu.prepare(synth)                               # the arena is reused
    assert again.arena.address == first
    gpu.release_prepared(again)


def test_prepared_ahead_copies_are_handed_over_once(gpu, rng):
    synth = _partition(rng)
    staged = gpu.prepare(synth, ahead=True)
    try:
        assert len(staged.ahead) == 6 and len(gpu.memory._ahead) == 6
        first = gpu.memory.upload(staged.assignment.b_scalars.limbs)     # the copy made ahead
        second = gpu.memory.upload(staged.assignment.b_scalars.limbs)    # a fresh upload: the copy went once
        assert first is not second and len(gpu.memory._ahead) == 5
        for buf in (first, second):
            assert np.array_equal(gpu.memory.download_array(buf, (1001, 4)), synth.b_scalars.limbs)
        gpu.memory.free(first, second)
        part = gpu.memory.upload(staged.assignment.a_scalars.limbs[:1000])   # not what was copied: uploaded in full
        assert np.array_equal(gpu.memory.download_array(part, (1000, 4)), synth.a_scalars.limbs[:1000])
        gpu.memory.free(part)
    finally:
        gpu.release_prepared(staged)
    assert gpu.memory._ahead == {} and staged.ahead == []


@pytest.mark.parametrize("cfg", [load_config(overrides={"engine.devices": ["gpu:0"], "engine.partition_workers": 2,
                                                       "prover.b_g2": b_g2, "prover.upload": upload,
                                                       "prover.msm_tables": tables})
                                 for b_g2, upload, tables in (("host", "region", False), ("device", "ahead", True))],
                         ids=lambda cfg: "-".join(str(cfg.get(key))
                                                  for key in ("prover.b_g2", "prover.upload", "prover.msm_tables")))
def test_engine_on_gpu_proofs_verify(gpu, cfg, rng):
    r1cs, _, _ = porep_like(2000)
    params = insecure_setup(r1cs, rng=rng)
    witnesses = [porep_like(2000, seed=rng.randrange(1 << 30))[1] for _ in range(5)]
    tables = cfg.get("prover.msm_tables")
    tables_before = gpu.msm_ops.tables
    with Engine(cfg) as engine:
        result = engine.prove(inline_job(params, r1cs, witnesses), timeout=300)
        events = engine.timeline.events()
        # inside: the engine drops its parameters' device copies, tables with them, when it shuts down
        made = [key for key in gpu.memory.resident._resident if not isinstance(key, int)]
    assert result.ok and bool(made) == tables      # the tables were made, and used by every proof
    assert gpu.lane.options is None and gpu.msm_ops.tables == tables_before   # the engine's lanes had them
    for w, public, proof in zip(witnesses, result.public_inputs, result.proofs):
        assert public == w[1:r1cs.num_inputs].to_ints() and verify(params.vk, public, proof)
    kinds = {e.event for e in events}
    assert {"PREP_START", "PREP_END", "GPU_START", "GPU_END"} <= kinds


# ---------------------------------------------------------------- fixed base (parameter generation)

@pytest.mark.parametrize("cls", [G1Array, G2Array], ids=["g1", "g2"])
@pytest.mark.parametrize("n", [1, 31, 33, 1000])
def test_fixed_base_matches_cpu(gpu, cls, n, rng):
    ints = [rng.randrange(R) for _ in range(n)]
    specials = [0, 1, R - 1, 2, 1 << 200, 255, (255 << 248) % R]
    ints[:len(specials)] = specials[:n]
    if n > 20:
        ints[-5:] = [ints[7]] * 5                      # repeated scalars
    scalars = FrArray.from_ints(ints)
    base = cls.generator() if rng.random() < 0.5 else cls.generator().scale([rng.randrange(1, R)])
    assert np.array_equal(gpu.fixed_base(base, scalars, 1).limbs, CPU.fixed_base(base, scalars, 2).limbs)


def test_fixed_base_in_chunks(gpu, rng, monkeypatch):
    import sys
    monkeypatch.setattr(sys.modules["porep_prover.msm.gpu.fixed_base"], "CHUNK", 1000)
    scalars = random_fr(2500, rng)
    base = G1Array.generator()
    assert np.array_equal(gpu.fixed_base(base, scalars, 1).limbs, CPU.fixed_base(base, scalars, 2).limbs)


def test_insecure_setup_on_gpu_equals_cpu(rng):
    import random
    r1cs, witness, public = porep_like(3000)
    seed = rng.randrange(1 << 30)
    on_gpu = insecure_setup(r1cs, rng=random.Random(seed), backend="gpu", warn=False)
    on_cpu = insecure_setup(r1cs, rng=random.Random(seed), backend="cpu", warn=False)
    for q in ("h", "l", "a", "b_g1", "b_g2"):
        assert np.array_equal(getattr(on_gpu, q).limbs, getattr(on_cpu, q).limbs), q
    assert verify(on_gpu.vk, public, prove(on_gpu, r1cs, witness, backend="gpu", rng=rng))


# ---------------------------------------------------------------- A, B, C on the device

@pytest.mark.parametrize("tabled", [False, True], ids=["direct", "tabled"])
def test_matvec_on_device_matches_cpu(gpu, tabled, rng):
    from porep_prover.groth16 import R1CS
    r1cs, witness, _ = porep_like(3000, seed=rng.randrange(1000))
    if tabled:
        r1cs = R1CS(r1cs.num_inputs, r1cs.num_aux, *(m.tabled() for m in (r1cs.a, r1cs.b, r1cs.c)))
    n, m, k = r1cs.domain_size, r1cs.num_constraints, r1cs.num_inputs
    want = r1cs.evaluate(witness, 2, length=n)
    want[0].limbs[m:m + k] = witness.limbs[:k]
    from porep_prover.cuda.arrays import DeviceScalars
    w = DeviceScalars(gpu.memory, gpu.memory.upload(witness.limbs), len(witness))
    bufs = gpu.r1cs_ops.evaluate(r1cs, w, n, check=True)
    w.close()
    try:
        for buf, expect in zip(bufs, want):
            assert np.array_equal(gpu.memory.download_array(buf, (n, 4)), expect.limbs)
    finally:
        gpu.memory.free(*bufs)


@pytest.mark.parametrize("make", [square_chain, porep_like], ids=["square_chain", "porep_like"])
def test_public_prove_with_matvec_on_device(make, rng):
    from porep_prover.errors import UnsatisfiedError
    r1cs, witness, public = make(3001)
    params = insecure_setup(r1cs, rng=rng)
    timings: dict = {}
    proof = prove(params, r1cs, witness, backend="gpu", matvec="device", timings=timings)
    assert verify(params.vk, public, proof) and {"synthesis", "h_poly", "msm_g1"} <= set(timings)
    ints = witness.to_ints()
    ints[-1] = (ints[-1] + 1) % R
    bad = FrArray.from_ints(ints)
    with pytest.raises(UnsatisfiedError) as cpu_err:
        r1cs.check(bad, 2)
    with pytest.raises(UnsatisfiedError) as gpu_err:
        prove(params, r1cs, bad, backend="gpu", matvec="device")
    assert gpu_err.value.constraint == cpu_err.value.constraint


def test_unsatisfied_on_device_names_the_first_failing_constraint(gpu, rng):
    from porep_prover.errors import UnsatisfiedError
    r1cs, witness, _ = square_chain(2000)
    bad = witness.copy()
    at = 2 + rng.randrange(1500, 1990)
    bad.limbs[at] = FrArray.from_ints([3]).limbs[0]
    with pytest.raises(UnsatisfiedError) as cpu_err:
        r1cs.check(bad, 2)
    with pytest.raises(UnsatisfiedError) as gpu_err:
        gpu.h_and_witness(r1cs, bad, 1)
    assert gpu_err.value.constraint == cpu_err.value.constraint


def test_witness_kept_on_the_device_gives_every_query_s_scalars(gpu, rng):
    from porep_prover.errors import InvalidInputError, LengthMismatchError
    from porep_prover.groth16.prover import query_scalars
    r1cs, witness, _ = porep_like(2000 + rng.randrange(700), seed=rng.randrange(1 << 20))
    k, n = r1cs.num_inputs, r1cs.domain_size
    h, w = gpu.h_and_witness(r1cs, witness, 1)
    alone, again = gpu.h_and_witness(r1cs, witness, 1)
    try:
        assert np.array_equal(gpu.memory.download_array(h.buffer, (n - 1, 4)),
                              gpu.memory.download_array(alone.buffer, (n - 1, 4)))
        assert np.array_equal(gpu.memory.download_array(w.buffer, (len(witness), 4)), witness.limbs)
        tail = w[k:]                                      # a view: the L query's scalars, not a copy
        assert len(tail) == r1cs.num_aux and tail.address() == w.address(k)
        pts = random_points(G1Array, rng, r1cs.num_aux)
        assert gpu.msm(pts, tail, 1)[0] == CPU.msm(pts, witness[k:], 2)[0]
        with pytest.raises(LengthMismatchError):
            gpu.msm(pts, w[k + 1:], 1)
        for q in "ab":
            got = gpu.take(w, r1cs.query_index(q, np.uint32))
            try:
                assert np.array_equal(gpu.memory.download_array(got.buffer, (len(got), 4)),
                                      query_scalars(r1cs, witness, q, 2).limbs)
            finally:
                got.close()
        past = np.array([0, len(witness) + rng.randrange(9)], dtype=np.uint32)
        with pytest.raises(InvalidInputError, match=r"index\[1\]"):
            gpu.take(w, past)
        with pytest.raises(InvalidInputError):
            gpu.take(w, r1cs.query_index("a"))               # int64: not the device's index type
        tail.close()                                      # a view frees nothing
        assert w.buffer is not None
    finally:
        for arr in (h, w, alone, again):
            arr.close()


ABC_ON_DEVICE = {"engine.devices": ["gpu:0"], "prover.matvec": "device", "prover.b_g2": "device"}


@pytest.mark.parametrize("make,cfg", [(make, load_config(overrides={**ABC_ON_DEVICE, "prover.upload": upload}))
                                      for make, upload in ((square_chain, "region"), (porep_like, "ahead"))],
                         ids=["square_chain", "porep_like"])
def test_proof_with_abc_on_device_verifies(make, cfg, rng):
    from porep_prover.groth16.prover import WitnessAssignment, finish, prove_device, synthesize
    r1cs, witness, public = make(3000)
    params = insecure_setup(r1cs, rng=rng)
    gpu = get_backend("gpu")
    synth = synthesize(params, r1cs, witness, 2, abc_on_device=True)
    assert isinstance(synth, WitnessAssignment)
    proof = finish(gpu, params, synth, prove_device(gpu, params, synth, 1, host=get_backend("cpu")), 1, rng=rng)
    assert verify(params.vk, public, proof)
    with Engine(cfg) as engine:
        result = engine.prove(inline_job(params, r1cs, [witness] * 3), timeout=300)
        (key,) = [s["key"] for s in engine.srs.status()]
        assert engine.plans.get(key).matvec_on_device
    assert result.ok and all(verify(params.vk, public, p) for p in result.proofs)
