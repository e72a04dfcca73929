# SPDX-License-Identifier: Apache-2.0
"""The Groth16 parameters of the plugin's circuits (a PoRep partition, a
PoSt partition), each described by a ParamsSpec.

Where a user has Filecoin's canonical parameters they are read: the file a
payload names ("params"), else the one the spec's environment variable names
(POREP_PROVER_POREP_PARAMS for PoRep: a .params file, or a folder holding
Filecoin's parameters.json and its files, whose entry the spec picks: the
stacked-proof-of-replication entry of the job's sector size, or a PoSt
circuit's by its identifier's name). A file listed in a parameters.json (the
folder's, or one beside the file), or with a <file>.digest sidecar, is
checked against that digest first (ParamsDigestError); every file read is
checked against the circuit (ParamsMismatchError). Otherwise INSECURE test
parameters are made for the circuit by insecure_setup and kept in the
parameter cache (POREP_PROVER_PARAMS_CACHE) under the spec's name, made once.
"""
from __future__ import annotations

import json
import logging
import os
import warnings
from dataclasses import dataclass
from typing import Callable

from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import (InsecureSetupWarning, Parameters, ParamsCache, R1CS, check_digest, insecure_setup,
                                  load_params, write_params)

from .registered import SealProof

LOG = logging.getLogger("porep_prover.porep")
ENVIRONMENT = "POREP_PROVER_POREP_PARAMS"
PARAMETERS_JSON = "parameters.json"
CIRCUIT_NAME = "stacked-proof-of-replication"


@dataclass(frozen=True)
class ParamsSpec:
    """Where one circuit's parameters are found: environment, the variable
    naming a file or a folder; listed(name, entry), whether a parameters.json
    entry is this circuit's (the last such name, sorted, is taken); wanted,
    what such an entry is (for the error when none is); insecure_name, the
    cache file of its INSECURE parameters; circuit, the circuit's name (logs)."""
    environment: str
    listed: Callable[[str, dict], bool]
    wanted: str
    insecure_name: str
    circuit: str


def porep_spec(proof: SealProof) -> ParamsSpec:
    """The parameters of a registered seal proof's partition circuit."""
    def listed(name: str, entry: dict) -> bool:
        return CIRCUIT_NAME in name and name.endswith(".params") and entry.get("sector_size") == proof.sector_size
    return ParamsSpec(ENVIRONMENT, listed, f"{CIRCUIT_NAME} parameters for {proof.sector_size}-byte sectors",
                      f"porep-{proof.sector_size}.params", f"the {proof.name} partition circuit")


def spec_path(spec: ParamsSpec, given: str | None = None) -> str | None:
    """The canonical parameters file of spec's circuit: given, else the one
    its environment variable names; None when neither names one."""
    where = given or os.environ.get(spec.environment)
    if not where:
        return None
    if not os.path.isdir(where):
        if not os.path.isfile(where):
            raise InvalidInputError(f"{spec.environment} names {where!r}, which is neither a file nor a folder")
        return where
    listing = os.path.join(where, PARAMETERS_JSON)
    try:
        with open(listing) as f:
            table = json.load(f)
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"{listing}: not a readable parameters.json: {exc}") from None
    names = sorted(name for name, entry in (table.items() if isinstance(table, dict) else ())
                   if isinstance(entry, dict) and spec.listed(name, entry))
    if not names:
        raise InvalidInputError(f"{listing}: no {spec.wanted}")
    path = os.path.join(where, names[-1])
    if not os.path.isfile(path):
        raise InvalidInputError(f"{path}: listed in {listing}, not there")
    return path


def canonical_path(proof: SealProof, given: str | None = None) -> str | None:
    """The canonical parameters file for proof's partitions (spec_path of porep_spec)."""
    return spec_path(porep_spec(proof), given)


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
    return porep_spec(proof).insecure_name


def spec_parameters(spec: ParamsSpec, r1cs: R1CS, given: str | None = None, job=None) -> Parameters:
    """The parameters of spec's circuit r1cs (see the module's docstring).
    job: when given, a job that ends stops the making (JobCancelledError)."""
    path = spec_path(spec, given)
    if path is not None:
        return _checked(path, r1cs)
    cache = ParamsCache()
    name = spec.insecure_name
    cached = cache.use(name)
    if cached is not None:
        params = load_params(cached)
        params.check_matches(r1cs)
        return params
    LOG.warning("making INSECURE test parameters for %s (%d constraints): %s", spec.circuit, r1cs.num_constraints,
                cache.path(name))

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


def parameters(proof: SealProof, r1cs: R1CS, given: str | None = None, job=None) -> Parameters:
    """The parameters for proof's partition circuit r1cs (spec_parameters of porep_spec)."""
    return spec_parameters(porep_spec(proof), r1cs, given, job)
