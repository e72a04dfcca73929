# SPDX-License-Identifier: Apache-2.0
"""The hooks a plugin may implement (pluggy; project name "porep_prover";
plugins are found through the entry-point group "porep_prover"). Every hook
is called with keyword arguments. Registration hooks run once per plugin, when
a registry is collected (hooks.collect_registry; the settings' sections:
hooks.collect_settings); one that raises, or registers a job kind or name
already taken, skips its plugin. Notifications run as
things happen, one at a time on a thread of their own, each call within
engine.sink_timeout_seconds; a failing or stalled implementation is logged
without stopping the engine."""
from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("porep_prover")


@hookspec
def porep_prover_register_synthesis_providers(registry) -> None:
    """Add synthesis providers: registry.add_provider(provider). A provider
    serves the job kinds in provider.kinds (see engine.SynthesisProvider)."""


@hookspec
def porep_prover_register_schedulers(registry) -> None:
    """Add schedulers: registry.add_scheduler(name, factory); the setting
    engine.scheduler picks one by name. A scheduler orders engine.PartitionTask
    objects (see engine.Scheduler)."""


@hookspec
def porep_prover_register_result_sinks(registry) -> None:
    """Add result sinks: registry.add_sink(name, sink). An engine delivers
    every finished job to the sinks its setting engine.result_sinks names,
    and to no other (see engine.ResultSink)."""


@hookspec
def porep_prover_register_clusters(registry) -> None:
    """Add clusters: registry.add_cluster(name, factory); the setting
    engine.cluster picks one by name, and the engine's partitions are then
    proved by the cluster's node engines (see engine.Cluster)."""


@hookspec
def porep_prover_register_settings(settings) -> None:
    """Declare the plugin's sections of the settings file:
    settings.section(name, doc) and, on the section it returns (each call
    returns it again), .integer(name, default, low, high, doc),
    .number(...), .boolean(name, default, doc), .string(name, default, doc),
    .choice(name, default, options, doc), .strings(name, default, doc)
    (see porep_prover.hooks.SettingsRegistry). Called once per plugin when
    the sections are collected (hooks.collect_settings), before any config
    is read; a section belongs to its plugin's distribution alone, and a
    section another owner declared too is a ConfigError naming both. The
    values are in the engine's config: config.section(name), empty where the
    config was read without the plugins' sections (the defaults hold then)."""


@hookspec
def porep_prover_engine_started(engine) -> None:
    """An engine has started its workers and takes jobs."""


@hookspec
def porep_prover_job_finished(result) -> None:
    """A job ended: result.proofs, or result.error when it failed or was cancelled."""


@hookspec
def porep_prover_engine_stopping(engine) -> None:
    """An engine stops taking jobs and is about to shut down."""
