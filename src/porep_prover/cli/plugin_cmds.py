# SPDX-License-Identifier: Apache-2.0
"""`porep-prover plugins`: the plugins installed (entry-point group
"porep_prover"), what each registers, and those skipped, with why. Exit 0
whatever it finds: a skipped plugin does not stop the others or the engine."""
from __future__ import annotations

import json


def cmd_plugins(args) -> int:
    from ..errors import ConfigError
    from ..hooks import collect_registry, collect_settings, plugin_manager  # pluggy and the engine, here only
    pm = plugin_manager()
    try:       # first, as every other command does: a plugin whose settings declaration raises is skipped
        collect_settings(pm)
        settings_error = None
    except ConfigError as exc:       # two owners of one section: what every command that reads settings says
        settings_error = str(exc)
    registry = collect_registry(pm)
    report = registry.plugin_report()
    contents = registry.contents()
    if args.json:
        print(json.dumps({**report, "registered": contents, "settings_error": settings_error}, indent=1))
        return 0
    if settings_error:
        print(f"settings: {settings_error}")
    loaded, skipped = report["loaded"], report["skipped"]
    if not loaded and not skipped:
        print("no plugins installed (entry-point group porep_prover)")
    width = max((len(p["name"]) for p in loaded + skipped), default=0)
    if loaded:
        print("installed:")
        for p in loaded:
            print(f"  {p['name']:<{width}}  {p['distribution'] or '-'}: "
                  f"{', '.join(p['registered']) or 'hooks only (registers nothing)'}")
    if skipped:
        print("skipped:")
        for p in skipped:
            print(f"  {p['name']:<{width}}  {p['distribution'] or '-'}: {p['why']}")
    print("registered:")
    for key, label, note in (("providers", "providers (job kinds)", "the daemon adds demo"),
                             ("schedulers", "schedulers", "engine.scheduler picks one; the daemon's default: priority"),
                             ("result_sinks", "result sinks", "run only where engine.result_sinks names them"),
                             ("clusters", "clusters", "engine.cluster picks one")):
        entries = ", ".join(f"{name} ({owner})" for name, owner in contents[key].items()) or "none"
        print(f"  {label}: {entries}; {note}")
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("plugins", help="installed plugins, what they register, and those skipped with why")
    p.add_argument("--json", action="store_true", help="the listing as JSON (loaded, skipped)")
    p.set_defaults(func=cmd_plugins)
