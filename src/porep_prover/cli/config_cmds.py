# SPDX-License-Identifier: Apache-2.0
"""`porep-prover config`: every section of the settings file this
installation knows, with its owner (engine, daemon, or a plugin's
distribution), and each key's type, default, range or choices and what it
does; with --config FILE and --set KEY=VALUE, the value each key takes
there (the file and the overrides checked as the other commands check
them: a bad one is the usual one-line error, exit 2).

    porep-prover config [--json] [--config FILE] [--set KEY=VALUE ...]
"""
from __future__ import annotations

import json

# The sections come from the plugins (pluggy, the engine): imported when the command runs.


def cmd_config(args) -> int:
    from ..hooks import installed_settings
    from .engine_cmds import read_config
    given = args.config is not None or bool(args.set)
    sections = installed_settings()
    values = read_config(args).values if given else None
    listing = [_section(section, values) for section in sections.sections]
    if args.json:
        print(json.dumps({"config": args.config, "sections": listing}, indent=1))
        return 0
    for n, section in enumerate(listing):
        print(("\n" if n else "") + _heading(section))
        for key in section["keys"]:
            print(_line(key, given))
    return 0


def _section(section, values: dict | None) -> dict:
    """A section as --json shows it: name, owner, doc, keys (each with its
    value where a config was given)."""
    keys = []
    for setting in section.settings.values():
        entry = {"name": setting.name, **setting.describe()}
        if values is not None:
            entry["value"] = values[setting.key]
        keys.append(entry)
    return {"name": section.name, "owner": section.owner, "doc": section.doc, "keys": keys}


def _heading(section: dict) -> str:
    doc = f": {section['doc']}" if section["doc"] else ""
    return f"[{section['name']}]  owner {section['owner']}{doc}"


def _line(key: dict, given: bool) -> str:
    """'  name = default    what it takes' and the doc under it; with a config
    given, its value where that is not the default."""
    shown = f"{key['name']} = {_toml(key['default'])}"
    if given and key["value"] != key["default"]:
        shown = f"{key['name']} = {_toml(key['value'])}  (default {_toml(key['default'])})"
    return f"  {shown:<40}  {key['accepts']}\n      {key['doc']}"


def _toml(value) -> str:
    """A value as TOML writes it (JSON's form is TOML's for these types)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return f"{value:.1f}"
    return json.dumps(value)


def register(sub, common) -> None:
    from .engine_cmds import engine_options
    p = sub.add_parser("config", help="the settings' sections and keys, with their owners, types, defaults, "
                                      "ranges; with --config, the values there")
    p.add_argument("--json", action="store_true", help="the listing as JSON")
    engine_options(p)
    p.set_defaults(func=cmd_config)
