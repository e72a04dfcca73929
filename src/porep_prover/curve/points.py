# SPDX-License-Identifier: Apache-2.0
"""G1 and G2 point arrays and single points over numpy buffers.

Layout contract: `limbs` is a C-contiguous numpy uint64 array of shape (n, 12)
for G1 (x, y in Fq) or (n, 24) for G2 (x.c0, x.c1, y.c0, y.c1), affine,
Montgomery form, little-endian limbs; the point at infinity is all zero. The
same bytes are what the MSM kernels read and what a GPU upload copies.

Encodings are zcash's (48/96 bytes compressed, 96/192 uncompressed; see
native/encoding.c). Decoding checks flags, canonical coordinates and the curve
equation always, and subgroup membership unless `check=False`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Self

import numpy as np

from ..config import resolve_threads
from ..errors import EncodingError, InvalidInputError, NotInSubgroupError, NotOnCurveError, ScalarRangeError
from ..field.constants import FQ_MONT, P, R, limbs
from ..field.fr_array import byte_view, limbs_array
from . import _curve

_ERRORS = {
    1: (EncodingError, "invalid flag bits"),
    2: (EncodingError, "coordinate not below p"),
    3: (NotOnCurveError, "not on the curve"),
    4: (NotInSubgroupError, "not in the prime-order subgroup"),
    5: (EncodingError, "all zero bytes without the infinity flag (infinity is 0x40, then zeros)"),
}


class _PointArray:
    GROUP = 0
    WIDTH = 0
    COMPRESSED = 0
    NAME = ""
    if TYPE_CHECKING:
        # each group's array names its one-point type and its array type (set after the classes), and how an
        # affine point's int coordinates are listed (G1Array._coords, G2Array._coords)
        POINT: ClassVar[type[_Point]]
        ARRAY_TYPE: ClassVar[type[_PointArray]]

        @staticmethod
        def _coords(pt: Any) -> list[int]: ...

    __slots__ = ("limbs", "__weakref__")

    def __init__(self, limbs_: np.ndarray):
        self.limbs = limbs_array(limbs_, self.WIDTH, type(self).__name__)

    @classmethod
    def zeros(cls, n: int) -> Self:
        """n points at infinity."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InvalidInputError(f"{cls.__name__}.zeros needs a count (an int >= 0), got {n!r}")
        return cls(np.zeros((int(n), cls.WIDTH), dtype=np.uint64))

    @classmethod
    def generator(cls, n: int = 1) -> Self:
        out = cls.zeros(1)
        _curve.generator(cls.GROUP, out.limbs)
        if n != 1:
            out = cls(np.repeat(out.limbs, n, axis=0))
        return out

    @classmethod
    def from_bytes(cls, buf, compressed: bool = True, check: bool = True, threads: int | None = None) -> Self:
        """Points from back-to-back encodings in any contiguous bytes-like buf.
        Raises EncodingError (or its NotOnCurveError / NotInSubgroupError
        subclasses) naming the first bad index; InvalidInputError when buf is
        not bytes-like (str, None, a list) or is a strided view."""
        data = byte_view(buf, f"{cls.NAME} from_bytes")
        size = cls.COMPRESSED * (1 if compressed else 2)
        if len(data) % size:
            raise EncodingError(f"{cls.NAME} bytes: length {len(data)} is not a multiple of {size}")
        out = cls.zeros(len(data) // size)
        code, index = _curve.decode(cls.GROUP, data, out.limbs, compressed, check, resolve_threads(threads))
        if not code and not compressed:
            code, index = _unflagged_infinity(data, out.limbs, size)
        if code:
            err, what = _ERRORS[code]
            raise err(f"{cls.NAME} point {index}: {what}", index=index)
        return out

    @classmethod
    def concat(cls, parts) -> Self:
        return cls(np.concatenate([p.limbs for p in parts])) if parts else cls.zeros(0)

    def to_bytes(self, compressed: bool = True, threads: int | None = None) -> bytes:
        size = self.COMPRESSED * (1 if compressed else 2)
        out = bytearray(len(self) * size)
        _curve.encode(self.GROUP, self.limbs, out, compressed, resolve_threads(threads))
        return bytes(out)

    def first_not_on_curve(self, threads: int | None = None) -> int:
        """Index of the first point off the curve, or -1."""
        return _curve.first_invalid(self.GROUP, self.limbs, False, resolve_threads(threads))

    def first_not_in_subgroup(self, threads: int | None = None) -> int:
        """Index of the first point outside the prime-order subgroup (or off the curve), or -1."""
        return _curve.first_invalid(self.GROUP, self.limbs, True, resolve_threads(threads))

    def validate(self, subgroup: bool = True, threads: int | None = None) -> None:
        """Raise NotOnCurveError / NotInSubgroupError for the first invalid point."""
        bad = self.first_not_on_curve(threads)
        if bad >= 0:
            raise NotOnCurveError(f"{self.NAME} point {bad} is not on the curve")
        if subgroup:
            bad = self.first_not_in_subgroup(threads)
            if bad >= 0:
                raise NotInSubgroupError(f"{self.NAME} point {bad} is not in the prime-order subgroup")

    def is_infinity(self) -> np.ndarray:
        return np.logical_not(self.limbs.any(axis=1))

    def __len__(self) -> int:
        return self.limbs.shape[0]

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            row = self.limbs[key]
            return self.POINT(np.ascontiguousarray(row.reshape(1, self.WIDTH)))
        if isinstance(key, slice):
            return type(self)(self.limbs[key])
        return type(self)(np.ascontiguousarray(self.limbs[np.asarray(key)]))

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and np.array_equal(self.limbs, other.limbs)

    __hash__ = None  # type: ignore[assignment]  # unhashable on purpose: equal by value, over a mutable buffer

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={len(self)})"

    # Group operations, element-wise (used for small counts: proof assembly, tests).

    def __add__(self, other):
        if type(other) is not type(self) and not (isinstance(other, _PointArray) and other.GROUP == self.GROUP):
            return NotImplemented
        out = type(self).zeros(len(self))
        _curve.add(self.GROUP, self.limbs, np.ascontiguousarray(np.broadcast_to(other.limbs, self.limbs.shape)),
                   out.limbs)
        return out

    def __neg__(self):
        out = type(self).zeros(len(self))
        _curve.neg(self.GROUP, self.limbs, out.limbs)
        return out

    def __sub__(self, other):
        return self + (-other)

    def scale(self, scalars: Iterable[int], jacobian: bool = False):
        """Element-wise k_i * P_i for Python ints 0 <= k_i < 2^256 (not constant
        time). A single point is broadcast over all the scalars."""
        ks = list(scalars)
        base = self
        if len(self) == 1 and len(ks) != 1:
            base = type(self)(np.repeat(self.limbs, len(ks), axis=0))
        if len(ks) != len(base):
            raise InvalidInputError(f"{len(ks)} scalars for {len(self)} points")
        for k in ks:
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < 1 << 256:
                raise ScalarRangeError(f"scalar {k!r} is not an int in [0, 2^256)")
        k_limbs = np.array([limbs(k, 4) for k in ks], dtype=np.uint64).reshape(len(ks), 4)
        out = (type(self) if len(base) == len(self) else type(self).ARRAY_TYPE).zeros(len(base))
        (_curve.mul_jacobian if jacobian else _curve.mul)(self.GROUP, base.limbs, k_limbs, out.limbs)
        return out

    def __mul__(self, k):
        if isinstance(k, bool) or not isinstance(k, int):
            return NotImplemented
        return self.scale([k % R] * len(self))

    __rmul__ = __mul__

    @classmethod
    def from_affine_ints(cls, points: Iterable):
        """From affine points with canonical int coordinates, (x, y) for G1 and
        ((x.c0, x.c1), (y.c0, y.c1)) for G2, or None for infinity. Not validated."""
        rows = [[0] * cls.WIDTH if pt is None else sum((limbs(v, 6) for v in _fq_to_mont_ints(cls._coords(pt))), [])
                for pt in points]
        return cls(np.array(rows, dtype=np.uint64).reshape(len(rows), cls.WIDTH))

    def to_affine_ints(self) -> list:
        """Affine points with canonical int coordinates (None for infinity)."""
        return [_affine_ints(row, self.GROUP) for row in self.limbs]


