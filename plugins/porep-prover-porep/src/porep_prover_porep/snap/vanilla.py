# SPDX-License-Identifier: Apache-2.0
"""The SnapDeals update's partition proofs verified as storage-proofs-update's
EmptySectorUpdate::verify checks them, and more where the circuit needs it,
and laid out as the circuit's values.

verify(proof, partition_proof, k, h, comm_r_old, comm_d_new, comm_r_new)
checks, VanillaProofError naming the first failure:

    every domain element (comm_c, apex leaves, leaves, path elements) below r
    comm_r_old = Poseidon-2(comm_c, root_r_old), comm_r_new likewise, the roots
        being the first challenge's TreeR proofs' roots
    per challenge c (challenges.challenges(comm_r_new, k)): its three proofs open
        leaf c, their roots are root_r_old, comm_d_new and root_r_new, their
        paths hash up to them (the TreeR levels of every proof in one batch)
    leaf_r_new = leaf_r_old + leaf_d_new * rho(phi, c >> (log2 nodes - h))
    the TreeD path passes through the challenge's apex leaf, and its partition
        path (its top log2(partitions) levels) is the first challenge's, from the
        root of the apex tree over the apex leaves

(the last where filecoin-proofs checks each path sibling against the apex
tree's rows: the circuit selects the apex leaf and starts the partition path
from the apex root, so a proof that passes is a satisfied circuit).
"""
from __future__ import annotations

from porep_prover.errors import VanillaProofError

from .. import poseidon
from ..fr32 import R
from ..post.vanilla import merkle_roots
from ..proofs import MerkleProof
from ..trees import node_hash, path_index
from . import challenges as ch
from .bincode import ChallengeProof, PartitionProof
from .circuit import ChallengeValues, PartitionValues
from .registered import UpdateProof


def _int(value: bytes, where: str) -> int:
    got = int.from_bytes(value, "little")
    if got >= R:
        raise VanillaProofError("not below r", where)
    return got


def _levels(m: MerkleProof):
    return [e for path in m.paths for e in path]


def _d_nodes(m: MerkleProof, where: str) -> list[bytes]:
    """The TreeD path's nodes from the leaf up to the root it computes."""
    nodes = [m.leaf]
    for i, e in enumerate(_levels(m)):
        _int(e.hashes[0], f"{where}.path[{i}]")
        children = [e.hashes[0]]
        children.insert(e.index, nodes[-1])
        nodes.append(node_hash("sha256", children))
    return nodes


def _apex_root(leaves: tuple[bytes, ...]) -> bytes:
    row = list(leaves)
    while len(row) > 1:
        row = [node_hash("sha256", row[i:i + 2]) for i in range(0, len(row), 2)]
    return row[0]


def _roots_of(pp: PartitionProof, comm_r_old: int, comm_r_new: int, where: str) -> tuple[bytes, bytes]:
    """root_r_old and root_r_new (the first challenge's), each held to its comm_r with comm_c."""
    _int(pp.comm_c, f"{where}.comm_c")
    for i, leaf in enumerate(pp.apex_leafs):
        _int(leaf, f"{where}.apex_leafs[{i}]")
    first = pp.challenge_proofs[0]
    roots = (first.proof_r_old.root, first.proof_r_new.root)
    for name, root, comm in (("proof_r_old", roots[0], comm_r_old), ("proof_r_new", roots[1], comm_r_new)):
        _int(root, f"{where}.challenge_proofs[0].{name}.root")
        if int.from_bytes(poseidon.hash_one([pp.comm_c, root]), "little") != comm:
            raise VanillaProofError(f"Poseidon-2(comm_c, its root) is not comm_{name[6:]}",
                                    f"{where}.challenge_proofs[0].{name}.root")
    return roots


def _opens(cp: ChallengeProof, c: int, roots: tuple[bytes, bytes, bytes], field: str) -> tuple[int, int, int]:
    """Each of the challenge's proofs opens leaf c under its root: the three leaves."""
    leaves = []
    for name, root in zip(("proof_r_old", "proof_d_new", "proof_r_new"), roots):
        m = getattr(cp, name)
        if m.root != root:
            raise VanillaProofError("its root is not the partition's", f"{field}.{name}.root")
        if path_index(tuple(_levels(m))) != c:
            raise VanillaProofError(f"opens leaf {path_index(tuple(_levels(m)))}, the challenge is {c}",
                                    f"{field}.{name}")
        leaves.append(_int(m.leaf, f"{field}.{name}.leaf"))
    return leaves[0], leaves[1], leaves[2]


