# SPDX-License-Identifier: Apache-2.0
"""The "snap-update" synthesis provider: a SnapDeals update (Filecoin's
EmptySectorUpdate) of its registered proof's partitions, one job, from the
partition proofs the orchestrator hands over (payloads: snap.payload).

The partition proofs are read with every count bounded and verified before
anything is synthesized (a bad one is refused, VanillaProofError, when the
job is submitted); the partition circuit is the registered proof's, placed
once per size and kept (snap.circuit); a partition's witness is generated
natively, its public inputs held to those a verifier computes from the
commitments, h and the partition's index. Parameters: Filecoin's canonical
ones where the payload or POREP_PROVER_SNAP_UPDATE_PARAMS (a file, or a
folder with parameters.json, whose entry is the circuit's by its
identifier) names them, else INSECURE ones made once per circuit into the
parameter cache.
"""
from __future__ import annotations

from porep_prover.engine import KeptParams
from porep_prover.errors import InvalidInputError

from ..circuit.placed import PlacedCircuit
from ..parameters import ParamsSpec
from ..placed_provider import PlacedProvider
from . import vanilla
from .circuit import update_circuit
from .payload import SnapPayload
from .registered import UpdateProof

KEPT = KeptParams()
KIND = "snap-update"


def params_spec(proof: UpdateProof) -> ParamsSpec:
    """Where a registered update proof's partition parameters are found."""
    return ParamsSpec("POREP_PROVER_SNAP_UPDATE_PARAMS", lambda name, entry: name == proof.params_name,
                      proof.params_name, f"{KIND}-{proof.sector_size}.params", f"the {proof.name} update circuit")


class SnapProvider(PlacedProvider):
    """Synthesis provider of job kind "snap-update": a job is an update's every partition."""

    kinds = (KIND,)
    payload_paths = ("vanilla_proofs", "params")

    kept = KEPT

    def payload(self, obj) -> SnapPayload:
        return SnapPayload.of(obj)

    def placed(self, proof: UpdateProof) -> PlacedCircuit:
        return update_circuit(proof)

    def spec(self, proof: UpdateProof) -> ParamsSpec:
        return params_spec(proof)

    def parse_payload(self, obj: dict, partitions: int) -> dict:
        """The payload of a JSON object (the daemon's jobs), its partition proofs
        read and verified now: InvalidInputError (VanillaProofError) saying what
        is wrong, before the job is accepted."""
        payload = self.payload(obj)
        if payload.source is None:              # a preload's: the parameters of its size alone
            return dict(obj)
        if partitions != payload.proof.partitions:
            raise InvalidInputError(f"a {payload.proof.name} update proves {payload.proof.partitions} "
                                    f"partition(s), not {partitions}")
        payload.partition_proofs()
        return dict(obj)

    def partitions(self, payload: dict) -> int:
        return self.payload(payload).proof.partitions

    def synthesize(self, job, partition: int, threads: int, out=None):
        """Partition k's circuit and witness (written into out when given);
        JobCancelledError as soon as the job ends (its stop flag is read
        before each instance of the witness)."""
        p = self.payload(job.payload)
        if not 0 <= partition < p.proof.partitions:
            raise InvalidInputError(f"partition {partition} of a {KIND} job of {p.proof.partitions}")
        circuit = update_circuit(p.proof)
        expected = p.public_inputs(partition)
        values = vanilla.values(p.proof, p.partition_proofs()[partition], expected)
        stop = getattr(job, "stop", None)        # a Job's; None for a job-like object without one
        return circuit.r1cs, circuit.partition_witness(values, expected, threads, out,
                                                       stop.array if stop is not None else None)
