# SPDX-License-Identifier: Apache-2.0
"""Plugins: the pluggy manager and the registry the engine runs on.

    pm = plugin_manager()                 # hookspecs + entry points "porep_prover"
    sections = collect_settings(pm)       # the settings' sections: the engine's, the daemon's, theirs
    registry = collect_registry(pm)       # providers, schedulers, sinks, clusters they register
    Engine(load_config(path, sections=sections), registry=registry, plugins=pm)

A plugin that fails to import, whose registration or settings declaration
raises, or that registers a name already taken is logged, recorded (registry.plugins, the engine's
status()["plugins"], `porep-prover plugins`) and skipped; the others load.
"""
from __future__ import annotations

from ..config_schema import Form, Section, SettingsRegistry
from . import specs
from .manager import PROJECT, PluginManager, collect_registry, hookimpl, plugin_manager
from .settings import collect_settings, installed_settings

__all__ = ["PROJECT", "Form", "PluginManager", "Section", "SettingsRegistry", "collect_registry", "collect_settings",
           "hookimpl", "installed_settings", "plugin_manager", "specs"]
