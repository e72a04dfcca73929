# SPDX-License-Identifier: Apache-2.0
"""numpy .npz archives, as R1CS.save writes them, read without trusting them.

np.load makes each array at the size its header declares before it reads a
byte of it, inflates compressed members to whatever size they expand to,
and answers a file that is not an archive with advice about pickles.
read_npz takes stored (uncompressed) members only, checks every member's
header against the bytes the member has before making its array, and never
unpickles: the arrays it returns take no more memory than the file's size.
"""
from __future__ import annotations

import math
import os
import zipfile
import zlib
from typing import cast

import numpy as np

from ..errors import InvalidInputError

ZIP_STARTS = (b"PK\x03\x04", b"PK\x05\x06")     # a local file header; an empty archive's directory end


def read_npz(path: str | os.PathLike, error: type[InvalidInputError], what: str) -> dict[str, np.ndarray]:
    """The arrays of the .npz file at path, by name (".npy" dropped); `error`
    naming the file when it cannot be read, is not an archive, or has a
    member that is compressed, is not an .npy array of plain values, or
    holds other bytes than its header says. `what` names the file's kind."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(4)
        if head not in ZIP_STARTS:
            raise error(f"{path}: not a {what} (a .npz archive); it starts with {head!r}")
        with zipfile.ZipFile(path) as archive:
            return {info.filename.removesuffix(".npy"): _member(archive, info, size, path, error)
                    for info in archive.infolist()}
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError,
            UnicodeDecodeError) as exc:      # a member name flagged UTF-8 that is not
        raise error(f"{path}: cannot read the {what}: {exc}") from None


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, size: int, path: str | os.PathLike,
            error: type[InvalidInputError]) -> np.ndarray:
    where = f"{path}: array {info.filename!r}"
    if info.compress_type != zipfile.ZIP_STORED:
        raise error(f"{where} is compressed; these files are written uncompressed (np.savez)")
    if info.file_size > size:
        raise error(f"{where} claims {info.file_size} bytes, more than the file's {size}")
    with cast(zipfile.ZipExtFile, archive.open(info)) as member:     # open in "r" mode makes a ZipExtFile
        try:
            version = np.lib.format.read_magic(member)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f".npy version {version[0]}.{version[1]} is not read")
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read_header(member)
        except ValueError as exc:
            raise error(f"{where} is not an .npy array: {exc}") from None
        if dtype.hasobject:
            raise error(f"{where} holds Python objects, not numbers")
        if any(n < 0 for n in shape):
            raise error(f"{where}: its header has the shape {shape}")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > info.file_size:
            raise error(f"{where}: its header says {shape} of {dtype}, {nbytes} bytes; the member has "
                        f"{info.file_size}")
        buf = bytearray(nbytes)
        got = member.readinto(buf)
        if got != nbytes or member.read(1):
            raise error(f"{where}: the member's data is not the {nbytes} bytes its header says")
    return np.frombuffer(buf, dtype=dtype).reshape(shape, order="F" if fortran else "C")
