# SPDX-License-Identifier: Apache-2.0
"""Groth16 keys, in bellman / bellperson terms.

VerifyingKey: alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2 and ic
(one G1 point per input, the constant one first).

Parameters (the proving key, "SRS"):
  h[i]    = tau^i Z(tau) / delta                     i < n - 1
  l[j]    = (beta A_j(tau) + alpha B_j(tau) + C_j(tau)) / delta   every aux j
  a       = A_j(tau) G1 for every input, then for aux j in A (density)
  b_g1    = B_j(tau) G1 for inputs in B, then aux in B (density)
  b_g2    = the same in G2
"""
from __future__ import annotations

import dataclasses
import struct
from typing import TypeVar

from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import EncodingError, ParamsMismatchError, VerifyingKeyFormatError
from .encoding_json import g1_from_json, g1_to_json, g2_from_json, g2_to_json, json_object, short
from ..r1cs.system import R1CS

VK_POINTS = (("alpha_g1", G1Point), ("beta_g1", G1Point), ("beta_g2", G2Point), ("gamma_g2", G2Point),
             ("delta_g1", G1Point), ("delta_g2", G2Point))
PointT = TypeVar("PointT", G1Point, G2Point)


@dataclasses.dataclass(eq=True)
class VerifyingKey:
    alpha_g1: G1Point
    beta_g1: G1Point
    beta_g2: G2Point
    gamma_g2: G2Point
    delta_g1: G1Point
    delta_g2: G2Point
    ic: G1Array

    @property
    def num_inputs(self) -> int:
        """Inputs including the constant one (= len(ic))."""
        return len(self.ic)

    # bellperson binary layout: the six points uncompressed, u32 BE count, ic uncompressed.

    def to_bytes(self) -> bytes:
        parts = [getattr(self, name).to_bytes(compressed=False) for name, _ in VK_POINTS]
        return b"".join(parts) + struct.pack(">I", len(self.ic)) + self.ic.to_bytes(compressed=False)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview, check: bool = True) -> "VerifyingKey":
        vk, used = cls.read_prefix(memoryview(data).cast("B"), check)
        if used != len(data):
            raise VerifyingKeyFormatError(f"verifying key: {len(data) - used} trailing bytes")
        return vk

    @classmethod
    def read_prefix(cls, buf: memoryview, check: bool = True) -> tuple["VerifyingKey", int]:
        """Parse a key at the start of buf (bytes); returns it and the bytes used.
        The ic count is checked against the bytes left in buf before anything
        is decoded or allocated: VerifyingKeyFormatError when they cannot hold it."""
        pos = 0

        def point(name: str, kind: type[PointT]) -> PointT:
            """The point of VK_POINTS called name, at pos (moved past it)."""
            nonlocal pos
            size = kind.COMPRESSED * 2
            if pos + size > len(buf):
                raise VerifyingKeyFormatError(f"verifying key truncated in {name} (offset {pos})")
            found = kind.from_bytes(buf[pos:pos + size], compressed=False, check=check)
            pos += size
            return found

        try:
            alpha_g1, beta_g1 = point("alpha_g1", G1Point), point("beta_g1", G1Point)
            beta_g2, gamma_g2 = point("beta_g2", G2Point), point("gamma_g2", G2Point)
            delta_g1, delta_g2 = point("delta_g1", G1Point), point("delta_g2", G2Point)
            if pos + 4 > len(buf):
                raise VerifyingKeyFormatError(f"verifying key truncated before the ic count (offset {pos})")
            (count,) = struct.unpack(">I", buf[pos:pos + 4])
            pos += 4
            if pos + 96 * count > len(buf):
                raise VerifyingKeyFormatError(f"verifying key truncated in ic: {count} points need "
                                              f"{96 * count} bytes at offset {pos}")
            ic = G1Array.from_bytes(buf[pos:pos + 96 * count], compressed=False, check=check)
        except VerifyingKeyFormatError:
            raise
        except EncodingError as exc:
            raise VerifyingKeyFormatError(f"verifying key: {exc}") from None
        return cls(alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic), pos + 96 * count

    # JSON: snarkjs's key names (decimal coordinates), plus beta_1 / delta_1 which
    # bellman keys carry.

    def to_json(self) -> dict[str, object]:
        return {
            "protocol": "groth16",
            "curve": "bls12381",
            "nPublic": len(self.ic) - 1,
            "vk_alpha_1": g1_to_json(self.alpha_g1),
            "vk_beta_1": g1_to_json(self.beta_g1),
            "vk_beta_2": g2_to_json(self.beta_g2),
            "vk_gamma_2": g2_to_json(self.gamma_g2),
            "vk_delta_1": g1_to_json(self.delta_g1),
            "vk_delta_2": g2_to_json(self.delta_g2),
            "IC": [g1_to_json(self.ic[i]) for i in range(len(self.ic))],
        }

    @classmethod
    def from_json(cls, obj: object) -> "VerifyingKey":
        obj = json_object(obj, VerifyingKeyFormatError, "verifying key")
        try:
            if obj.get("protocol") != "groth16" or obj.get("curve") not in ("bls12381", "bls12_381"):
                raise VerifyingKeyFormatError("verifying key JSON: not a groth16 bls12381 key")
            ic_json = obj.get("IC")
            if not isinstance(ic_json, list) or not ic_json:
                raise VerifyingKeyFormatError("verifying key JSON: IC must be a list of at least one point")
            ic = G1Array.concat([g1_from_json(p) for p in ic_json])
            n_public = obj.get("nPublic", len(ic) - 1)
            if isinstance(n_public, bool) or n_public != len(ic) - 1:
                raise VerifyingKeyFormatError(f"verifying key JSON: nPublic is {short(n_public)}, but IC holds "
                                              f"{len(ic)} points (nPublic + 1)")
            # snarkjs keys omit beta_1 / delta_1 (provers need them, verifiers not)
            def g1_or_zero(key: str) -> G1Point:
                return g1_from_json(obj[key]) if key in obj else G1Point.identity()
            return cls(alpha_g1=g1_from_json(obj["vk_alpha_1"]), beta_g1=g1_or_zero("vk_beta_1"),
                       beta_g2=g2_from_json(obj["vk_beta_2"]), gamma_g2=g2_from_json(obj["vk_gamma_2"]),
                       delta_g1=g1_or_zero("vk_delta_1"), delta_g2=g2_from_json(obj["vk_delta_2"]), ic=ic)
        except (KeyError, TypeError, AttributeError) as exc:
            raise VerifyingKeyFormatError(f"verifying key JSON: missing or malformed field {exc}") from None
        except VerifyingKeyFormatError:
            raise
        except EncodingError as exc:
            raise VerifyingKeyFormatError(f"verifying key JSON: {exc}") from None


