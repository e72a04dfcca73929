# SPDX-License-Identifier: Apache-2.0
"""Random inputs for the GPU tests, made fast (the device tests draw millions)."""
import numpy as np

from porep_prover import FrArray
from porep_prover.field.constants import R


def random_fr(n, rng):
    """n uniform-ish elements fast: random limbs, the top one cut to 62 bits (< r)."""
    limbs = np.frombuffer(rng.randbytes(32 * n), dtype=np.uint64).reshape(n, 4).copy()
    limbs[:, 3] &= (1 << 62) - 1
    return FrArray(limbs)


def random_points(cls, rng, n, distinct=512):
    """n points: a few hundred random ones repeated (the MSM does not care), plus their negations."""
    base = cls.generator().scale([rng.randrange(1, R) for _ in range(min(n, distinct))])
    if n <= distinct:
        return base
    reps = -(-n // len(base))
    return cls(np.ascontiguousarray(np.tile(base.limbs, (reps, 1))[:n]))
