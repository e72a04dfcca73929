# SPDX-License-Identifier: Apache-2.0
"""The bellperson `.params` file format (Filecoin's Groth16 parameter files).

Layout, all points uncompressed zcash encodings (G1 96 bytes, G2 192 bytes):

    alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2     (96+96+192+192+96+192 = 864 bytes)
    u32 BE |ic|    ic[0..]                                 G1
    u32 BE |h|     h[0..]                                  G1
    u32 BE |l|     l[0..]                                  G1
    u32 BE |a|     a[0..]                                  G1
    u32 BE |b_g1|  b_g1[0..]                               G1
    u32 BE |b_g2|  b_g2[0..]                               G2

and nothing after. Reading maps the file and decodes sections in chunks on all
threads, reporting progress. Every count is checked against the bytes left
in the file before anything is decoded or allocated (a u32 count times the
point size must fit), so no read asks for more memory than the file holds.
Decoding always checks the flag bits, that coordinates are canonical and that
points are on the curve (cheap); `check_subgroup=True` adds the prime-order
subgroup check of bellperson's checked read (an endomorphism test per point,
about 50 us each per thread). A file's integrity as a whole is checked
against the digest Filecoin publishes for it (params_digest; load_params's
`digest=` / `verify_digest=`).
"""
from __future__ import annotations

import mmap
import os
import struct
from typing import Callable, TypeVar

from ..atomic import atomic_write
from ..config import resolve_threads
from ..curve.points import G1Array, G2Array
from ..errors import EncodingError, ParamsFormatError
from .keys import Parameters, VerifyingKey

VK_FIXED_BYTES = 96 + 96 + 192 + 192 + 96 + 192
SECTIONS = (("h", G1Array), ("l", G1Array), ("a", G1Array), ("b_g1", G1Array), ("b_g2", G2Array))
CHUNK_POINTS = 1 << 18

Progress = Callable[[str, int, int], None]
ArrayT = TypeVar("ArrayT", G1Array, G2Array)


def _read_section(buf: memoryview, pos: int, name: str, kind: type[ArrayT], check_subgroup: bool, threads: int,
                  progress: Progress | None) -> tuple[ArrayT, int]:
    if pos + 4 > len(buf):
        raise ParamsFormatError(f"params truncated before the {name} count (offset {pos}, file {len(buf)} bytes)")
    (count,) = struct.unpack(">I", buf[pos:pos + 4])
    pos += 4
    size = kind.COMPRESSED * 2
    if pos + count * size > len(buf):
        raise ParamsFormatError(f"params truncated in {name}: {count} points need {count * size} bytes at offset "
                                f"{pos}, file has {len(buf) - pos}")
    parts = []
    for lo in range(0, count, CHUNK_POINTS):
        hi = min(count, lo + CHUNK_POINTS)
        try:
            part = kind.from_bytes(buf[pos + lo * size:pos + hi * size], compressed=False,
                                   check=check_subgroup, threads=threads)
        except EncodingError as exc:
            index = lo + (exc.index or 0)
            raise ParamsFormatError(f"params section {name}, point {index} (offset {pos + index * size}): "
                                    f"{str(exc).split(': ', 1)[-1]}", index=index) from None
        parts.append(part)
        if progress:
            progress(name, hi, count)
    return kind.concat(parts), pos + count * size


def read_params(path: str | os.PathLike[str], check_subgroup: bool = False, threads: int | None = None,
                progress: Progress | None = None) -> Parameters:
    """Read a bellperson parameters file (this format only: load_params reads
    it or a mapped .pmap, told apart by the magic, and is the one to use
    where either may come). Raises ParamsFormatError on a truncated file,
    trailing bytes or an invalid point (naming the section, index and
    offset); OSError when the file cannot be opened."""
    threads = resolve_threads(threads)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < VK_FIXED_BYTES + 4:
            raise ParamsFormatError(f"{path}: {size} bytes is too short for a parameters file")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    # No `with` for the map: an error's traceback can still hold views into it,
    # and closing it under them would replace the error with a BufferError.
    # On error the map is closed when the last view goes away.
    params = _parse(memoryview(mm), check_subgroup, threads, progress, path)
    mm.close()
    return params


def _parse(buf: memoryview, check_subgroup: bool, threads: int, progress: Progress | None,
           path: str | os.PathLike[str]) -> Parameters:
    try:
        vk, pos = VerifyingKey.read_prefix(buf, check=check_subgroup)
    except EncodingError as exc:
        raise ParamsFormatError(f"{path}: {exc}") from None

    def section(name: str, kind: type[ArrayT]) -> ArrayT:
        """The section of SECTIONS called name, at pos (moved past it)."""
        nonlocal pos
        points, pos = _read_section(buf, pos, name, kind, check_subgroup, threads, progress)
        return points

    params = Parameters(vk=vk, h=section("h", G1Array), l=section("l", G1Array), a=section("a", G1Array),
                        b_g1=section("b_g1", G1Array), b_g2=section("b_g2", G2Array))
    if pos != len(buf):
        raise ParamsFormatError(f"{path}: {len(buf) - pos} trailing bytes after b_g2 (offset {pos})")
    return params


def write_params(path: str | os.PathLike[str], params: Parameters, threads: int | None = None,
                 progress: Progress | None = None) -> None:
    """Write params in the bellperson layout, atomically (temporary file, then rename)."""
    threads = resolve_threads(threads)
    with atomic_write(path) as f:
        f.write(params.vk.to_bytes())
        for name, _ in SECTIONS:
            points = getattr(params, name)
            f.write(struct.pack(">I", len(points)))
            for lo in range(0, len(points), CHUNK_POINTS):
                hi = min(len(points), lo + CHUNK_POINTS)
                f.write(points[lo:hi].to_bytes(compressed=False, threads=threads))
                if progress:
                    progress(name, hi, len(points))
