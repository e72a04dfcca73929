# SPDX-License-Identifier: Apache-2.0
"""The plugin loads through its entry point and registers the "porep",
"winning-post", "window-post" and "snap-update" providers; its registered seal proofs follow
filecoin-proofs' constants."""
import pytest

pytest.importorskip("porep_prover_porep.plugin")

from porep_prover.errors import InvalidInputError  # noqa: E402
from porep_prover.hooks import collect_registry, plugin_manager  # noqa: E402
from porep_prover_porep.registered import REGISTERED, seal_proof  # noqa: E402


def test_loaded_through_the_entry_point_registering_its_providers():
    report = collect_registry(plugin_manager()).plugin_report()
    loaded = {p["name"]: p["registered"] for p in report["loaded"]}
    assert loaded.get("porep") == ["provider porep", "provider winning-post", "provider window-post",
                                   "provider snap-update"]
    assert "porep" not in {p["name"] for p in report.get("skipped", [])}


def test_registered_seal_proofs():
    assert len(REGISTERED) == 10
    p = seal_proof("StackedDrg2KiBV1_1")
    assert (p.number, p.nodes, p.layers, p.partitions, p.challenges_per_partition) == (5, 64, 2, 1, 2)
    assert p.porep_id == bytes([5]) + bytes(31) and p.vanilla_variant == "StackedDrg2KiBV1" and p.api_v11
    big = seal_proof("StackedDrg32GiBV1_1")
    assert (big.number, big.layers, big.partitions, big.challenges_per_partition, big.tree) == (8, 11, 10, 18,
                                                                                                (8, 8, 0))
    assert seal_proof("StackedDrg64GiBV1").tree == (8, 8, 2) and not seal_proof("StackedDrg64GiBV1").api_v11
    with pytest.raises(InvalidInputError, match="StackedDrg2KiBV1_1"):
        seal_proof("StackedDrg1KiBV1")


def test_the_native_module_starts_openmp_under_the_wait_policy():
    """Loading the kernels first loads porep_prover, whose OpenMP runtime (shared with them)
    starts passive: no thread spins between regions."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT",
                                                            "POREP_PROVER_OMP_WAIT")}
    out = subprocess.run([sys.executable, "-c", "from porep_prover_porep import _native"],
                         env={**env, "OMP_DISPLAY_ENV": "verbose"}, capture_output=True, text=True, timeout=120,
                         check=True)
    assert "GOMP_SPINCOUNT = '0'" in out.stderr + out.stdout