@dataclasses.dataclass(eq=True)
class Parameters:
    """The Groth16 proving key (bellman flavour)."""

    vk: VerifyingKey
    h: G1Array
    l: G1Array  # noqa: E741 (the field's own name)
    a: G1Array
    b_g1: G1Array
    b_g2: G2Array

    def summary(self) -> dict[str, int]:
        return {
            "inputs": len(self.vk.ic),
            "h": len(self.h), "l": len(self.l), "a": len(self.a), "b_g1": len(self.b_g1), "b_g2": len(self.b_g2),
            "domain": len(self.h) + 1,
        }

    def check_matches(self, r1cs: R1CS) -> None:
        """Raise ParamsMismatchError unless every query has the size the circuit needs."""
        d = r1cs.density()
        want = {
            "ic": (len(self.vk.ic), r1cs.num_inputs),
            "h": (len(self.h), r1cs.domain_size - 1),
            "l": (len(self.l), r1cs.num_aux),
            "a": (len(self.a), r1cs.num_inputs + int(d.a_aux.sum())),
            "b_g1": (len(self.b_g1), int(d.b_input.sum() + d.b_aux.sum())),
            "b_g2": (len(self.b_g2), int(d.b_input.sum() + d.b_aux.sum())),
        }
        wrong = [f"{k} has {have}, circuit needs {need}" for k, (have, need) in want.items() if have != need]
        if wrong:
            raise ParamsMismatchError("parameters do not match the circuit: " + "; ".join(wrong))
