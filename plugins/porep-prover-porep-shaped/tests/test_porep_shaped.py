# SPDX-License-Identifier: Apache-2.0
import numpy as np
import pytest

pytest.importorskip("porep_prover_porep_shaped.plugin")

from porep_prover import FrArray  # noqa: E402
from porep_prover.engine import Engine, Job, SrsShape, load_config  # noqa: E402
from porep_prover.errors import InvalidInputError, JobFailedError, UnsatisfiedError  # noqa: E402
from porep_prover.groth16 import read_mapped, read_params, verify  # noqa: E402
from porep_prover.host_memory import is_mapped  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402
from porep_prover_porep_shaped import PARTITION, TARGET, build, counts, statistics, witness  # noqa: E402

SCALE = 2.0 ** -12       # 31,807 constraints: a 2^15 domain


@pytest.fixture(scope="module")
def shape():
    return build(SCALE, seed=7)


def test_statistics_match_a_32gib_partition(shape, rng):
    c = counts(SCALE)
    assert c["constraints"] == round(PARTITION["constraints"] * SCALE) and c["public"] == 328
    w = witness(shape, rng.randrange(1 << 40))
    st = statistics(shape.r1cs, w)
    assert (st["constraints"], st["public"], st["aux"]) == (c["constraints"], 328, c["aux"])
    for key in ("nnz_a", "nnz_b", "nnz_c"):
        assert st[key] == pytest.approx(TARGET[key], abs=0.01), key
    assert st["a_density"] == pytest.approx(TARGET["a_density"], abs=0.001)
    assert st["b_density"] == pytest.approx(TARGET["b_density"], abs=0.01)
    assert 0.6 < st["bit_share"] < 0.9          # mostly bits, a minority of words and full elements
    values = np.array([v.bit_length() for v in w[329:].to_ints()])
    assert np.mean(values <= 1) == pytest.approx(st["bit_share"])
    assert 0.005 < np.mean(values > 64) < 0.2   # some full field elements; the rest small words


def test_every_witness_satisfies_and_is_deterministic(shape, rng):
    seeds = [rng.randrange(1 << 40) for _ in range(3)]
    ws = [witness(shape, s) for s in seeds]
    for w in ws:
        shape.r1cs.check(w, 2)
    assert ws[0] == witness(shape, seeds[0]) and ws[0] != ws[1]
    again = build(SCALE, seed=7)
    for m in ("a", "b", "c"):
        assert np.array_equal(getattr(again.r1cs, m).col, getattr(shape.r1cs, m).col)
    other = build(SCALE, seed=8)
    assert not np.array_equal(other.r1cs.a.col, shape.r1cs.a.col)
    bad = ws[0].copy()
    xors = shape.layers[rng.randrange(len(shape.layers))].xor
    at = int(xors[rng.randrange(len(xors)), 2])           # a XOR output: its own row no longer holds
    bad.limbs[at] = (bad[at:at + 1] + FrArray.from_ints([1])).limbs[0]
    with pytest.raises(UnsatisfiedError):
        shape.r1cs.check(bad, 2)


def test_witness_does_not_depend_on_threads(shape, rng, monkeypatch):
    from porep_prover_porep_shaped import circuit
    monkeypatch.setattr(circuit._Split, "MIN", 97)      # split even this small circuit's layers
    seed = rng.randrange(1 << 40)
    one = witness(shape, seed, 1)
    for threads in (2, 3):
        w = witness(shape, seed, threads)
        assert w == one
    shape.r1cs.check(w, 2)


def test_bad_scales_are_named_errors():
    for scale in (0, -1, 1.5, 1e-6):
        with pytest.raises(InvalidInputError):
            counts(scale)


