# SPDX-License-Identifier: Apache-2.0
"""On-disk cache of compiled kernels (cubins).

Key: SHA-256 over a format version, the package version, the NVRTC version,
the target arch, the compile options, the kernel source and the name and
content of every header it can include. Any change to any of them is a
different key, so an entry is never stale; old entries are simply unused.

Layout: <root>/<key[:2]>/<key>.cubin, each file MAGIC + SHA-256(payload) +
payload. Writes go to a temporary file in the same directory and are renamed
into place (atomic on POSIX), so readers never see half a file; a file whose
digest does not match (truncated, corrupted) is a miss and is removed.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile

FORMAT = 1
MAGIC = b"PPKC1\n"


def cache_key(*, source: bytes, headers: dict[str, bytes], options: tuple[str, ...], arch: str,
              nvrtc_version: tuple[int, int], package_version: str) -> str:
    h = hashlib.sha256()
    for part in (f"format={FORMAT}", f"package={package_version}", f"nvrtc={nvrtc_version[0]}.{nvrtc_version[1]}",
                 f"arch={arch}", "options=" + "\x00".join(options)):
        h.update(part.encode() + b"\x00")
    h.update(hashlib.sha256(source).digest())
    for name in sorted(headers):
        h.update(name.encode() + b"\x00" + hashlib.sha256(headers[name]).digest())
    return h.hexdigest()


class KernelCache:
    """A directory of cubins addressed by cache_key()."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = pathlib.Path(root)

    def path(self, key: str) -> pathlib.Path:
        return self.root / key[:2] / f"{key}.cubin"

    def get(self, key: str) -> bytes | None:
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        head = len(MAGIC) + 32
        if (len(data) >= head and data[:len(MAGIC)] == MAGIC
                and hashlib.sha256(data[head:]).digest() == data[len(MAGIC):head]):
            return data[head:]
        try:  # corrupt: drop it so the next put rewrites it
            path.unlink()
        except OSError:
            pass
        return None

    def put(self, key: str, payload: bytes) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".cubin")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
