# SPDX-License-Identifier: Apache-2.0
"""Parameters in the in-memory layout, in a file that is mapped, not read.

A bellperson `.params` file holds big-endian coordinates in normal form, so
reading one decodes every point into a fresh host array: a 32 GiB PoRep's
47 GB of points then live in anonymous memory for as long as the parameters
are loaded, although once they are resident on the devices the host rarely
touches them again. A mapped file holds the points as `G1Array.limbs` /
`G2Array.limbs` hold them (little-endian Montgomery limbs), so loading maps
the sections (copy-on-write) instead of decoding them: loading decodes
nothing (it reads the file once, to verify its checksums), the pages are
the kernel's page cache, and the kernel reclaims them under memory pressure
and reads them back on the next touch.

Layout (little-endian), version 2:

    magic "PPRMAP02" | u64 vk bytes | 5 x (u64 count, u64 offset)
    | 16-byte source digest | 6 x 32-byte checksum (vk, h, l, a, b_g1, b_g2)
    | 32-byte header checksum                                         header (336 bytes)
    vk in the bellperson encoding (with ic)                           at 336
    h, l, a, b_g1, b_g2: count x WIDTH uint64 each, at the offsets    4096-aligned

and nothing after the last section. The checksums are SHA-256: the
header's over the header bytes before it, the vk's over its bytes, and a
section's a tree hash (tree_sha256): the SHA-256 of the SHA-256 digests of
its CHUNK_BYTES (16 MiB) chunks in order, so that the chunks are hashed on
all threads (hashlib releases the GIL and OpenSSL uses the CPU's SHA
instructions). Measured on a 1.44 GB file in the page cache, on 2 cores
with SHA extensions: read_mapped 1.2 GB/s with one thread, 2.3 GB/s with
two (0.01 s with verify=False), against 1.0 GB/s for one SHA-256 stream and
5.5 GB/s for reading the file alone. The source digest is the Filecoin digest (params_digest) that the .params
file a mirror was made from was checked against; zero when it was not.

Reading checks, before anything is mapped or allocated: the magic (a
"PPRMAP01" file, the first layout, without checksums, is named as an old
layout to map again), the header checksum, and that the verifying key and
every section fit in the file, aligned, in order, non-overlapping and ending
where the file ends. Then the vk's checksum, the vk itself (decoded,
checked), every section's checksum, and a sample of every section's points
(the first, the last and SAMPLE spread between) on the curve. Anything else
is ParamsFormatError naming the file and the section ("section l: checksum
mismatch: the file is damaged"). `verify=False` skips the checksums, for a
caller that checked the file another way or has just written it; the
structure and the sample are checked still.

The sample check stays beside the checksums: it costs about a millisecond,
it is the only check of the points when verify=False, and a checksum shows
that the file is what its writer wrote, not that the writer wrote points on
the curve. Writing is atomic.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import mmap
import os
import struct
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Callable, Sequence, TypeVar

import numpy as np

from ..atomic import atomic_write
from ..config import resolve_threads
from ..host_memory import drop_file_pages
from ..curve.points import G1Array, G2Array
from ..errors import EncodingError, ParamsFormatError
from .keys import Parameters, VerifyingKey
from .params_digest import check_digest, normalize_digest
from .params_file import Progress, read_params

LOG = logging.getLogger("porep_prover.params")
MAGIC = b"PPRMAP02"
OLD_MAGICS = (b"PPRMAP01",)
SECTIONS: tuple[tuple[str, type[G1Array] | type[G2Array]], ...] = (
    ("h", G1Array), ("l", G1Array), ("a", G1Array), ("b_g1", G1Array), ("b_g2", G2Array))
HEADER = struct.Struct("<8sQ" + "QQ" * len(SECTIONS) + "16s" + "32s" * (len(SECTIONS) + 2))
HEADER_SUMMED = HEADER.size - 32          # the header checksum covers the bytes before it
ALIGN = 4096
SAMPLE = 4096
CHUNK_BYTES = 1 << 24
SUFFIX = ".pmap"
ArrayT = TypeVar("ArrayT", G1Array, G2Array)
Section = tuple[str, type[G1Array] | type[G2Array], int, int]      # name, kind, count, offset


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def tree_sha256(buffers: Sequence[np.ndarray | memoryview], threads: int | None = None) -> list[bytes]:
    """The checksum of each buffer (1-D, C-contiguous bytes): the SHA-256 of
    the SHA-256 digests of its CHUNK_BYTES chunks in order (the last one
    shorter; none for an empty buffer). The chunks of all buffers are hashed
    on `threads` threads (resolve_threads)."""
    threads = resolve_threads(threads)
    jobs = [(i, lo) for i, buf in enumerate(buffers) for lo in range(0, len(buf), CHUNK_BYTES)]

    def chunk(job: tuple[int, int]) -> bytes:
        i, lo = job
        # numpy's stubs give ndarray its __buffer__ from Python 3.12 only; memoryview takes one on 3.11 too
        with memoryview(buffers[i])[lo:lo + CHUNK_BYTES] as part:  # type: ignore[arg-type]
            return hashlib.sha256(part).digest()
    if threads == 1 or len(jobs) < 2:
        digests = [chunk(job) for job in jobs]
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(jobs)), thread_name_prefix="pmap-sha256") as pool:
            digests = list(pool.map(chunk, jobs))
    roots = [hashlib.sha256() for _ in buffers]
    for (i, _), digest in zip(jobs, digests):
        roots[i].update(digest)
    return [root.digest() for root in roots]


def _limb_bytes(limbs: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(limbs).reshape(-1).view(np.uint8)


def _source_field(source_digest: str | None) -> bytes:
    return bytes(16) if source_digest is None else bytes.fromhex(normalize_digest(source_digest))


def write_mapped(path: str | os.PathLike[str], params: Parameters, threads: int | None = None,
                 source_digest: str | None = None, progress: Progress | None = None) -> None:
    """Write params in the mapped layout with its checksums (hashed on
    `threads` threads), atomically (temporary file, then rename).
    source_digest, when given, is recorded as the Filecoin digest the
    parameters' .params file was checked against (read_params_mapped).
    progress, when given, is called as progress("write", bytes written,
    bytes of the sections) after each section."""
    vk = params.vk.to_bytes()
    arrays = [_limb_bytes(getattr(params, name).limbs) for name, _ in SECTIONS]
    pos, table = _align(HEADER.size + len(vk)), []
    for (name, _), data in zip(SECTIONS, arrays):
        table += [len(getattr(params, name)), pos]
        pos = _align(pos + len(data))
    sums = tree_sha256(arrays, threads)
    head = HEADER.pack(MAGIC, len(vk), *table, _source_field(source_digest), hashlib.sha256(vk).digest(), *sums,
                       b"")
    head = head[:HEADER_SUMMED] + hashlib.sha256(head[:HEADER_SUMMED]).digest()
    with atomic_write(path) as f:
        f.write(head)
        f.write(vk)
        written, total = 0, sum(data.nbytes for data in arrays)
        for data, offset in zip(arrays, table[1::2]):
            f.seek(offset)
            data.tofile(f)
            written += data.nbytes
            if progress:
                progress("write", written, total)
        f.truncate(f.tell())


def _read_header(path: str | os.PathLike[str], f: IO[bytes]) -> tuple[int, list[tuple[int, int]], bytes,
                                                                   tuple[bytes, ...], bool]:
    """(vk length in bytes, [(count, offset)] per section, source digest field,
    checksums (vk, then sections), whether the header checksum holds) of the
    open file f, its magic checked."""
    head = f.read(HEADER.size)
    if head[:8] in OLD_MAGICS:
        raise ParamsFormatError(f"{path}: an old mapped layout ({head[:8].decode()}, without checksums): run "
                                "`porep-prover params map` again to rewrite it")
    if len(head) < HEADER.size or head[:8] != MAGIC:
        raise ParamsFormatError(f"{path}: not a mapped parameters file (magic {head[:8]!r}, {len(head)} header "
                                "bytes)")
    fields = HEADER.unpack(head)
    n = len(SECTIONS)
    summed = hashlib.sha256(head[:HEADER_SUMMED]).digest() == fields[-1]
    return fields[1], list(zip(fields[2:2 + 2 * n:2], fields[3:2 + 2 * n:2])), fields[2 + 2 * n], \
        fields[3 + 2 * n:-1], summed


def _layout(path: str | os.PathLike[str], vk_len: int, table: list[tuple[int, int]], size: int) -> list[Section]:
    """The sections' (name, kind, count, offset), every size checked against
    the file's before anything is read, mapped or allocated."""
    if vk_len > size - HEADER.size:
        raise ParamsFormatError(f"{path}: the header gives the verifying key {vk_len} bytes; the file has "
                                f"{size - HEADER.size} after the header")
    layout: list[Section] = []
    start, stop = _align(HEADER.size + vk_len), HEADER.size + vk_len
    for (name, kind), (count, offset) in zip(SECTIONS, table):
        if offset != start:
            raise ParamsFormatError(f"{path}: section {name} at offset {offset}, expected {start}")
        stop = offset + count * kind.WIDTH * 8
        if stop > size:
            raise ParamsFormatError(f"{path}: truncated in section {name} ({count} points at offset {offset}, "
                                    f"file {size} bytes)")
        layout.append((name, kind, count, offset))
        start = _align(stop)
    if size != stop:
        raise ParamsFormatError(f"{path}: {size - stop} bytes after the last section")
    return layout


