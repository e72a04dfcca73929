# SPDX-License-Identifier: Apache-2.0
"""storage-proofs-update's EmptySectorUpdateCircuit as gadget calls on a
Builder, in bellperson's synthesis order, and each registered update
proof's partition circuit.

A partition (circuit.rs), with n = log2(nodes) challenge bits, p partition
bits, a apex-leaf bits, C challenges and TreeR paths of L levels:

    k_and_h_select a number, a public input; its p + 6 bits; k packed from the first p
    comm_r_old, comm_d_new, comm_r_new   numbers, public inputs
    phi = P_gen(comm_d_new, comm_r_old)
    comm_c, root_r_old, root_r_new, 2^a apex leaves, p partition-path siblings: numbers
    comm_r_old = Poseidon-2(comm_c, root_r_old); comm_r_new = Poseidon-2(comm_c, root_r_new)
    apex tree: 2^a - 1 SHA-256 pair hashes; its root's p-level TreeD path to comm_d_new
    challenge bits: per digest j, P_gen(comm_r_new, k D + j) and its 255 bits
    per challenge (its n - p generated bits, then k's):
      h's high bits selected by h_select; rho = P_gen(phi, high)
      leaf_r_old, leaf_d_new; leaf_r_new = leaf_r_old + leaf_d_new rho
      the TreeR path of leaf_r_old to root_r_old and of leaf_r_new to root_r_new
      the challenge's apex leaf selected by its a bits above the lowest n - p - a,
      and the leaf_d_new's TreeD path of n - p - a levels to it

Public inputs: 4 and the one. Costs (constraints): Poseidon-2 311, a TreeR
level 527 at arity 8 (insert 22, Poseidon-8 505), a TreeD level 45,381
(insert 2, the pair hash 45,379), a digest 568, select 2^a - 1. A
partition: 2 KiB 1,705,039 and 32 GiB 81,049,499 constraints, as
rust-fil-proofs' tests/circuit.rs publishes (1 KiB 1,248,389, 8 KiB
2,620,359 and 32 KiB 6,760,091 there too). The header is one task of phase
0; each challenge a task of phase 1.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from porep_prover import FrArray

from ..circuit.builder import Builder
from ..circuit.hashes import poseidon
from ..circuit.placed import PlacedCircuit, kept
from ..circuit.por import equal, inputize, num
from . import gadgets as g
from .challenges import CAPACITY, digests_per_partition, random_bits
from .registered import UpdateProof

H_SELECT_BITS = 6


@dataclass(frozen=True)
class ChallengeValues:
    """A challenge's values: the old replica's and the new data's leaves, the
    siblings of each TreeR path (a tuple a level) and of its TreeD path up to
    its apex leaf (one a level)."""
    leaf_r_old: int
    leaf_d_new: int
    path_r_old: tuple[tuple[int, ...], ...]
    path_r_new: tuple[tuple[int, ...], ...]
    path_d: tuple[int, ...]


@dataclass(frozen=True)
class PartitionValues:
    """A partition's values: the public inputs, comm_c, the TreeR roots, the
    apex leaves, the partition path's siblings, each challenge's."""
    k_and_h_select: int
    comm_r_old: int
    comm_d_new: int
    comm_r_new: int
    comm_c: int
    root_r_old: int
    root_r_new: int
    apex_leafs: tuple[int, ...]
    partition_path: tuple[int, ...]
    challenges: tuple[ChallengeValues, ...]


def _unknown(proof: UpdateProof) -> PartitionValues:
    arities = proof.tree_arities
    c = ChallengeValues(None, None, tuple((None,) * (a - 1) for a in arities),            # type: ignore[arg-type]
                        tuple((None,) * (a - 1) for a in arities),
                        (None,) * (proof.challenge_bits - proof.partition_bits - proof.apex_bits))
    return PartitionValues(None, None, None, None, None, None, None, (None,) * proof.apex_leaves,  # type: ignore
                           (None,) * proof.partition_bits, (c,) * proof.challenges)


def _por(b: Builder, proof_arities: Sequence[int], bits: list, leaf: int, siblings: list[list[int]], root: int,
         hasher: str) -> None:
    """por_no_challenge_input: each level's insertion by the next bits, its hash; the root enforced."""
    cur, used = leaf, 0
    for arity, level in zip(proof_arities, siblings, strict=True):
        n = arity.bit_length() - 1
        cur = g.por_level(b, cur, bits[used:used + n], level, hasher)
        used += n
    if used != len(bits):
        raise ValueError(f"{len(bits)} challenge bits for a path of {used}")
    equal(b, cur, root)


