# SPDX-License-Identifier: Apache-2.0
"""Points in snarkjs's JSON form: decimal strings of canonical affine coordinates
in projective-looking triples. G1: [x, y, "1"]; G2: [[x.c0, x.c1], [y.c0, y.c1],
["1", "0"]]; the point at infinity has z = 0 (["0", "1", "0"] for G1).
Decoding checks the curve and the subgroup."""
from __future__ import annotations

import json

from ..curve.points import G1Array, G1Point, G2Array, G2Point
from ..errors import EncodingError
from ..field.constants import P


def json_object(obj, error: type[EncodingError], what: str) -> dict:
    """obj, or the object parsed from JSON text; `error` when it is neither."""
    if isinstance(obj, (str, bytes)):
        try:
            obj = json.loads(obj)
        except ValueError as exc:
            raise error(f"{what} JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise error(f"{what} JSON: expected an object, got {type(obj).__name__}")
    return obj


def _int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise EncodingError(f"coordinate {value!r} is not a decimal string")
    try:
        v = int(value, 10) if isinstance(value, str) else value
    except ValueError:
        raise EncodingError(f"coordinate {value!r} is not a decimal string") from None
    if not 0 <= v < P:
        raise EncodingError(f"coordinate {value!r} is not in [0, p)")
    return v


def g1_to_json(point: G1Point) -> list:
    pt = point.to_affine_ints()[0]
    return ["0", "1", "0"] if pt is None else [str(pt[0]), str(pt[1]), "1"]


def g2_to_json(point: G2Point) -> list:
    pt = point.to_affine_ints()[0]
    if pt is None:
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    (x0, x1), (y0, y1) = pt
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def g1_from_json(obj) -> G1Point:
    if not isinstance(obj, (list, tuple)) or len(obj) != 3:
        raise EncodingError(f"G1 JSON point must be [x, y, z], got {obj!r}")
    x, y, z = (_int(v) for v in obj)
    if z == 0:
        return G1Point.identity()
    if z != 1:
        raise EncodingError("G1 JSON point must be affine (z = 1)")
    pts = G1Array.from_affine_ints([(x, y)])
    pts.validate()
    return G1Point(pts.limbs)


def g2_from_json(obj) -> G2Point:
    if not isinstance(obj, (list, tuple)) or len(obj) != 3 or not all(
            isinstance(c, (list, tuple)) and len(c) == 2 for c in obj):
        raise EncodingError(f"G2 JSON point must be [[x0, x1], [y0, y1], [z0, z1]], got {obj!r}")
    (x0, x1), (y0, y1), (z0, z1) = ((_int(a), _int(b)) for a, b in obj)
    if (z0, z1) == (0, 0):
        return G2Point.identity()
    if (z0, z1) != (1, 0):
        raise EncodingError("G2 JSON point must be affine (z = 1)")
    pts = G2Array.from_affine_ints([((x0, x1), (y0, y1))])
    pts.validate()
    return G2Point(pts.limbs)
