# SPDX-License-Identifier: Apache-2.0
"""Points on the curves outside their prime-order subgroups: what the
decoders and the parameter readers must refuse."""
from porep_prover.field import reference as ref
from porep_prover.field.constants import P


def non_subgroup_g1(rng):
    """A point on E1 outside G1 (the cofactor is large, so random curve points do)."""
    while True:
        pt = ref.g1_from_x(rng.randrange(P), rng.random() < 0.5)
        if pt is not None and not ref.g1_in_subgroup(pt):
            return pt


def non_subgroup_g2(rng):
    """A point on E2 outside G2."""
    while True:
        x = (rng.randrange(P), rng.randrange(P))
        rhs = ref.fq2_add(ref.fq2_mul(ref.fq2_mul(x, x), x), (4, 4))
        y = ref.fq2_sqrt(rhs)
        if y is not None:
            return (x, y)
