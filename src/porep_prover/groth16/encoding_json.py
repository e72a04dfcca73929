# SPDX-License-Identifier: Apache-2.0
"""Points in snarkjs's JSON form: decimal strings of canonical affine coordinates
in projective-looking triples. G1: [x, y, "1"]; G2: [[x.c0, x.c1], [y.c0, y.c1],
["1", "0"]]; the point at infinity has z = 0 (["0", "1", "0"] for G1).
Decoding checks the curve and the subgroup. parse_json / read_json_file are
the JSON reading every key, proof and public-inputs reader shares: each
failure is the caller's named error, with the file, line and column."""
from __future__ import annotations

import json
import os

from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import EncodingError, PorepProverError
from ..field.constants import P
from ..text import decode_utf8, read_text


def short(value: object, limit: int = 40) -> str:
    """repr(value), cut to about limit characters (error messages quote
    values from files, which may be megabytes long)."""
    text = repr(value) if not isinstance(value, (list, dict)) else f"a {type(value).__name__} of {len(value)}"
    return text if len(text) <= limit else text[:limit] + "..."


def parse_json(data: str | bytes | bytearray | memoryview, error: type[PorepProverError], where: str) -> object:
    """The JSON value in data (UTF-8 bytes, a leading BOM allowed, or str).
    Raises `error` starting with `where` and saying the line and column when
    the bytes are not UTF-8 or the text not JSON, and when it nests deeper
    than Python's recursion allows or holds a number too long to convert."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = decode_utf8(bytes(data), error, where)  # the one copy decode_utf8 made itself
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        problem = exc.msg.removesuffix(" at")     # json's "Unterminated string starting at" says where below
        raise error(f"{where}: not valid JSON: {problem} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to read") from None
    except ValueError:      # an integer of more digits than int() converts
        raise error(f"{where}: not valid JSON: a number too long to read") from None


def read_json_file(path: str | os.PathLike[str], error: type[PorepProverError], what: str) -> object:
    """The JSON value in the file at path; `error` naming the file when it
    cannot be read or is not UTF-8 JSON (see parse_json)."""
    return parse_json(read_text(path, error, what), error, f"{path}")


def json_object(obj: object, error: type[EncodingError], what: str) -> dict[str, object]:
    """obj, or the object parsed from JSON text; `error` when it is neither."""
    if isinstance(obj, (str, bytes, bytearray, memoryview)):
        obj = parse_json(obj, error, f"{what} JSON")
    if not isinstance(obj, dict):
        raise error(f"{what} JSON: expected an object, got {type(obj).__name__}")
    return obj


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise EncodingError(f"coordinate {short(value)} is not a decimal string")
    # ASCII digits only: int() would also take spaces, "_" and other scripts' digits
    if isinstance(value, str) and not (value.isascii() and value.isdigit() and len(value) <= 200):
        raise EncodingError(f"coordinate {short(value)} is not a decimal string below p")
    v = int(value, 10) if isinstance(value, str) else value
    if not 0 <= v < P:
        raise EncodingError(f"coordinate {short(value)} is not in [0, p)")
    return v


def g1_to_json(point: G1Point) -> list[str]:
    pt = point.to_affine_ints()[0]
    return ["0", "1", "0"] if pt is None else [str(pt[0]), str(pt[1]), "1"]


def g2_to_json(point: G2Point) -> list[list[str]]:
    pt = point.to_affine_ints()[0]
    if pt is None:
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    (x0, x1), (y0, y1) = pt
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def g1_from_json(obj: object) -> G1Point:
    if not isinstance(obj, (list, tuple)) or len(obj) != 3:
        raise EncodingError(f"G1 JSON point must be [x, y, z], got {short(obj)}")
    x, y, z = (_int(v) for v in obj)
    if z == 0:
        return G1Point.identity()
    if z != 1:
        raise EncodingError("G1 JSON point must be affine (z = 1)")
    pts = G1Array.from_affine_ints([(x, y)])
    pts.validate()
    return G1Point(pts.limbs)


def g2_from_json(obj: object) -> G2Point:
    if not isinstance(obj, (list, tuple)) or len(obj) != 3 or not all(
            isinstance(c, (list, tuple)) and len(c) == 2 for c in obj):
        raise EncodingError(f"G2 JSON point must be [[x0, x1], [y0, y1], [z0, z1]], got {short(obj)}")
    (x0, x1), (y0, y1), (z0, z1) = ((_int(a), _int(b)) for a, b in obj)
    if (z0, z1) == (0, 0):
        return G2Point.identity()
    if (z0, z1) != (1, 0):
        raise EncodingError("G2 JSON point must be affine (z = 1)")
    pts = G2Array.from_affine_ints([((x0, x1), (y0, y1))])
    pts.validate()
    return G2Point(pts.limbs)
