# SPDX-License-Identifier: Apache-2.0
"""Groth16 verification with pairings from py_arkworks_bls12381.

    e(A, B) = e(alpha, beta) * e(sum_i x_i ic_i, gamma) * e(C, delta)

checked as one multi-pairing: e(A, B) e(-alpha, beta) e(-L, gamma) e(-C, delta) = 1.
Every point goes through arkworks' own decoder (with its subgroup checks) and
the input combination L uses arkworks' MSM, so verification shares no
arithmetic with the prover.
"""
from __future__ import annotations

from typing import Sequence

from py_arkworks_bls12381 import GT, G1Point as ArkG1, G2Point as ArkG2, Scalar

from ..errors import InvalidInputError, ScalarRangeError
from ..field.constants import R
from ..field.fr_array import FrArray
from .keys import VerifyingKey
from .proof import Proof


class PreparedVerifyingKey:
    """A verifying key decoded once into arkworks points.

    The IC points are handed over uncompressed without arkworks' subgroup
    check: every VerifyingKey holds points that passed our decoders' curve
    checks, and arkworks' checked decompression costs ~60 us a point, which
    for keys with many public inputs outweighs the pairings."""

    def __init__(self, vk: VerifyingKey) -> None:
        if not isinstance(vk, VerifyingKey):
            raise InvalidInputError(f"a verifying key must be a VerifyingKey, got {type(vk).__name__}")
        self.num_inputs = len(vk.ic)
        self.alpha_neg = -ArkG1.from_compressed_bytes(vk.alpha_g1.to_bytes())
        self.beta = ArkG2.from_compressed_bytes(vk.beta_g2.to_bytes())
        self.gamma = ArkG2.from_compressed_bytes(vk.gamma_g2.to_bytes())
        self.delta = ArkG2.from_compressed_bytes(vk.delta_g2.to_bytes())
        data = vk.ic.to_bytes(compressed=False)
        infinity = vk.ic.is_infinity()
        self.ic = [ArkG1.identity() if infinity[i] else ArkG1.from_xy_bytes_unchecked_be(data[96 * i:96 * i + 96])
                   for i in range(len(vk.ic))]


def _inputs(public_inputs: Sequence[int] | FrArray) -> list[int]:
    if isinstance(public_inputs, FrArray):
        return public_inputs.to_ints()
    if isinstance(public_inputs, (str, bytes)):
        raise InvalidInputError(f"public inputs must be a sequence of ints, got {type(public_inputs).__name__}")
    try:
        values = list(public_inputs)
    except TypeError:
        raise InvalidInputError(f"public inputs must be a sequence of ints, got "
                                f"{type(public_inputs).__name__}") from None
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < R:
            raise ScalarRangeError(f"public input {v!r} is not an int in [0, r)")
    return values


def verify(vk: VerifyingKey | PreparedVerifyingKey, public_inputs: Sequence[int] | FrArray, proof: Proof) -> bool:
    """True iff proof is valid for these public inputs (without the leading one).

    Raises InvalidInputError when the number of inputs does not match the key,
    or an argument has the wrong type (ScalarRangeError for an input that is
    not an int in [0, r)).
    """
    if not isinstance(proof, Proof):
        raise InvalidInputError(f"proof must be a Proof, got {type(proof).__name__}")
    pvk = vk if isinstance(vk, PreparedVerifyingKey) else PreparedVerifyingKey(vk)
    xs = _inputs(public_inputs)
    if len(xs) + 1 != pvk.num_inputs:
        raise InvalidInputError(f"{len(xs)} public inputs, the key expects {pvk.num_inputs - 1}")
    acc = pvk.ic[0]
    if xs:
        acc = acc + ArkG1.multiexp_unchecked(pvk.ic[1:], [Scalar(x) for x in xs])
    a = ArkG1.from_compressed_bytes(proof.a.to_bytes())
    b = ArkG2.from_compressed_bytes(proof.b.to_bytes())
    c = ArkG1.from_compressed_bytes(proof.c.to_bytes())
    return GT.pairing_check([a, pvk.alpha_neg, -acc, -c], [b, pvk.beta, pvk.gamma, pvk.delta])
