# SPDX-License-Identifier: Apache-2.0
import random

import pytest
from hypothesis import settings

settings.register_profile("default", max_examples=60, deadline=None)
settings.load_profile("default")


@pytest.fixture
def rng(request):
    """A fresh, logged seed per test: random but reproducible from the report."""
    seed = random.SystemRandom().randrange(1 << 32)
    request.node.user_properties.append(("seed", seed))
    print(f"seed={seed}")
    return random.Random(seed)

