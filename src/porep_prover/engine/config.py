# SPDX-License-Identifier: Apache-2.0
"""Engine settings: a TOML file (every key documented in
contrib/porep-prover.example.toml), then `section.key=value` overrides (the
CLI's), validated as a whole. Unknown keys and bad values raise ConfigError
naming the dotted key; every number has a range (below: the MAX_ bounds and
SCHEMA), which the error states; NaN and infinities are refused.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import os
from typing import Any, Callable

import tomllib

from ..config import MAX_TABLE_COPIES, MAX_THREADS
from ..errors import ConfigError
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
MAX_PENDING = 1_000_000              # the daemon's jobs accepted and unfinished
MAX_WAITERS = 4096                   # the daemon's AwaitProof / Prove calls at once (a thread each)
MIN_REQUEST_BYTES = 1024
MAX_REQUEST_BYTES = (1 << 31) - 1    # gRPC's limit on a message (a signed 32-bit length)
MAX_DRAIN_SECONDS = 86400.0


def _int(minimum: int, maximum: int):
    def check(v):
        return (isinstance(v, int) and not isinstance(v, bool) and minimum <= v <= maximum,
                f"an integer from {minimum} to {maximum}")
    return check


def _number(minimum: float, maximum: float):
    """A finite int or float in [minimum, maximum] (NaN and infinities fail the comparison)."""
    def check(v):
        return (isinstance(v, (int, float)) and not isinstance(v, bool) and minimum <= v <= maximum,
                f"a finite number from {_plain(minimum)} to {_plain(maximum)}")
    return check


def _plain(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _bool(v):
    return isinstance(v, bool), "true or false"


def _str(v):
    return isinstance(v, str), "a string"


def _str_list(v):
    return isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings"


def _devices(v):
    ok = isinstance(v, list) and all(isinstance(x, str) and (x in ("cpu", "gpu") or
                                                             (x.startswith("gpu:") and x[4:].isdigit()))
                                     for x in v)
    return ok, 'a list of "cpu", "gpu" (every GPU) or "gpu:N"'


def _choice(*options):
    def check(v):
        return v in options, "one of " + ", ".join(repr(o) for o in options)
    return check


def _address(empty_ok: bool):
    """HOST:PORT ([IPV6]:PORT; port 0 to 65535, 0: any free one), or unix:/ABSOLUTE/PATH; "" when empty_ok."""
    def check(v):
        ok = isinstance(v, str) and ((empty_ok and v == "") or _is_address(v))
        return ok, ('"HOST:PORT" (port 0 to 65535, 0: a free one), "[IPV6]:PORT" or "unix:/absolute/path"'
                    + (', or "" (off)' if empty_ok else ""))
    return check


def _is_address(v: str) -> bool:
    if v.startswith("unix:"):
        return v[5:].startswith("/") and "\0" not in v
    host, sep, port = v.rpartition(":")
    if not sep or not port.isdigit() or len(port) > 5 or int(port) > 65535:
        return False
    if host.startswith("[") and host.endswith("]"):
        try:
            return ipaddress.ip_address(host[1:-1]).version == 6
        except ValueError:
            return False
    return bool(host) and not any(c.isspace() or c in ":/[]" for c in host)


def _level(v):
    return isinstance(v, str) and v.upper() in LEVELS, f"one of {', '.join(LEVELS)}"


# dotted key -> (default, validator). The example TOML documents each one.
SCHEMA: dict[str, tuple[Any, Callable]] = {
    "engine.devices": ([], _devices),
    "engine.gpu_workers_per_device": (2, _int(1, MAX_GPU_WORKERS)),
    "engine.partition_workers": (0, _int(0, MAX_PARTITION_WORKERS)),
    "engine.synthesis_lookahead": (2, _int(1, MAX_LOOKAHEAD)),
    "engine.memory_budget_gib": (0.0, _number(0, MAX_GIB)),
    "engine.device_memory_gib": (0.0, _number(0, MAX_GIB)),
    "engine.threads": (0, _int(0, MAX_THREADS)),
    "engine.synthesis_threads": (0, _int(0, MAX_THREADS)),
    "engine.scheduler": ("", _str),
    "engine.result_sinks": ([], _str_list),
    "engine.switch_interval_ms": (0.5, _number(0, MAX_SWITCH_INTERVAL_MS)),
    "engine.provider_timeout_seconds": (3600.0, _number(0, MAX_PLUGIN_SECONDS)),
    "engine.provider_stall_seconds": (300.0, _number(0, MAX_PLUGIN_SECONDS)),
    "engine.sink_timeout_seconds": (60.0, _number(MIN_SINK_SECONDS, MAX_PLUGIN_SECONDS)),
    "engine.timeline_events": (100_000, _int(0, MAX_TIMELINE_EVENTS)),
    "engine.cluster": ("", _str),
    "prover.verify": (True, _bool),
    "prover.check_witness": (True, _bool),
    "prover.max_retries": (2, _int(0, MAX_RETRIES)),
    "prover.b_g2": ("host", _choice("host", "device")),
    "prover.matvec": ("host", _choice("host", "device")),
    "prover.upload": ("ahead", _choice("region", "ahead")),
    "prover.msm_tables": (False, _bool),
    "prover.msm_table_copies": (0, _int(0, MAX_TABLE_COPIES)),
    "prover.overlap_msms": (False, _bool),
    "srs.preload": ([], _str_list),
    "srs.idle_evict_seconds": (600.0, _number(0, MAX_IDLE_SECONDS)),
    "srs.budget_gib": (0.0, _number(0, MAX_GIB)),
    "logging.level": ("INFO", _level),
    "logging.file": ("", _str),
    "logging.timeline": ("", _str),
    "logging.format": ("text", _choice("text", "json")),
    "daemon.listen": ("127.0.0.1:9820", _address(empty_ok=False)),
    "daemon.status_listen": ("127.0.0.1:9821", _address(empty_ok=True)),
    "daemon.state_dir": ("", _str),
    "daemon.input_roots": ([], _str_list),
    "daemon.kinds": ([], _str_list),
    "daemon.max_pending": (1024, _int(1, MAX_PENDING)),
    "daemon.max_waiters": (64, _int(1, MAX_WAITERS)),
    "daemon.max_request_bytes": (128 << 20, _int(MIN_REQUEST_BYTES, MAX_REQUEST_BYTES)),
    "daemon.result_retention_seconds": (86400.0, _number(1, MAX_IDLE_SECONDS)),
    "daemon.fetched_retention_seconds": (3600.0, _number(1, MAX_IDLE_SECONDS)),
    "daemon.drain_timeout_seconds": (60.0, _number(0, MAX_DRAIN_SECONDS)),
    "daemon.tls_cert": ("", _str),
    "daemon.tls_key": ("", _str),
    "daemon.token_file": ("", _str),
    "daemon.allow_remote": (False, _bool),
    # read by the cluster of that name (engine.cluster = "ray", plugin porep-prover-ray), which checks them further
    "ray.address": ("auto", _str),
    "ray.namespace": ("porep-prover", _str),
    "ray.node_resource": ("", _str),
    "ray.partitions_per_node": (2, _int(1, MAX_LOOKAHEAD)),
    "ray.poll_seconds": (1.0, _number(0.05, 60)),
    "ray.node_start_timeout_seconds": (300.0, _number(1, MAX_DRAIN_SECONDS)),
    "ray.partition_timeout_seconds": (3600.0, _number(1, MAX_PLUGIN_SECONDS)),
}


@dataclasses.dataclass(frozen=True)
class EngineConfig:
    """Validated settings as written: `get("section.key")`, or a section's as a
    dict (cfg.section("engine")["threads"]). What an engine runs with, every
    default resolved on the host, is engine.settings.EngineSettings.resolve(cfg)."""
    values: dict

    def get(self, key: str):
        return self.values[key]

    def section(self, name: str) -> dict:
        return {k.split(".", 1)[1]: v for k, v in self.values.items() if k.startswith(name + ".")}

    def replace(self, **dotted) -> "EngineConfig":
        """A copy with some keys changed (validated): replace(**{"engine.threads": 4})."""
        return build({**self.values, **dotted})


def _check(key: str, value) -> Any:
    if key not in SCHEMA:
        raise ConfigError(f"unknown setting {key!r}", key=key)
    ok, wanted = SCHEMA[key][1](value)
    if not ok:
        raise ConfigError(f"setting {key!r} must be {wanted}, got {value!r}", key=key)
    if key == "logging.level":
        value = value.upper()
    if isinstance(SCHEMA[key][0], float):
        value = float(value)
    return value


def build(values: dict) -> EngineConfig:
    """An EngineConfig from dotted keys (missing ones take their defaults)."""
    out = {k: (list(d) if isinstance(d, list) else d) for k, (d, _) in SCHEMA.items()}
    for key, value in values.items():
        out[key] = _check(key, value)
    return EngineConfig(out)


def _read_toml(path: str | os.PathLike) -> dict:
    """The TOML document in the file at path (TOML 1.0, as tomllib reads it)."""
    text = read_text(path, ConfigError, "the settings")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:      # its message ends "(at line L, column C)"
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: arrays or tables nested too deeply to read") from None


def _flatten(doc: dict, prefix: str = "") -> dict:
    flat = {}
    for k, v in doc.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            if key.count(".") >= 1 or key not in {s.split(".")[0] for s in SCHEMA}:
                raise ConfigError(f"unknown section [{key}]", key=key)
            flat.update(_flatten(v, key + "."))
        else:
            if "." not in key:
                raise ConfigError(f"setting {key!r} is outside any section ([engine], [prover], [srs], [daemon], "
                                  "[logging], [ray])", key=key)
            flat[key] = v
    return flat


def resolve_key(name: str) -> str:
    """A dotted key, also from its last part alone when that is unambiguous ("partition_workers")."""
    if "." in name or name in SCHEMA:
        return name
    matches = [k for k in SCHEMA if k.split(".", 1)[1] == name]
    return matches[0] if len(matches) == 1 else name


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


def parse_sweep(text: str) -> tuple[str, list]:
    """'section.key=V1,V2,...' (or a TOML list) -> (key, [values]); ConfigError
    when there is no value."""
    key, raw = parse_override(text)
    values = raw if isinstance(raw, list) else \
        [parse_value(v) for v in str(raw).strip("[]").split(",") if v.strip()]
    if not values:
        raise ConfigError(f"sweep {text!r}: no values", key=key)
    return key, values


def parse_override(text: str) -> tuple[str, Any]:
    """'section.key=value' (or 'key=value' when the key names one setting) -> (key, value);
    the value is read as TOML, else taken as a string; for a list setting a
    bare a,b,c is the list of those strings (engine.devices=gpu:0,gpu:1)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} is not section.key=value", key=text)
    key, raw = (part.strip() for part in text.split("=", 1))
    key = resolve_key(key)
    value = parse_value(raw)
    if isinstance(value, str) and key in SCHEMA and isinstance(SCHEMA[key][0], list):
        value = [v.strip() for v in value.split(",") if v.strip()]
    return key, value


def load_config(path: str | os.PathLike | None = None, overrides: list[str] | dict | None = None) -> EngineConfig:
    """Settings from a TOML file (None: defaults only), then the overrides.
    ConfigError naming the file, and the line where there is one, when the
    file cannot be read, is not UTF-8, or is not TOML (a duplicate table or
    key included); then as build() for the settings."""
    values = {}
    if path is not None:
        doc = _read_toml(path)
        try:
            values.update(_flatten(doc))
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}", key=exc.key) from None
    if isinstance(overrides, dict):
        values.update(overrides)
    else:
        for text in overrides or []:
            key, value = parse_override(text)
            values[key] = value
    return build(values)
