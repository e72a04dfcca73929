# SPDX-License-Identifier: Apache-2.0
"""Parameters in the in-memory layout, in a file that is mapped, not read.

A bellperson `.params` file holds big-endian coordinates in normal form, so
reading one decodes every point into a fresh host array: a 32 GiB PoRep's
47 GB of points then live in anonymous memory for as long as the parameters
are loaded, although once they are resident on the devices the host rarely
touches them again. A mapped file holds the points as `G1Array.limbs` /
`G2Array.limbs` hold them (little-endian Montgomery limbs), so loading maps
the sections (copy-on-write) instead of decoding them: loading takes no
time, the pages are the kernel's page cache, and the kernel reclaims them
under memory pressure and reads them back on the next touch.

Layout (little-endian):

    magic "PPRMAP01" | u64 vk bytes | 5 x (u64 count, u64 offset)       header (96 bytes)
    vk in the bellperson encoding (with ic)                              at 96
    h, l, a, b_g1, b_g2: count x WIDTH uint64 each, at the offsets       4096-aligned

and nothing after the last section. Reading checks the header, that the
sections are aligned, in order, non-overlapping and end where the file
ends, decodes the verifying key (checked), and checks a sample of every
section's points (the first, the last and SAMPLE spread between) on the
curve; anything else is ParamsFormatError. Writing is atomic.
"""
from __future__ import annotations

import hashlib
import logging
import mmap
import os
import struct
from typing import Callable

import numpy as np

from ..atomic import atomic_write
from ..curve.points import G1Array, G2Array
from ..errors import EncodingError, ParamsFormatError
from .keys import Parameters, VerifyingKey
from .params_file import read_params

LOG = logging.getLogger("porep_prover.params")
MAGIC = b"PPRMAP01"
SECTIONS = (("h", G1Array), ("l", G1Array), ("a", G1Array), ("b_g1", G1Array), ("b_g2", G2Array))
HEADER = struct.Struct("<8sQ" + "QQ" * len(SECTIONS))
ALIGN = 4096
SAMPLE = 4096
SUFFIX = ".pmap"


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def write_mapped(path: str | os.PathLike, params: Parameters) -> None:
    """Write params in the mapped layout, atomically (temporary file, then rename)."""
    vk = params.vk.to_bytes()
    pos, table = _align(HEADER.size + len(vk)), []
    for name, kind in SECTIONS:
        n = len(getattr(params, name))
        table += [n, pos]
        pos = _align(pos + n * kind.WIDTH * 8)
    with atomic_write(path) as f:
        f.write(HEADER.pack(MAGIC, len(vk), *table))
        f.write(vk)
        for (name, _), offset in zip(SECTIONS, table[1::2]):
            f.seek(offset)
            getattr(params, name).limbs.tofile(f)
        f.truncate(f.tell())


