# SPDX-License-Identifier: Apache-2.0
"""The GPU lane that needs no GPU: every kernel compiles through NVRTC for
sm_80 and sm_90 (the benchmarks' own builds, from benchmarks/, for sm_90),
and the on-disk kernel cache keys, writes and reads safely."""
import threading

import pytest

from porep_prover import errors
from porep_prover.cuda import modules as gpu
from porep_prover.backend import kernels  # noqa: F401 - every package owning kernels registers them
from porep_prover.cuda.modules import INCLUDE, MODULES, PKG, build_modules
from porep_prover.cli import main
from porep_prover.cuda import compiler
from porep_prover.cuda.cache import MAGIC, KernelCache, cache_key

KERNELS = {
    "ntt": [b"ntt_pass", b"fr_powers", b"fr_scale", b"h_combine", b"fr_mul_vec", b"h_finish"],
    "msm_g1": [b"g1_msm_classify", b"g1_msm_digits", b"g1_msm_place", b"g1_msm_accumulate", b"g1_msm_accumulate_rows",
               b"g1_msm_accumulate_table", b"g1_msm_combine", b"g1_msm_accumulate_into", b"g1_msm_combine_into",
               b"g1_msm_reduce", b"g1_msm_fold", b"g1_msm_sum", b"g1_scan_tiles", b"g1_scan_sums", b"g1_scan_add",
               b"g1_fq_sqr_chain", b"g1_fq_mul2_vec"],
    "msm_g2": [b"g2_msm_accumulate", b"g2_msm_accumulate_rows", b"g2_msm_accumulate_table", b"g2_msm_combine",
               b"g2_msm_accumulate_into", b"g2_msm_combine_into",
               b"g2_msm_reduce", b"g2_msm_sum", b"g2_scan_tiles"],
    "r1cs": [b"r1cs_matvec", b"r1cs_unsatisfied", b"r1cs_take", b"r1cs_put"],
    "fixed_base_g1": [b"g1_fb_mul", b"g1_fb_normalize"],
    "fixed_base_g2": [b"g2_fb_mul", b"g2_fb_normalize"],
    "fq_pipes": [b"fq64_mul_chain", b"fq_mul_chain_mixed"],
    "batch_affine": [b"g1_affine_pair_sums", b"g1_xyzz_run_sums"],
}


@pytest.fixture(scope="module", params=["sm_80", "sm_90"])
def built(request, tmp_path_factory):
    cache = KernelCache(tmp_path_factory.mktemp(f"kernels-{request.param}"))
    return request.param, cache, build_modules(request.param, cache)


def test_every_kernel_compiles(built):
    arch, cache, modules = built
    assert set(modules) == set(MODULES)
    for name, cubin in modules.items():
        assert cubin[:4] == b"\x7fELF", name
        for kernel in KERNELS[name]:
            assert kernel in cubin, (arch, name, kernel)


def test_benchmark_builds_compile(tmp_path, benchmark_builds):
    """The builds only the benchmarks compile (benchmarks/gpu_builds.py: the
    backend's sources built another way, and benchmarks/kernels/) compile too,
    each holding its module's kernels."""
    cache = KernelCache(tmp_path)
    assert set(benchmark_builds.OWN) <= set(KERNELS) - set(MODULES)
    for name, (src, defines) in benchmark_builds.BUILDS.items():
        cubin = compiler.compile_cubin(src, INCLUDE, "sm_90", defines, cache, "0")
        assert cubin[:4] == b"\x7fELF", name
        assert all(kernel in cubin for kernel in KERNELS[name.split(".")[0]]), name


def test_the_package_holds_only_the_production_kernels(benchmark_builds):
    """Every .cu in the package is a source of MODULES (what pyproject ships);
    the benchmarks' kernels are outside it."""
    assert set(PKG.rglob("*.cu")) == {src for src, _ in MODULES.values()}
    assert all(not src.is_relative_to(PKG) for src, _ in benchmark_builds.OWN.values())


def test_a_benchmark_hands_the_backend_a_build(tmp_path, monkeypatch, benchmark_builds):
    """add_variant: a build named once (again with the same source and defines:
    no change); a production module's name, a taken name with other
    defines, or a missing source are named errors."""
    monkeypatch.setattr(gpu, "VARIANTS", {})
    benchmark_builds.add_builds()
    benchmark_builds.add_builds()
    assert gpu.VARIANTS == {name: (src.resolve(), defines) for name, (src, defines) in benchmark_builds.BUILDS.items()}
    src, defines = benchmark_builds.OWN["fq_pipes"]
    for name, source, other in (("msm_g1", MODULES["msm_g1"][0], MODULES["msm_g1"][1]),
                                ("fq_pipes", src, defines + ("MONT_ALIGN4",)),
                                ("fq_pipes.x", tmp_path / "missing.cu", ())):
        with pytest.raises(errors.InvalidInputError, match=name):
            gpu.add_variant(name, source, other)
    assert "fq_pipes.x" not in gpu.VARIANTS and gpu.VARIANTS["fq_pipes"] == (src.resolve(), defines)


