# SPDX-License-Identifier: Apache-2.0
"""Plugins own their settings: a plugin declares its section through the
hook porep_prover_register_settings (keys, types, defaults, ranges, docs);
its keys are then checked in TOML files and --set overrides as the engine's
are, unknown keys and sections are refused naming what there is, a section
has one owner, and `porep-prover config` lists every section with its owner.
The daemon's [daemon] and the Ray plugin's [ray] come the same way."""
import json
import math
import pathlib

import pytest
from test_hooks import make_plugin

from porep_prover.cli import main
from porep_prover.config_schema import Section, SettingsRegistry
from porep_prover.daemon.settings import DaemonSettings
from porep_prover.engine.config import default_sections, load_config
from porep_prover.errors import ConfigError
from porep_prover.hooks import (collect_registry, collect_settings, hookimpl, installed_settings, plugin_manager,
                                specs)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILT_IN = [("engine", "engine"), ("prover", "engine"), ("srs", "engine"), ("logging", "engine"),
            ("daemon", "daemon")]


def declare_cache(settings, section="cache"):
    (settings.section(section, "Where the cache plugin keeps its files")
        .string("path", "", "folder of the cache")
        .integer("depth", 2, 1, 8, "levels of subfolders")
        .number("max_gib", 1.5, 0, 100, "size limit, GiB")
        .choice("mode", "lru", ("lru", "fifo"), "what goes first")
        .boolean("enabled", True, "whether it caches at all")
        .strings("kinds", [], "job kinds it caches"))


class CachePlugin:
    def __init__(self, section="cache", declare=declare_cache):
        self.section, self.declare = section, declare

    @hookimpl
    def porep_prover_register_settings(self, settings):
        self.declare(settings, self.section)


def manager(*plugins):
    pm = plugin_manager(load_entry_points=False)
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    return pm


@pytest.fixture
def sections():
    return collect_settings(manager(("cache", CachePlugin())))


def test_the_hook_is_specified():
    assert specs.porep_prover_register_settings.__doc__.count(".integer(") == 1


def test_a_plugin_declares_its_section_and_owns_it(sections):
    assert [(s.name, s.owner) for s in sections.sections] == BUILT_IN + [("cache", "cache")]
    defaults = {k: v for k, v in sections.defaults().items() if k.startswith("cache.")}
    assert defaults == {"cache.path": "", "cache.depth": 2, "cache.max_gib": 1.5, "cache.mode": "lru",
                        "cache.enabled": True, "cache.kinds": []}
    config = load_config(sections=sections)
    assert config.section("cache") == {k.split(".")[1]: v for k, v in defaults.items()}
    assert config.get("engine.gpu_workers_per_device") == 2      # the built-ins keep theirs


def test_its_keys_come_from_toml_and_set(tmp_path, sections):
    path = tmp_path / "c.toml"
    path.write_text('[engine]\nthreads = 2\n[cache]\ndepth = 3\nmode = "fifo"\nkinds = ["a"]\npath = "/c"\n')
    config = load_config(path, ["cache.max_gib=2", "cache.kinds=x, y", "enabled=false"], sections=sections)
    assert config.section("cache") == {"path": "/c", "depth": 3, "max_gib": 2.0, "mode": "fifo", "enabled": False,
                                       "kinds": ["x", "y"]}
    assert isinstance(config.get("cache.max_gib"), float) and config.get("engine.threads") == 2
    assert config.replace(**{"cache.depth": 8}).get("cache.depth") == 8      # checked against the same sections
    with pytest.raises(ConfigError, match="from 1 to 8"):
        config.replace(**{"cache.depth": 9})


@pytest.mark.parametrize("key, text, wanted", [
    ("cache.depth", "0", "an integer from 1 to 8"), ("cache.depth", "9", "an integer from 1 to 8"),
    ("cache.depth", '"3"', "an integer from 1 to 8"), ("cache.depth", "2.5", "an integer from 1 to 8"),
    ("cache.max_gib", "nan", "a finite number from 0 to 100"), ("cache.max_gib", "-0.5", "a finite number from 0"),
    ("cache.max_gib", "inf", "a finite number"), ("cache.mode", '"random"', "one of 'lru', 'fifo'"),
    ("cache.enabled", "1", "true or false"), ("cache.kinds", "[1]", "a list of strings"),
    ("cache.path", "3", "a string"),
])
def test_bad_values_name_the_key_and_what_it_takes(tmp_path, sections, key, text, wanted):
    with pytest.raises(ConfigError, match=f"setting '{key}' must be {wanted}") as info:
        load_config(None, [f"{key}={text}"], sections=sections)
    assert info.value.key == key
    path = tmp_path / "bad.toml"
    path.write_text(f"[cache]\n{key.split('.')[1]} = {text}\n")
    with pytest.raises(ConfigError, match=f"setting '{key}' must be {wanted}") as info:
        load_config(path, sections=sections)
    assert info.value.key == key