if TYPE_CHECKING:
    # _Point is mixed in before a group's array (G1Point(_Point, G1Array)): it reads and extends that array
    _PointBase = _PointArray
else:
    _PointBase = object


class _Point(_PointBase):
    """One point: a length-1 array with scalar-like behaviour."""

    if TYPE_CHECKING:
        ARRAY: ClassVar[type[_PointArray]]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_bytes().hex()})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and np.array_equal(self.limbs, other.limbs)

    __hash__ = None

    def is_zero(self) -> bool:
        """True for the point at infinity."""
        return not self.limbs.any()

    def __init__(self, limbs_: np.ndarray):
        super().__init__(limbs_)
        if self.limbs.shape[0] != 1:
            raise InvalidInputError(f"{type(self).__name__} needs one point, a uint64 array of shape "
                                    f"(1, {self.WIDTH}); got {self.limbs.shape[0]} rows")

    # narrower than the array's: one encoding, decoded on the calling thread (no threads argument)
    @classmethod
    def from_bytes(cls, buf, compressed: bool = True, check: bool = True) -> Self:  # type: ignore[override]
        """One point from its encoding (see the arrays' from_bytes)."""
        data = byte_view(buf, f"{cls.NAME} point")
        size = cls.COMPRESSED * (1 if compressed else 2)
        if len(data) != size:
            raise EncodingError(f"{cls.NAME} point: {len(data)} bytes, expected {size}")
        return cls(cls.ARRAY.from_bytes(data, compressed, check).limbs)

    @classmethod
    def identity(cls) -> Self:
        return cls(np.zeros((1, cls.WIDTH), dtype=np.uint64))

    # narrower than the array's: one point, no count
    @classmethod
    def generator(cls) -> Self:  # type: ignore[override]
        return cls(cls.ARRAY.generator().limbs)


