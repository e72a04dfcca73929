# SPDX-License-Identifier: Apache-2.0
"""The entry point: registers the cluster "ray" (engine.cluster = "ray") and
declares its settings, the [ray] section. Ray itself is imported only when
an engine starts on the cluster."""
from __future__ import annotations

from porep_prover.hooks import hookimpl

from .dispatcher import RayCluster
from .settings import declare_settings


@hookimpl
def porep_prover_register_clusters(registry) -> None:
    registry.add_cluster("ray", RayCluster)


@hookimpl
def porep_prover_register_settings(settings) -> None:
    declare_settings(settings)