def test_unknown_keys_and_sections_are_refused_naming_what_there_is(tmp_path, sections):
    with pytest.raises(ConfigError, match=r"unknown setting 'cache.size': \[cache\] \(of cache\) has path, depth, "
                                          r"max_gib, mode, enabled, kinds") as info:
        load_config(None, ["cache.size=1"], sections=sections)
    assert info.value.key == "cache.size"
    path = tmp_path / "c.toml"
    for body, key, pattern in (("[cache]\nsize = 1\n", "cache.size", "has path, depth"),
                               ("[cahce]\ndepth = 1\n", "cahce", r"unknown section \[cahce\].*\[cache\] of cache"),
                               ("[cache.sub]\nx = 1\n", "cache.sub", r"unknown section \[cache.sub\]"),
                               ("depth = 3\n", "depth", "outside any section")):
        path.write_text(body)
        with pytest.raises(ConfigError, match=pattern) as info:
            load_config(path, sections=sections)
        assert info.value.key == key
    path.write_text("[cache]\ndepth = 3\n")       # the built-ins alone do not know a plugin's section
    with pytest.raises(ConfigError, match=r"unknown section \[cache\] \(sections: \[engine\] \[prover\] \[srs\] "
                                          r"\[logging\] of engine; \[daemon\] of daemon"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"unknown setting 'cache.depth': there is no section \[cache\]"):
        load_config(None, ["cache.depth=3"])


def test_a_bare_key_names_its_section_only_when_one_has_it():
    both = collect_settings(manager(("a", CachePlugin("cache")), ("b", CachePlugin("store"))))
    assert load_config(None, ["max_gib=3"], sections=collect_settings(manager(("a", CachePlugin())))) \
        .get("cache.max_gib") == 3.0
    with pytest.raises(ConfigError, match=r"unknown setting 'max_gib': name it with its section "
                                          r"\(cache.max_gib, store.max_gib\)"):
        load_config(None, ["max_gib=3"], sections=both)
    assert load_config(None, ["store.max_gib=3"], sections=both).get("store.max_gib") == 3.0


@pytest.mark.parametrize("section, first", [("cache", "porep-prover-first"), ("daemon", "daemon"),
                                            ("engine", "engine"), ("logging", "engine")])
def test_two_owners_of_one_section_are_refused_naming_both(section, first):
    pm = manager(("first", CachePlugin("cache")), ("second", CachePlugin(section)))
    pm.distributions["first"] = "porep-prover-first 1.0"      # as loading it from its entry point records
    with pytest.raises(ConfigError, match=rf"section \[{section}\] is declared by both {first} and second"):
        collect_settings(pm)


def test_a_bad_declaration_skips_its_plugin_whole(caplog):
    def out_of_range(settings, section):
        settings.section(section, "bad").integer("depth", 0, 1, 8, "levels")

    pm = manager(("good", CachePlugin()), ("bad", CachePlugin("other", out_of_range)))
    sections = collect_settings(pm)
    assert [s.name for s in sections.sections] == [n for n, _ in BUILT_IN] + ["cache"]
    assert pm.get_plugin("bad") is None and pm.get_plugin("good") is not None
    why = {p.name: p.why for p in pm.skipped}
    assert why["bad"] == ("declaring its settings failed: ConfigError: setting 'other.depth': "
                          "the default 0 is not an integer from 1 to 8")
    assert "bad" in caplog.text and "the default 0" in caplog.text
    report = collect_registry(pm).plugin_report()
    assert {"name": "good", "distribution": "", "registered": ["settings [cache]"]} in report["loaded"]
    assert [p["name"] for p in report["skipped"]] == ["bad"]


def test_collecting_the_registry_first_skips_it_too():
    pm = manager(("bad", CachePlugin("Bad-Name")))
    report = collect_registry(pm).plugin_report()
    assert report["loaded"] == [] and "section name 'Bad-Name'" in report["skipped"][0]["why"]
    assert [s.name for s in collect_settings(pm).sections] == [n for n, _ in BUILT_IN]


