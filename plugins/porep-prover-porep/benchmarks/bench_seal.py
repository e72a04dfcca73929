#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rates of the PoRep primitives and of sealing, on this host's CPU.

Rows: SHA-256 compressions/s (SHA extensions and portable), the parents table
(nodes/s), SDR labels/s (and the compressions/s they make), Poseidon hashes/s of
arities 2, 8 and 11 (sparse and plain schedules), then per sector size the
seconds of PC1, PC2 and C1, the C1 JSON's size and its read-and-verify time.
Each row is printed and written to the JSON file as it is measured.

Usage:
    python plugins/porep-prover-porep/benchmarks/bench_seal.py [--sizes 2KiB,8MiB] [--json out.json]
        [--nodes 262144]   (graph size of the primitive rows)
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import time

import numpy as np

from porep_prover_porep import _native, c1_json, graph, pieces, poseidon, seal, vanilla

ROWS: list[dict] = []


def record(path: str, row: dict) -> None:
    ROWS.append(row)
    print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    with open(path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M"), "host": platform.node(), "cpus": os.cpu_count(),
                   "rows": ROWS}, f, indent=1)


def best(fn, *args, repeat: int = 3, **kwargs) -> float:
    """The fastest of `repeat` runs of fn(*args, **kwargs), seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - t)
    return min(times)


def primitives(out: str, nodes: int) -> None:
    pairs = np.random.default_rng(1).integers(0, 256, (nodes, 64), np.uint8)
    digests = np.empty((nodes, 32), np.uint8)
    for portable in (False, True):
        _native.sha256_force_portable(portable)
        if portable or _native.sha256_uses_extensions():
            s = best(_native.sha256_pairs, pairs, digests)
            record(out, {"row": "sha256", "impl": "portable" if portable else "extensions",
                         "compressions_per_s": 2 * nodes / s})
    _native.sha256_force_portable(False)
    porep_id = bytes(32)
    s = best(graph.parents_table, nodes, porep_id, True, repeat=1)
    record(out, {"row": "parents", "nodes": nodes, "nodes_per_s": nodes / s})
    table = graph.parents_table(nodes, porep_id, True)
    s = best(graph.labels, bytes(32), 2, table, repeat=2)
    record(out, {"row": "labels", "nodes": nodes, "layers": 2, "labels_per_s": 2 * nodes / s,
                 "compressions_per_s": 2 * nodes * 20 / s})
    rng = np.random.default_rng(2)
    for arity in poseidon.ARITIES:
        n = max(256, nodes // 16 // arity)
        batch = rng.integers(0, 256, (n, arity, 32), np.uint8)
        batch[:, :, 31] &= 0x3F
        for plain in (False, True):
            s = best(poseidon.hash_batch, arity, batch, plain=plain, repeat=2)
            record(out, {"row": "poseidon", "arity": arity, "schedule": "plain" if plain else "sparse",
                         "hashes_per_s": n / s})


def sealing(out: str, size_name: str) -> None:
    proof = seal.seal_proof(f"StackedDrg{size_name}V1_1")
    data = pieces.sector_data([pieces.random_piece(proof.sector_size // 2, 7)], proof.sector_size)
    prover, ticket, seed = bytes(range(32)), bytes([1] * 32), bytes([2] * 32)
    t0 = time.perf_counter()
    pc1 = seal.precommit1(proof.name, data, prover, 1, ticket)
    t1 = time.perf_counter()
    sealed = seal.precommit2(pc1)
    t2 = time.perf_counter()
    c1 = seal.commit1(sealed, ticket, seed)
    t3 = time.perf_counter()
    text = c1_json.dumps(c1)
    t4 = time.perf_counter()
    vanilla.verify(c1_json.loads(text), prover, 1)
    t5 = time.perf_counter()
    record(out, {"row": "seal", "sector": size_name, "nodes": proof.nodes, "pc1_s": t1 - t0, "pc2_s": t2 - t1,
                 "c1_s": t3 - t2, "json_bytes": len(text), "json_s": t4 - t3, "read_verify_s": t5 - t4,
                 "labels_per_s": proof.layers * proof.nodes / (t1 - t0)})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2KiB,8MiB", help="sector sizes to seal: 2KiB, 8MiB, 512MiB")
    ap.add_argument("--nodes", type=int, default=1 << 18, help="graph size of the primitive rows (a power of 2)")
    ap.add_argument("--json", default=str(pathlib.Path(__file__).parent / "results" / "bench_seal.json"))
    args = ap.parse_args()
    pathlib.Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} CPUs; SHA extensions: {_native.sha256_uses_extensions()}")
    primitives(args.json, args.nodes)
    for size in filter(None, args.sizes.split(",")):
        sealing(args.json, size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
