# SPDX-License-Identifier: Apache-2.0
"""The sections of the settings file the plugins declare, beside the
built-in ones (the engine's, the daemon's):

    pm = plugin_manager()
    sections = collect_settings(pm)         # [engine] ... [daemon], then [ray] of porep-prover-ray, ...
    config = load_config("porep-prover.toml", sections=sections)

A plugin whose declaration raises (a bad default, a name that is not a
key, any error of its own) is skipped whole, as one whose registration
raises is: logged, recorded in pm.skipped with why, unregistered. Two
owners declaring one section stop the collection: a ConfigError naming both.
"""
from __future__ import annotations

import pluggy

from ..config_schema import SettingsRegistry
from ..engine.config import default_sections
from ..engine.registry import PluginRecord
from .manager import SETTINGS_HOOK, PluginManager, _skip, plugin_manager


def collect_settings(pm: pluggy.PluginManager | None = None) -> SettingsRegistry:
    """The built-in sections (engine.config.default_sections) and those each
    plugin of pm declares through porep_prover_register_settings, owned by
    its distribution's name (the plugin's name when it has none), in the
    order the plugins were registered. pm None: the built-ins alone.
    ConfigError naming both owners when a section is declared twice."""
    registry = default_sections()
    if pm is None:
        return registry
    ours = pm if isinstance(pm, PluginManager) else None
    plugins = pm.list_name_plugin()
    for name, plugin in plugins:
        dist = ours.distributions.get(name, "") if ours is not None else ""
        owner = dist.rsplit(" ", 1)[0] if dist else name
        staged = SettingsRegistry()
        try:
            pm.subset_hook_caller(SETTINGS_HOOK, [p for _, p in plugins if p is not plugin])(settings=staged)
        except Exception as exc:  # noqa: BLE001 - a plugin's declaration fails only that plugin
            pm.unregister(plugin)
            why = f"declaring its settings failed: {type(exc).__name__}: {exc}"
            _skip(ours.skipped if ours is not None else [], PluginRecord(name, dist, why=why))
            continue
        registry.merge(staged, owner)
    return registry


def installed_settings() -> SettingsRegistry:
    """collect_settings of the plugins installed (entry points "porep_prover"):
    what the command line reads its --config and --set against."""
    return collect_settings(plugin_manager())