def _verify_sections(path: str | os.PathLike[str], f: IO[bytes], layout: list[Section], sums: tuple[bytes, ...],
                     threads: int | None) -> None:
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    # A private map, not the sections' copy-on-write ones: hashing reads the
    # pages without keeping them mapped into the process afterwards.
    whole = memoryview(mm)
    got = tree_sha256([whole[offset:offset + count * kind.WIDTH * 8] for _, kind, count, offset in layout], threads)
    whole.release()
    mm.close()
    # every page was read once: none is kept in the page cache for it (the sections' pages come back from the
    # file where they are read: a streamed array's once into page-locked memory, a resident one's as it uploads)
    drop_file_pages(os.fspath(path))
    for (name, *_), want, have in zip(layout, sums, got):
        if want != have:
            raise ParamsFormatError(f"{path}: section {name}: checksum mismatch: the file is damaged")


def read_mapped(path: str | os.PathLike[str], verify: bool = True, threads: int | None = None) -> Parameters:
    """Map a file written by write_mapped; the sections are copy-on-write views
    of the file. verify=True (the default) checks the header's, the verifying
    key's and every section's checksum, hashing the file once on `threads`
    threads; verify=False skips them, for a caller that checked the file
    another way. Raises ParamsFormatError, naming the file and the section,
    when it is not a sound mapped file (see the module docstring for the
    checks); OSError when it cannot be opened."""
    with open(path, "rb") as f:
        vk, layout, sums = _open_checked(path, f, verify)
        if verify:
            _verify_sections(path, f, layout, sums, threads)
        places = {name: (count, offset) for name, _, count, offset in layout}

        def section(name: str, kind: type[ArrayT]) -> ArrayT:
            """The section of SECTIONS called name, mapped, its sample checked."""
            count, offset = places[name]
            points = kind(_map(f, offset, count, kind.WIDTH)) if count else kind.zeros(0)
            _check_sample(path, name, points)
            return points

        params = Parameters(vk=vk, h=section("h", G1Array), l=section("l", G1Array), a=section("a", G1Array),
                            b_g1=section("b_g1", G1Array), b_g2=section("b_g2", G2Array))
    return params


