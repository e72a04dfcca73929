# SPDX-License-Identifier: Apache-2.0
"""Files written whole or not at all."""
from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike):
    """A binary file open for writing at a temporary name beside path, renamed
    to path when the block ends without an error (removed when it does not),
    so readers see the old file or the whole new one, never a part."""
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            yield f
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
