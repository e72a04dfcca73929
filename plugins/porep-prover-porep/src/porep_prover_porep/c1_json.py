# SPDX-License-Identifier: Apache-2.0
"""rust-fil-proofs' SealCommitPhase1Output as filecoin-ffi writes it: serde_json, compact.

Layout (serde's defaults: structs as objects in field order, enums externally
tagged, [u8; 32] and every domain element as an array of 32 numbers,
PhantomData as null):

    {"registered_proof": "StackedDrg2KiBV1_1",
     "vanilla_proofs": {"StackedDrg2KiBV1": [[proof, ...], ...]},   # [partition][challenge]
     "comm_r": [..32], "comm_d": [..32], "replica_id": [..32], "seed": [..32], "ticket": [..32]}
    proof = {"comm_d_proofs": merkle, "comm_r_last_proof": merkle,
             "replica_column_proofs": {"c_x": cp, "drg_parents": [cp x6], "exp_parents": [cp x8]},
             "labeling_proofs": [lp per layer], "encoding_proof": lp}
    merkle = {"data": {"Single": {"root", "leaf", "path": {"path": [{"hashes": [...], "index": i}]}}}}
             ("Sub": base_proof, sub_proof, root, leaf; "Top": base_proof, sub_proof, top_proof, root, leaf)
    cp = {"column": {"index": i, "rows": [...], "_h": null}, "inclusion_proof": merkle}
    lp = {"parents": [..37], "layer_index": l, "node": n}

Reading checks the shape against the registered proof (counts, lengths, ranges)
and raises VanillaProofError naming the field; vanilla.verify checks the content.
"""
from __future__ import annotations

import json
import os
from typing import NoReturn

from porep_prover.errors import VanillaProofError

from .proofs import PATH_NAMES, C1Output, Column, ColumnProof, LabelingProof, MerkleProof, PathElement, \
    ReplicaColumnProof, VanillaProof
from .registered import REGISTERED, SealProof

MAX_BYTES = 256 << 20      # a 32 GiB sector's output is ~40 MB
MAX_PATH = 40

# ---------------------------------------------------------------- writing


def _merkle(p: MerkleProof) -> dict:
    paths = {name: {"path": [{"hashes": [list(h) for h in e.hashes], "index": e.index} for e in path]}
             for name, path in zip(PATH_NAMES[p.kind], p.paths, strict=True)}
    if p.kind == "Single":
        return {"data": {"Single": {"root": list(p.root), "leaf": list(p.leaf), **paths}}}
    return {"data": {p.kind: {**paths, "root": list(p.root), "leaf": list(p.leaf)}}}


def _column_proof(c: ColumnProof) -> dict:
    return {"column": {"index": c.column.index, "rows": [list(r) for r in c.column.rows], "_h": None},
            "inclusion_proof": _merkle(c.inclusion_proof)}


def _labeling(p: LabelingProof) -> dict:
    return {"parents": [list(x) for x in p.parents], "layer_index": p.layer_index, "node": p.node}


def _proof(p: VanillaProof) -> dict:
    rcp = p.replica_column_proofs
    return {"comm_d_proofs": _merkle(p.comm_d_proofs), "comm_r_last_proof": _merkle(p.comm_r_last_proof),
            "replica_column_proofs": {"c_x": _column_proof(rcp.c_x),
                                      "drg_parents": [_column_proof(c) for c in rcp.drg_parents],
                                      "exp_parents": [_column_proof(c) for c in rcp.exp_parents]},
            "labeling_proofs": [_labeling(x) for x in p.labeling_proofs], "encoding_proof": _labeling(p.encoding_proof)}


def to_obj(c1: C1Output) -> dict:
    """The output as the JSON object serde writes (dicts in field order)."""
    variant = REGISTERED[c1.registered_proof].vanilla_variant
    return {"registered_proof": c1.registered_proof,
            "vanilla_proofs": {variant: [[_proof(p) for p in partition] for partition in c1.vanilla_proofs]},
            "comm_r": list(c1.comm_r), "comm_d": list(c1.comm_d), "replica_id": list(c1.replica_id),
            "seed": list(c1.seed), "ticket": list(c1.ticket)}


