# SPDX-License-Identifier: Apache-2.0
"""The daemon's files kept from other users.

Its state folder (the journal, the proofs, the lock, its address) is made
mode 0700 and every file in it 0600 at each start, whoever created them (an
operator's `mkdir` first, a umask of 022), and the files the journal creates
afterwards are made so as they appear. Its secrets (the bearer token, the
TLS key) are read only from files no other user can read or write: one that
others can is refused, as ssh refuses such a key, rather than used.
"""
from __future__ import annotations

import os
import stat

from ..errors import ConfigError

FOLDER_MODE, FILE_MODE = 0o700, 0o600


def make_private(folder: str) -> None:
    """folder and every folder under it 0700, every regular file 0600
    (symbolic links are left as they are: their modes are their targets')."""
    os.chmod(folder, FOLDER_MODE)
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                os.chmod(path, FOLDER_MODE)
            elif stat.S_ISREG(mode):
                os.chmod(path, FILE_MODE)


def check_private(path: str, key: str) -> None:
    """ConfigError naming key when others than the owner may read or write
    the file at path (its mode has group or other bits)."""
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        raise ConfigError(f"{key}: {path} can be read or changed by other users (mode {mode:04o}); "
                          f"chmod 600 it", key=key)
