# SPDX-License-Identifier: Apache-2.0
"""What kind of file an argument names, told by its first bytes, so that a
file given in the wrong place (arguments swapped) is named with what was
expected there and what it is, before a reader makes less sense of it; and
`naming`, which puts a file's path at the front of an error read from it.

Magics: .npz is a zip ("PK\\x03\\x04"), circom's .r1cs "r1cs", snarkjs's
.wtns "wtns" and .zkey "zkey", our mapped parameters "PPRMAP0"; JSON starts
with "{" or "["; a raw witness with the constant one (32-byte little-endian
1). Bellperson .params have no magic.
"""
from __future__ import annotations

import contextlib
import os

from ..errors import FileKindError, PorepProverError

ONE = (1).to_bytes(32, "little")

MAGICS = (
    (b"PK\x03\x04", "npz", "a circuit (.npz)"),
    (b"r1cs", "r1cs", "a circom circuit (.r1cs)"),
    (b"wtns", "wtns", "a snarkjs witness (.wtns)"),
    (b"zkey", "zkey", "a snarkjs proving key (.zkey)"),
    (b"PPRMAP0", "pmap", "mapped parameters (.pmap)"),
)
OTHERS = {
    "json": "a JSON file",
    "raw-witness": "a raw witness (32-byte values starting with 1)",
    "empty": "an empty file",
    "unknown": "a file without a known magic (as bellperson .params are)",
}

# The kinds each argument accepts, and how to say so.
CIRCUIT = ({"npz", "r1cs"}, "a circuit (.npz or circom .r1cs)")
WITNESS = ({"wtns", "raw-witness"}, "a witness (snarkjs .wtns, or raw 32-byte values starting with 1)")
PARAMS = ({"zkey", "pmap", "unknown"}, "parameters (bellperson .params, mapped .pmap or snarkjs .zkey)")


def file_kind(path: str | os.PathLike) -> tuple[str, str]:
    """(kind, kind in words) of the file at path, from its first 32 bytes;
    OSError when it cannot be read."""
    with open(path, "rb") as f:
        head = f.read(len(ONE))
    for magic, kind, words in MAGICS:
        if head.startswith(magic):
            return kind, words
    if not head:
        kind = "empty"
    elif head.lstrip()[:1] in (b"{", b"["):
        kind = "json"
    elif head == ONE:
        kind = "raw-witness"
    else:
        kind = "unknown"
    return kind, OTHERS[kind]


def expect(path: str | os.PathLike, role: str, accepted: tuple[set, str]) -> str:
    """The kind of the file at path when it is one of accepted's; else
    FileKindError naming the file, the role it was given for, what that takes
    and what the file is."""
    kinds, wanted = accepted
    kind, words = file_kind(path)
    if kind not in kinds:
        raise FileKindError(f"{path}: given as the {role}, is {words}, not {wanted}", path=os.fspath(path),
                            expected=wanted, found=words)
    return kind


def check_order(command: str, *slots: tuple[str, str, tuple[set, str]]) -> None:
    """Each (role, path, accepted) of a command's positional files checked
    with `expect`; when some are wrong, one FileKindError saying the order the
    command takes and what each misplaced file is (swapped arguments)."""
    wrong = []
    for role, path, (kinds, wanted) in slots:
        kind, words = file_kind(path)
        if kind not in kinds:
            wrong.append((role, path, wanted, words))
    if not wrong:
        return
    order = " ".join(role.upper() for role, _, _ in slots)
    detail = "; ".join(f"{path}, given as {role.upper()}, is {words}, not {wanted}"
                       for role, path, wanted, words in wrong)
    raise FileKindError(f"{command} takes {order}; {detail}", path=os.fspath(wrong[0][1]),
                        expected=wrong[0][2], found=wrong[0][3])


@contextlib.contextmanager
def naming(path: str | os.PathLike):
    """Errors of porep_prover raised in the block, their message prefixed
    with path where it does not already start with it (same exception)."""
    try:
        yield
    except PorepProverError as exc:
        name = os.fspath(path)
        if not str(exc).startswith(name) and exc.args and isinstance(exc.args[0], str):
            exc.args = (f"{name}: {exc.args[0]}",) + exc.args[1:]
        raise
