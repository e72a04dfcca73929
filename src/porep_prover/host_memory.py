# SPDX-License-Identifier: Apache-2.0
"""What kind of host memory an array lives in, and reading a file's bytes
into memory without leaving them twice in the host (once in the page cache).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

READ_CHUNK = 64 << 20        # bytes a read asks for at once: large sequential reads, the page cache dropped behind
COPY_SLICE = 4 << 20         # host copies are split in slices this large over threads


def copy_in_slices(pool: ThreadPoolExecutor | None, dst: np.ndarray, src: np.ndarray,
                   slice_bytes: int = COPY_SLICE) -> None:
    """dst[:] = src (flat bytes), in slices on the pool (numpy copies without
    the GIL; a single thread is far below memory bandwidth, and so is the
    first touch of fresh pages)."""
    n = len(src)
    if pool is None or n <= slice_bytes:
        dst[:] = src
        return
    cuts = range(0, n, slice_bytes)
    list(pool.map(lambda a: dst.__setitem__(slice(a, a + slice_bytes), src[a:a + slice_bytes]), cuts))


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_free_heap() -> bool:
    """The C heap's free pages given back to the host (malloc_trim(0), which
    also releases the free pages inside every thread's arena): after a job
    the allocator otherwise keeps what its threads freed (the daemon held
    about 30 % more after a cancelled job than after a finished one); whether
    the C library could. A few milliseconds: call it between jobs, not in a
    loop."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def is_mapped(array: np.ndarray) -> bool:
    """Whether array's memory is a file mapping (page cache the kernel can
    reclaim) rather than anonymous memory: some array it views was made
    over an mmap (np.memmap, np.frombuffer of an mmap.mmap)."""
    base: object = array
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = getattr(base, "base", None)
    return False


def mapped_origin(array: np.ndarray) -> tuple[str, int] | None:
    """(the file, the byte offset in it) that a C-contiguous array mapped
    from a file (a view of an np.memmap) begins at; None where it is not such
    a view (anonymous memory, or a mapping that does not say its file)."""
    base: object = array
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    if not isinstance(base, np.memmap) or not array.flags.c_contiguous or base.filename is None:
        return None
    start = array.ctypes.data - base.ctypes.data
    if start < 0 or start + array.nbytes > base.nbytes:
        return None
    return str(base.filename), int(base.offset) + start


def read_into(dst: np.ndarray, path: str, offset: int, threads: int = 1, drop: bool = True) -> None:
    """dst's bytes (a C-contiguous array) read from path at offset, in large
    sequential reads on threads; with drop, each range's pages in the page
    cache are dropped once read (posix_fadvise DONTNEED: what is read into
    memory here is not kept a second time by the kernel). OSError where the
    file is short or unreadable."""
    raw = dst.reshape(-1).view(np.uint8)
    spans = [(at, min(at + READ_CHUNK, len(raw))) for at in range(0, len(raw), READ_CHUNK)]
    fd = os.open(path, os.O_RDONLY)
    try:
        def read(span: tuple[int, int]) -> None:
            start, stop = span
            got = start
            while got < stop:
                n = os.preadv(fd, [raw[got:stop].data], offset + got)
                if n <= 0:
                    raise OSError(f"{path}: {stop - got} bytes short at offset {offset + got}")
                got += n
            if drop and hasattr(os, "posix_fadvise"):
                os.posix_fadvise(fd, offset + start, stop - start, os.POSIX_FADV_DONTNEED)
        if threads > 1 and len(spans) > 1:
            with ThreadPoolExecutor(min(threads, len(spans)), thread_name_prefix="read") as pool:
                list(pool.map(read, spans))
        else:
            for span in spans:
                read(span)
    finally:
        os.close(fd)


def drop_file_pages(path: str, offset: int = 0, length: int = 0) -> None:
    """The page cache of a file's range (length 0: to its end) dropped where
    no process maps it (posix_fadvise DONTNEED); nothing where the platform
    cannot."""
    if not hasattr(os, "posix_fadvise"):
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, offset, length, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def unmap_pages(array: np.ndarray) -> None:
    """The pages of a file-mapped array (a view of an np.memmap) unmapped
    from this process (madvise DONTNEED: a copy-on-write mapping's unchanged
    pages read again from the file on the next touch), so that the kernel
    may drop them from its page cache; nothing for other memory."""
    base: object = array
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    handle = getattr(base, "_mmap", None)
    if not isinstance(base, np.memmap) or not isinstance(handle, mmap.mmap) or not hasattr(handle, "madvise"):
        return
    page = mmap.PAGESIZE
    start = array.ctypes.data - base.ctypes.data + (int(base.offset) % mmap.ALLOCATIONGRANULARITY)
    first, last = start // page * page, -(-(start + array.nbytes) // page) * page
    last = min(last, len(handle))
    if last > first:
        handle.madvise(mmap.MADV_DONTNEED, first, last - first)