def test_second_build_comes_from_the_cache(built, monkeypatch):
    arch, cache, modules = built
    monkeypatch.setattr(compiler, "_compile", lambda *a, **k: pytest.fail("compiled again"))
    assert build_modules(arch, cache) == modules


def test_compile_error_names_the_problem(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(int *p) { p[0] = undefined_name; }\n')
    with pytest.raises(errors.NvrtcError) as info:
        compiler.compile_cubin(bad, INCLUDE, "sm_90")
    assert "undefined_name" in info.value.log


def key(**changes):
    base = dict(source=b"src", headers={"a.cuh": b"A", "b.h": b"B"}, options=("-O3",), arch="sm_90",
                nvrtc_version=(13, 0), package_version="0.1.0")
    base.update(changes)
    return cache_key(**base)


def test_cache_key_covers_every_input():
    variants = [key(), key(source=b"src2"), key(headers={"a.cuh": b"A2", "b.h": b"B"}),
                key(headers={"a.cuh": b"A", "c.h": b"B"}), key(headers={"a.cuh": b"A"}), key(options=("-O2",)),
                key(arch="sm_80"), key(nvrtc_version=(13, 1)), key(package_version="0.2.0")]
    assert len(set(variants)) == len(variants)
    assert key() == key(headers={"b.h": b"B", "a.cuh": b"A"})  # order of discovery does not matter


def test_cache_roundtrip_and_corruption(tmp_path):
    cache = KernelCache(tmp_path)
    k = key()
    assert cache.get(k) is None
    payload = bytes(range(256)) * 40
    cache.put(k, payload)
    assert cache.get(k) == payload
    path = cache.path(k)
    raw = bytearray(path.read_bytes())
    raw[len(MAGIC) + 32 + 100] ^= 1                       # one flipped bit in the payload
    path.write_bytes(bytes(raw))
    assert cache.get(k) is None and not path.exists()     # a miss, and the bad entry is gone
    cache.put(k, payload)
    path.write_bytes(path.read_bytes()[:50])              # truncated
    assert cache.get(k) is None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a cache entry")
    assert cache.get(k) is None


def test_cache_writes_are_atomic(tmp_path):
    cache = KernelCache(tmp_path)
    k = key()
    payloads = [bytes([i]) * 200_000 for i in range(8)]
    seen = []

    def writer(p):
        for _ in range(5):
            cache.put(k, p)

    def reader():
        for _ in range(200):
            got = cache.get(k)
            if got is not None:
                seen.append(got)

    threads = [threading.Thread(target=writer, args=(p,)) for p in payloads] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.get(k) in payloads
    assert all(s in payloads for s in seen)               # never a mix or a partial file
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".tmp-")]


def test_gpu_warm_command_fills_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("POREP_PROVER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "_compile", lambda source, name, options, include_dirs: b"\x7fELF fake")
    assert main(["gpu", "warm", "--arch", "sm_90", "--arch", "sm_80"]) == 0
    out = capsys.readouterr().out
    count = len(MODULES)
    assert f"sm_90: {count} modules" in out and f"sm_80: {count} modules" in out
    assert len(list(tmp_path.rglob("*.cubin"))) == 2 * count


def test_fixed_base_spot_check_stops_a_wrong_product(rng):
    """The GPU fixed-base path recomputes a few products on the CPU; a wrong
    one raises instead of entering parameters (checked here without a GPU)."""
    import numpy as np

    from porep_prover import FrArray, G1Array
    from porep_prover.backend import get_backend
    from porep_prover.msm.gpu.fixed_base import GpuFixedBase
    from porep_prover.errors import DeviceResultError
    scalars = FrArray.from_ints([rng.randrange(1, 1 << 200) for _ in range(50)])
    base = G1Array.generator()
    good = get_backend("cpu").fixed_base(base, scalars, 1)
    GpuFixedBase._spot_check(base, scalars, good)
    for at in (0, 49):                                # the first and last are always checked
        bad = G1Array(good.limbs.copy())
        bad.limbs[at] = good.limbs[(at + 1) % 50]
        with pytest.raises(DeviceResultError, match=f"product {at} "):
            GpuFixedBase._spot_check(base, scalars, bad)
    assert np.array_equal(good.limbs, get_backend("cpu").fixed_base(base, scalars, 1).limbs)
