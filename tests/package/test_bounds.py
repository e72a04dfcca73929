# SPDX-License-Identifier: Apache-2.0
"""Every number has a range: thread counts (arguments, POREP_PROVER_THREADS),
the other environment numbers, the engine's settings and the demo circuits'
sizes take values inside it and refuse those outside with a named error
that states it, before anything reaches native code or starts a thread."""
import math
import random

import pytest

from porep_prover import FrArray, G1Array, G2Array, batch_sum, msm, ntt
from porep_prover import circuits, config
from porep_prover.backend.cpu import CpuBackend
from porep_prover.engine.config import build, load_config
from porep_prover.errors import ConfigError, InvalidInputError
from porep_prover.hooks import installed_settings

MAX = config.MAX_THREADS
OUTSIDE_THREADS = [0, -1, MAX + 1, 100_000, 2**31, 2**63, True, 1.5, math.nan, math.inf, "4"]


def _points(rng, n, group=G1Array):
    return group.generator(1).scale([rng.randrange(1, 2**64) for _ in range(n)])


def _scalars(rng, n):
    return FrArray.from_ints([rng.randrange(2**250) for _ in range(n)])


# ------------------------------------------------------------------ threads


@pytest.mark.parametrize("threads", OUTSIDE_THREADS)
def test_threads_outside_the_range_are_named_errors(rng, threads):
    pts, sc = _points(rng, 5), _scalars(rng, 5)
    calls = [lambda: msm(pts, sc, threads=threads), lambda: ntt(_scalars(rng, 8), threads=threads),
             lambda: batch_sum(pts, threads=threads),
             lambda: G1Array.from_bytes(pts.to_bytes(), threads=threads),
             lambda: pts.to_bytes(threads=threads), lambda: FrArray.from_bytes(sc.to_bytes(), threads=threads),
             lambda: CpuBackend().msm(pts, sc, threads)[0], lambda: CpuBackend().ntt(sc[:4], False, False, threads)]
    for call in calls:
        with pytest.raises(InvalidInputError, match=f"from 1 to {MAX}"):
            call()


def test_the_most_threads_run_msm_ntt_and_decode_correctly(rng):
    n = 301
    pts, sc = _points(rng, n), _scalars(rng, n)
    assert msm(pts, sc, threads=MAX) == msm(pts, sc, threads=1)
    values = _scalars(rng, 512)
    assert ntt(values, threads=MAX) == ntt(values, threads=1)
    assert ntt(ntt(values, threads=MAX), inverse=True, threads=MAX) == values
    assert G1Array.from_bytes(pts.to_bytes(threads=MAX), threads=MAX) == pts
    g2 = _points(rng, 7, G2Array)
    assert G2Array.from_bytes(g2.to_bytes(compressed=False), compressed=False, threads=MAX) == g2
    assert batch_sum(pts, threads=MAX) == batch_sum(pts, threads=1)


def test_numpy_integers_are_thread_counts():
    np = pytest.importorskip("numpy")
    assert config.resolve_threads(np.int64(3)) == 3 and type(config.resolve_threads(np.int32(3))) is int


@pytest.mark.parametrize("value", ["0", str(MAX + 1), "100000", str(2**31), str(2**63), "-1", "nan", "inf",
                                   "4.0", "x", "9" * 5000])
def test_porep_prover_threads_outside_the_range(monkeypatch, value):
    monkeypatch.setenv("POREP_PROVER_THREADS", value)
    with pytest.raises(InvalidInputError, match=f"POREP_PROVER_THREADS.*from 1 to {MAX}"):
        config.default_threads()
    with pytest.raises(InvalidInputError, match="POREP_PROVER_THREADS"):
        msm(G1Array.generator(2), FrArray.from_ints([1, 2]))


@pytest.mark.parametrize("value", ["1", str(MAX)])
def test_porep_prover_threads_inside_the_range(monkeypatch, value):
    monkeypatch.setenv("POREP_PROVER_THREADS", value)
    assert config.default_threads() == int(value)