def read_mapped_vk(path: str | os.PathLike[str], verify: bool = True) -> VerifyingKey:
    """The verifying key of a file written by write_mapped, without mapping or
    hashing its sections: the header and the key are checked as read_mapped
    checks them (their checksums when verify), the sections' sizes against
    the file. ParamsFormatError, naming the file, when they are not sound."""
    with open(path, "rb") as f:
        return _open_checked(path, f, verify)[0]


def _open_checked(path: str | os.PathLike[str], f: IO[bytes], verify: bool) -> tuple[VerifyingKey, list[Section],
                                                                                   tuple[bytes, ...]]:
    """The verifying key, the sections' layout and their stored checksums of
    the mapped file open as f, its header and key checked."""
    size = os.fstat(f.fileno()).st_size
    vk_len, table, _, sums, summed = _read_header(path, f)
    if verify and not summed:
        raise ParamsFormatError(f"{path}: header: checksum mismatch: the file is damaged")
    layout = _layout(path, vk_len, table, size)
    vk_bytes = f.read(vk_len)
    if verify and hashlib.sha256(vk_bytes).digest() != sums[0]:
        raise ParamsFormatError(f"{path}: verifying key: checksum mismatch: the file is damaged")
    return _decode_vk(path, vk_bytes), layout, sums[1:]


