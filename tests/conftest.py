# SPDX-License-Identifier: Apache-2.0
import pytest
from hypothesis import settings

settings.register_profile("default", max_examples=60, deadline=None)
settings.load_profile("default")


@pytest.fixture(scope="module")
def gpu():
    """The process's GPU backend (for tests marked gpu, skipped without a device)."""
    from porep_prover.backend import get_backend
    return get_backend("gpu")