def test_default_threads_without_the_variable_is_bounded(monkeypatch):
    monkeypatch.delenv("POREP_PROVER_THREADS", raising=False)
    assert 1 <= config.default_threads() <= MAX


def test_threads_default_sets_and_restores(monkeypatch):
    monkeypatch.delenv("POREP_PROVER_THREADS", raising=False)
    before = config.default_threads()
    with config.threads_default(3):
        assert config.default_threads() == 3 and config.resolve_threads(None) == 3
        with config.threads_default(None):
            assert config.default_threads() == 3
    assert config.default_threads() == before
    with pytest.raises(InvalidInputError, match=f"from 1 to {MAX}"):
        with config.threads_default(MAX + 1):
            pass
    assert config.default_threads() == before


@pytest.mark.parametrize("name, top", [("POREP_PROVER_GPU_RESIDENT_BYTES", config.MAX_RESIDENT_BYTES),
                                       ("POREP_PROVER_GPU_MSM_TABLE_COPIES", config.MAX_TABLE_COPIES),
                                       ("POREP_PROVER_GPU_MSM_TABLES", 1)])
def test_environment_numbers_are_bounded(monkeypatch, name, top):
    read = {"POREP_PROVER_GPU_RESIDENT_BYTES": config.gpu_resident_bytes,
            "POREP_PROVER_GPU_MSM_TABLE_COPIES": config.gpu_msm_table_copies,
            "POREP_PROVER_GPU_MSM_TABLES": config.gpu_msm_tables}[name]
    for inside in (0, top):
        monkeypatch.setenv(name, str(inside))
        assert read() == (bool(inside) if name.endswith("TABLES") else inside)
    for outside in (-1, top + 1, 2**63, "nan", "inf"):
        monkeypatch.setenv(name, str(outside))
        with pytest.raises(InvalidInputError, match=f"{name}.*from 0 to {top}"):
            read()


def test_gpu_environment_is_read_once_per_process(monkeypatch, tmp_path):
    """The GPU backends get their settings as values, read once: a variable
    changed later is not seen; one out of its range is an error, not kept."""
    config.gpu_environment.cache_clear()
    try:
        copies = random.randrange(1, config.MAX_TABLE_COPIES + 1)
        monkeypatch.setenv("POREP_PROVER_GPU_MSM_TABLE_COPIES", "-3")
        with pytest.raises(InvalidInputError, match="POREP_PROVER_GPU_MSM_TABLE_COPIES"):
            config.gpu_environment()
        monkeypatch.setenv("POREP_PROVER_GPU_MSM_TABLE_COPIES", str(copies))
        monkeypatch.setenv("POREP_PROVER_GPU_MSM_TABLES", "1")
        monkeypatch.setenv("POREP_PROVER_CACHE_DIR", str(tmp_path))
        monkeypatch.delenv("POREP_PROVER_GPU_RESIDENT_BYTES", raising=False)
        first = config.gpu_environment()
        assert first == config.GpuEnvironment(None, True, copies, str(tmp_path))
        monkeypatch.setenv("POREP_PROVER_GPU_MSM_TABLES", "0")
        assert config.gpu_environment() is first
    finally:
        config.gpu_environment.cache_clear()     # the next reader sees the environment as the test leaves it


# ------------------------------------------------------------------ engine settings

