# SPDX-License-Identifier: Apache-2.0
"""A satisfied witness with one of its bits flipped no longer satisfies: the circuit tests' shared check."""
import numpy as np

from porep_prover import FrArray


def assert_bit_flips_caught(r1cs, witness: FrArray, rng, count: int = 3) -> None:
    """Set `count` aux variables that hold 1 (bits, mostly) to 0, one at a
    time: each breaks a constraint."""
    bits = np.flatnonzero(np.all(witness.limbs == FrArray.from_ints([1]).limbs, axis=1))
    bits = bits[bits >= r1cs.num_inputs]
    for pos in rng.sample(list(bits), count):
        bad = witness.copy()
        bad.limbs[pos] = 0
        assert not r1cs.is_satisfied(bad), f"aux {pos} set to 0 still satisfies"
