# SPDX-License-Identifier: Apache-2.0
"""The Groth16 parameters of a porep partition circuit.

Where a user has Filecoin's canonical parameters they are read: the file a
payload names ("params"), else the one POREP_PROVER_POREP_PARAMS names (a
.params file, or a folder holding Filecoin's parameters.json and its files:
the stacked-proof-of-replication entry of the job's sector size). A file
listed in a parameters.json (the folder's, or one beside the file), or with
a <file>.digest sidecar, is checked against that digest first
(ParamsDigestError); every file read is checked against the circuit
(ParamsMismatchError). Otherwise INSECURE test parameters are made for the
circuit by insecure_setup and kept in the parameter cache
(POREP_PROVER_PARAMS_CACHE) as porep-<sector size>.params, made once.
"""
from __future__ import annotations

import json
import logging
import os
import warnings

from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import (InsecureSetupWarning, Parameters, ParamsCache, R1CS, check_digest, insecure_setup,
                                  load_params, write_params)

from .registered import SealProof

LOG = logging.getLogger("porep_prover.porep")
ENVIRONMENT = "POREP_PROVER_POREP_PARAMS"
PARAMETERS_JSON = "parameters.json"
CIRCUIT_NAME = "stacked-proof-of-replication"


def canonical_path(proof: SealProof, given: str | None = None) -> str | None:
    """The canonical parameters file for proof's partitions: given, else the one
    POREP_PROVER_POREP_PARAMS names; None when neither names one."""
    where = given or os.environ.get(ENVIRONMENT)
    if not where:
        return None
    if not os.path.isdir(where):
        if not os.path.isfile(where):
            raise InvalidInputError(f"{ENVIRONMENT} names {where!r}, which is neither a file nor a folder")
        return where
    listing = os.path.join(where, PARAMETERS_JSON)
    try:
        with open(listing) as f:
            table = json.load(f)
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{listing}: not a readable parameters.json: {exc}") from None
    names = sorted(name for name, entry in (table.items() if isinstance(table, dict) else ())
                   if CIRCUIT_NAME in name and name.endswith(".params") and isinstance(entry, dict)
                   and entry.get("sector_size") == proof.sector_size)
    if not names:
        raise InvalidInputError(f"{listing}: no {CIRCUIT_NAME} parameters for {proof.sector_size}-byte sectors")
    path = os.path.join(where, names[-1])
    if not os.path.isfile(path):
        raise InvalidInputError(f"{path}: listed in {listing}, not there")
    return path


def _checked(path: str, r1cs: R1CS) -> Parameters:
    try:
        check_digest(path)
    except InvalidInputError as exc:
        if "no digest to check it against" not in str(exc):
            raise
        LOG.warning("%s: no digest beside it (parameters.json or .digest): read unchecked", path)
    params = load_params(path)
    params.check_matches(r1cs)
    return params


def insecure_name(proof: SealProof) -> str:
    return f"porep-{proof.sector_size}.params"


def parameters(proof: SealProof, r1cs: R1CS, given: str | None = None, job=None) -> Parameters:
    """The parameters for proof's partition circuit r1cs (see the module's docstring).
    job: when given, a job that ends stops the making (JobCancelledError)."""
    path = canonical_path(proof, given)
    if path is not None:
        return _checked(path, r1cs)
    cache = ParamsCache()
    name = insecure_name(proof)
    cached = cache.use(name)
    if cached is not None:
        params = load_params(cached)
        params.check_matches(r1cs)
        return params
    LOG.warning("making INSECURE test parameters for the %s partition circuit (%d constraints): %s",
                proof.name, r1cs.num_constraints, cache.path(name))

    def progress(what: str, done: int, total: int) -> None:
        if job is not None:
            job.raise_if_ended()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureSetupWarning)
        params = insecure_setup(r1cs, backend="auto", progress=progress)
    os.makedirs(cache.folder, exist_ok=True)
    write_params(cache.path(name), params)
    cache.made(name)
    return params
