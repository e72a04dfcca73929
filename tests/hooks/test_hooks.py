# SPDX-License-Identifier: Apache-2.0
"""Plugins: hooks are documented, found through entry points, and a failing
sink or hook does not disturb the engine; a plugin that fails to import,
whose registration raises, or that takes a name already taken is reported
and skipped while the others work; sinks run only where configured."""
import inspect
import json
import logging
import pathlib
import sys
import textwrap

import pytest

from porep_prover.circuits import square_chain
from porep_prover.cli import main
from porep_prover.engine import Engine, inline_job, load_config
from porep_prover.errors import EngineError, InvalidInputError
from porep_prover.groth16 import insecure_setup, verify
from porep_prover.hooks import collect_registry, plugin_manager, specs

ROOT = pathlib.Path(__file__).resolve().parents[2]


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


def test_the_objects_hooks_receive_are_documented_attribute_for_attribute():
    import dataclasses

    from porep_prover import engine as eng
    doc = (ROOT / "plugins" / "README.md").read_text()
    rows = {}
    for line in doc.split("### What the hooks and the registered objects receive")[1].splitlines():
        if line.startswith("| `"):
            cells = line.split("|")
            rows[cells[1].split("`")[1]] = set(cells[2].replace("`", "").replace(" ", "").split(","))
    assert set(rows) == {"Job", "PartitionTask", "JobResult", "PartitionResult", "PartitionTimings", "Engine"}
    for name, documented in rows.items():
        cls = getattr(eng, name)
        if dataclasses.is_dataclass(cls):
            actual = {f.name for f in dataclasses.fields(cls)} | {n for n, v in vars(cls).items()
                                                                   if isinstance(v, property)}
        else:
            actual = {n for n in dir(cls) if not n.startswith("_")}
        assert documented == actual, (name, documented ^ actual)


def make_plugin(tmp_path, monkeypatch, body: str, name="probe", entry=None):
    """A module plus a dist-info folder declaring it under the entry-point
    group porep_prover (as entry, default name)."""
    (tmp_path / f"porep_prover_{name}.py").write_text(textwrap.dedent(body))
    dist = tmp_path / f"porep_prover_{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: porep-prover-{name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[porep_prover]\n{entry or name} = porep_prover_{name}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, f"porep_prover_{name}", raising=False)


SETTINGS = {"engine.devices": ["cpu"], "engine.threads": 1, "engine.partition_workers": 1}

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
    registry.add_sink("probe-broken", BrokenSink())
    registry.add_sink("probe", Sink())

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
    cfg = load_config(overrides=dict(SETTINGS, **{"engine.result_sinks": ["probe-broken", "probe"]}))
    with Engine(cfg, registry=registry, plugins=pm) as engine:
        result = engine.prove(inline_job(params, r1cs, [w, w]), timeout=60)
    assert all(verify(params.vk, public, p) for p in result.proofs)
    events = sys.modules["porep_prover_probe"].EVENTS
    assert events == [("started", 1), ("sink", True), ("finished", 2), ("stopping", None)]


GOOD = """
from porep_prover import hookimpl
RESULTS = []

class NewestFirst:
    def __init__(self):
        self.tasks = []

    def push(self, task):
        self.tasks.append(task)

    def pop(self):
        return self.tasks.pop() if self.tasks else None

    def __len__(self):
        return len(self.tasks)

class Sink:
    def deliver(self, result):
        RESULTS.append(result.job.id)

@hookimpl
def porep_prover_register_schedulers(registry):
    registry.add_scheduler("newest-first", NewestFirst)

@hookimpl
def porep_prover_register_result_sinks(registry):
    registry.add_sink("good", Sink())
"""

# each of these is skipped whole: no registration kept, no hook called
RAISES = """
from porep_prover import hookimpl
EVENTS = []

@hookimpl
def porep_prover_register_schedulers(registry):
    registry.add_scheduler("half-done", list)
    raise RuntimeError("registration down")

@hookimpl
def porep_prover_engine_started(engine):
    EVENTS.append("started")
"""

DUPLICATE = """
from porep_prover import hookimpl
from porep_prover.engine import FifoScheduler
EVENTS = []

class Provider:
    kinds = ("dup-kind",)
    def srs_key(self, job): return ""
    def load_srs(self, job): return None
    def synthesize(self, job, partition, threads): return None

@hookimpl
def porep_prover_register_synthesis_providers(registry):
    registry.add_provider(Provider())

@hookimpl
def porep_prover_register_schedulers(registry):
    registry.add_scheduler("newest-first", FifoScheduler)

@hookimpl
def porep_prover_job_finished(result):
    EVENTS.append("finished")
"""

TYPO = """
from porep_prover import hookimpl

@hookimpl
def porep_prover_register_everything(registry):
    pass
"""


def broken_and_good_plugins(tmp_path, monkeypatch):
    """Plugin "good" and five that must be skipped: one whose import fails, one
    whose registration raises, one implementing no hook of ours, and (later
    on the path, so loaded after "good") one registering a scheduler name
    "good" has and a second distribution whose entry point is also named "good"."""
    later, first = tmp_path / "later", tmp_path / "first"
    later.mkdir(), first.mkdir()
    make_plugin(later, monkeypatch, GOOD.replace('"good"', '"twin"'), name="twin", entry="good")
    make_plugin(later, monkeypatch, DUPLICATE, name="dup")
    for name, body in (("good", GOOD), ("broken", "raise ImportError('needs libfoo, which is not installed')\n"),
                       ("raises", RAISES), ("typo", TYPO)):
        make_plugin(first, monkeypatch, body, name=name)


