# SPDX-License-Identifier: Apache-2.0
"""The iden3 binary container shared by .r1cs, .wtns, .zkey and .ptau files.

Layout (all little-endian): 4-byte magic, u32 version, u32 section count, then
per section {u32 type, u64 byte length, payload}. Sections may come in any
order (circom writes the r1cs constraints before the header); a section the
reader needs must appear exactly once. Files are memory-mapped, so section
payloads are zero-copy views; the section count and every section's length
are checked against the file's size before anything is read from them, so the
formats' readers start from sections the file holds.
"""
from __future__ import annotations

import mmap
import os
import struct

from ..atomic import atomic_write
from ..errors import PorepProverError


class BinFile:
    """A parsed container: `section(t)` returns the payload of section t."""

    def __init__(self, path, magic: bytes, versions: tuple[int, ...], error: type[PorepProverError]):
        self.path, self.error = os.fspath(path), error
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < 12:
                    raise error(f"{self.path}: {size} bytes is too short for a {magic.decode()} file")
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise error(f"{self.path}: cannot read: {exc}") from None
        self.data = memoryview(self._map)
        head = bytes(self.data[:12])
        if head[:4] != magic:
            raise error(f"{self.path}: not a {magic.decode()} file (magic {head[:4]!r})")
        self.version, count = struct.unpack("<II", head[4:12])
        if self.version not in versions:
            raise error(f"{self.path}: {magic.decode()} version {self.version} is not supported "
                        f"(supported: {', '.join(map(str, versions))})")
        # each section has a 12-byte header: a count the file cannot hold fails here, not in the loop
        if count > (size - 12) // 12:
            raise error(f"{self.path}: {count} sections need at least {12 * count} bytes of section headers, "
                        f"the file has {size - 12} after its header")
        self.sections: dict[int, list[tuple[int, int]]] = {}
        pos = 12
        for i in range(count):
            if pos + 12 > size:
                raise error(f"{self.path}: truncated in the header of section {i + 1} of {count} (offset {pos})")
            kind, length = struct.unpack("<IQ", self.data[pos:pos + 12])
            pos += 12
            if pos + length > size:
                raise error(f"{self.path}: section {kind} claims {length} bytes at offset {pos}, "
                            f"the file has {size - pos}")
            self.sections.setdefault(kind, []).append((pos, length))
            pos += length
        if pos != size:
            raise error(f"{self.path}: {size - pos} bytes after the last section")

    def section(self, kind: int, name: str) -> memoryview:
        found = self.sections.get(kind, [])
        if len(found) != 1:
            raise self.error(f"{self.path}: section {kind} ({name}) appears {len(found)} times, expected once")
        pos, length = found[0]
        return self.data[pos:pos + length]

    def offset(self, kind: int) -> int:
        return self.sections[kind][0][0]


class Reader:
    """Sequential little-endian reads of one section, with bounds checks."""

    def __init__(self, buf: memoryview, where: str, error: type[PorepProverError]):
        self.buf, self.pos, self.where, self.error = buf, 0, where, error

    def take(self, n: int) -> memoryview:
        if self.pos + n > len(self.buf):
            raise self.error(f"{self.where}: truncated at byte {self.pos} (needs {n} more, has "
                             f"{len(self.buf) - self.pos})")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def bigint(self, n8: int) -> int:
        return int.from_bytes(self.take(n8), "little")

    def done(self) -> None:
        if self.pos != len(self.buf):
            raise self.error(f"{self.where}: {len(self.buf) - self.pos} unexpected trailing bytes")


def write_binfile(path, magic: bytes, version: int, sections: list[tuple[int, bytes]]) -> None:
    """Write a container atomically (temporary file, then rename)."""
    with atomic_write(path) as f:
        f.write(magic + struct.pack("<II", version, len(sections)))
        for kind, payload in sections:
            f.write(struct.pack("<IQ", kind, len(payload)))
            f.write(payload)
