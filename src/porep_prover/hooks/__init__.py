# SPDX-License-Identifier: Apache-2.0
"""Plugins: the pluggy manager and the registry the engine runs on.

    pm = plugin_manager()                 # hookspecs + entry points "porep_prover"
    registry = collect_registry(pm)       # providers, schedulers, sinks they register
    Engine(config, registry=registry, plugins=pm)
"""
from __future__ import annotations

import pluggy

from ..engine.inline import default_registry
from ..engine.registry import Registry
from . import specs

PROJECT = "porep_prover"
hookimpl = pluggy.HookimplMarker(PROJECT)


def plugin_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    """A manager with the hook specifications and, unless told not to, every
    plugin installed under the entry-point group "porep_prover"."""
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(specs)
    if load_entry_points:
        pm.load_setuptools_entrypoints(PROJECT)
    return pm


def collect_registry(pm: pluggy.PluginManager | None = None) -> Registry:
    """The built-ins (the "inline" provider, the "builtin" FIFO scheduler) plus
    whatever the plugins register."""
    registry = default_registry()
    if pm is not None:
        pm.hook.porep_prover_register_synthesis_providers(registry=registry)
        pm.hook.porep_prover_register_schedulers(registry=registry)
        pm.hook.porep_prover_register_result_sinks(registry=registry)
    return registry


__all__ = ["PROJECT", "collect_registry", "hookimpl", "plugin_manager", "specs"]