def _tree_d(proof: UpdateProof, pp: PartitionProof, cp: ChallengeProof, c: int, field: str):
    """The TreeD path hashed up to its root through its apex leaf; its partition path (siblings, top node)."""
    below = proof.challenge_bits - proof.partition_bits - proof.apex_bits
    nodes = _d_nodes(cp.proof_d_new, f"{field}.proof_d_new")
    if nodes[-1] != cp.proof_d_new.root:
        raise VanillaProofError("its path does not hash up to its root", f"{field}.proof_d_new")
    if nodes[below] != pp.apex_leafs[(c >> below) & (proof.apex_leaves - 1)]:
        raise VanillaProofError("its path does not pass through its apex leaf", f"{field}.proof_d_new")
    top = below + proof.apex_bits
    return [e.hashes for e in _levels(cp.proof_d_new)[top:]], nodes[top]


def verify(proof: UpdateProof, pp: PartitionProof, k: int, h: int, comm_r_old: int, comm_d_new: int,
           comm_r_new: int, where: str = "vanilla_proofs") -> None:
    """Partition k's proof checked (see the module); VanillaProofError naming the first failure."""
    ch.h_select(proof, h)
    root_r_old, root_r_new = _roots_of(pp, comm_r_old, comm_r_new, where)
    roots = (root_r_old, comm_d_new.to_bytes(32, "little"), root_r_new)
    phi = ch.phi(comm_d_new, comm_r_old)
    apex_root, partition_path = _apex_root(pp.apex_leafs), None
    opened, at = [], []
    for i, (c, cp) in enumerate(zip(ch.challenges(proof, comm_r_new, k), pp.challenge_proofs, strict=True)):
        field = f"{where}.challenge_proofs[{i}]"
        old, d_new, new = _opens(cp, c, roots, field)
        if (old + d_new * ch.rho(phi, c >> (proof.challenge_bits - h))) % R != new:
            raise VanillaProofError("leaf_r_new is not leaf_r_old + leaf_d_new * rho", f"{field}.proof_r_new.leaf")
        path, top = _tree_d(proof, pp, cp, c, field)
        partition_path = path if partition_path is None else partition_path
        if path != partition_path or top != apex_root:
            raise VanillaProofError("its partition path is not the partition's", f"{field}.proof_d_new")
        opened += [cp.proof_r_old, cp.proof_r_new]
        at += [f"{field}.proof_r_old", f"{field}.proof_r_new"]
    for m, root, field in zip(opened, merkle_roots(opened, at), at):
        if root != m.root:
            raise VanillaProofError("its path does not hash up to its root", field)


def _siblings(m: MerkleProof) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int.from_bytes(x, "little") for x in e.hashes) for e in _levels(m))


def values(proof: UpdateProof, pp: PartitionProof, public: list[int]) -> PartitionValues:
    """The circuit's values of a verified partition proof and its public inputs (after the one)."""
    below = proof.challenge_bits - proof.partition_bits - proof.apex_bits
    cs = tuple(ChallengeValues(int.from_bytes(cp.proof_r_old.leaf, "little"),
                               int.from_bytes(cp.proof_d_new.leaf, "little"), _siblings(cp.proof_r_old),
                               _siblings(cp.proof_r_new), tuple(s[0] for s in _siblings(cp.proof_d_new)[:below]))
               for cp in pp.challenge_proofs)
    first = pp.challenge_proofs[0]
    top = tuple(s[0] for s in _siblings(first.proof_d_new)[below + proof.apex_bits:])
    return PartitionValues(*public, int.from_bytes(pp.comm_c, "little"),
                           int.from_bytes(first.proof_r_old.root, "little"),
                           int.from_bytes(first.proof_r_new.root, "little"),
                           tuple(int.from_bytes(x, "little") for x in pp.apex_leafs), top, cs)
