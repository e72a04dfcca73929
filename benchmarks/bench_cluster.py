#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A job's partitions over a Ray cluster of one-core nodes (the plugin
porep-prover-ray, engine.cluster = "ray") against the engine in this
process, on the CPU backend: the daemon's demo kind (the PoRep-like
circuit of --constraints constraints, its INSECURE test parameters made
once here, before any timing, and loaded by each node from the same file).

  local        the jobs in this process, on an engine of the node engines'
               settings (one device worker, one synthesis worker, one thread)
  N nodes      a local cluster (ray.cluster_utils.Cluster) of N nodes of one
               CPU each (--nodes, e.g. 1,2), an engine per node, the same jobs
               through an Engine with engine.cluster = "ray"; a warm-up job
               first loads the parameters on every node

Each job has --partitions partitions; --jobs jobs one after another on each
path (s a job: the median), every proof verified on its node and again
here; --rounds rounds of every path, their order reversed every other
round (the machine is shared), the jobs pooled. Scaling: the 1-node time
over the N-node time. Dispatch overhead a partition, two ways: measured by
the head for each partition (its round trip less the time inside the node
engine's prove call: the cluster status's dispatch_ms, each node's mean),
and (1 node - local) / partitions, where both prove on one core;
--tiny-constraints repeats it all with a circuit so small that the dispatch
is most of a partition's time. The head's load: this process's CPU time
during a job on the cluster (the engine's job table, Ray's driver, the
dispatcher's threads; the nodes prove), over its partitions.

Nothing may listen beyond loopback: the script runs itself again inside a
private network namespace (`unshare -n`, loopback only; --no-netns where it
runs in one already). The cluster's nodes share this machine's cores.

Usage:
    python3 benchmarks/bench_cluster.py [--constraints 4000] [--partitions 8] [--jobs 3] [--rounds 2] [--nodes 1,2]
        [--tiny-constraints 16] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time

from porep_prover.bench.machine import cpu_busy

NETNS_ENV = "POREP_PROVER_NETNS"
BASE = {"engine.devices": ["cpu"], "engine.threads": 1, "engine.synthesis_threads": 1,
        "engine.partition_workers": 1, "engine.gpu_workers_per_device": 1, "logging.level": "WARNING"}


def timed_jobs(engine, constraints: int, partitions: int, jobs: int, vk, cpu: list | None = None) -> list[float]:
    """Seconds of each job, one after another; every proof checked against vk and its witness's inputs
    (after its job's timing). cpu: gets this process's CPU seconds of each job."""
    import porep_prover as pp
    from porep_prover.circuits import porep_like
    from porep_prover.daemon.demo import partition_seed
    out = []
    for _ in range(jobs):
        seed = random.randrange(1 << 40)
        job = pp.Job("demo", partitions, {"constraints": constraints, "seed": seed})
        start, used = time.perf_counter(), time.process_time()
        result = engine.prove(job, timeout=3600)
        out.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(time.process_time() - used)
        for i, (proof, public) in enumerate(zip(result.proofs, result.public_inputs)):
            assert public == porep_like(constraints, seed=partition_seed(seed, i))[2], f"partition {i}: inputs"
            assert pp.verify(vk, public, proof), f"partition {i} does not verify"
    return out


def on_cluster(nodes: int, provider, constraints: int, partitions: int, jobs: int, vk) -> dict:
    import ray
    from ray.cluster_utils import Cluster

    import porep_prover as pp
    from porep_prover.hooks import collect_registry, plugin_manager
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(num_cpus=1)
        ray.init(address=cluster.address, log_to_driver=False)
        pm = plugin_manager()
        registry = collect_registry(pm)
        registry.add_provider(provider)
        config = pp.load_config(overrides={**BASE, "engine.cluster": "ray", "ray.address": cluster.address,
                                           "ray.poll_seconds": 0.2})
        start = time.perf_counter()
        with pp.Engine(config, registry=registry, plugins=pm) as engine:
            deadline = time.monotonic() + 300
            while engine.status()["cluster"]["nodes_ready"] < nodes:
                assert time.monotonic() < deadline, "the node engines did not start in 300 s"
                time.sleep(0.05)
            ready = time.perf_counter() - start
            engine.preload(pp.Job("demo", 1, {"constraints": constraints, "seed": 0}))   # on every node
            timed_jobs(engine, constraints, nodes, 1, vk)          # warm-up
            cpu = []
            seconds = timed_jobs(engine, constraints, partitions, jobs, vk, cpu)
            report = engine.status()["cluster"]["nodes"]
        return {"nodes": nodes, "engines_ready_s": ready, "job_s": seconds, "head_cpu_s": cpu,
                "partitions_done_per_node": [n["partitions_done"] for n in report],
                "dispatch_ms_per_node": [n["dispatch_ms"] for n in report]}
    finally:
        ray.shutdown()
        cluster.shutdown()


def local(provider, constraints: int, partitions: int, jobs: int, vk) -> dict:
    import porep_prover as pp
    from porep_prover.engine import inline
    registry = inline.default_registry()
    registry.add_provider(provider)
    with pp.Engine(pp.load_config(overrides=BASE), registry=registry) as engine:
        timed_jobs(engine, constraints, 1, 1, vk)
        return {"nodes": 0, "job_s": timed_jobs(engine, constraints, partitions, jobs, vk)}


def measure(constraints: int, args, folder: str) -> dict:
    from porep_prover.daemon.demo import DemoProvider
    from porep_prover.engine import Job
    provider = DemoProvider(os.path.join(folder, "demo"))
    vk = provider.load_srs(Job("demo", 1, {"constraints": constraints, "seed": 0})).vk    # made now, once
    runs = [{"nodes": 0, "job_s": []}] + [{"nodes": n, "job_s": [], "dispatch_ms": [], "head_cpu_s": []}
                                          for n in args.nodes]
    for r in range(args.rounds):          # the paths in turn, the order reversed every other round
        order = runs if r % 2 == 0 else runs[::-1]
        for run in order:
            if not run["nodes"]:
                run["job_s"] += local(provider, constraints, args.partitions, args.jobs, vk)["job_s"]
                continue
            one_run = on_cluster(run["nodes"], provider, constraints, args.partitions, args.jobs, vk)
            run["job_s"] += one_run["job_s"]
            run["dispatch_ms"] += one_run["dispatch_ms_per_node"]
            run["head_cpu_s"] += one_run["head_cpu_s"]
            run["engines_ready_s"] = one_run["engines_ready_s"]
            run["partitions_done_per_node"] = one_run["partitions_done_per_node"]
    base, one = statistics.median(runs[0]["job_s"]), statistics.median(runs[1]["job_s"])
    print(f"\n## {constraints} constraints, {args.partitions} partitions a job, median of {args.jobs} jobs x "
          f"{args.rounds} rounds")
    print("| path | s a job | s a partition | partitions per node (last round) | vs 1 node | dispatch ms a partition "
          "(each node, each round) | head CPU ms a partition | engines ready (s) |")
    print("| --- | ---: | ---: | --- | ---: | --- | ---: | ---: |")
    for run in runs:
        med = statistics.median(run["job_s"])
        run["median_s"] = med
        name = "local (this process)" if not run["nodes"] else f"{run['nodes']} node{'s' if run['nodes'] > 1 else ''}"
        speed = f"{one / med:.2f}x" if run["nodes"] else ""
        dispatch = ", ".join(f"{d:.1f}" for d in run.get("dispatch_ms", []) if d is not None)
        head = f"{statistics.median(run['head_cpu_s']) / args.partitions * 1e3:.1f}" if run.get("head_cpu_s") else ""
        print(f"| {name} | {med:.3f} | {med / args.partitions * 1e3:.1f} ms | "
              f"{run.get('partitions_done_per_node', '')} | {speed} | {dispatch} | {head} | "
              f"{run.get('engines_ready_s', 0):.1f} |")
    overhead = (one - base) / args.partitions
    print(f"dispatch overhead a partition (1 node - local) / partitions: {overhead * 1e3:.1f} ms")
    return {"constraints": constraints, "runs": runs, "overhead_per_partition_s": overhead}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--constraints", type=int, default=4000, help="the demo circuit's constraints")
    ap.add_argument("--tiny-constraints", type=int, default=16, help="a second, tiny circuit (0: none)")
    ap.add_argument("--partitions", type=int, default=8, help="partitions a job")
    ap.add_argument("--jobs", type=int, default=3, help="jobs on each path, one after another")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of every path, alternating their order")
    ap.add_argument("--nodes", default="1,2", help="cluster sizes, the first 1")
    ap.add_argument("--no-netns", action="store_true", help="run here (already in a private network namespace)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    args.nodes = [int(n) for n in args.nodes.split(",")]
    if args.nodes[0] != 1 or min(args.nodes) < 1 or min(args.partitions, args.jobs, args.rounds) < 1:
        ap.error("--nodes starts with 1; --partitions, --jobs and --rounds at least 1")
    if not args.no_netns and os.environ.get(NETNS_ENV) != "1":
        env = dict(os.environ, **{NETNS_ENV: "1", "RAY_USAGE_STATS_ENABLED": "0"})
        command = 'ip link set lo up && exec "$0" "$@"'
        return subprocess.call(["unshare", "-n", "sh", "-c", command, sys.executable, *sys.argv], env=env)
    import porep_prover as pp
    busy = cpu_busy()
    print(f"# porep_prover {pp.__version__} cluster benchmark, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}")
    print(f"# other load before: {busy:.2f} CPUs", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as folder:
        results = [measure(args.constraints, args, folder)]
        if args.tiny_constraints:
            results.append(measure(args.tiny_constraints, args, folder))
    after = cpu_busy()
    print(f"\n# other load after: {after:.2f} CPUs")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_before": busy, "load_after": after, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