def _decode_vk(path: str | os.PathLike[str], vk_bytes: bytes) -> VerifyingKey:
    try:
        vk, used = VerifyingKey.read_prefix(memoryview(vk_bytes), check=True)
    except EncodingError as exc:
        raise ParamsFormatError(f"{path}: verifying key: {exc}") from None
    if used != len(vk_bytes):
        raise ParamsFormatError(f"{path}: verifying key is {used} bytes, header says {len(vk_bytes)}")
    return vk


def mapped_source_digest(path: str | os.PathLike[str]) -> str | None:
    """The Filecoin digest recorded in a mapped file as the one its source
    .params file was checked against; None when it was not checked.
    ParamsFormatError when the header is not a sound mapped header."""
    with open(path, "rb") as f:
        _, _, source, _, summed = _read_header(path, f)
    if not summed:
        raise ParamsFormatError(f"{path}: header: checksum mismatch: the file is damaged")
    return None if source == bytes(16) else source.hex()


def _map(f: IO[bytes], offset: int, count: int, width: int) -> np.ndarray:
    return np.memmap(f, dtype=np.uint64, mode="c", offset=offset, shape=(count, width))


def _check_sample(path: str | os.PathLike[str], name: str, points: G1Array | G2Array) -> None:
    n = len(points)
    if not n:
        return
    picks = np.unique(np.linspace(0, n - 1, min(n, SAMPLE + 2)).astype(np.int64))
    sample = type(points)(points.limbs[picks])
    bad = sample.first_not_on_curve()
    if bad >= 0:
        raise ParamsFormatError(f"{path}: section {name}, point {int(picks[bad])} is not on the curve",
                                index=int(picks[bad]))


def _mirror_name(source: str | os.PathLike[str], cache_dir: str | os.PathLike[str], tag: str = "") -> str:
    st = os.stat(source)
    key = f"{os.path.realpath(source)}|{st.st_size}|{st.st_mtime_ns}{tag}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return os.path.join(os.fspath(cache_dir), f"{os.path.basename(os.fspath(source))}.{digest}{SUFFIX}")


def mirror_path(source: str | os.PathLike[str], cache_dir: str | os.PathLike[str]) -> str:
    """Where the mapped mirror of a parameters file goes: named by the source's
    real path, size and modification time, so that a changed source misses
    (and not by the layout: a mirror of an older layout is rewritten in place)."""
    return _mirror_name(source, cache_dir)