def _header(b: Builder, proof: UpdateProof, v: PartitionValues):
    """Everything before the challenges: (partition bits, h_select bits, phi, comm_r_new's
    and the roots' and apex leaves' variables, the generated challenge bits)."""
    p = proof.partition_bits
    kh = num(b, v.k_and_h_select)
    inputize(b, kh)
    kh_bits = g.bits_of(b, kh, p + H_SELECT_BITS)
    partition = g.pack(b, kh_bits[:p])
    comms = []
    for value in (v.comm_r_old, v.comm_d_new, v.comm_r_new):
        comms.append(num(b, value))
        inputize(b, comms[-1])
    comm_r_old, comm_d_new, comm_r_new = comms
    phi = g.poseidon_gen(b, comm_d_new, comm_r_old)
    if len(v.apex_leafs) != proof.apex_leaves or len(v.partition_path) != p:
        raise ValueError(f"{len(v.apex_leafs)} apex leaves and {len(v.partition_path)} partition siblings")
    private = g.nums(b, [v.comm_c, v.root_r_old, v.root_r_new, *v.apex_leafs, *v.partition_path])
    comm_c, root_r_old, root_r_new = private[:3]
    apex, partition_path = private[3:3 + proof.apex_leaves], private[3 + proof.apex_leaves:]
    equal(b, poseidon(b, [comm_c, root_r_old]), comm_r_old)
    equal(b, poseidon(b, [comm_c, root_r_new]), comm_r_new)
    apex_por(b, apex, kh_bits[:p], partition_path, comm_d_new)
    generated = challenge_bits(b, proof, comm_r_new, partition)
    return kh_bits[:p], kh_bits[p:], phi, (root_r_old, root_r_new), apex, generated


def apex_por(b: Builder, apex: list[int], partition_bits: list, partition_path: list[int], comm_d: int) -> None:
    """apex_por: the apex tree over the apex leaves, its root's path by the partition bits to comm_d."""
    row = apex
    while len(row) > 1:
        row = [g.sha256_pair(b, row[i], row[i + 1]) for i in range(0, len(row), 2)]
    _por(b, [2] * len(partition_bits), partition_bits, row[0], [[s] for s in partition_path], comm_d, "sha256")


def challenge_bits(b: Builder, proof: UpdateProof, comm_r_new: int, partition: int) -> list[list]:
    """gen_challenge_bits: each challenge's generated bits, little-endian."""
    bits, per_digest, digests = random_bits(proof), CAPACITY // random_bits(proof), digests_per_partition(proof)
    out: list[list] = []
    for j in range(digests):
        index = g.digest_index(b, partition, digests, j)
        digest_bits = g.bits_of(b, g.poseidon_gen(b, comm_r_new, index), 255)
        take = proof.challenges - len(out) if j == digests - 1 else per_digest
        out += [digest_bits[i * bits:(i + 1) * bits] for i in range(take)]
    return out


def _challenge(b: Builder, proof: UpdateProof, c_bits: list, h_select: list, phi: int, roots: tuple[int, int],
               apex: list[int], c: ChallengeValues) -> None:
    rho = g.poseidon_gen(b, phi, g.high_bits(b, c_bits, h_select, proof.hs))
    leaf_r_old, leaf_d_new = g.nums(b, [c.leaf_r_old, c.leaf_d_new])
    leaf_r_new = g.label_r_new(b, leaf_r_old, leaf_d_new, rho)
    arities = proof.tree_arities
    for leaf, path, root in ((leaf_r_old, c.path_r_old, roots[0]), (leaf_r_new, c.path_r_new, roots[1])):
        if [len(s) + 1 for s in path] != arities:
            raise ValueError(f"a TreeR path of arities {[len(s) + 1 for s in path]}, {arities} expected")
        flat = g.nums(b, [x for level in path for x in level])
        siblings, at = [], 0
        for a in arities:
            siblings.append(flat[at:at + a - 1])
            at += a - 1
        _por(b, arities, c_bits, leaf, siblings, root, "poseidon")
    below = proof.challenge_bits - proof.partition_bits - proof.apex_bits
    apex_leaf = g.select(b, apex, c_bits[below:below + proof.apex_bits])
    path_d = g.nums(b, list(c.path_d))
    _por(b, [2] * below, c_bits[:below], leaf_d_new, [[s] for s in path_d], apex_leaf, "sha256")


def synthesize(b: Builder, proof: UpdateProof, values: PartitionValues | None = None) -> None:
    """Place (or evaluate) one partition: the header a task of phase 0, each challenge one of phase 1.
    ValueError when values do not fit the proof's shape."""
    v = values if values is not None else _unknown(proof)
    if len(v.challenges) != proof.challenges:
        raise ValueError(f"{len(v.challenges)} challenges for a partition of {proof.challenges}")
    with b.task(0):
        partition_bits, h_select, phi, roots, apex, generated = _header(b, proof, v)
    for c_bits, c in zip(generated, v.challenges):
        with b.task(1):
            _challenge(b, proof, c_bits + partition_bits, h_select, phi, roots, apex, c)


class UpdateCircuit(PlacedCircuit):
    """An EmptySectorUpdate partition circuit of one sector size and TreeR shape."""

    def __init__(self, proof: UpdateProof):
        super().__init__(lambda b, values: synthesize(b, proof, values), f"{proof.name} update circuit")
        self.proof = proof

    def partition_witness(self, values: PartitionValues, expected: list[int], threads: int | None = None,
                          out: FrArray | None = None, stop=None) -> FrArray:
        """The partition's witness, its public inputs held to expected (a verifier's);
        stop: a job's stop flag (JobCancelledError once it is set)."""
        return self.witness(values, expected, "the update partition", threads, out, stop)


def update_circuit(proof: UpdateProof) -> UpdateCircuit:
    """The partition circuit of a registered update proof, built on first use in this process."""
    return kept(("snap", proof.nodes, proof.tree), lambda: UpdateCircuit(proof))


def shape_counts(proof: UpdateProof) -> dict[str, int]:
    """Constraints, public inputs (with the one) and aux of a proof's partition circuit, nothing built."""
    builder = Builder()
    synthesize(builder, proof)
    return builder.shape.counts()
