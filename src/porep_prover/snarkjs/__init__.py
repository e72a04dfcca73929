# SPDX-License-Identifier: Apache-2.0
"""circom and snarkjs interoperability.

Read circom's .r1cs, snarkjs's .wtns and Groth16 .zkey; prove in snarkjs's
flavour from a .zkey (or from .r1cs + .wtns with our own parameters); write
and read proof.json, public.json and verification_key.json exactly as snarkjs
does, so `snarkjs groth16 verify` accepts our proofs and we accept its.

    from porep_prover import snarkjs
    zkey = snarkjs.read_zkey("circuit.zkey")
    proof, public = snarkjs.prove(zkey, snarkjs.read_wtns("witness.wtns"))
    snarkjs.write_proof("proof.json", proof); snarkjs.write_public("public.json", public)
    assert snarkjs.verify(zkey.vk, public, proof)
"""
from ..groth16.verifier import verify
from .circom_files import CircomR1CS, read_r1cs, read_wtns, write_wtns
from .groth16 import domain_size, insecure_zkey, prove
from .json_files import (read_proof, read_public, read_verification_key, verification_key_json, write_proof,
                         write_public, write_verification_key)
from .zkey_file import ZKey, read_zkey, write_zkey

__all__ = [
    "CircomR1CS", "ZKey", "domain_size", "insecure_zkey", "prove", "read_proof", "read_public", "read_r1cs",
    "read_verification_key", "read_wtns", "read_zkey", "verification_key_json", "verify", "write_proof",
    "write_public", "write_verification_key", "write_wtns", "write_zkey",
]
