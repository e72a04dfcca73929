# SPDX-License-Identifier: Apache-2.0
"""The "winning-post" and "window-post" synthesis providers: a WinningPoSt
(one partition: its sector's 66 challenges) or one WindowPoSt partition
(its sectors' 10 challenges each) of Filecoin's FallbackPoSt circuit, from
the vanilla proofs the orchestrator hands over (payloads: post.payload).

The vanilla proofs are read with every count bounded and verified before
anything is synthesized (a bad one is refused, VanillaProofError, when the
job is submitted); the partition's circuit is its registered proof's,
placed once per shape and kept (post.circuit); its witness is generated
natively and its public inputs held to those a verifier computes from the
randomness, the sectors' ids and comm_r's. Parameters: Filecoin's canonical
ones where the payload or the kind's variable (POREP_PROVER_WINNING_POST_PARAMS,
POREP_PROVER_WINDOW_POST_PARAMS: a file, or a folder with parameters.json,
whose entry is the circuit's by its identifier) names them, else INSECURE
ones made once per circuit into the parameter cache.
"""
from __future__ import annotations

from porep_prover.engine import KeptParams
from porep_prover.errors import InvalidInputError

from ..circuit.placed import PlacedCircuit
from ..parameters import ParamsSpec
from ..placed_provider import PlacedProvider
from .circuit import post_circuit
from .payload import PostPayload
from .registered import PoStProof
from .vanilla import slots

KEPT = KeptParams()
KINDS = {"winning": "winning-post", "window": "window-post"}


def params_spec(proof: PoStProof) -> ParamsSpec:
    """Where a registered PoSt proof's partition parameters are found (Window V1 and V1_2 share them)."""
    return ParamsSpec(f"POREP_PROVER_{proof.kind.upper()}_POST_PARAMS", lambda name, entry: name == proof.params_name,
                      proof.params_name, f"{KINDS[proof.kind]}-{proof.sector_size}.params",
                      f"the {proof.name} partition circuit")


class PostProvider(PlacedProvider):
    """Synthesis provider of one PoSt kind: PostProvider("winning") serves
    job kind "winning-post", PostProvider("window") "window-post"."""

    payload_paths = ("vanilla_proofs", "params")

    def __init__(self, kind: str):
        if kind not in KINDS:
            raise InvalidInputError(f"a PoSt provider is of kind winning or window, not {kind!r}")
        self.post_kind = kind
        self.kinds = (KINDS[kind],)

    kept = KEPT

    def payload(self, obj) -> PostPayload:
        return PostPayload.of(obj, self.post_kind)

    def placed(self, proof: PoStProof) -> PlacedCircuit:
        return post_circuit(proof)

    def spec(self, proof: PoStProof) -> ParamsSpec:
        return params_spec(proof)

    def parse_payload(self, obj: dict, partitions: int) -> dict:
        """The payload of a JSON object (the daemon's jobs), its vanilla proofs
        read and verified now: InvalidInputError (VanillaProofError) saying what
        is wrong, before the job is accepted."""
        payload = self.payload(obj)
        if partitions != 1:
            raise InvalidInputError(f"a {self.kinds[0]} job proves 1 partition, not {partitions}")
        if payload.source is not None:
            payload.sector_proofs()
        return dict(obj)

    @staticmethod
    def partitions(payload: dict) -> int:
        """A PoSt job's partitions: 1 (a WindowPoSt's partitions are jobs of their own, as the wire sends them)."""
        return 1

    def synthesize(self, job, partition: int, threads: int, out=None):
        """The partition's circuit and witness (written into out when given)."""
        if partition != 0:
            raise InvalidInputError(f"partition {partition} of a {self.kinds[0]} job of 1")
        p = self.payload(job.payload)
        circuit = post_circuit(p.proof)
        return circuit.r1cs, circuit.slots_witness(slots(p.proof, p.sector_proofs()), p.public_inputs(), threads,
                                                   out)
