# SPDX-License-Identifier: Apache-2.0
"""`porep-prover cache`: the parameter files job kinds made (groth16.ParamsCache),
least recently used first, and `porep-prover cache prune` to remove them
down to a size. Which folder: --dir, else --daemon's (<state folder>/params-cache
of a daemon with the default daemon.state_dir), else POREP_PROVER_PARAMS_CACHE,
else ~/.cache/porep-prover/params."""
from __future__ import annotations

import json
import os
import time

from ..config import MAX_CACHE_GIB, default_state_dir
from ..errors import InvalidInputError
from ..memory.sizes import GIB


def _cache(args):
    from ..groth16.params_cache import ParamsCache
    folder = args.dir or (os.path.join(default_state_dir(), "params-cache") if args.daemon else None)
    return ParamsCache(folder)


def cmd_cache(args) -> int:
    from .status_view import size          # rich, loaded when the command runs
    cache = _cache(args)
    entries = cache.entries()
    total = sum(e.bytes for e in entries)
    if args.json:
        print(json.dumps({"folder": cache.folder, "bound_bytes": cache.max_bytes, "total_bytes": total,
                          "files": [{"name": e.name, "bytes": e.bytes, "last_used": e.last_used}
                                    for e in entries]}, indent=1))
        return 0
    bound = size(cache.max_bytes) if cache.max_bytes else "no bound"
    print(f"{cache.folder}: {len(entries)} files, {size(total)} of {bound} "
          "(POREP_PROVER_PARAMS_CACHE_GIB; least recently used first)")
    width = max((len(e.name) for e in entries), default=0)
    for e in entries:
        used = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(e.last_used))
        print(f"  {e.name:<{width}}  {size(e.bytes):>12}  last used {used}")
    return 0


def cmd_prune(args) -> int:
    from .status_view import size
    cache = _cache(args)
    if args.all:
        limit = 0
    elif args.max_gib is not None:
        limit = int(args.max_gib * GIB)
    elif cache.max_bytes:
        limit = cache.max_bytes
    else:
        raise InvalidInputError("the cache has no bound (POREP_PROVER_PARAMS_CACHE_GIB=0): give --max-gib or --all")
    removed = cache.prune(limit)
    for e in removed:
        print(f"removed {e.name} ({size(e.bytes)})")
    print(f"{cache.folder}: {len(removed)} files removed, {size(sum(e.bytes for e in removed))} freed, "
          f"{size(cache.total_bytes())} left")
    return 0


def _max_gib(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= MAX_CACHE_GIB:
        raise InvalidInputError(f"--max-gib must be a number of GiB from 0 to {MAX_CACHE_GIB}, got {text!r}")
    return value


def register(sub, common) -> None:
    p = sub.add_parser("cache", help="parameter files the job kinds made, least recently used first; prune them")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--dir", help="the cache folder (default: $POREP_PROVER_PARAMS_CACHE or "
                                     "~/.cache/porep-prover/params)")
    where.add_argument("--daemon", action="store_true",
                       help="the cache of a daemon with the default state folder (<state folder>/params-cache)")
    p.add_argument("--json", action="store_true", help="the listing as JSON")
    p.set_defaults(func=cmd_cache)
    actions = p.add_subparsers(dest="action")
    pr = actions.add_parser("prune", help="remove the least recently used files down to a size")
    amount = pr.add_mutually_exclusive_group()
    amount.add_argument("--max-gib", type=_max_gib, help="keep at most this many GiB (default: the cache's bound)")
    amount.add_argument("--all", action="store_true", help="remove every file of the cache")
    pr.set_defaults(func=cmd_prune)
