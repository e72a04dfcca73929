# SPDX-License-Identifier: Apache-2.0
"""Engine settings: a TOML file (every key documented in
contrib/porep-prover.example.toml), then `section.key=value` overrides (the
CLI's), validated as a whole against the sections declared (config_schema):
the engine's own, declared here, the built-ins' above it (the daemon's), and
those of the plugins a caller collected (porep_prover.hooks.collect_settings).
Unknown sections and keys, and bad values, raise ConfigError naming the
dotted key; every number has a range (below: the MAX_ bounds), which the
error states; NaN and infinities are refused.
"""
from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, Mapping

import tomllib

from ..config import MAX_TABLE_COPIES, MAX_THREADS
from ..config_schema import Form, SettingsRegistry, built_ins
from ..errors import ConfigError
from ..memory.choice import AUTO, GATHERS, STAGES
from ..text import read_text

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

# Upper bounds of the counts and amounts (each far above any useful value,
# low enough that a typing slip is an error, not a crash or a stall later).
MAX_PARTITION_WORKERS = 256      # Python threads, each holding a partition in memory
MAX_GPU_WORKERS = 16             # per device
MAX_LOOKAHEAD = 256              # partitions waiting for a device worker
MAX_RETRIES = 100
MAX_GIB = float(1 << 20)         # 1 PiB
MAX_IDLE_SECONDS = 365 * 86400.0
MAX_SWITCH_INTERVAL_MS = 1000.0
MAX_PLUGIN_SECONDS = 7 * 86400.0     # a provider's or a sink's call
MIN_SINK_SECONDS = 0.01              # a sink's call always has a limit: a stuck sink must not hold shutdown
MAX_TIMELINE_EVENTS = 10_000_000     # events an engine keeps in memory (about 150 bytes each)


def _device_name(v: str) -> bool:
    return v in ("cpu", "gpu") or (v.startswith("gpu:") and v[4:].isdigit())


DEVICES = Form(_device_name, 'a list of "cpu", "gpu" (every GPU) or "gpu:N"')


def declare_engine_settings(settings: SettingsRegistry) -> None:
    """The engine's sections: [engine], [prover], [srs], [logging] (each key
    explained at length in contrib/porep-prover.example.toml)."""
    (settings.section("engine", "Devices, workers, memory and time limits of the engine")
        .strings("devices", [], '[] = every GPU (the CPU without one); "gpu", "gpu:N", "cpu"', form=DEVICES)
        .integer("gpu_workers_per_device", 2, 1, MAX_GPU_WORKERS, "workers sharing each device's lock")
        .integer("partition_workers", 0, 0, MAX_PARTITION_WORKERS, "synthesis workers; 0 = half the cores")
        .integer("synthesis_lookahead", 2, 1, MAX_LOOKAHEAD, "synthesized partitions waiting for a device worker")
        .number("memory_budget_gib", 0.0, 0, MAX_GIB,
                "host memory the process may hold, GiB; 0 = the host's (or its cgroup's) less a margin")
        .number("device_memory_gib", 0.0, 0, MAX_GIB, "memory this process may hold on each GPU, GiB; 0 = the card's")
        .integer("threads", 0, 0, MAX_THREADS, "threads of each native kernel call; 0 = all cores")
        .integer("synthesis_threads", 0, 0, MAX_THREADS, "threads of each synthesis worker; 0 = the cores shared")
        .string("scheduler", "", 'the scheduler ordering partitions, by name; "" = first come, first served')
        .strings("result_sinks", [], "the result sinks every finished job is delivered to, by name")
        .number("switch_interval_ms", 0.5, 0, MAX_SWITCH_INTERVAL_MS,
                "Python's thread switch interval while the engine runs, ms; 0 = the interpreter's")
        .number("provider_timeout_seconds", 3600.0, 0, MAX_PLUGIN_SECONDS,
                "seconds a synthesis provider's call may take; 0 = no limit")
        .number("provider_stall_seconds", 120.0, 0, MAX_PLUGIN_SECONDS,
                "seconds in one provider call before a stand-in worker takes over; 0 = never")
        .number("sink_timeout_seconds", 60.0, MIN_SINK_SECONDS, MAX_PLUGIN_SECONDS,
                "seconds a result sink's deliver or a notification hook may take")
        .integer("timeline_events", 100_000, 0, MAX_TIMELINE_EVENTS, "timeline events kept in memory")
        .string("cluster", "", 'the registered cluster proving the partitions; "" = the devices of this host'))
    (settings.section("prover", "How each partition is proved and checked")
        .boolean("verify", True, "verify every proof before handing it out")
        .boolean("check_witness", True, "check that each witness satisfies its circuit first")
        .integer("max_retries", 2, 0, MAX_RETRIES, "times a failing partition is tried again")
        .choice("b_g2", "host", ("host", "device"), "where the G2 MSM runs")
        .choice("matvec", "host", ("host", "device"), "where A w, B w and C w are evaluated")
        .choice("upload", "ahead", ("region", "ahead"), "when a partition's arrays cross to the GPU")
        .choice("gather", AUTO, GATHERS, "where the queries' scalars are gathered when A w, B w, C w run on "
                "the host; auto = the way whose memory plan admits more partitions")
        .choice("stage", AUTO, STAGES, "a partition's arrays copied into page-locked memory before its region, "
                "or synthesized there; auto = the way whose memory plan admits more partitions")
        .boolean("msm_tables", False, "window tables for GPU MSMs of resident parameters")
        .integer("msm_table_copies", 0, 0, MAX_TABLE_COPIES, "most shifted copies in a table; 0 = one a window")
        .boolean("overlap_msms", False, "MSMs independent of H run beside H's transforms"))
    (settings.section("srs", "The parameter sets kept in memory")
        .strings("preload", [], "parameter files loaded when the engine starts")
        .number("idle_evict_seconds", 600.0, 0, MAX_IDLE_SECONDS, "parameters unused this long are dropped; 0 = kept")
        .number("budget_gib", 0.0, 0, MAX_GIB, "host memory the parameter sets may take, GiB; 0 = no limit"))
    (settings.section("logging", "The log and the timeline events")
        .choice("level", "INFO", LEVELS, "the log's level", fold_case=True)
        .string("file", "", 'the log file; "" = standard error')
        .string("timeline", "", 'the file timeline events go to; "" = the main log, at DEBUG')
        .choice("format", "text", ("text", "json"), "log lines as text or one JSON object each"))


