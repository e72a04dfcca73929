#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The StackedDRG circuit's costs on this host's CPU.

Rows, each printed and written to the JSON file as it is measured:
  gadget     the native witness generator's rate of each template of a
             32 GiB partition (instances/s on 1 thread and on every core),
             among them SHA-256 compressions/s, Poseidon permutations/s and
             labels/s (a label: its 20 compressions and its packing)
  shape      constraints, public inputs, aux of a partition (2 KiB to 32 GiB),
             counted from the templates; the seconds to place it
  circuit    seconds to build a partition's R1CS (CSR) once
  synthesis  a partition's witness (the R1CS reused) of a sector sealed here:
             seconds for the data, for the native run, satisfied or not
  estimate   a 32 GiB partition's witness from the measured rates: its
             templates' instances times their seconds, on 1 thread, on this
             host's cores, and per core on 96 cores for 10 partitions (the
             reference engine's 26.5 s)
  prove      with --prove: a sector's proofs through an engine and a daemon
             (its own service and the reference engine's wire), verified

Usage:
    python plugins/porep-prover-porep/benchmarks/bench_circuit.py [--sizes 2KiB,8MiB] [--json out.json]
        [--prove 2KiB,8MiB]
"""
from __future__ import annotations

import argparse
import collections
import os
import pathlib
import sys
import time

import numpy as np

from porep_prover_porep import pieces, seal
from porep_prover_porep.circuit import values
from porep_prover_porep.circuit.builder import Shape
from porep_prover_porep.circuit.partition import PartitionCircuit
from porep_prover_porep.circuit.witness import Program
from porep_prover_porep.registered import seal_proof

REFERENCE = {"seconds": 26.5, "partitions": 10, "cores": 96}       # cuzk-project.md: witness generation
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_seal import record  # noqa: E402 - the rows' printing and file, as the seal benchmark's

# ---------------------------------------------------------------- templates


def _template_shape(tp, copies: int) -> tuple[Shape, list[int]]:
    """copies instances of a template, each a task of its own, its ports the
    variables of one source instance (values drawn at random: the rate of the
    rules, not their meaning)."""
    from porep_prover_porep.circuit.builder import template
    from porep_prover_porep.circuit.system import TraceCS

    def source(cs: TraceCS, leaves: list, data: list) -> list:
        return [cs.alloc_data(v) for v in data]
    src = template(("bench source", tp.n_ports), source, [], tp.n_ports)
    shape = Shape(templates=[src, tp])
    shape.tmpl, shape.aux_base, shape.input_base = [0], [0], [0]
    shape.row_base, shape.port_off, shape.data_off = [0], [0], [0]
    shape.n_aux, shape.n_constraints, shape.n_data = src.n_aux, src.n_constraints, src.n_data
    ports = [k << 2 for k in range(tp.n_ports)]
    for _ in range(copies):
        shape.tmpl.append(1)
        shape.aux_base.append(shape.n_aux)
        shape.input_base.append(shape.n_input)
        shape.row_base.append(shape.n_constraints)
        shape.port_off.append(len(shape.ports))
        shape.data_off.append(shape.n_data)
        shape.ports += ports
        shape.n_aux += tp.n_aux
        shape.n_input += tp.n_input
        shape.n_constraints += tp.n_constraints
        shape.n_data += tp.n_data
    shape.tasks = [(0, 1, 0)] + [(1 + i, 2 + i, 1) for i in range(copies)]
    rng = np.random.default_rng(7)
    data = [int(x) for x in rng.integers(0, 1 << 62, shape.n_data)]
    return shape, data


def template_seconds(tp, threads: int) -> float:
    """Seconds a template's instance takes on `threads` threads (many at once)."""
    copies = max(8, min(4000, 4_000_000 // max(tp.n_aux + tp.n_constraints, 1)))
    shape, data = _template_shape(tp, copies)
    program = Program(shape)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        program.run(data, threads)
        best = min(best, time.perf_counter() - t)
    return best / copies


def _kind(tp) -> str:
    name, params = tp.key[0], tp.key[1]
    if name == "sha256 block":
        return "sha256 block"
    if name == "poseidon":
        return f"poseidon-{len(tp.key[2])}"
    return f"{name}{'-' + '-'.join(map(str, params)) if params else ''}"


def gadgets(out: str, big: PartitionCircuit, threads: int) -> dict[tuple, float]:
    """Each template of a 32 GiB partition measured; seconds an instance on one thread."""
    per_instance: dict[tuple, float] = {}
    counts = collections.Counter(big.shape.tmpl)
    for t, tp in enumerate(big.shape.templates):
        one = template_seconds(tp, 1)
        many = template_seconds(tp, threads)
        per_instance[tp.key] = one
        record(out, {"row": "gadget", "template": _kind(tp), "aux": tp.n_aux, "constraints": tp.n_constraints,
                     "in_32gib_partition": counts[t], "per_s_1_thread": 1 / one, f"per_s_{threads}_threads": 1 / many})
    blocks = {t: tp for t, tp in enumerate(big.shape.templates) if tp.key[0] == "sha256 block"}
    by_count = sorted(blocks, key=lambda t: counts[t])
    middle, last, first = blocks[by_count[-1]], blocks[by_count[-2]], blocks[by_count[0]]
    pack = next(tp for tp in big.shape.templates if tp.key[0] == "pack bits")
    record(out, {"row": "gadget", "template": "sha256 compression (a label's middle block)",
                 "per_s_1_thread": 1 / per_instance[middle.key]})
    label = per_instance[first.key] + 18 * per_instance[middle.key] + per_instance[last.key] + per_instance[pack.key]
    record(out, {"row": "gadget", "template": "label (20 compressions, packed)", "per_s_1_thread": 1 / label})
    return per_instance


def whole(out: str, big: PartitionCircuit, threads: int) -> float:
    """A 32 GiB partition's whole witness generated natively from random data (its
    rules' costs do not depend on the values; no 32 GiB sector is sealed here):
    seconds on one thread, into a witness buffer made once (on this VM the first
    touch of 4 GB of fresh memory alone takes seconds: the first run, timed
    apart)."""
    program = big.program
    data = [int(x) for x in np.random.default_rng(5).integers(0, 1 << 62, big.shape.n_data)]
    t = time.perf_counter()
    w = program.run(data, threads)
    record(out, {"row": "witness", "sector": "32GiB", "data": "random", "threads": threads, "buffer": "fresh",
                 "witness_s": time.perf_counter() - t})
    single = 0.0
    for th in sorted({1, threads}):
        best = min(_timed(program.run, data, th, w) for _ in range(2))
        single = single or best
        record(out, {"row": "witness", "sector": "32GiB", "data": "random", "threads": th, "buffer": "reused",
                     "witness_s": best, "aux_per_s": big.shape.n_aux / best})
    return single


def _timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def estimate(out: str, big: PartitionCircuit, per_instance: dict[tuple, float], threads: int,
             aux_per_s: float | None, measured: float) -> None:
    """A 32 GiB partition's witness seconds from the templates' rates, from a
    synthesized partition's aux variables a second, and as measured on random data."""
    counts = collections.Counter(big.shape.tmpl)
    one = sum(per_instance[big.shape.templates[t].key] * n for t, n in counts.items())
    ref = REFERENCE
    row = {"row": "estimate", "sector": "32GiB", "from": "templates", "partition_s_1_thread": one,
           f"partition_s_{threads}_threads": one / threads,
           "ten_partitions_s_96_cores": one * ref["partitions"] / ref["cores"],
           "reference_ten_partitions_s_96_cores": ref["seconds"],
           "reference_core_s_a_partition": ref["seconds"] * ref["cores"] / ref["partitions"]}
    record(out, row)
    for source, one in (("synthesis aux/s", big.shape.n_aux / aux_per_s if aux_per_s else 0.0),
                        ("whole witness, random data", measured)):
        if one:
            record(out, {**row, "from": source, "partition_s_1_thread": one,
                         f"partition_s_{threads}_threads": one / threads,
                         "ten_partitions_s_96_cores": one * ref["partitions"] / ref["cores"]})

# ---------------------------------------------------------------- sectors


def shapes(out: str) -> None:
    for name in ("2KiB", "8MiB", "512MiB", "32GiB", "64GiB"):
        t = time.perf_counter()
        circuit = PartitionCircuit(values.layout_of(seal_proof(f"StackedDrg{name}V1_1")))
        counts = circuit.shape.counts()
        record(out, {"row": "shape", "sector": name, "constraints": counts["constraints"],
                     "inputs": counts["inputs"], "aux": counts["aux"],
                     "with_input_constraints": counts["constraints"] + counts["inputs"],
                     "instances": counts["instances"], "place_s": time.perf_counter() - t})


def sealed(name: str):
    proof = seal_proof(f"StackedDrg{name}V1_1")
    data = pieces.sector_data([pieces.random_piece(proof.sector_size, 3)], proof.sector_size)
    t = time.perf_counter()
    c1 = seal.seal_sector(data, proof.name, bytes(range(32)), 9, bytes([1] * 32), bytes([2] * 32))
    return proof, c1, time.perf_counter() - t


def synthesis(out: str, name: str, threads: int) -> float:
    """Partition 0's witness timed; its aux variables a second on one thread."""
    proof, c1, seal_s = sealed(name)
    circuit = PartitionCircuit(values.layout_of(proof))
    t = time.perf_counter()
    r1cs = circuit.r1cs
    build_s = time.perf_counter() - t
    record(out, {"row": "circuit", "sector": name, "constraints": r1cs.num_constraints,
                 "nnz": r1cs.a.nnz + r1cs.b.nnz + r1cs.c.nnz, "host_gb": r1cs.host_bytes / 1e9, "build_s": build_s,
                 "seal_s": seal_s})
    circuit.program                          # noqa: B018 - made once, outside the timings
    rate = 0.0
    for th in sorted({1, threads}):
        t = time.perf_counter()
        data = circuit.data(c1, 0)
        data_s = time.perf_counter() - t
        t = time.perf_counter()
        w = circuit.program.run(data, th)
        run_s = time.perf_counter() - t
        record(out, {"row": "synthesis", "sector": name, "threads": th, "data_s": data_s, "witness_s": run_s,
                     "aux_per_s": circuit.shape.n_aux / run_s, "satisfied": bool(r1cs.is_satisfied(w))})
        if th == 1:
            rate = circuit.shape.n_aux / (run_s + data_s)
    return rate

# ---------------------------------------------------------------- proofs


def prove(out: str, name: str) -> None:
    """A sector's partition proved by an engine here and by a daemon on both its
    services, each proof verified against a verifier's public inputs."""
    sys.path.insert(0, str(HERE.parents[2] / "plugins" / "porep-prover-porep" / "tests"))
    import tempfile

    from porep_prover.groth16 import file_digest, insecure_setup, write_params

    from porep_prover_porep import c1_json
    from porep_prover_porep.circuit.partition import partition_circuit
    from porep_prover_porep.parameters import ENVIRONMENT
    from porep_prover_porep.payload import prover_id_of
    import test_daemon_porep as e2e
    proof = seal_proof(f"StackedDrg{name}V1_1")
    data = pieces.sector_data([pieces.random_piece(proof.sector_size, 4)], proof.sector_size)
    c1 = seal.seal_sector(data, proof.name, prover_id_of(e2e.MINER), e2e.SECTOR, bytes([5] * 32), bytes([6] * 32))
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder, "c1.json")
        c1_json.write(c1, path)
        t = time.perf_counter()
        params = insecure_setup(partition_circuit(proof).r1cs, warn=False)
        setup_s = time.perf_counter() - t
        params_path = pathlib.Path(folder, f"porep-{proof.sector_size}.params")
        write_params(params_path, params)
        pathlib.Path(f"{params_path}.digest").write_text(file_digest(params_path))
        os.environ[ENVIRONMENT] = str(params_path)
        t = time.perf_counter()
        e2e.engine_proofs(c1, path, params.vk)
        engine_s = time.perf_counter() - t
        t = time.perf_counter()
        e2e.daemon_proofs(c1, path, params.vk, pathlib.Path(folder))
        daemon_s = time.perf_counter() - t
        record(out, {"row": "prove", "sector": name, "domain": params.summary()["domain"],
                     "insecure_setup_s": setup_s, "engine_proof_s": engine_s, "daemon_both_services_s": daemon_s,
                     "verified": True})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2KiB,8MiB", help="sectors whose partition is synthesized (sealed here)")
    ap.add_argument("--prove", default="", help="sectors proved through an engine and a daemon")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", default=str(HERE / "results" / "bench_circuit.json"))
    args = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    shapes(args.json)
    big = PartitionCircuit(values.layout_of(seal_proof("StackedDrg32GiBV1_1")))
    per_instance = gadgets(args.json, big, args.threads)
    rate = None
    for name in filter(None, args.sizes.split(",")):
        rate = synthesis(args.json, name, args.threads)
    measured = whole(args.json, big, args.threads)
    estimate(args.json, big, per_instance, args.threads, rate, measured)
    for name in filter(None, args.prove.split(",")):
        prove(args.json, name)


if __name__ == "__main__":
    main()
