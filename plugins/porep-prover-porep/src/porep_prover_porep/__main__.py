# SPDX-License-Identifier: Apache-2.0
"""python -m porep_prover_porep seal: seal a sector of seeded random data here
(2 KiB, 8 MiB or 512 MiB) and write its commit-phase-1 output, rust-fil-proofs'
SealCommitPhase1Output JSON, for the "porep" provider to prove;
python -m porep_prover_porep circuit: a registered proof's partition circuit,
its shape counted (any size) or its R1CS written (.npz, for porep-prover
setup and plan):

    python -m porep_prover_porep seal c1.json --proof StackedDrg2KiBV1_1 --miner-id 1000 --sector-number 7
    porep-prover bench batch -t porep --c1 c1.json -c 5 -j 3
    python -m porep_prover_porep circuit StackedDrg32GiBV1_1
    python -m porep_prover_porep circuit StackedDrg2KiBV1_1 --out c.npz && porep-prover setup c.npz -o p.params
"""
from __future__ import annotations

import argparse
import hashlib
import sys

from porep_prover.errors import InvalidInputError

from . import c1_json, pieces, seal
from .payload import prover_id_of
from .registered import seal_proof


def _bytes32(text: str) -> bytes:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        value = b""
    if len(value) != 32:
        raise argparse.ArgumentTypeError("64 hex digits expected")
    return value


def cmd_seal(args) -> int:
    proof = seal_proof(args.proof)
    data = pieces.sector_data([pieces.random_piece(proof.sector_size, args.data_seed)], proof.sector_size)
    derive = hashlib.sha256(f"{args.data_seed}:{args.sector_number}".encode()).digest
    ticket = args.ticket if args.ticket is not None else derive()[:31] + b"\0"
    seed = args.seed if args.seed is not None else hashlib.sha256(derive()).digest()
    c1 = seal.seal_sector(data, proof.name, prover_id_of(args.miner_id), args.sector_number, ticket, seed)
    c1_json.write(c1, args.out)
    print(f"{args.out}: {proof.name}, miner {args.miner_id}, sector {args.sector_number}, "
          f"comm_d {c1.comm_d.hex()}, comm_r {c1.comm_r.hex()}, {len(c1.vanilla_proofs)} partition(s)")
    return 0


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
    p.add_argument("out", help="where the SealCommitPhase1Output JSON goes")
    p.add_argument("--proof", default="StackedDrg2KiBV1_1", help="registered seal proof (2 KiB, 8 MiB, 512 MiB)")
    p.add_argument("--miner-id", type=int, default=1000, help="the miner's actor id (the prover id is made from it)")
    p.add_argument("--sector-number", type=int, default=1)
    p.add_argument("--data-seed", type=int, default=0, help="seed of the sector's random data")
    p.add_argument("--ticket", type=_bytes32, default=None, help="64 hex digits (default: from the seeds)")
    p.add_argument("--seed", type=_bytes32, default=None, help="the interactive seed, 64 hex digits")
    p.set_defaults(func=cmd_seal)
    p = sub.add_parser("circuit", help="a partition circuit's shape, and its R1CS written where --out says")
    p.add_argument("proof", help="registered seal proof, e.g. StackedDrg32GiBV1_1")
    p.add_argument("--out", help="write the R1CS (.npz) here (sizes up to 512 MiB fit a small host)")
    p.set_defaults(func=cmd_circuit)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except InvalidInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
