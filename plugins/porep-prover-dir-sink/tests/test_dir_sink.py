# SPDX-License-Identifier: Apache-2.0
import json

import pytest

pytest.importorskip("porep_prover_dir_sink.plugin")

from porep_prover import Engine, load_config  # noqa: E402
from porep_prover.circuits import square_chain  # noqa: E402
from porep_prover.engine import inline_job  # noqa: E402
from porep_prover.groth16 import Proof, insecure_setup, verify  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402

SETTINGS = {"engine.devices": ["cpu"], "engine.threads": 1, "engine.partition_workers": 1}


def test_writes_each_job_when_enabled(tmp_path, monkeypatch):
    monkeypatch.setenv("POREP_PROVER_RESULT_DIR", str(tmp_path))
    r1cs, w, public = square_chain(200)
    params = insecure_setup(r1cs, warn=False)
    pm = plugin_manager()
    registry = collect_registry(pm)
    assert type(registry.sinks["dir-sink"]).__name__ == "DirectorySink"
    cfg = load_config(overrides=dict(SETTINGS, **{"engine.result_sinks": ["dir-sink"]}))
    with Engine(cfg, registry=registry, plugins=pm) as engine:
        job = engine.prove(inline_job(params, r1cs, [w, w]), timeout=60).job
    out = tmp_path / job.id
    status = json.loads((out / "status.json").read_text())
    assert status["ok"] and status["partitions"] == 2 and status["error"] is None
    raw = (out / "proofs.bin").read_bytes()
    assert len(raw) == 2 * 192
    pub = json.loads((out / "public.json").read_text())
    for i in range(2):
        assert verify(params.vk, [int(x) for x in pub[i]], Proof.from_bytes(raw[192 * i:192 * (i + 1)]))
    assert pub[0] == [str(x) for x in public]


def test_installed_but_not_enabled_writes_nothing(tmp_path, monkeypatch):
    out = tmp_path / "results"
    monkeypatch.setenv("POREP_PROVER_RESULT_DIR", str(out))
    monkeypatch.chdir(tmp_path)
    r1cs, w, public = square_chain(150)
    params = insecure_setup(r1cs, warn=False)
    pm = plugin_manager()
    with Engine(load_config(overrides=SETTINGS), registry=collect_registry(pm), plugins=pm) as engine:
        result = engine.prove(inline_job(params, r1cs, [w]), timeout=60)
    assert verify(params.vk, public, result.proofs[0])
    assert list(tmp_path.iterdir()) == []          # neither the configured folder nor ./porep-prover-results
