# SPDX-License-Identifier: Apache-2.0
"""Text files (JSON keys and proofs, TOML settings) read strictly as UTF-8,
every failure the caller's named error with the file and, for a bad byte,
its line and column."""
from __future__ import annotations

import os

from .errors import PorepProverError

BOM = b"\xef\xbb\xbf"


def decode_utf8(data: bytes, error: type[PorepProverError], where: str) -> str:
    """data as UTF-8 text (a leading byte-order mark dropped); `error`
    starting with `where` and saying the first bad byte's line and column."""
    data = bytes(data).removeprefix(BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise error(f"{where}: not UTF-8 text: byte {data[exc.start]:#04x} at line {line}, "
                    f"column {column}") from None


def read_text(path: str | os.PathLike, error: type[PorepProverError], what: str) -> str:
    """The UTF-8 text of the file at path; `error` naming the file (and `what`
    it should hold) when it cannot be read or is not UTF-8."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    return decode_utf8(data, error, f"{path}")