def test_engine_proves_porep_shaped_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path))
    pm = plugin_manager()
    registry = collect_registry(pm)
    assert "porep-shaped" in registry.providers
    cfg = load_config(overrides={"engine.devices": ["cpu"], "engine.threads": 2, "engine.partition_workers": 2})
    payload = {"scale": SCALE, "seed": 3}
    with Engine(cfg, registry=registry, plugins=pm) as engine:
        first = engine.prove(Job("porep-shaped", 3, payload), timeout=600)
        second = engine.prove(Job("porep-shaped", 2, dict(payload, job_seed=11)), timeout=600)
        with pytest.raises(JobFailedError, match="payload is a dict"):
            engine.prove(Job("porep-shaped", 1, "scale=1"), timeout=60)
        unsaved = engine.prove(Job("porep-shaped", 1, {"scale": SCALE, "seed": 4, "save": False}), timeout=600)
        assert unsaved.ok
        mapped = {"scale": SCALE, "seed": 5, "save": False, "mapped": True}
        in_map = engine.prove(Job("porep-shaped", 2, mapped), timeout=600)
    pmap = read_mapped(next(tmp_path.glob("porep-shaped-*-5.pmap")))
    assert is_mapped(pmap.h.limbs) and in_map.ok
    for public, proof in zip(in_map.public_inputs, in_map.proofs):
        assert verify(pmap.vk, public, proof)
    files = list(tmp_path.glob("porep-shaped-*.params"))
    assert len(files) == 1                       # made once, written in bellperson's format; seed 4 not saved
    params = read_params(files[0])
    for result in (first, second):
        assert result.ok
        for public, proof in zip(result.public_inputs, result.proofs):
            assert len(public) == 328 and verify(params.vk, public, proof)
    assert first.public_inputs[0] != first.public_inputs[1]    # partitions draw their own witnesses


def test_json_payloads_are_checked_and_never_name_a_place_to_write(tmp_path):
    registry = collect_registry(plugin_manager())
    assert registry.payload_paths("porep-shaped") == ("params",)
    payload = {"scale": SCALE, "seed": 3, "job_seed": 9, "save": False}
    assert registry.payload_from_json("porep-shaped", payload, 2) == payload
    existing = tmp_path / "x.params"
    existing.write_bytes(b"")
    read = registry.payload_from_json("porep-shaped", {"params": str(existing), "mapped": True}, 1)
    assert read["mapped"] is False                         # a .params file is read as it is, no mirror beside it
    for obj, words in (({"scale": 2}, "above 0 and at most 1"), ({"scale": 1e-6}, "at least"),
                       ({"seed": -1}, "seed"), ({"job_seed": 1 << 64}, "job_seed"), ({"save": "no"}, "save"),
                       ({"params": str(tmp_path / "none.params")}, "exists"), ({"scales": 1}, "unknown keys")):
        with pytest.raises(InvalidInputError, match=words):
            registry.payload_from_json("porep-shaped", obj, 1)


def test_circuits_are_shared_by_every_provider_and_bounded(monkeypatch):
    from porep_prover_porep_shaped import plugin
    monkeypatch.setattr(plugin, "_CIRCUITS", type(plugin._CIRCUITS)())
    one, other = plugin.PorepShapedProvider(), plugin.PorepShapedProvider()
    first = one.shape(SCALE, 21)
    assert other.shape(SCALE, 21) is first                   # built once in the process, whichever provider asks
    seeds = list(range(22, 22 + plugin.KEEP_CIRCUITS))
    for seed in seeds:
        other.shape(SCALE, seed)
    assert list(plugin._CIRCUITS) == [(SCALE, s) for s in seeds]     # the least recently used dropped
    assert one.shape(SCALE, 21) is not first and np.array_equal(one.shape(SCALE, 21).r1cs.a.col, first.r1cs.a.col)