def read_mapped(path: str | os.PathLike) -> Parameters:
    """Map a file written by write_mapped; the sections are copy-on-write views
    of the file. Raises ParamsFormatError when it is not one (see the module
    docstring for the checks); OSError when it cannot be opened."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(HEADER.size)
        if len(head) < HEADER.size or head[:8] != MAGIC:
            raise ParamsFormatError(f"{path}: not a mapped parameters file (magic {head[:8]!r})")
        magic, vk_len, *table = HEADER.unpack(head)
        vk_bytes = f.read(vk_len)
    try:
        vk, used = VerifyingKey.read_prefix(memoryview(vk_bytes), check=True)
    except EncodingError as exc:
        raise ParamsFormatError(f"{path}: verifying key: {exc}") from None
    if used != vk_len:
        raise ParamsFormatError(f"{path}: verifying key is {used} bytes, header says {vk_len}")
    sections, start, stop = {}, _align(HEADER.size + vk_len), 0
    for (name, kind), count, offset in zip(SECTIONS, table[0::2], table[1::2]):
        if offset != start:
            raise ParamsFormatError(f"{path}: section {name} at offset {offset}, expected {start}")
        stop = offset + count * kind.WIDTH * 8
        if stop > size:
            raise ParamsFormatError(f"{path}: truncated in section {name} ({count} points at offset {offset}, "
                                    f"file {size} bytes)")
        sections[name] = kind(_map(path, offset, count, kind.WIDTH)) if count else kind.zeros(0)
        _check_sample(path, name, sections[name])
        start = _align(stop)
    if size != stop:
        raise ParamsFormatError(f"{path}: {size - stop} bytes after the last section")
    return Parameters(vk=vk, **sections)


def _map(path, offset: int, count: int, width: int) -> np.ndarray:
    return np.memmap(path, dtype=np.uint64, mode="c", offset=offset, shape=(count, width))


def _check_sample(path, name: str, points) -> None:
    n = len(points)
    if not n:
        return
    picks = np.unique(np.linspace(0, n - 1, min(n, SAMPLE + 2)).astype(np.int64))
    sample = type(points)(points.limbs[picks])
    bad = sample.first_not_on_curve()
    if bad >= 0:
        raise ParamsFormatError(f"{path}: section {name}, point {int(picks[bad])} is not on the curve",
                                index=int(picks[bad]))


def is_mapped(array: np.ndarray) -> bool:
    """Whether array's memory is a file mapping (page cache the kernel can
    reclaim) rather than anonymous memory."""
    base = array
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = getattr(base, "base", None)
    return False


def mirror_path(source: str | os.PathLike, cache_dir: str | os.PathLike) -> str:
    """Where the mapped mirror of a parameters file goes: named by the source's
    real path, size and modification time, so that a changed source misses."""
    st = os.stat(source)
    key = f"{os.path.realpath(source)}|{st.st_size}|{st.st_mtime_ns}|{MAGIC.decode()}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return os.path.join(os.fspath(cache_dir), f"{os.path.basename(os.fspath(source))}.{digest}{SUFFIX}")


def mapped_copy(path: str | os.PathLike, make: Callable[[], Parameters]) -> Parameters:
    """The parameters mapped from path when a sound file is there; else (none,
    or a damaged one, which is rewritten) make(), written to path and mapped."""
    if os.path.exists(path):
        try:
            return read_mapped(path)
        except ParamsFormatError as exc:
            LOG.warning("rewriting the mapped parameters: %s", exc)
    params = make()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_mapped(path, params)
    del params
    return read_mapped(path)


def read_params_mapped(source: str | os.PathLike, cache_dir: str | os.PathLike, progress=None,
                       check_subgroup: bool = False) -> Parameters:
    """A bellperson parameters file, loaded mapped: from its mirror in cache_dir
    when one is there and sound (a damaged one is rewritten), else decoded
    once (read_params), written as the mirror and mapped."""
    return mapped_copy(mirror_path(source, cache_dir),
                       lambda: read_params(source, check_subgroup=check_subgroup, progress=progress))


def is_mapped_file(path: str | os.PathLike) -> bool:
    """Whether path starts with the mapped layout's magic."""
    with open(path, "rb") as f:
        return f.read(len(MAGIC)) == MAGIC


def load_params(path: str | os.PathLike, check_subgroup: bool = False, threads: int | None = None,
                progress=None) -> Parameters:
    """A bellperson .params file (decoded) or a mapped one (mapped), told apart
    by the magic; check_subgroup checks every point of either."""
    if not is_mapped_file(path):
        return read_params(path, check_subgroup=check_subgroup, threads=threads, progress=progress)
    params = read_mapped(path)
    if check_subgroup:
        for name, _ in SECTIONS:
            bad = getattr(params, name).first_not_in_subgroup(threads)
            if bad >= 0:
                raise ParamsFormatError(f"{path}: section {name}, point {bad} is not in the prime-order "
                                        "subgroup", index=bad)
            if progress:
                progress(name, len(getattr(params, name)), len(getattr(params, name)))
    return params
