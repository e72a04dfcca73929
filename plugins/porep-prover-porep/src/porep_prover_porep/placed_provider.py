# SPDX-License-Identifier: Apache-2.0
"""What a provider of a placed circuit's kind answers from its registered
proof alone: the PoSt and SnapDeals providers (post.provider, snap.provider)
each name their payload, their placed circuit and where their parameters are
found; the circuit's counts, the parameters' key and shape, their loading
(made once and kept while in use) and the R1CS follow from those.

    class MyProvider(PlacedProvider):
        kinds = ("my-kind",)
        kept = KeptParams()
        def payload(self, obj): ...        an object with .proof and .params
        def placed(self, proof): ...       the proof's PlacedCircuit
        def spec(self, proof): ...         its ParamsSpec
"""
from __future__ import annotations

from porep_prover.engine import KeptParams, SrsShape
from porep_prover.groth16 import is_mapped_file

from .circuit.placed import PlacedCircuit
from .parameters import ParamsSpec, spec_parameters, spec_path


class PlacedProvider:
    """The methods of a synthesis provider that depend on the job's
    registered proof alone (see the module); subclasses give kinds, kept,
    payload, placed and spec, and their own parsing and synthesis."""

    kinds: tuple[str, ...]
    kept: KeptParams

    def payload(self, obj):
        raise NotImplementedError

    def placed(self, proof) -> PlacedCircuit:
        raise NotImplementedError

    def spec(self, proof) -> ParamsSpec:
        raise NotImplementedError

    def _placed_of(self, payload: dict) -> PlacedCircuit:
        return self.placed(self.payload(payload).proof)

    def constraints(self, payload: dict) -> int:
        return self._placed_of(payload).shape.n_constraints

    def srs_key(self, job) -> str:
        p = self.payload(job.payload)
        return f"{self.kinds[0]}:{p.proof.sector_size}:{spec_path(self.spec(p.proof), p.params) or 'insecure'}"

    def srs_shape(self, job) -> SrsShape:
        """The shape of the parameters load_srs gives the job, counted from its circuit."""
        p = self.payload(job.payload)
        path = spec_path(self.spec(p.proof), p.params)
        return self.placed(p.proof).counts.srs_shape(path is not None and is_mapped_file(path))

    def circuit_stats(self, job) -> dict:
        return self._placed_of(job.payload).counts.stats()

    def circuit_bytes(self, job) -> int:
        return self._placed_of(job.payload).host_bytes

    def load_srs(self, job):
        """The parameters of the job's circuit: those in use in this process, else read or made."""
        p = self.payload(job.payload)
        return self.kept.get(self.srs_key(job),
                             lambda: spec_parameters(self.spec(p.proof), self.placed(p.proof).r1cs, p.params, job))

    def circuit(self, job):
        return self._placed_of(job.payload).r1cs

    def synthesis_bytes(self, job) -> int:
        return self._placed_of(job.payload).synthesis_bytes

    def synthesize(self, job, partition: int, threads: int, out=None):
        raise NotImplementedError

    def synthesize_into(self, job, partition: int, threads: int, out):
        """synthesize's witness written into out (the engine's arena); the circuit."""
        return self.synthesize(job, partition, threads, out)[0]