def mapped_copy(path: str | os.PathLike[str], make: Callable[[], Parameters], threads: int | None = None,
                verify: bool = True, source_digest: str | None = None) -> Parameters:
    """The parameters mapped from path when a sound file is there (checked as
    read_mapped(verify=verify) checks it); else (none, a damaged one or one of
    an old layout, which is rewritten) make(), written to path and mapped.
    source_digest, when given, is recorded in the file as the digest make()
    checked its source against; a file there that does not record it is made
    again."""
    if os.path.exists(path):
        try:
            if source_digest is None or mapped_source_digest(path) == normalize_digest(source_digest):
                return read_mapped(path, verify=verify, threads=threads)
            LOG.warning("rewriting the mapped parameters %s: its source was not checked against digest %s",
                        path, source_digest)
        except ParamsFormatError as exc:
            LOG.warning("rewriting the mapped parameters: %s", exc)
    params = make()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_mapped(path, params, threads=threads, source_digest=source_digest)
    del params
    # Just written from memory, its pages in the page cache are those bytes:
    # hashing them again would check nothing. Structure and sample still are.
    return read_mapped(path, verify=False)


def read_params_mapped(source: str | os.PathLike[str], cache_dir: str | os.PathLike[str],
                       progress: Progress | None = None, check_subgroup: bool = False, threads: int | None = None,
                       digest: str | None = None, verify: bool = True) -> Parameters:
    """A bellperson parameters file, loaded mapped: from its mirror in cache_dir
    when one is there and sound (its checksums verified unless verify=False;
    a damaged one, or one of an old layout, is rewritten), else decoded once
    (read_params), written as the mirror and mapped. digest, when given, is
    the Filecoin digest (params_digest) the source must have: checked when
    the mirror is made (ParamsDigestError, and no mirror, when it differs)
    and recorded in the mirror, whose own checksums then stand for it; a
    mirror made without that check is made again."""
    if digest is not None:
        digest = normalize_digest(digest)

    def make() -> Parameters:
        if digest is not None:
            check_digest(source, digest, progress)
        return read_params(source, check_subgroup=check_subgroup, threads=threads, progress=progress)
    params = mapped_copy(mirror_path(source, cache_dir), make, threads=threads, verify=verify, source_digest=digest)
    # Mirrors of the first layout were named with its magic in the key: this
    # one replaces it, and a stale copy of a large file is worth removing.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_mirror_name(source, cache_dir, "|PPRMAP01"))
    return params


def is_mapped_file(path: str | os.PathLike[str]) -> bool:
    """Whether path starts with a mapped layout's magic (this one's or an old one's)."""
    with open(path, "rb") as f:
        return f.read(len(MAGIC)) in (MAGIC, *OLD_MAGICS)


def load_params(path: str | os.PathLike[str], check_subgroup: bool = False, threads: int | None = None,
                progress: Progress | None = None, digest: str | None = None, verify_digest: bool = False,
                verify: bool = True) -> Parameters:
    """A bellperson .params file (decoded) or a mapped one (mapped), told apart
    by the magic; check_subgroup checks every point of either. digest (the
    Filecoin digest the file must have), or verify_digest=True (the digest
    kept beside the file: `<path>.digest` or parameters.json), checks the
    whole file's bytes before anything is decoded (params_digest.check_digest:
    ParamsDigestError when it differs, InvalidInputError when verify_digest
    finds none); progress then also reports ("digest", bytes, total bytes).
    verify=False skips a mapped file's checksums (read_mapped)."""
    if digest is not None or verify_digest:
        check_digest(path, digest, progress)
    if not is_mapped_file(path):
        return read_params(path, check_subgroup=check_subgroup, threads=threads, progress=progress)
    params = read_mapped(path, verify=verify, threads=threads)
    if check_subgroup:
        for name, _ in SECTIONS:
            bad = getattr(params, name).first_not_in_subgroup(threads)
            if bad >= 0:
                raise ParamsFormatError(f"{path}: section {name}, point {bad} is not in the prime-order "
                                        "subgroup", index=bad)
            if progress:
                progress(name, len(getattr(params, name)), len(getattr(params, name)))
    return params
