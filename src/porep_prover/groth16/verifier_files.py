# SPDX-License-Identifier: Apache-2.0
"""What a verifier reads from files, in every format this package (and
snarkjs) writes:

  verifying key   JSON (VerifyingKey.to_json, or snarkjs's verification_key.json);
                  a mapped parameters file (.pmap) or a bellperson .params file
                  (the key at its start); a bare binary key (VerifyingKey.to_bytes)
  proofs          concatenated 192-byte proofs (as `prove` writes them); or JSON:
                  one proof object (proof.json) or a list of them

Every failure is a named error that starts with the file's path.
"""
from __future__ import annotations

import mmap
import os
from typing import Callable, TypeVar

from ..errors import ProofFormatError, VerifyingKeyFormatError
from .encoding_json import parse_json
from .keys import VerifyingKey
from .params_mapped import is_mapped_file, read_mapped_vk
from .proof import Proof

# First bytes that start JSON text (an object, a list, a space, a UTF-8 BOM)
# and never a binary key or proof: those start with a coordinate's top byte
# (at most 0x1a) or flag bits 0x40 / 0x80 / 0xc0; 0xef would be every flag at
# once, which no encoding has.
JSON_STARTS = (b"{", b"[", b" ", b"\xef")
ArgT = TypeVar("ArgT")
ReadT = TypeVar("ReadT")


def read_verifying_key(path: str | os.PathLike[str]) -> VerifyingKey:
    """The verifying key in the file at path (see the module docstring for the
    formats, told apart by their first bytes). VerifyingKeyFormatError naming
    the file when it cannot be read or holds no valid key; ParamsFormatError
    for a damaged mapped parameters file."""
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise VerifyingKeyFormatError(f"{path}: cannot read a verifying key: {exc.strerror or exc}") from None
    with f:
        head = f.read(1)
        if head in JSON_STARTS:
            obj = parse_json(head + f.read(), VerifyingKeyFormatError, f"{path}")
            return _named(path, VerifyingKeyFormatError, VerifyingKey.from_json, obj)
        if is_mapped_file(path):
            return read_mapped_vk(path)         # the header and key checked, the sections not read
        if not head:
            raise VerifyingKeyFormatError(f"{path}: empty file, not a verifying key")
        # a .params file is mapped, not read: only its first points are the key
        buf = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    return _named(path, VerifyingKeyFormatError, lambda b: VerifyingKey.read_prefix(b)[0], buf)


def read_proofs(path: str | os.PathLike[str]) -> list[Proof]:
    """The proofs in the file at path, at least one (see the module docstring
    for the formats). ProofFormatError naming the file when it cannot be read,
    is empty, or holds anything but valid proofs."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ProofFormatError(f"{path}: cannot read a proof: {exc.strerror or exc}") from None
    if data[:1] not in JSON_STARTS:
        return _named(path, ProofFormatError, Proof.split, data)
    obj = parse_json(data, ProofFormatError, f"{path}")
    if isinstance(obj, list):
        if not obj:
            raise ProofFormatError(f"{path}: an empty list, no proof")
        return _named(path, ProofFormatError, lambda items: [Proof.from_json(p) for p in items], obj)
    return [_named(path, ProofFormatError, Proof.from_json, obj)]


def _named(path: str | os.PathLike[str], error: type[ProofFormatError | VerifyingKeyFormatError],
           read: Callable[[ArgT], ReadT], arg: ArgT) -> ReadT:
    """read(arg), its `error` prefixed with the path."""
    try:
        return read(arg)
    except error as exc:
        raise type(exc)(f"{path}: {exc}") from None