def dumps(c1: C1Output) -> str:
    """serde_json::to_string of the output: compact, fields in declaration order."""
    return json.dumps(to_obj(c1), separators=(",", ":"))


def write(c1: C1Output, path: str | os.PathLike) -> None:
    with open(path, "w") as f:
        f.write(dumps(c1))

# ---------------------------------------------------------------- reading


def _fail(where: str, message: str) -> NoReturn:
    raise VanillaProofError(message, where)


def _fields(value, where: str, names: tuple[str, ...]) -> dict:
    if not isinstance(value, dict):
        _fail(where, f"an object with {', '.join(names)} expected, not {type(value).__name__}")
    missing = [n for n in names if n not in value]
    if missing:
        _fail(f"{where}.{missing[0]}" if where else missing[0], "missing")
    extra = [n for n in value if n not in names]
    if extra:
        _fail(f"{where}.{extra[0]}" if where else str(extra[0]), "not a field of this object")
    return value


def _int(value, where: str, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= high:
        _fail(where, f"an integer in [0, {high}] expected, not {value!r:.40}")
    return value


def _list(value, where: str, length: int | None = None, most: int = MAX_PATH) -> list:
    if not isinstance(value, list):
        _fail(where, f"an array expected, not {type(value).__name__}")
    if (length is not None and len(value) != length) or len(value) > most:
        _fail(where, f"{len(value)} entries, {length if length is not None else f'at most {most}'} expected")
    return value


def _domain(value, where: str) -> bytes:
    if type(value) is list and len(value) == 32 and all(type(x) is int for x in value):
        try:
            return bytes(value)
        except ValueError:      # a number past 255: named below
            pass
    items = _list(value, where, 32)
    for i, x in enumerate(items):
        _int(x, f"{where}[{i}]", 255)
    return bytes(items)


def _path(value, where: str, arity: int) -> tuple[PathElement, ...]:
    elements = _list(_fields(value, where, ("path",))["path"], f"{where}.path")
    out = []
    for i, e in enumerate(elements):
        at = f"{where}.path[{i}]"
        e = _fields(e, at, ("hashes", "index"))
        hashes = _list(e["hashes"], f"{at}.hashes", arity - 1)
        out.append(PathElement(tuple(_domain(h, f"{at}.hashes[{j}]") for j, h in enumerate(hashes)),
                               _int(e["index"], f"{at}.index", arity - 1)))
    return tuple(out)


def _merkle_in(value, where: str, arities: tuple[int, int, int]) -> MerkleProof:
    data = _fields(value, where, ("data",))["data"]
    if not isinstance(data, dict) or len(data) != 1:
        _fail(f"{where}.data", "one of Single, Sub, Top expected")
    kind, inner = next(iter(data.items()))
    levels = {"Single": 1, "Sub": 2, "Top": 3}.get(kind)
    if levels is None or levels != 1 + (arities[1] > 0) + (arities[2] > 0):
        _fail(f"{where}.data", f"a {kind!r} proof for a tree of arities {arities}")
    at = f"{where}.data.{kind}"
    inner = _fields(inner, at, ("root", "leaf", *PATH_NAMES[kind]))
    paths = tuple(_path(inner[name], f"{at}.{name}", arities[i]) for i, name in enumerate(PATH_NAMES[kind]))
    return MerkleProof(kind, _domain(inner["root"], f"{at}.root"), _domain(inner["leaf"], f"{at}.leaf"), paths)


def _column_proof_in(value, where: str, proof: SealProof) -> ColumnProof:
    value = _fields(value, where, ("column", "inclusion_proof"))
    column = _fields(value["column"], f"{where}.column", ("index", "rows", "_h"))
    if column["_h"] is not None:
        _fail(f"{where}.column._h", "null expected")
    rows = _list(column["rows"], f"{where}.column.rows", proof.layers)
    return ColumnProof(Column(_int(column["index"], f"{where}.column.index", proof.nodes - 1),
                              tuple(_domain(r, f"{where}.column.rows[{i}]") for i, r in enumerate(rows))),
                       _merkle_in(value["inclusion_proof"], f"{where}.inclusion_proof", proof.tree))


def _labeling_in(value, where: str, proof: SealProof) -> LabelingProof:
    value = _fields(value, where, ("parents", "layer_index", "node"))
    parents = _list(value["parents"], f"{where}.parents", 37)
    return LabelingProof(tuple(_domain(p, f"{where}.parents[{i}]") for i, p in enumerate(parents)),
                         _int(value["layer_index"], f"{where}.layer_index", (1 << 32) - 1),
                         _int(value["node"], f"{where}.node", (1 << 64) - 1))


def _proof_in(value, where: str, proof: SealProof) -> VanillaProof:
    names = ("comm_d_proofs", "comm_r_last_proof", "replica_column_proofs", "labeling_proofs", "encoding_proof")
    value = _fields(value, where, names)
    rcp = _fields(value["replica_column_proofs"], f"{where}.replica_column_proofs", ("c_x", "drg_parents",
                                                                                     "exp_parents"))
    at = f"{where}.replica_column_proofs"
    columns = ReplicaColumnProof(
        _column_proof_in(rcp["c_x"], f"{at}.c_x", proof),
        tuple(_column_proof_in(c, f"{at}.drg_parents[{i}]", proof)
              for i, c in enumerate(_list(rcp["drg_parents"], f"{at}.drg_parents", 6))),
        tuple(_column_proof_in(c, f"{at}.exp_parents[{i}]", proof)
              for i, c in enumerate(_list(rcp["exp_parents"], f"{at}.exp_parents", 8))))
    labeling = _list(value["labeling_proofs"], f"{where}.labeling_proofs", proof.layers)
    return VanillaProof(_merkle_in(value["comm_d_proofs"], f"{where}.comm_d_proofs", (2, 0, 0)),
                        _merkle_in(value["comm_r_last_proof"], f"{where}.comm_r_last_proof", proof.tree),
                        columns,
                        tuple(_labeling_in(x, f"{where}.labeling_proofs[{i}]", proof) for i, x in enumerate(labeling)),
                        _labeling_in(value["encoding_proof"], f"{where}.encoding_proof", proof))


def from_obj(obj) -> C1Output:
    """The output from a parsed JSON object; VanillaProofError names any field of the wrong shape."""
    names = ("registered_proof", "vanilla_proofs", "comm_r", "comm_d", "replica_id", "seed", "ticket")
    obj = _fields(obj, "", names)
    proof = REGISTERED.get(obj["registered_proof"]) if isinstance(obj["registered_proof"], str) else None
    if proof is None:
        _fail("registered_proof", f"{obj['registered_proof']!r:.60} is not a registered seal proof")
    variants = obj["vanilla_proofs"]
    if not isinstance(variants, dict) or list(variants) != [proof.vanilla_variant]:
        _fail("vanilla_proofs", f"an object of one key, {proof.vanilla_variant!r}, expected for {proof.name}")
    at = f"vanilla_proofs.{proof.vanilla_variant}"
    partitions = _list(variants[proof.vanilla_variant], at, proof.partitions)
    vanilla = tuple(
        tuple(_proof_in(p, f"{at}[{k}][{i}]", proof)
              for i, p in enumerate(_list(part, f"{at}[{k}]", proof.challenges_per_partition)))
        for k, part in enumerate(partitions))
    return C1Output(proof.name, vanilla, *(_domain(obj[n], n) for n in names[2:]))


def _no_duplicates(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        _fail("", f"field {next(k for k in keys if keys.count(k) > 1)!r} appears twice")
    return out


def _no_constant(name: str) -> NoReturn:
    _fail("", f"{name} is not JSON")


def loads(text: str | bytes) -> C1Output:
    """Parse and check a commit-phase-1 output (at most MAX_BYTES)."""
    if len(text) > MAX_BYTES:
        _fail("", f"{len(text)} bytes, at most {MAX_BYTES}")
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:   # JSONDecodeError, UnicodeDecodeError, huge integers
        if isinstance(exc, VanillaProofError):
            raise
        raise VanillaProofError(f"not JSON: {exc}") from None
    return from_obj(obj)


def read(path: str | os.PathLike) -> C1Output:
    """Read a commit-phase-1 output file, its size checked before it is read."""
    size = os.path.getsize(path)
    if size > MAX_BYTES:
        _fail("", f"{path}: {size} bytes, at most {MAX_BYTES}")
    with open(path, "rb") as f:
        return loads(f.read())
