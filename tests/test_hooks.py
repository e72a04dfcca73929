# SPDX-License-Identifier: Apache-2.0
"""Plugins: hooks are documented, found through entry points, and a failing
sink or hook does not disturb the engine."""
import inspect
import pathlib
import sys
import textwrap

from porep_prover.circuits import square_chain
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.hooks import collect_registry, plugin_manager, specs

ROOT = pathlib.Path(__file__).resolve().parents[1]


def hook_names():
    return [n for n, f in inspect.getmembers(specs, inspect.isfunction) if n.startswith("porep_prover_")]


def test_every_hook_is_documented():
    doc = (ROOT / "plugins" / "README.md").read_text()
    names = hook_names()
    assert len(names) >= 6
    for name in names:
        fn = getattr(specs, name)
        assert fn.__doc__ and len(fn.__doc__.strip()) > 20, f"{name} has no docstring"
        assert f"`{name}`" in doc, f"{name} is not in plugins/README.md"
    for line in doc.splitlines():  # and nothing documented that does not exist
        if line.startswith("| `porep_prover_"):
            assert line.split("`")[1] in names


def make_plugin(tmp_path, monkeypatch, body: str, name="probe"):
    """A module plus a dist-info folder declaring it under the entry-point group porep_prover."""
    (tmp_path / f"porep_prover_{name}.py").write_text(textwrap.dedent(body))
    dist = tmp_path / f"porep_prover_{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: porep-prover-{name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[porep_prover]\n{name} = porep_prover_{name}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, f"porep_prover_{name}", raising=False)


PROBE = """
from porep_prover.hooks import hookimpl
EVENTS = []

class Sink:
    def deliver(self, result):
        EVENTS.append(("sink", result.ok))

class BrokenSink:
    def deliver(self, result):
        raise RuntimeError("sink down")

@hookimpl
def porep_prover_register_result_sinks(registry):
    registry.add_sink(BrokenSink())
    registry.add_sink(Sink())

@hookimpl
def porep_prover_engine_started(engine):
    EVENTS.append(("started", len(engine.devices)))

@hookimpl
def porep_prover_job_finished(result):
    EVENTS.append(("finished", result.job.partitions))
    raise RuntimeError("notification down")

@hookimpl
def porep_prover_engine_stopping(engine):
    EVENTS.append(("stopping", None))
"""


def test_plugins_found_through_entry_points_and_isolated(tmp_path, monkeypatch):
    make_plugin(tmp_path, monkeypatch, PROBE)
    pm = plugin_manager()
    assert any(name == "probe" for name, _ in pm.list_name_plugin())
    registry = collect_registry(pm)
    r1cs, w, public = square_chain(100)
    params = insecure_setup(r1cs, warn=False)
    cfg = load_config(overrides={"engine.devices": ["cpu"], "engine.threads": 1, "engine.partition_workers": 1})
    with Engine(cfg, registry=registry, plugins=pm) as engine:
        result = engine.prove(inline_job(params, r1cs, [w, w]), timeout=60)
    assert all(verify(params.vk, public, p) for p in result.proofs)
    events = sys.modules["porep_prover_probe"].EVENTS
    assert events == [("started", 1), ("sink", True), ("finished", 2), ("stopping", None)]