@functools.cache     # once: porep_prover registers the built-ins at its import, before any config is read
def _defaults() -> SettingsRegistry:
    """The built-in sections, shared: read, never merged into (default_sections copies)."""
    registry = SettingsRegistry()
    registry.declare("engine", declare_engine_settings)
    for owner, declare in built_ins():
        registry.declare(owner, declare)
    return registry


def default_sections() -> SettingsRegistry:
    """The built-in sections: the engine's and those of the built-ins above
    it (config_schema.built_ins: the daemon's [daemon]). A plugin's sections
    are added by porep_prover.hooks.collect_settings; a copy, so the caller
    may merge into it."""
    return _defaults().copy()


@dataclasses.dataclass(frozen=True)
class EngineConfig:
    """Validated settings as written: `get("section.key")`, or a section's as a
    dict (cfg.section("engine")["threads"]). What an engine runs with, every
    default resolved on the host, is engine.settings.EngineSettings.resolve(cfg).
    sections: what it was checked against (None: default_sections()), which
    replace() checks against too. A value's type is its key's (config_schema:
    a bool, an int, a float, a string or a list of strings)."""
    values: dict[str, Any]
    sections: SettingsRegistry | None = dataclasses.field(default=None, compare=False, repr=False)

    def get(self, key: str) -> Any:
        return self.values[key]

    def section(self, name: str) -> dict[str, Any]:
        return {k.split(".", 1)[1]: v for k, v in self.values.items() if k.startswith(name + ".")}

    def replace(self, **dotted: object) -> "EngineConfig":
        """A copy with some keys changed (validated): replace(**{"engine.threads": 4})."""
        return build({**self.values, **dotted}, self.sections)


def build(values: Mapping[str, object], sections: SettingsRegistry | None = None) -> EngineConfig:
    """An EngineConfig from dotted keys (missing ones take their defaults),
    each checked against sections (None: default_sections()): ConfigError
    naming the key for one no section declares or a value it refuses."""
    schema = sections if sections is not None else _defaults()
    out = schema.defaults()
    for key, value in values.items():
        out[key] = schema.check(key, value)
    return EngineConfig(out, sections)