# key -> (lowest, highest) allowed
RANGES = {
    "engine.gpu_workers_per_device": (1, 16),
    "engine.partition_workers": (0, 256),
    "engine.synthesis_lookahead": (1, 256),
    "engine.memory_budget_gib": (0, 2**20),
    "engine.threads": (0, MAX),
    "engine.synthesis_threads": (0, MAX),
    "engine.switch_interval_ms": (0, 1000),
    "engine.provider_timeout_seconds": (0, 7 * 86400),
    "engine.sink_timeout_seconds": (0.01, 7 * 86400),
    "engine.provider_stall_seconds": (0, 7 * 86400),
    "engine.timeline_events": (0, 10_000_000),
    "prover.max_retries": (0, 100),
    "prover.msm_table_copies": (0, config.MAX_TABLE_COPIES),
    "srs.idle_evict_seconds": (0, 365 * 86400),
    "srs.budget_gib": (0, 2**20),
    "engine.device_memory_gib": (0, 2**20),
    "daemon.max_pending": (1, 1_000_000),
    "daemon.max_waiters": (1, 4096),
    "daemon.max_request_bytes": (1024, 2**31 - 1),
    "daemon.max_job_constraints": (0, 2**50),
    "daemon.params_cache_gib": (0, 2**20),
    "daemon.result_retention_seconds": (1, 365 * 86400),
    "daemon.fetched_retention_seconds": (1, 365 * 86400),
    "daemon.drain_timeout_seconds": (0, 86400),
    "ray.partitions_per_node": (1, 256),
    "ray.poll_seconds": (0.05, 60),
    "ray.node_start_timeout_seconds": (1, 86400),
    "ray.partition_timeout_seconds": (1, 7 * 86400),
}
# the sections installed: the built-ins', and [ray] where its plugin is
SECTIONS = installed_settings()
RANGES = {key: bounds for key, bounds in RANGES.items() if SECTIONS.has_section(key.split(".")[0])}


def test_every_number_setting_has_a_range():
    numbers = {k for k, d in SECTIONS.defaults().items() if isinstance(d, (int, float)) and not isinstance(d, bool)}
    assert numbers == set(RANGES)


@pytest.mark.parametrize("key", sorted(RANGES))
def test_settings_just_inside_their_range(key):
    low, high = RANGES[key]
    for value in (low, high):
        assert build({key: value}, SECTIONS).get(key) == value
    if isinstance(SECTIONS.setting(key).default, float):
        assert build({key: high - 0.5}, SECTIONS).get(key) == high - 0.5


@pytest.mark.parametrize("key", sorted(RANGES))
def test_settings_outside_their_range_name_the_key_and_range(key):
    low, high = RANGES[key]
    outside = [low - 1, high + 1, 2**31 + high, 2**63, -(2**63)]
    if isinstance(SECTIONS.setting(key).default, float):
        outside += [math.inf, -math.inf, math.nan, 1e300, high + 1e-6]
    for value in outside:
        with pytest.raises(ConfigError, match=rf"{key}.* from {low} to {high}") as err:
            build({key: value}, SECTIONS)
        assert err.value.key == key


@pytest.mark.parametrize("text", ["engine.partition_workers=100000", "engine.memory_budget_gib=inf",
                                  "srs.budget_gib=1e300", "engine.switch_interval_ms=nan", "engine.threads=2147483648",
                                  "prover.max_retries=9223372036854775808", "srs.idle_evict_seconds=-inf"])
def test_overrides_and_files_outside_the_range(tmp_path, text):
    key, value = text.split("=")
    with pytest.raises(ConfigError, match="from .* to") as err:
        load_config(None, [text])
    assert err.value.key == key
    section, name = key.split(".")
    path = tmp_path / "bad.toml"
    path.write_text(f"[{section}]\n{name} = {value}\n")
    with pytest.raises(ConfigError, match="from .* to") as err:
        load_config(path)
    assert err.value.key == key


@pytest.mark.parametrize("overrides,named", [({1: 2}, "dotted string"), ({None: "x"}, "dotted string"),
                                             ("engine.threads=2", "not str"), (b"engine.threads=2", "not bytes"),
                                             ([3], "KEY=VALUE string, not int"), (42, "not int"),
                                             ({"engine.threads": 2}.items(), "not dict_items")])
def test_overrides_of_the_wrong_shape_are_refused_by_name(overrides, named):
    """load_config's overrides are a mapping with string keys or a list of
    KEY=VALUE strings: anything else is the library's own ConfigError naming
    what was given, never an AttributeError from deep inside (a string alone
    is not read character by character)."""
    with pytest.raises(ConfigError, match=named):
        load_config(overrides=overrides)
    assert load_config(overrides=("engine.threads=2",)).get("engine.threads") == 2
    assert load_config(overrides={"engine.threads": 3}).get("engine.threads") == 3


