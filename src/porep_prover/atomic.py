# SPDX-License-Identifier: Apache-2.0
"""Files written whole or not at all."""
from __future__ import annotations

import contextlib
import os
import re
import time


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, fsync: bool = False):
    """A binary file open for writing at a temporary name beside path
    (PATH.tmpPID), renamed to path when the block ends without an error and
    removed when it does not, Ctrl-C and the command line's SIGTERM included,
    so readers see the old file or the whole new one, never a part. A process
    killed outright leaves its temporary: a later write of the same path
    removes it (`remove_stale`). A path that exists and is not a regular file
    (a FIFO, /dev/stdout) is written in place. fsync: the file's data reach
    the disk before the rename, and the rename before this returns (what a
    journal that records the file next relies on)."""
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "wb") as f:     # a FIFO or a device (/dev/stdout): written in place, as it can only be
            yield f
        return
    remove_stale(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            yield f
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
        if fsync:
            folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# A temporary untouched this long whose process is gone is stale. The age
# spares a writer on another host sharing the folder (its process id means
# nothing here): a writer's file changes as it writes.
STALE_SECONDS = 60.0


def remove_stale(path: str | os.PathLike) -> list[str]:
    """Remove PATH.tmpPID files beside path left by processes that no longer
    run here, untouched for STALE_SECONDS (only names of that form, never
    another file); returns those removed."""
    path = os.fspath(path)
    if not isinstance(path, str):
        return []
    folder, name = os.path.split(path)
    pattern = re.compile(re.escape(name) + r"\.tmp([0-9]{1,7})")
    removed: list[str] = []
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match and int(match[1]) != os.getpid() and not _running(int(match[1])):
            stale = os.path.join(folder, entry)
            try:
                if time.time() - os.stat(stale).st_mtime < STALE_SECONDS:
                    continue
                os.unlink(stale)
                removed.append(stale)
            except OSError:
                pass
    return removed


def _running(pid: int) -> bool:
    """Whether a process of this id exists (another user's counts)."""
    if pid <= 0:
        return True     # not a process of its own: leave the file alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True
