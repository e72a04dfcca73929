# SPDX-License-Identifier: Apache-2.0
"""Loading plugins so that one broken plugin costs only itself.

pluggy's load_setuptools_entrypoints stops at the first entry point that
fails to import, and a registration hook that raises, or registers a name
another plugin has, would stop every engine and the command line. Here each
entry point is loaded, registered and asked for its registrations on its
own; one that fails any step is logged, recorded with why (Registry.plugins,
Engine.status()["plugins"], `porep-prover plugins`) and skipped: unregistered,
so that none of its hooks runs, and nothing it registered is kept.
"""
from __future__ import annotations

import importlib.metadata
import logging

import pluggy

from ..config_schema import SettingsRegistry
from ..engine.inline import default_registry
from ..engine.registry import PluginRecord, Registry
from . import specs

PROJECT = "porep_prover"
hookimpl = pluggy.HookimplMarker(PROJECT)
LOG = logging.getLogger("porep_prover.plugins")
REGISTRATION_HOOKS = ("porep_prover_register_synthesis_providers", "porep_prover_register_schedulers",
                      "porep_prover_register_result_sinks", "porep_prover_register_clusters")
SETTINGS_HOOK = "porep_prover_register_settings"


class PluginManager(pluggy.PluginManager):
    """pluggy's manager with the hook specifications, which also keeps the
    record of the plugins it skipped (skipped) and where each plugin it
    loaded came from (distributions: plugin name -> "distribution version")."""

    def __init__(self):
        super().__init__(PROJECT)
        self.add_hookspecs(specs)
        self.skipped: list[PluginRecord] = []
        self.distributions: dict[str, str] = {}

    def load_entry_points(self) -> None:
        """Every entry point of the group "porep_prover", each on its own."""
        for ep in importlib.metadata.entry_points(group=PROJECT):
            dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else ""
            why = self._load(ep)
            if why is None:
                self.distributions[ep.name] = dist
            else:
                _skip(self.skipped, PluginRecord(ep.name, dist, why=why))

    def _load(self, ep) -> str | None:
        """None when ep's plugin is registered; else why it is not."""
        if self.get_plugin(ep.name) is not None:
            other = self.distributions.get(ep.name) or "another plugin"
            return f"the name {ep.name!r} is taken by {other}"
        try:
            plugin = ep.load()
        except Exception as exc:  # noqa: BLE001 - a plugin's import fails only that plugin
            return f"import of {ep.value} failed: {type(exc).__name__}: {exc}"
        try:
            self.register(plugin, name=ep.name)
        except Exception as exc:  # noqa: BLE001 - pluggy's validation (a hook's arguments), or a module twice
            return f"not a valid plugin: {type(exc).__name__}: {exc}"
        unknown = sorted(caller.name for caller in self.get_hookcallers(plugin) or []
                         if not caller.has_spec()
                         and any(not i.optionalhook for i in caller.get_hookimpls() if i.plugin is plugin))
        if unknown:
            self.unregister(plugin)
            return f"implements hooks this porep-prover does not have: {', '.join(unknown)}"
        return None


def _skip(records: list, record: PluginRecord) -> None:
    LOG.warning("plugin %s%s skipped: %s", record.name,
                f" ({record.distribution})" if record.distribution else "", record.why)
    records.append(record)


def plugin_manager(load_entry_points: bool = True) -> PluginManager:
    """A manager with the hook specifications and, unless told not to, every
    plugin installed under the entry-point group "porep_prover" that loads
    (the others are logged and recorded in its skipped list)."""
    pm = PluginManager()
    if load_entry_points:
        pm.load_entry_points()
    return pm


def collect_registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The built-ins (the "inline" provider, the "builtin" FIFO scheduler) plus
    what each plugin of pm registers, plugin by plugin: a plugin whose
    registration hook or settings declaration raises, or that registers a
    job kind, scheduler, sink or cluster name already taken, is skipped
    whole (unregistered from pm, so its other hooks do not run either).
    registry.plugins records every plugin, loaded or skipped, with why, and
    what each added ("settings [SECTION]" for a section it declares)."""
    registry = default_registry()
    if pm is None:
        return registry
    ours = pm if isinstance(pm, PluginManager) else None
    skipped = ours.skipped if ours is not None else []
    loaded = []
    plugins = pm.list_name_plugin()
    for name, plugin in plugins:
        dist = ours.distributions.get(name, "") if ours is not None else ""
        others = [p for _, p in plugins if p is not plugin]
        staged, settings = Registry(), SettingsRegistry()
        try:
            for hook in REGISTRATION_HOOKS:
                pm.subset_hook_caller(hook, others)(registry=staged)
            # its sections are declared here too, so that a plugin whose declaration raises is skipped from
            # every registry, whichever is collected first (hooks.collect_settings keeps them)
            pm.subset_hook_caller(SETTINGS_HOOK, others)(settings=settings)
            added = registry.merge(staged, owner=name) + tuple(f"settings [{s.name}]" for s in settings.sections)
        except Exception as exc:  # noqa: BLE001 - a plugin's registration fails only that plugin
            pm.unregister(plugin)
            _skip(skipped, PluginRecord(name, dist, why=f"registration failed: {type(exc).__name__}: {exc}"))
            continue
        loaded.append(PluginRecord(name, dist, added))
    registry.plugins = loaded + list(skipped)
    return registry
