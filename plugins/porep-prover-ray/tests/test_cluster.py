# SPDX-License-Identifier: Apache-2.0
"""Runs cluster_cases.py (a local multi-node Ray cluster) inside a private
network namespace, `unshare -n` with only loopback up, so that nothing the
cluster opens is reachable from outside; skipped where unshare is not
permitted (it needs root, or user namespaces)."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("ray")
pytest.importorskip("porep_prover_ray.plugin")

HERE = pathlib.Path(__file__).resolve().parent
LIMIT_SECONDS = 480


def netns_allowed() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, timeout=30)
    return probe.returncode == 0


def test_the_cluster_in_a_private_network():
    if os.environ.get("POREP_PROVER_NETNS") == "1":
        pytest.skip("already inside the namespace")
    if not netns_allowed():
        pytest.skip("`unshare -n` is not permitted here (needs root or user namespaces): the cluster tests run only "
                    "in a private network namespace, so that nothing listens beyond loopback")
    env = dict(os.environ, POREP_PROVER_NETNS="1", RAY_USAGE_STATS_ENABLED="0")
    cases = HERE / "cluster_cases.py"
    run = subprocess.run(["unshare", "-n", "sh", "-c",
                          'ip link set lo up && exec "$0" -m pytest -q -p no:cacheprovider -x "$1"', sys.executable,
                          str(cases)], env=env, cwd=HERE.parents[2], capture_output=True, text=True,
                         timeout=LIMIT_SECONDS)
    print(run.stdout[-20000:], run.stderr[-5000:])
    assert run.returncode == 0, run.stdout[-5000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout.splitlines()[-1]
