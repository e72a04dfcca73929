# SPDX-License-Identifier: Apache-2.0
"""The OpenMP runtime's wait policy, set while the native modules load
(config.openmp_wait_policy): read back from the runtime itself, which prints
its settings with OMP_DISPLAY_ENV=verbose when it starts."""
import os
import subprocess
import sys

import pytest

PROBE = "import os, porep_prover; print('left', os.environ.get('OMP_WAIT_POLICY'))"


def runtime_settings(**env) -> tuple[dict, str]:
    """The runtime's settings as it printed them, and the probe's own output."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "POREP_PROVER_OMP_WAIT")}
    out = subprocess.run([sys.executable, "-c", PROBE], env={**base, "OMP_DISPLAY_ENV": "verbose", **env},
                         capture_output=True, text=True, timeout=120, check=True)
    settings = {}
    for line in (out.stderr + out.stdout).splitlines():
        name, eq, value = line.strip().partition(" = ")
        if eq:
            settings[name] = value.strip("'")
    return settings, out.stdout


def test_threads_sleep_between_regions_by_default():
    settings, out = runtime_settings()
    assert settings["GOMP_SPINCOUNT"] == "0"          # passive: no spinning at all
    assert "left None" in out                          # the environment is as it was


def test_runtime_default_on_request():
    settings, _ = runtime_settings(POREP_PROVER_OMP_WAIT="runtime")
    assert int(settings["GOMP_SPINCOUNT"]) > 0


@pytest.mark.parametrize("name, value", [("OMP_WAIT_POLICY", "active"), ("GOMP_SPINCOUNT", "12345")])
def test_the_runtimes_own_variables_win(name, value):
    settings, out = runtime_settings(**{name: value})
    if name == "GOMP_SPINCOUNT":
        assert settings["GOMP_SPINCOUNT"] == value
    else:
        assert settings["OMP_WAIT_POLICY"] == "ACTIVE"
        assert f"left {value}" in out


def test_unknown_choice_warns_and_sleeps():
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    out = subprocess.run([sys.executable, "-W", "always", "-c", PROBE],
                         env={**base, "OMP_DISPLAY_ENV": "verbose", "POREP_PROVER_OMP_WAIT": "spinning"},
                         capture_output=True, text=True, timeout=120, check=True)
    assert "POREP_PROVER_OMP_WAIT='spinning'" in out.stderr
    assert "GOMP_SPINCOUNT = '0'" in out.stderr