def test_broken_plugins_are_reported_and_skipped_and_the_rest_work(tmp_path, monkeypatch, caplog):
    broken_and_good_plugins(tmp_path, monkeypatch)
    with caplog.at_level(logging.WARNING, logger="porep_prover.plugins"):
        pm = plugin_manager()
        registry = collect_registry(pm)
    report = registry.plugin_report()
    why = {p["distribution"]: p["why"] for p in report["skipped"]}
    assert why["porep-prover-broken 1.0"] == \
        "import of porep_prover_broken failed: ImportError: needs libfoo, which is not installed"
    assert why["porep-prover-raises 1.0"] == "registration failed: RuntimeError: registration down"
    assert why["porep-prover-dup 1.0"] == \
        "registration failed: InvalidInputError: scheduler 'newest-first' is registered already by plugin 'good'"
    assert why["porep-prover-typo 1.0"] == \
        "implements hooks this porep-prover does not have: porep_prover_register_everything"
    assert why["porep-prover-twin 1.0"] == "the name 'good' is taken by porep-prover-good 1.0"
    for dist, text in why.items():        # each logged, naming the plugin and why
        assert any(dist in r.getMessage() and text in r.getMessage() for r in caplog.records), dist
    assert {"name": "good", "distribution": "porep-prover-good 1.0",
            "registered": ["scheduler newest-first", "result sink good"]} in report["loaded"]
    assert "half-done" not in registry.schedulers and "dup-kind" not in registry.providers
    assert registry.schedulers["newest-first"] is sys.modules["porep_prover_good"].NewestFirst
    for name in ("raises", "dup", "typo"):
        assert pm.get_plugin(name) is None, name
    assert collect_registry(pm).plugin_report() == report        # a second collection reports the same

    r1cs, w, public = square_chain(120)
    params = insecure_setup(r1cs, warn=False)
    cfg = load_config(overrides=dict(SETTINGS, **{"engine.scheduler": "newest-first",
                                                  "engine.result_sinks": ["good"]}))
    with Engine(cfg, registry=registry, plugins=pm) as engine:
        result = engine.prove(inline_job(params, r1cs, [w, w, w]), timeout=60)
        assert engine.status()["plugins"] == report
    assert all(verify(params.vk, public, p) for p in result.proofs)
    assert sys.modules["porep_prover_good"].RESULTS == [result.job.id]
    assert sys.modules["porep_prover_raises"].EVENTS == [] and sys.modules["porep_prover_dup"].EVENTS == []


def test_plugins_command_lists_installed_and_skipped(tmp_path, monkeypatch, capsys):
    broken_and_good_plugins(tmp_path, monkeypatch)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    installed, skipped = out.split("skipped:\n")
    assert "good" in installed and "porep-prover-good 1.0: scheduler newest-first, result sink good" in installed
    for text in ("porep-prover-broken 1.0: import of porep_prover_broken failed: ImportError: needs libfoo",
                 "porep-prover-dup 1.0: registration failed: InvalidInputError: scheduler 'newest-first'",
                 "porep-prover-twin 1.0: the name 'good' is taken"):
        assert text in skipped, text
    assert "engine.result_sinks" in out
    registered = out.split("registered:\n")[1]
    for text in ("priority (built in)", "builtin (built in)", "newest-first (good)", "good (good)",
                 "inline (built in)"):
        assert text in registered, text
    assert main(["plugins", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["registered"]["schedulers"]["priority"] == "built in"
    assert listing["registered"]["result_sinks"]["good"] == "good"
    assert {p["name"] for p in listing["skipped"]} >= {"broken", "raises", "dup", "typo", "good"}
    assert "good" in {p["name"] for p in listing["loaded"]}


class Recorder:
    def __init__(self):
        self.jobs = []

    def deliver(self, result):
        self.jobs.append(result.job.id)


def test_sinks_run_only_where_the_setting_names_them():
    from porep_prover.engine.inline import default_registry
    registry = default_registry()
    sinks = {name: Recorder() for name in ("a", "b", "c")}
    for name, sink in sinks.items():
        registry.add_sink(name, sink)
    with pytest.raises(EngineError, match="engine.result_sinks names 'nope', not registered"):
        Engine(load_config(overrides={"engine.result_sinks": ["b", "nope"]}), registry=registry, start=False)
    r1cs, w, _ = square_chain(90)
    params = insecure_setup(r1cs, warn=False)
    with Engine(load_config(overrides=dict(SETTINGS, **{"engine.result_sinks": ["c", "a"]})),
                registry=registry) as engine:
        job = engine.prove(inline_job(params, r1cs, [w]), timeout=60).job
    assert sinks["a"].jobs == sinks["c"].jobs == [job.id] and sinks["b"].jobs == []
    with pytest.raises(InvalidInputError, match="two result sinks named 'a'"):
        registry.add_sink("a", Recorder())