def _read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The TOML document in the file at path (TOML 1.0, as tomllib reads it)."""
    text = read_text(path, ConfigError, "the settings")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:      # its message ends "(at line L, column C)"
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: arrays or tables nested too deeply to read") from None


def _flatten(doc: dict[str, Any], schema: SettingsRegistry) -> dict[str, object]:
    """A TOML document's [section] key = value as dotted keys; ConfigError for
    a table that is no section of schema (nested ones included) and a key
    outside every table."""
    flat: dict[str, object] = {}
    for name, table in doc.items():
        if not isinstance(table, dict):
            raise ConfigError(f"setting {name!r} is outside any section ({schema.known()})", key=name)
        if not schema.has_section(name):
            raise schema.unknown_section(name)
        for key, value in table.items():
            if isinstance(value, dict):
                raise schema.unknown_section(f"{name}.{key}")
            flat[f"{name}.{key}"] = value
    return flat


def resolve_key(name: str, sections: SettingsRegistry | None = None) -> str:
    """A dotted key, also from its last part alone when one section has it ("partition_workers")."""
    return (sections if sections is not None else _defaults()).resolve_key(name)


def parse_value(raw: str) -> Any:
    """A value as written on a command line: read as TOML, else the string itself."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return raw


def parse_entry(text: str, what: str = "--payload") -> tuple[str, Any]:
    """'KEY=VALUE' as written on a command line -> (KEY, the value read by
    parse_value); ConfigError naming what when there is no key or no '='."""
    key, eq, raw = text.partition("=")
    if not key.strip() or not eq:
        raise ConfigError(f"{what} {text!r} is not KEY=VALUE", key=text)
    return key.strip(), parse_value(raw)


def parse_sweep(text: str, sections: SettingsRegistry | None = None) -> tuple[str, list[Any]]:
    """'section.key=V1,V2,...' (or a TOML list) -> (key, [values]); ConfigError
    when there is no value."""
    key, raw = parse_override(text, sections)
    values = raw if isinstance(raw, list) else \
        [parse_value(v) for v in str(raw).strip("[]").split(",") if v.strip()]
    if not values:
        raise ConfigError(f"sweep {text!r}: no values", key=key)
    return key, values


def parse_override(text: str, sections: SettingsRegistry | None = None) -> tuple[str, Any]:
    """'section.key=value' (or 'key=value' when the key names one setting of
    sections, default_sections() when None) -> (key, value); the value is
    read as TOML, else taken as a string; for a list setting a bare a,b,c is
    the list of those strings (engine.devices=gpu:0,gpu:1)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} is not section.key=value", key=text)
    schema = sections if sections is not None else _defaults()
    key, raw = (part.strip() for part in text.split("=", 1))
    key = schema.resolve_key(key)
    value = parse_value(raw)
    setting = schema.setting(key)
    if isinstance(value, str) and setting is not None and setting.kind == "strings":
        value = [v.strip() for v in value.split(",") if v.strip()]
    return key, value


def load_config(path: str | os.PathLike[str] | None = None, overrides: list[str] | Mapping[str, object] | None = None,
                sections: SettingsRegistry | None = None) -> EngineConfig:
    """Settings from a TOML file (None: defaults only), then the overrides,
    checked against sections: default_sections() when None (the engine's and
    the daemon's); porep_prover.hooks.collect_settings(pm) adds those of pm's
    plugins ([ray] of porep-prover-ray, ...). ConfigError naming the file,
    and the line where there is one, when the file cannot be read, is not
    UTF-8, or is not TOML (a duplicate table or key included); naming the
    section or key, and what there is, for one that sections lacks; for
    overrides that are neither a mapping with string keys nor a list of
    KEY=VALUE strings; then as build() for the values."""
    schema = sections if sections is not None else _defaults()
    values: dict[str, object] = {}
    if path is not None:
        doc = _read_toml(path)
        try:
            values.update(_flatten(doc, schema))
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}", key=exc.key) from None
    if isinstance(overrides, Mapping):
        for key, value in overrides.items():
            if not isinstance(key, str):
                raise ConfigError(f"overrides: a setting's name is a dotted string (\"engine.devices\"), not "
                                  f"{type(key).__name__} {key!r:.60}")
            values[key] = value
    elif overrides is not None:
        if isinstance(overrides, (str, bytes)) or not isinstance(overrides, (list, tuple)):
            raise ConfigError(f"overrides: a mapping of settings or a list of KEY=VALUE strings, not "
                              f"{type(overrides).__name__}")
        for text in overrides:
            if not isinstance(text, str):
                raise ConfigError(f"overrides: each is a KEY=VALUE string, not {type(text).__name__} {text!r:.60}")
            key, value = parse_override(text, schema)
            values[key] = value
    return build(values, sections)
