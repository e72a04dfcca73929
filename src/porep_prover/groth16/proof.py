# SPDX-License-Identifier: Apache-2.0
"""Groth16 proofs: (A in G1, B in G2, C in G1).

Bytes: A || B || C compressed (48 + 96 + 48 = 192 bytes), as bellman writes
them; a multi-partition proof is its partitions' proofs concatenated. JSON:
snarkjs's proof.json form (pi_a, pi_b, pi_c as decimal coordinates).
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..curve.points import G1Point, G2Point
from ..errors import EncodingError, ProofFormatError
from ..field.fr_array import byte_view
from .encoding_json import g1_from_json, g1_to_json, g2_from_json, g2_to_json, json_object

if TYPE_CHECKING:
    from typing_extensions import Buffer

PROOF_BYTES = 192


@dataclasses.dataclass(eq=True)
class Proof:
    a: G1Point
    b: G2Point
    c: G1Point

    def to_bytes(self) -> bytes:
        return self.a.to_bytes() + self.b.to_bytes() + self.c.to_bytes()

    @classmethod
    def from_bytes(cls, data: Buffer) -> "Proof":
        """Decode 192 bytes (any contiguous bytes-like object), checking every
        point is on the curve and in its subgroup; ProofFormatError otherwise."""
        data = bytes(byte_view(data, "a proof", ProofFormatError))
        if len(data) != PROOF_BYTES:
            raise ProofFormatError(f"a proof is {PROOF_BYTES} bytes, got {len(data)}")
        try:
            return cls(G1Point.from_bytes(data[:48]), G2Point.from_bytes(data[48:144]), G1Point.from_bytes(data[144:]))
        except EncodingError as exc:
            raise ProofFormatError(f"proof: {exc}") from None

    @staticmethod
    def split(data: Buffer) -> list["Proof"]:
        """The partition proofs of a concatenated multi-partition proof."""
        data = bytes(byte_view(data, "a proof", ProofFormatError))
        if not data or len(data) % PROOF_BYTES:
            raise ProofFormatError(f"{len(data)} bytes is not a whole number of {PROOF_BYTES}-byte proofs")
        return [Proof.from_bytes(data[i:i + PROOF_BYTES]) for i in range(0, len(data), PROOF_BYTES)]

    def to_json(self) -> dict[str, object]:
        return {"pi_a": g1_to_json(self.a), "pi_b": g2_to_json(self.b), "pi_c": g1_to_json(self.c),
                "protocol": "groth16", "curve": "bls12381"}

    @classmethod
    def from_json(cls, obj: object) -> "Proof":
        obj = json_object(obj, ProofFormatError, "proof")
        try:
            if obj.get("protocol", "groth16") != "groth16":
                raise ProofFormatError(f"proof JSON: protocol {obj.get('protocol')!r} is not groth16")
            return cls(g1_from_json(obj["pi_a"]), g2_from_json(obj["pi_b"]), g1_from_json(obj["pi_c"]))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ProofFormatError(f"proof JSON: missing or malformed field {exc}") from None
        except ProofFormatError:
            raise
        except EncodingError as exc:
            raise ProofFormatError(f"proof JSON: {exc}") from None
