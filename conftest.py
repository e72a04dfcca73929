# SPDX-License-Identifier: Apache-2.0
"""Fixtures for every test tree (tests/ and plugins/*/tests/)."""
import random

import pytest


@pytest.fixture(autouse=True)
def _result_dir(tmp_path_factory, monkeypatch):
    """A directory sink a test enables writes into a temporary folder, never the checkout."""
    monkeypatch.setenv("POREP_PROVER_RESULT_DIR", str(tmp_path_factory.mktemp("results")))


@pytest.fixture
def rng(request):
    """A fresh, logged seed per test: random but reproducible from the report."""
    seed = random.SystemRandom().randrange(1 << 32)
    request.node.user_properties.append(("seed", seed))
    print(f"seed={seed}")
    return random.Random(seed)

