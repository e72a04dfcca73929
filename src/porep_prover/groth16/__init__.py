# SPDX-License-Identifier: Apache-2.0
"""Groth16 over BLS12-381, bellman flavour: constraint systems, parameters and
their files, proving, verifying, and an insecure setup for tests."""
from .insecure_setup import InsecureSetupWarning, insecure_setup
from .keys import Parameters, VerifyingKey
from .params_file import read_params, write_params
from .params_digest import check_digest, file_digest
from .params_mapped import load_params, read_mapped, read_params_mapped, write_mapped
from .proof import PROOF_BYTES, Proof
from .prover import prove
from .r1cs import R1CS, Density, SparseMatrix, load_witness, save_witness
from .verifier import PreparedVerifyingKey, verify
from .verifier_files import read_proofs, read_verifying_key

__all__ = [
    "Density", "InsecureSetupWarning", "PROOF_BYTES", "Parameters", "PreparedVerifyingKey", "Proof", "R1CS",
    "SparseMatrix", "VerifyingKey", "check_digest", "file_digest", "insecure_setup", "load_params",
    "load_witness", "prove", "read_mapped", "read_params",
    "read_params_mapped", "read_proofs", "read_verifying_key", "save_witness", "verify", "write_mapped",
    "write_params",
]
