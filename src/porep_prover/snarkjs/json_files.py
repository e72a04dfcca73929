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

from ..atomic import atomic_write
from ..errors import ProofFormatError, PublicInputsError, VerifyingKeyFormatError
from ..field.constants import R
from ..groth16.encoding_json import g1_to_json, g2_to_json, read_json_file, short
from ..groth16.keys import VerifyingKey
from ..groth16.proof import Proof


def dumps(obj) -> str:
    return json.dumps(obj, indent=1)


def _write(path, obj) -> None:
    with atomic_write(path) as f:      # whole or not at all
        f.write(dumps(obj).encode())


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


def _public_value(v) -> int | None:
    """A public input as snarkjs writes it (a decimal string; 0x-hex and JSON
    integers are taken too), or None."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if not isinstance(v, str) or not v.isascii() or len(v) > 200:
        return None
    digits, base = (v[2:], 16) if v[:2] in ("0x", "0X") else (v, 10)
    ok = digits.isdigit() if base == 10 else digits and all(c in "0123456789abcdefABCDEF" for c in digits)
    return int(digits, base) if ok else None


def read_public(path: str | os.PathLike) -> list[int]:
    """public.json: a list of decimal (or 0x-hex) strings, each < r.
    PublicInputsError naming the file (and the line, or the input) otherwise."""
    values = read_json_file(path, PublicInputsError, "public inputs")
    if not isinstance(values, list):
        raise PublicInputsError(f"{path}: public inputs must be a JSON list, got {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        x = _public_value(v)
        if x is None or not 0 <= x < R:
            raise PublicInputsError(f"{path}: public input {i} ({short(v)}) is not a field element below r")
        out.append(x)
    return out


def read_proof(path: str | os.PathLike) -> Proof:
    """snarkjs's proof.json; ProofFormatError naming the file when it cannot be
    read, is not UTF-8 JSON or holds no valid proof."""
    obj = read_json_file(path, ProofFormatError, "proof")
    try:
        return Proof.from_json(obj)
    except ProofFormatError as exc:
        raise ProofFormatError(f"{path}: {exc}") from None


def read_verification_key(path: str | os.PathLike) -> VerifyingKey:
    """snarkjs's verification_key.json. Its keys carry no beta_1 / delta_1 (only
    provers use them); those stay the point at infinity. VerifyingKeyFormatError
    naming the file when it cannot be read, is not UTF-8 JSON or not a key."""
    obj = read_json_file(path, VerifyingKeyFormatError, "verifying key")
    try:
        return VerifyingKey.from_json(obj)
    except VerifyingKeyFormatError as exc:
        raise VerifyingKeyFormatError(f"{path}: {exc}") from None
