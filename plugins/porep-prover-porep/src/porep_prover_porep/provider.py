# SPDX-License-Identifier: Apache-2.0
"""The "porep" synthesis provider: Filecoin's StackedDRG PoRep partitions of a
commit-phase-1 output (payloads: porep_prover_porep.payload).

Each partition's R1CS is its registered proof's partition circuit, built
once per sector size and kept (circuit.partition); its witness is generated
natively from the output's vanilla proofs, which are verified before
anything is synthesized, and its public inputs are checked against those a
verifier computes from the output's public values. Parameters: Filecoin's
canonical ones where the payload or POREP_PROVER_POREP_PARAMS names them,
else INSECURE test parameters made once per sector size (parameters);
loaded once per process while in use (KEPT: handed to every job and engine
of their key while any holds them), their shape said before they are read
or made (srs_shape: the engine refuses a set that cannot fit first).

What the circuit is and holds is counted from its templates without
building its R1CS (circuit.counts): the parameters' shape, the circuit's
statistics (circuit_stats, what `porep-prover plan -t porep` plans a
partition by), the host bytes the circuit and a synthesis hold; so a 32 GiB
partition is planned in seconds on any host.
"""
from __future__ import annotations

from porep_prover.engine import KeptParams, SrsShape
from porep_prover.errors import InvalidInputError
from porep_prover.groth16 import is_mapped_file

from .circuit.partition import partition_circuit
from .parameters import canonical_path, parameters
from .payload import Payload

KEPT = KeptParams()         # the parameters loaded in this process, by srs_key, while in use


class PorepProvider:
    """Synthesis provider for job kind "porep"."""

    kinds = ("porep",)
    payload_paths = ("vanilla_proof", "c1", "params")

    @staticmethod
    def parse_payload(obj: dict, partitions: int) -> dict:
        """The payload of a JSON object (the daemon's jobs), the output it names read
        and checked now: InvalidInputError (VanillaProofError) saying what is wrong."""
        payload = Payload.of(obj)
        if payload.source is not None:
            if not isinstance(payload.source, str):
                raise InvalidInputError("porep payload: from JSON, the commit-phase-1 output is a path")
            payload.output(partitions)
        return dict(obj)

    @staticmethod
    def partitions(payload: dict) -> int:
        """The partitions of a job with this payload: its output's (bench batch asks)."""
        p = Payload.of(payload)
        return len(p.output().vanilla_proofs) if p.source is not None else p.proof.partitions

    @staticmethod
    def constraints(payload: dict) -> int:
        """Constraints of one partition (the circuit counted, not built)."""
        return partition_circuit(Payload.of(payload).proof).shape.n_constraints

    @staticmethod
    def srs_key(job) -> str:
        """The key of the parameters the job needs, its output read and
        checked first (once a process): a damaged or foreign output is
        refused (VanillaProofError) before any parameters are loaded or made."""
        p = Payload.of(job.payload)
        if p.source is not None:
            p.output(job.partitions)
        return f"porep:{p.proof.sector_size}:{canonical_path(p.proof, p.params) or 'insecure'}"

    @staticmethod
    def srs_shape(job) -> SrsShape:
        """The shape of the parameters load_srs gives the job, counted from its
        partition circuit (its R1CS not built), before they are read or made
        (mapped: a canonical file that is a mapped .pmap)."""
        p = Payload.of(job.payload)
        path = canonical_path(p.proof, p.params)
        return partition_circuit(p.proof).counts.srs_shape(path is not None and is_mapped_file(path))

    @staticmethod
    def circuit_stats(job) -> dict:
        """The job's partition circuit by its statistics (constraints, inputs
        with the one, aux, the shares of the aux A and B read, each matrix's
        entries a constraint), counted without building it."""
        return partition_circuit(Payload.of(job.payload).proof).counts.stats()

    @staticmethod
    def circuit_bytes(job) -> int:
        """Host bytes the provider keeps for the job's circuit: its R1CS, the
        witness program it synthesizes by, the placing."""
        return partition_circuit(Payload.of(job.payload).proof).host_bytes

    @staticmethod
    def load_srs(job):
        """The parameters of the job's partition circuit: those in use in this process (KEPT), else read or made."""
        p = Payload.of(job.payload)
        return KEPT.get(PorepProvider.srs_key(job),
                        lambda: parameters(p.proof, partition_circuit(p.proof).r1cs, p.params, job))

    @staticmethod
    def circuit(job):
        """The job's partition circuit, before any partition (the engine's memory plan)."""
        return partition_circuit(Payload.of(job.payload).proof).r1cs

    @staticmethod
    def synthesis_bytes(job) -> int:
        """Host bytes one synthesis holds beside its witness: a byte a variable (the
        generator's bits) and the instances' data."""
        return partition_circuit(Payload.of(job.payload).proof).synthesis_bytes

    @staticmethod
    def synthesize(job, partition: int, threads: int, out=None):
        """Partition `partition`'s circuit and witness (written into out when
        given); JobCancelledError as soon as the job ends (its stop flag is read
        between the steps and by the native generator between instances)."""
        p = Payload.of(job.payload)
        c1 = p.output(job.partitions)
        if not 0 <= partition < len(c1.vanilla_proofs):
            raise InvalidInputError(f"partition {partition} of an output of {len(c1.vanilla_proofs)}")
        circuit = partition_circuit(p.proof)
        stop = getattr(job, "stop", None)        # a Job's; None for a job-like object without one
        return circuit.r1cs, circuit.witness(c1, partition, threads, out, p.config,
                                             stop.array if stop is not None else None)

    def synthesize_into(self, job, partition: int, threads: int, out):
        """synthesize's witness written into out (the engine's arena); the circuit."""
        return self.synthesize(job, partition, threads, out)[0]
