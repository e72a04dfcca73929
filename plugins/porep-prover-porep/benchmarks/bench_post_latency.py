#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A WinningPoSt's latency while PoRep partitions fill the engine.

An engine (--devices, the CPU by default; the priority scheduler, one
synthesis worker) proves a WinningPoSt of --size (2KiB: sealed here; any
other registered size: a sparse replica and a sparse sector's
commit-phase-1 output, benchmark inputs) alone first (its own proving time: submitted to proved)
and a PoRep partition of the same size (its kernel region, the partition's "region"),
then is filled with --porep-jobs PoRep jobs (NORMAL, 2); once a region runs
and the ready queue is full, a WinningPoSt is submitted with no priority (its
kind's: CRITICAL, 4) and its latency measured, with where it went
(breakdown: its synthesis, the PoRep region under way at its submission,
when its own region started, the PoRep regions and syntheses begun before
it) and the host's load average before and after the row. The bound the
engine is held to: its own proving time plus one partition's region. Sectors are sealed here; parameters are the cache's
INSECURE ones (made once: the 2 KiB PoRep's in about 80 s on 2 cores).
Each --settings row is run on a fresh engine: "default" (the engine's
defaults) and "tight" (one device worker, a ready queue of one).

Usage:
    python plugins/porep-prover-porep/benchmarks/bench_post_latency.py [--porep-jobs 5]
        [--settings default,tight] [--size 2KiB] [--devices cpu] [--json out.json]
    python plugins/porep-prover-porep/benchmarks/bench_post_latency.py --size 32GiB --devices gpu
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import time

import porep_prover as pp
from porep_prover.engine import Job
from porep_prover.engine.timeline import kernel_regions
from porep_prover.groth16 import verify
from porep_prover.hooks import collect_registry, plugin_manager
from porep_prover_porep import pieces, seal, sparse
from porep_prover_porep.fr32 import R
from porep_prover_porep.payload import prover_id_of
from porep_prover_porep.post import bincode, vanilla
from porep_prover_porep.post.registered import post_proof

SETTINGS = {"default": [], "tight": ["engine.gpu_workers_per_device=1", "engine.synthesis_lookahead=1"]}
MINER, SECTOR = 1000, 7


def inputs(size: str = "2KiB"):
    """A sector's commit-phase-1 output and a WinningPoSt payload of it: a 2 KiB
    sector sealed here, else a sparse sector's and replica's of size."""
    if size != "2KiB":
        return sparse_inputs(size)
    winning_proof = post_proof("StackedDrgWinning2KiBV1")
    data = pieces.sector_data([pieces.random_piece(2048, secrets.randbelow(1 << 32))], 2048)
    ticket, seed = secrets.token_bytes(32), secrets.token_bytes(32)
    sealed = seal.precommit2(seal.precommit1("StackedDrg2KiBV1_1", data, prover_id_of(MINER), SECTOR, ticket))
    c1 = seal.commit1(sealed, ticket, seed)
    r = bytearray(secrets.token_bytes(32))
    r[31] &= 0x3F
    proof = vanilla.sector_proof(winning_proof, sealed, SECTOR, bytes(r))
    winning = {"vanilla_proofs": bincode.write_list([bincode.write(proof)]), "randomness": bytes(r).hex(),
               "registered_proof": winning_proof.number}
    return {"c1": c1, "miner_id": MINER, "sector_id": SECTOR}, winning


def sparse_inputs(size: str):
    """inputs() of a sparse sector of size (e.g. 32GiB): benchmark inputs, never a sector."""
    winning_proof = post_proof(f"StackedDrgWinning{size}V1")
    ticket, seed = secrets.token_bytes(32), secrets.token_bytes(32)
    c1 = sparse.sparse_c1(f"StackedDrg{size}V1_1", prover_id_of(MINER), SECTOR, ticket, seed)
    leaf, comm_c = ((secrets.randbelow(R)).to_bytes(32, "little") for _ in range(2))
    r = bytearray(secrets.token_bytes(32))
    r[31] &= 0x3F
    proof = vanilla.sector_proof(winning_proof, vanilla.SparseReplica(winning_proof, leaf, comm_c), SECTOR, bytes(r))
    winning = {"vanilla_proofs": bincode.write_list([bincode.write(proof)]), "randomness": bytes(r).hex(),
               "registered_proof": winning_proof.number}
    return {"c1": c1, "miner_id": MINER, "sector_id": SECTOR}, winning


def events_of(engine, job_id: str, name: str) -> list[float]:
    return [e.t for e in engine.timeline.events() if e.job == job_id and e.event == name]


def run(name: str, porep: dict, winning: dict, porep_jobs: int, devices: str = "cpu") -> dict:
    pm = plugin_manager()
    config = pp.load_config(overrides=[f"engine.devices={devices}", "engine.partition_workers=1",
                                       "engine.scheduler=priority", *SETTINGS[name]])
    with pp.Engine(config, registry=collect_registry(pm), plugins=pm) as engine:
        engine.prove(Job("winning-post", 1, winning))             # its parameters loaded
        alone = engine.prove(Job("winning-post", 1, winning))
        own = alone.timings[0].total
        region = engine.prove(Job("porep", 1, porep, priority=2)).timings[0].gpu_compute
        handles = [engine.submit(Job("porep", 1, porep, priority=2)) for _ in range(porep_jobs)]
        lookahead = engine.settings.synthesis_lookahead
        deadline = time.monotonic() + 600
        while engine.status()["partitions_ready"] < lookahead and time.monotonic() < deadline:
            time.sleep(0.05)
        full_at = time.time()
        job = Job("winning-post", 1, winning)
        submitted = time.time()
        result = engine.submit(job).result(timeout=3600)
        latency = time.time() - submitted
        for h in handles:
            h.result(timeout=3600)
        vk = engine.registry.provider("winning-post").load_srs(Job("winning-post", 1, {"sector_size": 2048})).vk
        assert result.ok and verify(vk, result.public_inputs[0], result.proofs[0])
        return {"settings": name, "priority": job.priority, "own_s": round(own, 3), "region_s": round(region, 3),
                "bound_s": round(own + region, 3), "latency_s": round(latency, 3),
                **breakdown(engine, job.id, [h.job.id for h in handles], submitted),
                "ready_queue_full_s_before": round(submitted - full_at, 3), "within_bound": latency <= own + region}


def breakdown(engine, urgent: str, poreps: list[str], submitted: float) -> dict:
    """Where the WinningPoSt's latency went, from the timeline: its synthesis
    (when it started, how long, on which worker), the PoRep region under way
    at its submission (its length under load, and what was left of it), when
    its own region started, and how many PoRep regions and syntheses began
    between its submission and its region's start."""
    events = engine.timeline.events()
    mine = {e.event: e for e in events if e.job == urgent}
    own_gpu = mine["GPU_START"].t
    regions, _ = kernel_regions([e for e in events if e.job in poreps])
    under_way = [(s.t, e.t) for s, e in regions if s.t <= submitted < e.t]
    return {"synthesis_started_after_s": round(mine["SYNTH_START"].t - submitted, 3),
            "synthesis_s": round(mine["SYNTH_END"].t - mine["SYNTH_START"].t, 3),
            "synthesized_by": mine["SYNTH_START"].worker,
            "region_under_way_s": round(under_way[0][1] - under_way[0][0], 3) if under_way else 0.0,
            "region_under_way_left_s": round(under_way[0][1] - submitted, 3) if under_way else 0.0,
            "its_region_started_after_s": round(own_gpu - submitted, 3),
            "porep_regions_before_its_own": sum(1 for s, _ in regions if submitted < s.t < own_gpu),
            "porep_syntheses_begun_before_its_region": sum(
                1 for e in events if e.job in poreps and e.event == "SYNTH_START" and submitted < e.t < own_gpu)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--porep-jobs", type=int, default=5)
    parser.add_argument("--settings", default="default,tight")
    parser.add_argument("--size", default="2KiB", help="the sectors' size as registered proofs name it: 2KiB, 32GiB")
    parser.add_argument("--devices", default="cpu", help="engine.devices: cpu, gpu or gpu:N")
    parser.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results", "bench_post_latency.json"))
    args = parser.parse_args()
    porep, winning = inputs(args.size)
    rows = []
    for name in args.settings.split(","):
        load = os.getloadavg()[0]
        row = {**run(name, porep, winning, args.porep_jobs, args.devices), "load_1min": [round(load, 2),
                                                                            round(os.getloadavg()[0], 2)]}
        rows.append(row)
        print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d %H:%M"), "host": platform.node(), "cpus": os.cpu_count(),
                       "porep_jobs": args.porep_jobs, "size": args.size, "devices": args.devices, "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