@pytest.mark.parametrize("declare, message", [
    (lambda s: s.integer("Depth", 1, 0, 2, "d"), "setting name 'Depth' in \\[t\\] is not a lower-case key"),
    (lambda s: s.integer("a.b", 1, 0, 2, "d"), "is not a lower-case key"),
    (lambda s: s.integer("d", 1, 0, 2, "d").boolean("d", True, "again"), "setting 't.d' is declared twice"),
    (lambda s: s.integer("d", 1, 0, 2, "two\nlines"), "its doc must be one line"),
    (lambda s: s.integer("d", 1, 0, 2, ""), "its doc must be one line"),
    (lambda s: s.integer("d", 1, 3, 2, "d"), "low 3 is above high 2"),
    (lambda s: s.integer("d", 1, 0, 2.5, "d"), "are not integers"),
    (lambda s: s.number("d", 1.0, 0, math.inf, "d"), "are not finite numbers"),
    (lambda s: s.number("d", math.nan, 0, 1, "d"), "the default nan is not a finite number from 0 to 1"),
    (lambda s: s.choice("d", "x", ("a", "b"), "d"), "the default 'x' is not one of 'a', 'b'"),
    (lambda s: s.choice("d", "a", (), "d"), "the options must be strings"),
    (lambda s: s.strings("d", ["a", 1], "d"), "is not a list of strings"),
    (lambda s: s.boolean("d", 0, "d"), "the default 0 is not true or false"),
])
def test_a_declaration_is_checked_as_it_is_made(declare, message):
    with pytest.raises(ConfigError, match=message):
        declare(Section("t"))


def test_a_section_is_declared_once_per_owner_and_named_as_toml_keys_are():
    settings = SettingsRegistry()
    settings.section("t", "doc")
    with pytest.raises(ConfigError, match=r"section \[t\] is declared twice"):
        settings.section("t")
    for bad in ("", "T", "a.b", "a b", 3):
        with pytest.raises(ConfigError, match="is not lower-case letters"):
            settings.section(bad)


def test_the_daemon_and_ray_keys_still_load():
    config = load_config(None, ["daemon.max_pending=5", "daemon.status_listen="])     # the built-ins know [daemon]
    assert config.get("daemon.max_pending") == 5 and config.get("daemon.listen") == "127.0.0.1:9820"
    daemon = DaemonSettings.resolve(config)
    assert daemon.max_pending == 5 and daemon.status_listen is None and daemon.max_request_bytes == 128 << 20
    owners = {s.name: s.owner for s in default_sections().sections}
    assert owners["daemon"] == "daemon" and "ray" not in owners
    with pytest.raises(ConfigError, match="setting 'daemon.listen' must be \"HOST:PORT\""):
        load_config(None, ["daemon.listen=nowhere"])
    pytest.importorskip("porep_prover_ray.plugin")
    installed = installed_settings()
    assert {s.name: s.owner for s in installed.sections}["ray"] == "porep-prover-ray"
    config = load_config(None, ["ray.poll_seconds=0.5", "daemon.max_pending=6"], sections=installed)
    assert config.get("ray.poll_seconds") == 0.5 and config.get("ray.address") == "auto"
    with pytest.raises(ConfigError, match="setting 'ray.poll_seconds' must be a finite number from 0.05 to 60"):
        load_config(None, ["ray.poll_seconds=0.01"], sections=installed)


def test_the_example_documents_every_key_and_the_ray_section_loads_where_installed(tmp_path):
    pytest.importorskip("porep_prover_ray.plugin")
    text = (ROOT / "contrib" / "porep-prover.example.toml").read_text()
    assert "\n[ray]" not in text and "\n# [ray]" in text     # valid without the plugin, which owns it
    uncommented = tmp_path / "full.toml"
    uncommented.write_text(text.replace("\n# [ray]", "\n[ray]").replace("\n# address = ", "\naddress = ")
                           .replace("\n# poll_seconds = ", "\npoll_seconds = "))
    config = load_config(uncommented, sections=installed_settings())
    assert config.get("ray.address") == "auto" and config.get("ray.poll_seconds") == 1.0
    with pytest.raises(ConfigError, match=r"unknown section \[ray\]"):
        load_config(uncommented)


CACHE_MODULE = """
from porep_prover.hooks import hookimpl

@hookimpl
def porep_prover_register_settings(settings):
    (settings.section("cache", "Where the cache plugin keeps its files")
        .integer("depth", 2, 1, 8, "levels of subfolders")
        .choice("mode", "lru", ("lru", "fifo"), "what goes first"))
"""


