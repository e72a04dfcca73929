# SPDX-License-Identifier: Apache-2.0
"""porep-prover over a Ray cluster: one engine per node (NodeEngine, a Ray
actor owning the node's devices, its interlock and its resident parameters),
and RayCluster, the dispatcher that spreads each job's partitions over them
(engine.cluster = "ray"; settings in the [ray] section)."""
from .dispatcher import RayCluster
from .node_engine import NodeEngine
from .settings import RaySettings

__all__ = ["NodeEngine", "RayCluster", "RaySettings"]