def test_resolved_counts_stay_in_range():
    from porep_prover.engine import EngineSettings
    settings = EngineSettings.resolve(build({}))
    assert 1 <= settings.partition_workers <= 256 and 1 <= settings.synthesis_threads <= MAX
    assert 1 <= settings.threads <= MAX and settings.memory_budget_bytes > 0
    assert settings.provider_timeout == 3600.0 and EngineSettings.resolve(
        build({"engine.provider_timeout_seconds": 0})).provider_timeout is None      # 0: no limit


# ------------------------------------------------------------------ circuit sizes


@pytest.mark.parametrize("make, low", [(circuits.square_chain, 1), (circuits.porep_like, 8)])
def test_circuit_sizes_just_inside(make, low):
    for m in (low, low + 3):
        r1cs, witness, _ = make(m, seed=circuits.MAX_SEED)
        assert r1cs.num_constraints == m and r1cs.is_satisfied(witness)


@pytest.mark.parametrize("make, low", [(circuits.square_chain, 1), (circuits.porep_like, 8)])
@pytest.mark.parametrize("m", ["low - 1", 0, -1, circuits.MAX_CONSTRAINTS + 1, 2**31, 2**63, True, 8.0,
                               math.nan, math.inf, None])
def test_circuit_sizes_outside_name_the_range(make, low, m):
    m = low - 1 if m == "low - 1" else m
    with pytest.raises(InvalidInputError, match=f"from {low} to {circuits.MAX_CONSTRAINTS}"):
        make(m)


@pytest.mark.parametrize("seed", [-1, 2**64, 2**63 * 4, 1.5, None])
def test_circuit_seeds_outside_name_the_range(seed):
    for make in (circuits.square_chain, circuits.porep_like):
        with pytest.raises(InvalidInputError, match="seed must be an integer from 0 to"):
            make(16, seed=seed)


def test_porep_like_public_inputs_bound_the_constraints():
    r1cs, witness, public = circuits.porep_like(2 * 7, num_public=7)
    assert len(public) == 7 and r1cs.is_satisfied(witness)
    with pytest.raises(InvalidInputError, match="from 14 to"):
        circuits.porep_like(13, num_public=7)
    with pytest.raises(InvalidInputError, match="num_public must be an integer from 0 to"):
        circuits.porep_like(100, num_public=-1)


# ------------------------------------------------------------------ engine waits and jobs


@pytest.mark.parametrize("timeout", [-1, -0.5, math.nan, math.inf, 1e300, 2**63, 365 * 86400 + 1, "5", True])
def test_engine_timeouts_outside_the_range(timeout):
    from porep_prover.engine import Engine, Job
    from porep_prover.engine.jobs import JobHandle
    handle = JobHandle(Job("inline", 1), engine=None)
    with pytest.raises(InvalidInputError, match="timeout must be None or seconds from 0 to 31536000"):
        handle.result(timeout)
    engine = Engine(load_config(overrides={"engine.partition_workers": 1, "engine.threads": 1,
                                           "engine.devices": ["cpu"]}))
    try:
        with pytest.raises(InvalidInputError, match="timeout must be"):
            engine.shutdown(timeout=timeout)
        assert engine.status()["accepting"]        # refused before anything stopped
    finally:
        engine.shutdown(timeout=30)


def test_engine_timeouts_inside_the_range():
    from concurrent.futures import TimeoutError as FutureTimeout

    from porep_prover.engine import Job
    from porep_prover.engine.jobs import JobHandle
    handle = JobHandle(Job("inline", 1), engine=None)
    for timeout in (0, 0.01):
        with pytest.raises(FutureTimeout):
            handle.result(timeout)


@pytest.mark.parametrize("partitions", [0, -1, (1 << 16) + 1, 2**31, 2**63, True, 2.0, None])
def test_job_partitions_outside_the_range(partitions):
    from porep_prover.engine import Job
    with pytest.raises(InvalidInputError, match="from 1 to 65536"):
        Job("inline", partitions)
    assert Job("inline", 1 << 16).partitions == 1 << 16
