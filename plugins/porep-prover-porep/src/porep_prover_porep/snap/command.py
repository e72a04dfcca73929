# SPDX-License-Identifier: Apache-2.0
"""python -m porep_prover_porep snap-vanilla: write a SnapDeals update's
partition proofs as the orchestrator sends them (bincode, a PartitionProof a
partition: snap.payload's file), of a sector sealed here and updated with
new random data (--sealed: 2 KiB, 8 MiB) or of a sparse replica of any size
updated with zeros (snap.update.sparse_update: benchmark and test inputs,
never sectors), and print the payload and the bench command that proves them:

    python -m porep_prover_porep snap-vanilla u.vanilla --proof StackedDrg2KiBV1 --sealed
    porep-prover bench batch -t snap-update --payload 'vanilla_proofs="u.vanilla"' --payload registered_proof=0 \\
        --payload 'comm_r_old="..."' --payload 'comm_d_new="..."' --payload 'comm_r_new="..."' -c 3 -j 1
"""
from __future__ import annotations

import hashlib
import time

from .. import pieces, seal
from ..fr32 import R
from ..payload import prover_id_of
from ..post.bincode import write_list
from ..registered import REGISTERED
from . import bincode
from .registered import update_proof
from .update import sparse_update, update


def _element(seed: bytes) -> bytes:
    return (int.from_bytes(hashlib.sha256(seed).digest(), "little") % R).to_bytes(32, "little")


def cmd_snap_vanilla(args) -> int:
    proof = update_proof(int(args.proof) if args.proof.isdigit() else args.proof)
    start = time.perf_counter()
    if args.sealed:
        seal_name = next(p.name for p in REGISTERED.values() if p.sector_size == proof.sector_size and p.api_v11)
        data = pieces.sector_data([pieces.random_piece(proof.sector_size, args.sector_number)], proof.sector_size)
        sealed = seal.precommit2(seal.precommit1(seal_name, data, prover_id_of(args.miner_id), args.sector_number,
                                                 bytes(32)))
        new = pieces.sector_data([pieces.random_piece(proof.sector_size, args.sector_number + 1)], proof.sector_size)
        updated = update(sealed, new, args.h)
    else:
        updated = sparse_update(proof, _element(b"snap sparse leaf"), _element(b"snap sparse comm_c"), args.h)
    items = [bincode.write(p) for p in updated.partition_proofs()]
    with open(args.out, "wb") as f:
        f.write(write_list(items))
    comms = {"comm_r_old": updated.comm_r_old.hex(), "comm_d_new": updated.comm_d_new.hex(),
             "comm_r_new": updated.comm_r_new.hex()}
    what = "a sector sealed here" if args.sealed else "a sparse replica"
    print(f"{args.out}: {proof.name}, {what}, h {updated.h}, {len(items)} partition(s), {sum(map(len, items)):,} "
          f"bytes, {time.perf_counter() - start:.1f} s")
    print(f"payload: vanilla_proofs={args.out} registered_proof={proof.number} h={updated.h} "
          + " ".join(f"{k}={v}" for k, v in comms.items()))
    print(f"porep-prover bench batch -t snap-update --payload 'vanilla_proofs=\"{args.out}\"' --payload "
          f"registered_proof={proof.number} --payload h={updated.h} "
          + " ".join(f"--payload '{k}=\"{v}\"'" for k, v in comms.items()) + " -c 3 -j 1")
    return 0


def register(sub, u64) -> None:
    """The snap-vanilla command on the plugin's command line (sub: its subparsers)."""
    p = sub.add_parser("snap-vanilla", help="write a SnapDeals update's partition proofs (bincode, as the "
                       "orchestrator sends them) of a sector sealed here or a sparse replica")
    p.add_argument("out", help="where the partition proofs go")
    p.add_argument("--proof", default="StackedDrg2KiBV1", help="registered update proof (name or number)")
    p.add_argument("--sealed", action="store_true", help="seal the sector here and update it with random data "
                   "(2 KiB, 8 MiB; default: a sparse replica of any size updated with zeros, a benchmark input)")
    p.add_argument("--h", type=int, default=None, help="the update's h (default: the proof's hs[3])")
    p.add_argument("--sector-number", type=u64, default=1)
    p.add_argument("--miner-id", type=u64, default=1000)
    p.set_defaults(func=cmd_snap_vanilla)
