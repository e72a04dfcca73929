# SPDX-License-Identifier: Apache-2.0
import pytest

pytest.importorskip("porep_prover_r1cs_provider.plugin")

from porep_prover.circuits import porep_like  # noqa: E402
from porep_prover.engine import Engine, Job, load_config  # noqa: E402
from porep_prover.errors import JobFailedError  # noqa: E402
from porep_prover.groth16 import insecure_setup, save_witness, verify, write_params  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402


def test_proves_jobs_from_files(tmp_path):
    r1cs, _, _ = porep_like(400)
    params = insecure_setup(r1cs, warn=False)
    write_params(tmp_path / "c.params", params)
    r1cs.save(tmp_path / "c.npz")
    paths = []
    for seed in range(3):
        path = tmp_path / f"w{seed}.bin"
        save_witness(path, porep_like(400, seed=seed)[1])
        paths.append(str(path))
    pm = plugin_manager()
    registry = collect_registry(pm)
    assert "r1cs-file" in registry.providers
    cfg = load_config(overrides={"engine.devices": ["cpu"], "engine.threads": 1, "engine.partition_workers": 2})
    payload = {"params": str(tmp_path / "c.params"), "circuit": str(tmp_path / "c.npz"), "witnesses": paths}
    with Engine(cfg, registry=registry, plugins=pm) as engine:
        result = engine.prove(Job("r1cs-file", 3, payload), timeout=120)
        bad = dict(payload, witnesses=paths[:2])
        with pytest.raises(JobFailedError, match="2 witness files for 3 partitions"):
            engine.prove(Job("r1cs-file", 3, bad), timeout=120)
        assert len(engine.srs.status()) == 1          # one load for both jobs
    for public, proof in zip(result.public_inputs, result.proofs):
        assert verify(params.vk, public, proof)


def test_mapped_parameters_from_a_params_file_or_a_pmap(tmp_path):
    from porep_prover.groth16 import write_mapped
    r1cs, _, _ = porep_like(300)
    params = insecure_setup(r1cs, warn=False)
    write_params(tmp_path / "c.params", params)
    write_mapped(tmp_path / "c.pmap", params)
    r1cs.save(tmp_path / "c.npz")
    witness = tmp_path / "w.bin"
    save_witness(witness, porep_like(300, seed=5)[1])
    pm = plugin_manager()
    registry = collect_registry(pm)
    cfg = load_config(overrides={"engine.devices": ["cpu"], "engine.threads": 1, "engine.partition_workers": 1})
    base = {"circuit": str(tmp_path / "c.npz"), "witnesses": [str(witness)]}
    cache = tmp_path / "mirrors"
    jobs = [dict(base, params=str(tmp_path / "c.params"), mapped_cache=str(cache)),
            dict(base, params=str(tmp_path / "c.pmap"))]
    for payload in jobs:
        with Engine(cfg, registry=registry, plugins=pm) as engine:
            result = engine.prove(Job("r1cs-file", 1, payload), timeout=120)
            assert [e["bytes"] for e in engine.srs.status()] == [0]     # mapped: page cache, not held memory
        assert verify(params.vk, result.public_inputs[0], result.proofs[0])
    assert len(list(cache.glob("c.params.*.pmap"))) == 1


def test_json_payloads_are_checked_and_name_their_paths():
    from porep_prover.errors import InvalidInputError
    registry = collect_registry(plugin_manager())
    assert registry.payload_paths("r1cs-file") == ("params", "circuit", "witnesses")
    good = {"params": "/in/c.params", "circuit": "/in/c.npz", "witnesses": ["/in/w0", "/in/w1"]}
    assert registry.payload_from_json("r1cs-file", good, 2) == good
    bad = {"witnesses for 3 partitions": (good, 3, "2 witness files for 3 partitions"),
           "a folder to write to": (dict(good, mapped_cache="/in"), 2, "mapped_cache"),
           "no circuit": ({k: v for k, v in good.items() if k != "circuit"}, 2, "needs circuit"),
           "witnesses not a list": (dict(good, witnesses="/in/w0"), 1, "list of paths"),
           "a number for a path": (dict(good, params=7), 2, "needs params")}
    for _what, (obj, partitions, words) in bad.items():
        with pytest.raises(InvalidInputError, match=words):
            registry.payload_from_json("r1cs-file", obj, partitions)
    with pytest.raises(InvalidInputError, match="JSON object"):
        registry.payload_from_json("r1cs-file", ["/in/c.params"], 1)