def test_parameters_made_in_memory_and_not_saved_are_not_mapped(tmp_path, monkeypatch):
    from porep_prover_porep_shaped import plugin
    monkeypatch.setattr(plugin, "host_memory_bytes", lambda: 1 << 20)       # every scale is "large" here
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path))

    def mapped(**payload):
        return plugin.Payload.of(Job("porep-shaped", 1, {"scale": SCALE, **payload})).mapped
    assert mapped() and mapped(save=True)                    # saved: read back from the file, through a mirror
    assert not mapped(save=False)                            # made in memory, kept there
    assert mapped(save=False, mapped=True) and not mapped(mapped=False)      # asked for, either way
    made = plugin.Payload.of(Job("porep-shaped", 1, {"scale": SCALE})).params
    made.with_suffix(".pmap").write_bytes(b"")
    assert mapped(save=False)                                # a mirror already made is used as it is
    monkeypatch.setattr(plugin, "host_memory_bytes", lambda: 1 << 50)
    assert not mapped()                                      # small beside the host: anonymous memory


@pytest.fixture
def making(tmp_path, monkeypatch):
    """The parameter cache in tmp_path, and the parameters the provider makes, counted."""
    from porep_prover_porep_shaped import plugin
    monkeypatch.setenv("POREP_PROVER_PARAMS_CACHE", str(tmp_path))
    made = []

    def setup(*args, **kwargs):
        made.append(args[0])
        return real(*args, **kwargs)
    real = plugin.insecure_setup
    monkeypatch.setattr(plugin, "insecure_setup", setup)
    return made


def test_the_shape_is_said_before_the_parameters_exist_and_is_theirs(tmp_path, making):
    from porep_prover_porep_shaped import plugin
    provider = plugin.PorepShapedProvider()
    for n, payload in enumerate(({"scale": SCALE, "seed": 31, "save": False},
                                 {"scale": SCALE, "seed": 32, "mapped": True})):
        job = Job("porep-shaped", 1, payload)
        said = provider.srs_shape(job)
        assert len(making) == n                  # said before the set is made
        params = provider.load_srs(job)
        assert said == SrsShape.of(params, is_mapped(params.h.limbs)) and said.mapped == payload.get("mapped", False)
    assert len(making) == 2


def engine_at(budget_gib=None):
    pm = plugin_manager()
    cfg = {"engine.devices": ["cpu"], "engine.threads": 2, "engine.partition_workers": 2}
    if budget_gib is not None:
        cfg["engine.memory_budget_gib"] = budget_gib
    return Engine(load_config(overrides=cfg), registry=collect_registry(pm), plugins=pm)


def test_a_set_that_cannot_fit_is_refused_once_and_never_made(tmp_path, making):
    """Under a budget the process alone fills, every job fails with one
    HostMemoryError, and no parameters are made or written."""
    payload = {"scale": SCALE, "seed": 33, "save": False}
    with engine_at(1.0001) as engine:
        handles = [engine.submit(Job("porep-shaped", 2, payload)) for _ in range(3)]
        causes = set()
        for handle in handles:
            with pytest.raises(JobFailedError, match="HostMemoryError") as failed:
                handle.result(120)
            causes.add(str(failed.value.__cause__))
    assert len(causes) == 1 and not making and not list(tmp_path.iterdir())


def test_parameters_not_saved_are_made_once_while_anything_holds_them(making):
    """Jobs of one key, an eviction while a caller holds the set, a second
    engine: made once; evicted with nothing else holding it, freed and made
    again for the next job."""
    import gc
    from porep_prover_porep_shaped import plugin
    payload = {"scale": SCALE, "seed": 34, "save": False}
    key = plugin.PorepShapedProvider().srs_key(Job("porep-shaped", 1, payload))
    with engine_at() as engine:
        assert all(engine.prove(Job("porep-shaped", 1, payload), timeout=600).ok for _ in range(2))
        held = plugin.PorepShapedProvider().load_srs(Job("porep-shaped", 1, payload))
        assert engine.evict_srs(key) is not None
        assert engine.prove(Job("porep-shaped", 1, payload), timeout=600).ok
    with engine_at() as engine:
        assert engine.prove(Job("porep-shaped", 1, payload), timeout=600).ok
        assert len(making) == 1
        del held
        assert engine.evict_srs(key) is not None
        gc.collect()
        assert key not in plugin.KEPT.keys()
        assert engine.prove(Job("porep-shaped", 1, payload), timeout=600).ok
    assert len(making) == 2
