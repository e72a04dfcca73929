# SPDX-License-Identifier: Apache-2.0
"""python -m porep_prover_porep seal: seal a sector of seeded random data here
(2 KiB, 8 MiB or 512 MiB) and write its commit-phase-1 output, rust-fil-proofs'
SealCommitPhase1Output JSON, for the "porep" provider to prove;
python -m porep_prover_porep synth-c1: write the commit-phase-1 output of a
sparse sector of any registered size (2 KiB to 64 GiB; a 32 GiB one in
seconds), an input for benchmarks and tests and never a sector: nothing is
sealed (porep_prover_porep.sparse says how it is laid out), yet it passes the
vanilla verifier and satisfies the partition circuit;
python -m porep_prover_porep circuit: a registered proof's partition circuit,
its shape counted (any size) or its R1CS written (.npz, for porep-prover
setup and plan); python -m porep_prover_porep post-vanilla: a WinningPoSt's
or WindowPoSt partition's vanilla proofs as the orchestrator sends them
(post.command); python -m porep_prover_porep snap-vanilla: a SnapDeals
update's partition proofs likewise (snap.command):

    python -m porep_prover_porep seal c1.json --proof StackedDrg2KiBV1_1 --miner-id 1000 --sector-number 7
    porep-prover bench batch -t porep --c1 c1.json -c 5 -j 3
    python -m porep_prover_porep synth-c1 c1-32g.json --proof StackedDrg32GiBV1_1 --miner-id 1000 --sector-number 7
    python -m porep_prover_porep circuit StackedDrg32GiBV1_1
    python -m porep_prover_porep circuit StackedDrg2KiBV1_1 --out c.npz && porep-prover setup c.npz -o p.params

Both writers take --porep-id and --api-version for a chain whose porep_id is
not its registered proof's; its jobs then give the same (payload keys
porep_id, api_version).
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time

from porep_prover.errors import InvalidInputError

from . import c1_json, pieces, seal, sparse, vanilla
from .post import command as post_command
from .snap import command as snap_command
from .payload import prover_id_of
from .registered import API_VERSIONS, porep_config, seal_proof


def _bytes32(text: str) -> bytes:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        value = b""
    if len(value) != 32:
        raise argparse.ArgumentTypeError("64 hex digits expected")
    return value


def _u64(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 1 << 64:
        raise argparse.ArgumentTypeError("an integer from 0 to 2^64 - 1 expected")
    return value


def _ticket_and_seed(args, origin: str) -> tuple[bytes, bytes]:
    """The ticket and seed given, else derived from origin (the inputs that make the sector)."""
    derive = hashlib.sha256(origin.encode()).digest
    ticket = args.ticket if args.ticket is not None else derive()[:31] + b"\0"
    return ticket, args.seed if args.seed is not None else hashlib.sha256(derive()).digest()


def _written(args, proof, c1, seconds: float) -> None:
    print(f"{args.out}: {proof.name}, miner {args.miner_id}, sector {args.sector_number}, "
          f"comm_d {c1.comm_d.hex()}, comm_r {c1.comm_r.hex()}, {len(c1.vanilla_proofs)} partition(s), "
          f"{seconds:.1f} s")


def cmd_seal(args) -> int:
    proof = seal_proof(args.proof)
    start = time.perf_counter()
    data = pieces.sector_data([pieces.random_piece(proof.sector_size, args.data_seed)], proof.sector_size)
    ticket, seed = _ticket_and_seed(args, f"{args.data_seed}:{args.sector_number}")
    c1 = seal.seal_sector(data, proof.name, prover_id_of(args.miner_id), args.sector_number, ticket, seed,
                          porep_config(proof, args.porep_id, args.api_version))
    c1_json.write(c1, args.out)
    _written(args, proof, c1, time.perf_counter() - start)
    return 0


def cmd_synth_c1(args) -> int:
    proof = seal_proof(args.proof)
    start = time.perf_counter()
    ticket, seed = _ticket_and_seed(args, f"sparse:{args.miner_id}:{args.sector_number}")
    config = porep_config(proof, args.porep_id, args.api_version)
    prover_id = prover_id_of(args.miner_id)
    c1 = sparse.sparse_c1(proof.name, prover_id, args.sector_number, ticket, seed, config, args.data_node)
    c1_json.write(c1, args.out)
    _written(args, proof, c1, time.perf_counter() - start)
    if args.check:
        start = time.perf_counter()
        vanilla.verify(c1_json.read(args.out), prover_id, args.sector_number, config)
        print(f"{args.out}: read back and verified, {time.perf_counter() - start:.1f} s")
    return 0


def _sector_arguments(p, proof: str, sizes: str) -> None:
    """The arguments both writers take."""
    p.add_argument("out", help="where the SealCommitPhase1Output JSON goes")
    p.add_argument("--proof", default=proof, help=f"registered seal proof ({sizes})")
    p.add_argument("--miner-id", type=_u64, default=1000, help="the miner's actor id (the prover id is made from it)")
    p.add_argument("--sector-number", type=_u64, default=1)
    p.add_argument("--ticket", type=_bytes32, default=None, help="64 hex digits (default: from the other inputs)")
    p.add_argument("--seed", type=_bytes32, default=None, help="the interactive seed, 64 hex digits (default: "
                   "from the other inputs)")
    p.add_argument("--porep-id", type=_bytes32, default=None,
                   help="64 hex digits (default: the registered proof's; another chain's, e.g. all zeros)")
    p.add_argument("--api-version", choices=API_VERSIONS, default=None,
                   help="the graph's API version (default: the registered proof's)")


def cmd_circuit(args) -> int:
    from .circuit.partition import PartitionCircuit, shape_counts
    from .circuit.values import layout_of
    layout = layout_of(seal_proof(args.proof))
    counts = shape_counts(layout)
    print(f"{args.proof}: {counts['constraints']:,} constraints ({counts['constraints'] + counts['inputs']:,} with "
          f"the prover's one a public input), {counts['inputs']} public inputs with the one, {counts['aux']:,} aux")
    if args.out:
        PartitionCircuit(layout).r1cs.save(args.out)
        print(f"{args.out}: the R1CS")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m porep_prover_porep", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("seal", help="seal a sector of random data and write its commit-phase-1 output")
    _sector_arguments(p, "StackedDrg2KiBV1_1", "2 KiB, 8 MiB, 512 MiB")
    p.add_argument("--data-seed", type=int, default=0, help="seed of the sector's random data")
    p.set_defaults(func=cmd_seal)
    p = sub.add_parser("synth-c1", help="write the commit-phase-1 output of a sparse sector of any size: an input "
                       "for benchmarks and tests, never a sector (nothing is sealed)",
                       description="An input for benchmarks and tests, never a sector: the commit-phase-1 "
                       "output of a sparse sector (porep_prover_porep.sparse), whose every node off the "
                       "challenged ones holds one column and one data value, whose challenged nodes are "
                       "labelled as SDR labels them, its trees opened where the challenges ask. It passes the "
                       "vanilla verifier and satisfies the circuit; nothing was sealed, no storage is proved.")
    _sector_arguments(p, "StackedDrg32GiBV1_1", "2 KiB to 64 GiB")
    p.add_argument("--data-node", type=_bytes32, default=bytes(32),
                   help="every data node, 64 hex digits, its last byte below 0x40 (default: zeros, a CC sector)")
    p.add_argument("--check", action="store_true", help="read the file back and verify it (vanilla.verify)")
    p.set_defaults(func=cmd_synth_c1)
    p = sub.add_parser("circuit", help="a partition circuit's shape, and its R1CS written where --out says")
    p.add_argument("proof", help="registered seal proof, e.g. StackedDrg32GiBV1_1")
    p.add_argument("--out", help="write the R1CS (.npz) here (sizes up to 512 MiB fit a small host)")
    p.set_defaults(func=cmd_circuit)
    post_command.register(sub, _bytes32, _u64)
    snap_command.register(sub, _u64)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:          # the output's folder missing, a disk full
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
