# SPDX-License-Identifier: Apache-2.0
"""python -m porep_prover_porep post-vanilla: write a PoSt's vanilla proofs
as the orchestrator sends them (bincode, a FallbackPoStSectorProof a
sector: post.payload's file), of sectors sealed here (--sealed: 2 KiB, 8 MiB)
or sparse replicas of any size (post.vanilla.SparseReplica: benchmark and
test inputs, never sectors), and print the payload and the bench command
that proves them:

    python -m porep_prover_porep post-vanilla w.vanilla --proof StackedDrgWinning2KiBV1 --sealed
    porep-prover bench batch -t winning-post --payload 'vanilla_proofs="w.vanilla"' \\
        --payload 'randomness="..."' --payload registered_proof=0 -c 5 -j 2
"""
from __future__ import annotations

import hashlib
import secrets
import time

from .. import pieces, seal
from ..fr32 import R
from ..payload import prover_id_of
from ..registered import REGISTERED
from . import bincode
from .registered import post_proof
from .vanilla import SparseReplica, sector_proof


def _element(seed: bytes) -> bytes:
    return (int.from_bytes(hashlib.sha256(seed).digest(), "little") % R).to_bytes(32, "little")


def _replica(proof, sealed: bool, miner_id: int, sector: int):
    if not sealed:
        return SparseReplica(proof, _element(b"post sparse leaf"), _element(b"post sparse comm_c"))
    seal_name = next(p.name for p in REGISTERED.values() if p.sector_size == proof.sector_size and p.api_v11)
    data = pieces.sector_data([pieces.random_piece(proof.sector_size, sector)], proof.sector_size)
    return seal.precommit2(seal.precommit1(seal_name, data, prover_id_of(miner_id), sector, bytes(32)))


def cmd_post_vanilla(args) -> int:
    proof = post_proof(int(args.proof) if args.proof.isdigit() else args.proof)
    start = time.perf_counter()
    randomness = args.randomness
    if randomness is None:
        r = bytearray(secrets.token_bytes(32))
        r[31] &= 0x3F
        randomness = bytes(r)
    count = 1 if proof.kind == "winning" else (args.sectors or proof.sector_count)
    items = []
    for slot in range(count):
        sector = args.first_sector + slot
        replica = _replica(proof, args.sealed, args.miner_id, sector)
        items.append(bincode.write(sector_proof(proof, replica, sector, randomness, args.partition, slot)))
    with open(args.out, "wb") as f:
        f.write(bincode.write_list(items))
    kind = f"{proof.kind}-post"
    print(f"{args.out}: {proof.name}, {count} sector(s) {'sealed here' if args.sealed else 'sparse'}, "
          f"partition {args.partition}, {sum(map(len, items)):,} bytes, {time.perf_counter() - start:.1f} s")
    print(f"payload: vanilla_proofs={args.out} randomness={randomness.hex()} registered_proof={proof.number} "
          f"partition_index={args.partition}")
    print(f"porep-prover bench batch -t {kind} --payload 'vanilla_proofs=\"{args.out}\"' --payload "
          f"'randomness=\"{randomness.hex()}\"' --payload registered_proof={proof.number} --payload "
          f"partition_index={args.partition} -c 5 -j 2")
    return 0


def register(sub, bytes32, u64) -> None:
    """The post-vanilla command on the plugin's command line (sub: its subparsers)."""
    p = sub.add_parser("post-vanilla", help="write a WinningPoSt's or WindowPoSt partition's vanilla proofs (bincode, "
                       "as the orchestrator sends them) of sectors sealed here or sparse replicas")
    p.add_argument("out", help="where the vanilla proofs go")
    p.add_argument("--proof", default="StackedDrgWinning2KiBV1", help="registered PoSt proof (name or number)")
    p.add_argument("--sealed", action="store_true", help="seal each sector here (2 KiB, 8 MiB; default: sparse "
                   "replicas of any size, benchmark inputs)")
    p.add_argument("--sectors", type=int, default=None, help="a WindowPoSt partition's sectors (default: full)")
    p.add_argument("--partition", type=int, default=0, help="the WindowPoSt partition's index")
    p.add_argument("--first-sector", type=u64, default=1, help="the first sector's number")
    p.add_argument("--miner-id", type=u64, default=1000)
    p.add_argument("--randomness", type=bytes32, default=None, help="64 hex digits, a canonical Fr (default: "
                   "random, its top two bits cleared)")
    p.set_defaults(func=cmd_post_vanilla)