def test_config_command_lists_every_section_with_its_owner(tmp_path, monkeypatch, capsys):
    make_plugin(tmp_path, monkeypatch, CACHE_MODULE, name="cache")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    for heading in ("[engine]  owner engine: ", "[prover]  owner engine: ", "[daemon]  owner daemon: ",
                    "[cache]  owner porep-prover-cache: Where the cache plugin keeps its files"):
        assert "\n" + heading in "\n" + out, heading
    assert out.index("[engine]") < out.index("[daemon]") < out.index("[cache]")
    cache = out.split("[cache]")[1]
    assert "  depth = 2" in cache and "an integer from 1 to 8\n      levels of subfolders" in cache
    assert "  mode = \"lru\"" in cache and "one of 'lru', 'fifo'" in cache
    assert "  listen = \"127.0.0.1:9820\"" in out and "  memory_budget_gib = 0.0" in out
    try:
        import porep_prover_ray.plugin  # noqa: F401
        assert "\n[ray]  owner porep-prover-ray: " in out and "  poll_seconds = 1.0" in out
    except ImportError:
        assert "[ray]" not in out


def test_config_command_json_and_values_of_a_file(tmp_path, monkeypatch, capsys):
    make_plugin(tmp_path, monkeypatch, CACHE_MODULE, name="cache")
    path = tmp_path / "c.toml"
    path.write_text('[cache]\nmode = "fifo"\n[daemon]\nmax_pending = 9\n')
    assert main(["--set", "cache.depth=5", "config", "--json", "--config", str(path)]) == 0
    listing = json.loads(capsys.readouterr().out)
    by_name = {s["name"]: s for s in listing["sections"]}
    assert by_name["cache"]["owner"] == "porep-prover-cache" and by_name["daemon"]["owner"] == "daemon"
    depth, mode = by_name["cache"]["keys"]
    assert depth == {"name": "depth", "key": "cache.depth", "type": "integer", "default": 2, "low": 1, "high": 8,
                     "accepts": "an integer from 1 to 8", "doc": "levels of subfolders", "value": 5}
    assert mode["value"] == "fifo" and mode["options"] == ["lru", "fifo"]
    pending = {k["name"]: k for k in by_name["daemon"]["keys"]}["max_pending"]
    assert (pending["value"], pending["default"], pending["low"], pending["high"]) == (9, 1024, 1, 1_000_000)
    assert main(["config", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  mode = \"fifo\"  (default \"lru\")" in out and "  max_pending = 9  (default 1024)" in out
    assert main(["config", "--json"]) == 0
    assert all("value" not in k for s in json.loads(capsys.readouterr().out)["sections"] for k in s["keys"])


@pytest.mark.parametrize("argv, words", [
    (["config", "--set", "cache.depth=9"], ["cache.depth", "an integer from 1 to 8, got 9"]),
    (["config", "--set", "cache.nope=1"], ["unknown setting 'cache.nope'", "has depth, mode"]),
    (["config", "--set", "nowhere.x=1"], ["unknown setting 'nowhere.x'", "[cache] of porep-prover-cache"]),
    (["config", "--config", "missing.toml"], ["missing.toml", "cannot read"]),
    (["bench", "batch", "--set", "cache.mode=mru"], ["cache.mode", "one of 'lru', 'fifo'"]),
])
def test_config_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, words):
    make_plugin(tmp_path, monkeypatch, CACHE_MODULE, name="cache")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and "Traceback" not in err and err.startswith("porep-prover: error: ConfigError: ")
    for word in words:
        assert word in err, (word, err)


def test_a_clash_between_installed_plugins_is_one_line(tmp_path, monkeypatch, capsys):
    make_plugin(tmp_path, monkeypatch, CACHE_MODULE, name="cache")
    make_plugin(tmp_path, monkeypatch, CACHE_MODULE, name="cache2")
    assert main(["config"]) == 2
    err = capsys.readouterr().err.strip()
    owners = "porep-prover-cache and porep-prover-cache2", "porep-prover-cache2 and porep-prover-cache"
    assert err in [f"porep-prover: error: ConfigError: section [cache] is declared by both {both}; a section belongs "
                   "to one owner: uninstall one of them" for both in owners]      # either found first
    assert main(["plugins"]) == 0         # the listing says it, and still lists
    assert "settings: section [cache] is declared by both" in capsys.readouterr().out
