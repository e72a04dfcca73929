# SPDX-License-Identifier: Apache-2.0
"""Plugins: the pluggy manager and the registry the engine runs on.

    pm = plugin_manager()                 # hookspecs + entry points "porep_prover"
    registry = collect_registry(pm)       # providers, schedulers, sinks, clusters they register
    Engine(config, registry=registry, plugins=pm)

A plugin that fails to import, whose registration raises, or that registers
a name already taken is logged, recorded (registry.plugins, the engine's
status()["plugins"], `porep-prover plugins`) and skipped; the others load.
"""
from __future__ import annotations

from . import specs
from .manager import PROJECT, PluginManager, collect_registry, hookimpl, plugin_manager

__all__ = ["PROJECT", "PluginManager", "collect_registry", "hookimpl", "plugin_manager", "specs"]