def _unflagged_infinity(data: memoryview, limbs_: np.ndarray, size: int) -> tuple[int, int]:
    """(5, index) of the first uncompressed encoding that decoded to infinity
    without the infinity flag, else (0, -1). The decoder reads all-zero bytes
    as the coordinates (0, 0), which is how infinity is held in memory; the
    zcash encoding has infinity only as 0x40 then zeros, so all zeros is not
    a point. Only the decoded infinities are looked at: one pass over limbs
    just written, none over the input."""
    infinity = np.flatnonzero(~limbs_.any(axis=1))
    if not len(infinity):
        return 0, -1
    first_bytes = np.frombuffer(data, dtype=np.uint8)[infinity * size]
    bad = infinity[(first_bytes & 0x40) == 0]
    return (5, int(bad[0])) if len(bad) else (0, -1)


def _fq_to_mont_ints(values: list[int]) -> list[int]:
    return [v * FQ_MONT % P for v in values]


class G1Array(_PointArray):
    """Array of G1 points (rows of 12 uint64: x, y)."""

    GROUP, WIDTH, COMPRESSED, NAME = 1, 12, 48, "G1"

    @staticmethod
    def _coords(pt) -> list[int]:
        return list(pt)


class G2Array(_PointArray):
    """Array of G2 points (rows of 24 uint64: x.c0, x.c1, y.c0, y.c1)."""

    GROUP, WIDTH, COMPRESSED, NAME = 2, 24, 96, "G2"

    @staticmethod
    def _coords(pt) -> list[int]:
        return [pt[0][0], pt[0][1], pt[1][0], pt[1][1]]


def _affine_ints(row: np.ndarray, group: int):
    if not row.any():
        return None
    inv = pow(FQ_MONT, -1, P)
    vals = [int.from_bytes(row[6 * i : 6 * i + 6].tobytes(), "little") * inv % P for i in range(2 * group)]
    return (vals[0], vals[1]) if group == 1 else ((vals[0], vals[1]), (vals[2], vals[3]))


class G1Point(_Point, G1Array):
    """One G1 point (the result of an MSM, a proof element)."""

    ARRAY = G1Array


class G2Point(_Point, G2Array):
    """One G2 point."""

    ARRAY = G2Array


G1Array.POINT = G1Point
G2Array.POINT = G2Point
G1Array.ARRAY_TYPE = G1Array
G2Array.ARRAY_TYPE = G2Array
