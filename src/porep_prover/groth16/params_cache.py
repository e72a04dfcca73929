# SPDX-License-Identifier: Apache-2.0
"""The parameter files job kinds make for themselves (INSECURE test
parameters, mapped copies), kept in one folder under a size bound.

A kind that makes a parameter set writes it once and reads it again after a
restart; a kind whose parameters depend on the payload (the demo's
constraint count, porep-shaped's scale) would otherwise fill the disk, a
new file per value. Here every file counts against one bound
(POREP_PROVER_PARAMS_CACHE_GIB): after a file is made, the least recently
used others are removed until the folder fits, the new one always kept.
Use is the file's modification time, touched on every use, so the order
survives a restart. Only names of the cache's form are ever removed
(NAME, ending .params or .pmap); temporaries of writers (atomic_write's
PATH.tmpPID) and anything else in the folder are left alone and not counted.
Removing a file that a process has mapped is safe: its pages stay until unmapped.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import re
from typing import Container

from ..config import params_cache_bytes, params_cache_dir
from ..errors import InvalidInputError
from ..memory.sizes import GIB

LOG = logging.getLogger("porep_prover.params_cache")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}")
SUFFIXES = (".params", ".pmap")


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """A file of the cache: its name, size in bytes and last use (seconds since the epoch)."""
    name: str
    bytes: int
    last_used: float


class ParamsCache:
    """The files of folder (default params_cache_dir()), at most max_bytes
    together (default params_cache_bytes(); 0: no bound)."""

    def __init__(self, folder: str | os.PathLike[str] | None = None, max_bytes: int | None = None) -> None:
        self.folder = os.path.abspath(os.fspath(folder) if folder is not None else params_cache_dir())
        self.max_bytes = params_cache_bytes() if max_bytes is None else max_bytes
        if isinstance(self.max_bytes, bool) or not isinstance(self.max_bytes, int) or self.max_bytes < 0:
            raise InvalidInputError(f"a parameter cache's bound must be bytes, 0 or more, got {max_bytes!r}")

    def path(self, name: str) -> str:
        """Where the file `name` is kept; InvalidInputError for a name not of the cache's form."""
        if not isinstance(name, str) or not NAME.fullmatch(name) or not name.endswith(SUFFIXES):
            raise InvalidInputError(f"a cached parameter file's name is letters, digits and ._+- ending "
                                    f"{' or '.join(SUFFIXES)} (at most 200), got {name!r}")
        return os.path.join(self.folder, name)

    def use(self, name: str) -> str | None:
        """The path of `name`, marked used now; None when the cache has no such file."""
        path = self.path(name)
        try:
            os.utime(path)
        except FileNotFoundError:
            return None
        return path

    def made(self, name: str) -> list[CacheEntry]:
        """`name` was just written: marked used, and the least recently used
        others removed until the folder fits the bound. The entries removed."""
        self.use(name)
        return self.prune(keep=(name,))

    def entries(self) -> list[CacheEntry]:
        """The cache's files, least recently used first."""
        found = []
        try:
            with os.scandir(self.folder) as names:
                for entry in names:
                    if NAME.fullmatch(entry.name) and entry.name.endswith(SUFFIXES) and \
                            entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        found.append(CacheEntry(entry.name, st.st_size, st.st_mtime))
        except FileNotFoundError:
            return []
        return sorted(found, key=lambda e: (e.last_used, e.name))

    def total_bytes(self) -> int:
        return sum(e.bytes for e in self.entries())

    def prune(self, max_bytes: int | None = None, keep: Container[str] = ()) -> list[CacheEntry]:
        """Remove the least recently used files (never those named in keep)
        until the rest take at most max_bytes (default the cache's bound; 0
        with the default: nothing removed). The entries removed."""
        bound = self.max_bytes if max_bytes is None else max_bytes
        if max_bytes is None and not bound:
            return []
        entries = self.entries()
        total, removed = sum(e.bytes for e in entries), []
        for entry in entries:
            if total <= bound:
                break
            if entry.name in keep:
                continue
            if self.remove(entry.name):
                total -= entry.bytes
                removed.append(entry)
        if removed:
            LOG.info("parameter cache %s: removed %d least recently used files (%.1f GiB) to keep within "
                     "%.1f GiB: %s", self.folder, len(removed), sum(e.bytes for e in removed) / GIB,
                     bound / GIB, ", ".join(e.name for e in removed))
        return removed

    def remove(self, name: str) -> bool:
        """Remove `name`; False when it was not there."""
        try:
            os.unlink(self.path(name))
        except FileNotFoundError:
            return False
        return True
