# SPDX-License-Identifier: Apache-2.0
"""Groth16 over BLS12-381, bellman flavour: constraint systems, parameters and
their files, proving, verifying, and an insecure setup for tests.

Parameters from a file: load_params(path) reads either format, a bellperson
.params file (decoded) or a mapped .pmap (mapped), told apart by the magic;
use it unless the format matters. read_params is the bellperson-format
reader alone (what load_params calls for a .params), read_mapped the mapped
one; read_params_mapped(path, cache_dir) loads a .params through a mapped
mirror, and mapped_copy(path, make) keeps any parameters in one.
"""
from .checked_prover import prove
from .insecure_setup import InsecureSetupWarning, insecure_setup
from .keys import Parameters, VerifyingKey
from .params_cache import CacheEntry, ParamsCache
from .params_file import read_params, write_params
from .params_digest import check_digest, file_digest
from .params_mapped import SUFFIX as MAPPED_SUFFIX
from .params_mapped import is_mapped_file, load_params, mapped_copy, read_mapped, read_params_mapped, write_mapped
from .proof import PROOF_BYTES, Proof
from ..r1cs.system import R1CS, Density, SparseMatrix, load_witness, save_witness
from .verifier import PreparedVerifyingKey, verify
from .verifier_files import read_proofs, read_verifying_key

__all__ = [
    "CacheEntry", "Density", "InsecureSetupWarning", "MAPPED_SUFFIX", "PROOF_BYTES", "ParamsCache", "Parameters",
    "PreparedVerifyingKey",
    "Proof", "R1CS", "SparseMatrix", "VerifyingKey", "check_digest", "file_digest", "insecure_setup",
    "is_mapped_file", "load_params", "load_witness", "mapped_copy", "prove", "read_mapped", "read_params",
    "read_params_mapped", "read_proofs", "read_verifying_key", "save_witness", "verify", "write_mapped",
    "write_params",
]
