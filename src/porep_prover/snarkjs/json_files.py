# SPDX-License-Identifier: Apache-2.0
"""snarkjs's JSON files, written byte for byte as snarkjs writes them
(JSON.stringify with one-space indentation, no trailing newline, decimal
strings of canonical coordinates):

  proof.json               {"pi_a", "pi_b", "pi_c", "protocol": "groth16", "curve": "bls12381"}
  public.json              ["...", ...]: w[1 .. nPublic], outputs first
  verification_key.json    protocol, curve, nPublic, vk_alpha_1, vk_beta_2,
                           vk_gamma_2, vk_delta_2, vk_alphabeta_12, IC
"""
from __future__ import annotations

import json
import os

from py_arkworks_bls12381 import GT, G1Point as ArkG1, G2Point as ArkG2

from ..errors import PublicInputsError
from ..field.constants import R
from ..groth16.encoding_json import g1_to_json, g2_to_json
from ..groth16.keys import VerifyingKey
from ..groth16.proof import Proof


def dumps(obj) -> str:
    return json.dumps(obj, indent=1)


def _write(path, obj) -> None:
    with open(path, "w") as f:
        f.write(dumps(obj))


def alphabeta(vk: VerifyingKey) -> list:
    """e(alpha, beta) in Fq12 as snarkjs nests it: [c0, c1] of Fq6, each
    [c0, c1, c2] of Fq2, each [c0, c1]; arkworks' tower and order are the same."""
    e = GT.pairing(ArkG1.from_compressed_bytes(vk.alpha_g1.to_bytes()),
                   ArkG2.from_compressed_bytes(vk.beta_g2.to_bytes()))
    text = str(e)
    flat = [str(int.from_bytes(bytes.fromhex(text[96 * i:96 * i + 96]), "little")) for i in range(12)]
    return [[[flat[6 * i + 2 * j], flat[6 * i + 2 * j + 1]] for j in range(3)] for i in range(2)]


def verification_key_json(vk: VerifyingKey) -> dict:
    return {
        "protocol": "groth16",
        "curve": "bls12381",
        "nPublic": len(vk.ic) - 1,
        "vk_alpha_1": g1_to_json(vk.alpha_g1),
        "vk_beta_2": g2_to_json(vk.beta_g2),
        "vk_gamma_2": g2_to_json(vk.gamma_g2),
        "vk_delta_2": g2_to_json(vk.delta_g2),
        "vk_alphabeta_12": alphabeta(vk),
        "IC": [g1_to_json(vk.ic[i]) for i in range(len(vk.ic))],
    }


def write_verification_key(path: str | os.PathLike, vk: VerifyingKey) -> None:
    _write(path, verification_key_json(vk))


def write_proof(path: str | os.PathLike, proof: Proof) -> None:
    _write(path, proof.to_json())


def write_public(path: str | os.PathLike, public: list[int]) -> None:
    _write(path, [str(v) for v in public])


def read_public(path: str | os.PathLike) -> list[int]:
    """public.json: decimal (or 0x-hex) strings, each < r."""
    try:
        with open(path) as f:
            values = json.load(f)
    except (OSError, ValueError) as exc:
        raise PublicInputsError(f"{path}: cannot read public inputs: {exc}") from None
    if not isinstance(values, list):
        raise PublicInputsError(f"{path}: public inputs must be a JSON list")
    out = []
    for i, v in enumerate(values):
        try:
            x = int(v, 0) if isinstance(v, str) else int(v) if isinstance(v, int) and not isinstance(v, bool) else None
        except ValueError:
            x = None
        if x is None or not 0 <= x < R:
            raise PublicInputsError(f"{path}: public input {i} ({v!r}) is not a field element below r")
        out.append(x)
    return out


def read_proof(path: str | os.PathLike) -> Proof:
    with open(path, "rb") as f:
        return Proof.from_json(f.read())


def read_verification_key(path: str | os.PathLike) -> VerifyingKey:
    """snarkjs's verification_key.json. Its keys carry no beta_1 / delta_1 (only
    provers use them); those stay the point at infinity."""
    with open(path, "rb") as f:
        return VerifyingKey.from_json(f.read())
