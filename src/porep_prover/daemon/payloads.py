# SPDX-License-Identifier: Apache-2.0
"""A request's payload: JSON bytes to the provider's payload, with every
path in it confined to the daemon's input roots.

A provider names the payload keys that hold paths of files it reads
(payload_paths, see engine.SynthesisProvider); each such value (a string,
or a list of strings) must be an absolute path without `..` components
that, resolved (os.path.realpath: every symbolic link followed), lies in
one of daemon.input_roots. With no input roots no path is taken. The
resolved paths replace those given, so that what was checked is what is
read (a link changed afterwards does not lead the provider elsewhere). A
path is at most MAX_PATH_BYTES long (PATH_MAX), without NUL, and without a
character the file system's encoding lacks (JSON can write a lone surrogate,
\\ud800): InvalidInputError otherwise.
"""
from __future__ import annotations

import json
import os
import reprlib

from ..errors import InputPathError, InvalidInputError

MAX_PATHS = 1 << 16       # paths in one payload field (a job's witnesses: one per partition)
MAX_PATH_BYTES = 4096     # PATH_MAX: the system takes no longer path


def decode(data: bytes) -> dict:
    """The JSON object in data (b"": {}); InvalidInputError saying what is wrong."""
    if not data:
        return {}
    try:
        obj = json.loads(bytes(data).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"payload is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"payload is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise InvalidInputError("payload is nested too deeply") from None
    except ValueError as exc:        # an integer past the interpreter's digit limit (sys.get_int_max_str_digits)
        raise InvalidInputError(f"payload holds a number too long to read ({exc})") from None
    if not isinstance(obj, dict):
        raise InvalidInputError(f"payload must be a JSON object, got {type(obj).__name__}")
    return obj


def confine(obj: dict, keys: tuple[str, ...], roots: tuple[str, ...]) -> dict:
    """obj with the path values of keys resolved and checked against roots
    (absolute real paths). InputPathError for a path outside every root,
    with a `..` component, or any path when roots is empty; InvalidInputError
    for a value that is not a path or a list of paths."""
    out = dict(obj)
    for key in keys:
        if key not in obj:
            continue
        value = obj[key]
        if isinstance(value, list):
            if len(value) > MAX_PATHS:
                raise InvalidInputError(f"payload {key}: {len(value)} paths, at most {MAX_PATHS}")
            out[key] = [_inside(f"{key}[{i}]", v, roots) for i, v in enumerate(value)]
        else:
            out[key] = _inside(key, value, roots)
    return out


def _inside(what: str, path, roots: tuple[str, ...]) -> str:
    if not isinstance(path, str) or not path or "\0" in path:
        raise InvalidInputError(f"payload {what} must be a path (a non-empty string), got {reprlib.repr(path)}")
    try:
        size = len(os.fsencode(path))
    except UnicodeEncodeError:
        raise InvalidInputError(f"payload {what} must be a path: {reprlib.repr(path)} holds a character no file "
                                "name can (a lone surrogate)") from None
    if size > MAX_PATH_BYTES:
        raise InvalidInputError(f"payload {what}: a path of {size} bytes: at most {MAX_PATH_BYTES}")
    if not roots:
        raise InputPathError(f"payload {what}: {path}: this daemon reads no files (daemon.input_roots is empty)",
                             path)
    if not os.path.isabs(path):
        raise InputPathError(f"payload {what}: {path}: not an absolute path", path)
    if ".." in path.split("/"):
        raise InputPathError(f"payload {what}: {path}: a path with '..' is not taken", path)
    real = os.path.realpath(path)
    for root in roots:
        if real == root or real.startswith(root.rstrip("/") + "/"):
            return real
    shown = f" (resolves to {real})" if real != os.path.normpath(path) else ""
    raise InputPathError(f"payload {what}: {path}{shown} lies outside the input roots "
                         f"({', '.join(roots)})", path)
