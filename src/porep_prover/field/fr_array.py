# SPDX-License-Identifier: Apache-2.0
"""FrArray: a vector of scalars over a numpy buffer.

Layout contract (shared with every native kernel, the parameter files' readers
and the GPU): `limbs` is a C-contiguous numpy uint64 array of shape (n, 4),
each row one element of Fr in Montgomery form (a * 2^256 mod r), little-endian
limbs, fully reduced. Views share memory with their parent.
"""
from __future__ import annotations

import secrets
from typing import Iterable, Sequence

import numpy as np

from ..config import resolve_threads
from ..errors import EncodingError, InvalidInputError, LengthMismatchError, ScalarRangeError
from ..memory.sizes import SCALAR_BYTES
from . import _field
from .constants import FR_LIMBS, R


def limbs_array(value, width: int, kind: str) -> np.ndarray:
    """value as a C-contiguous uint64 array of shape (n, width), or InvalidInputError."""
    if not isinstance(value, np.ndarray):
        raise InvalidInputError(f"{kind} needs a numpy array, got {type(value).__name__}")
    if value.dtype != np.uint64 or value.ndim != 2 or value.shape[1] != width:
        raise InvalidInputError(f"{kind} needs a uint64 array of shape (n, {width}), got {value.dtype} {value.shape}")
    return np.ascontiguousarray(value)


def byte_view(buf, what: str, error: type[InvalidInputError] = InvalidInputError) -> memoryview:
    """buf's bytes as a flat memoryview, without a copy: bytes, bytearray,
    memoryview, mmap or a C-contiguous numpy array. Raises `error` (an
    InvalidInputError) naming `what` for anything else (str, None, lists,
    ints) and for strided or otherwise non-contiguous views."""
    try:
        view = memoryview(buf)
    except TypeError:
        raise error(f"{what} needs a bytes-like object, got {type(buf).__name__}") from None
    if not view.c_contiguous:
        raise error(f"{what} needs a contiguous buffer, got a strided view (copy it first: bytes(view))")
    return view.cast("B")


def _count(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidInputError(f"{what} needs a count (an int >= 0), got {n!r}")
    return int(n)


def _values(values, what: str) -> list:
    """values as a list; InvalidInputError for a str, bytes or a non-iterable."""
    if isinstance(values, (str, bytes)):
        raise InvalidInputError(f"{what} needs an iterable of ints, got {type(values).__name__}")
    try:
        return list(values)
    except TypeError:
        raise InvalidInputError(f"{what} needs an iterable of ints, got {type(values).__name__}") from None


class FrArray:
    """Vector of Fr elements (scalars mod r)."""

    __slots__ = ("limbs",)

    def __init__(self, limbs: np.ndarray):
        self.limbs = limbs_array(limbs, FR_LIMBS, "FrArray")

    # ------------------------------------------------------------ construction

    @classmethod
    def zeros(cls, n: int) -> "FrArray":
        return cls(np.zeros((_count(n, "FrArray.zeros"), FR_LIMBS), dtype=np.uint64))

    @classmethod
    def from_ints(cls, values: Iterable[int]) -> "FrArray":
        """Elements from Python ints in [0, r). Raises ScalarRangeError for an
        int outside that range, InvalidInputError for anything not an int
        (or values not an iterable)."""
        values = _values(values, "FrArray.from_ints")
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, int):
                raise InvalidInputError(f"element {i} is {type(v).__name__}, not int")
            if not 0 <= v < R:
                raise ScalarRangeError(f"element {i} = {v} is outside [0, r)")
        return cls.from_bytes(b"".join(v.to_bytes(SCALAR_BYTES, "little") for v in values))

    @classmethod
    def from_ints_mod(cls, values: Iterable[int]) -> "FrArray":
        """Elements from any Python ints, reduced mod r (negative ones too);
        InvalidInputError for anything not an int."""
        values = _values(values, "FrArray.from_ints_mod")
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, int):
                raise InvalidInputError(f"element {i} is {type(v).__name__}, not int")
        return cls.from_ints([v % R for v in values])

    @classmethod
    def from_bytes(cls, buf, threads: int | None = None) -> "FrArray":
        """Elements from 32-byte little-endian canonical encodings (< r) back
        to back, in any contiguous bytes-like buf (see byte_view). Raises
        EncodingError for a length not a multiple of 32, ScalarRangeError for
        a value not below r, InvalidInputError for buf not bytes-like."""
        data = byte_view(buf, "FrArray.from_bytes")
        if len(data) % SCALAR_BYTES:
            raise EncodingError(f"Fr bytes: length {len(data)} is not a multiple of {SCALAR_BYTES}")
        out = np.empty((len(data) // SCALAR_BYTES, FR_LIMBS), dtype=np.uint64)
        bad = _field.fr_decode(data, out, resolve_threads(threads))
        if bad >= 0:
            raise ScalarRangeError(f"Fr bytes: element {bad} is not below r")
        return cls(out)

    @classmethod
    def random(cls, n: int, rng=None) -> "FrArray":
        """n uniform elements; rng is a random.Random-like object (default: secrets)."""
        draw = rng.randrange if rng is not None else secrets.randbelow
        return cls.from_ints(draw(R) for _ in range(_count(n, "FrArray.random")))

    @classmethod
    def concat(cls, parts: Sequence["FrArray"]) -> "FrArray":
        if not parts:
            return cls.zeros(0)
        return cls(np.concatenate([p.limbs for p in parts]))

    # ------------------------------------------------------------ conversion

    def to_bytes(self, threads: int | None = None) -> bytes:
        out = bytearray(len(self) * SCALAR_BYTES)
        _field.fr_encode(self.limbs, out, resolve_threads(threads))
        return bytes(out)

    def to_ints(self) -> list[int]:
        data = self.to_bytes()
        return [int.from_bytes(data[i : i + SCALAR_BYTES], "little") for i in range(0, len(data), SCALAR_BYTES)]

    def copy(self) -> "FrArray":
        return FrArray(self.limbs.copy())

    # ------------------------------------------------------------ container

    def __len__(self) -> int:
        return self.limbs.shape[0]

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return FrArray(self.limbs[key : key + 1 if key != -1 else None]).to_ints()[0]
        if isinstance(key, slice):
            return FrArray(self.limbs[key])
        return FrArray(np.ascontiguousarray(self.limbs[np.asarray(key)]))

    def __eq__(self, other) -> bool:
        return isinstance(other, FrArray) and np.array_equal(self.limbs, other.limbs)

    __hash__ = None  # type: ignore[assignment]  # unhashable on purpose: equal by value, over a mutable buffer

    def __repr__(self) -> str:
        head = ", ".join(hex(v) for v in self[:3].to_ints())
        return f"FrArray(n={len(self)}, [{head}{', ...' if len(self) > 3 else ''}])"

    # ------------------------------------------------------------ arithmetic

    def _binary(self, op: str, other) -> "FrArray":
        if isinstance(other, int) and not isinstance(other, bool):
            other = FrArray(np.ascontiguousarray(np.broadcast_to(FrArray.from_ints([other % R]).limbs,
                                                                 self.limbs.shape)))
        if not isinstance(other, FrArray):
            return NotImplemented
        if len(other) != len(self):
            raise LengthMismatchError(f"FrArray {op}: lengths {len(self)} and {len(other)} differ")
        out = FrArray.zeros(len(self))
        _field.fr_apply(_field.OPS[op], self.limbs, other.limbs, out.limbs)
        return out

    def _unary(self, op: str) -> "FrArray":
        out = FrArray.zeros(len(self))
        _field.fr_apply(_field.OPS[op], self.limbs, self.limbs, out.limbs)
        return out

    def __add__(self, other):
        return self._binary("add", other)

    def __sub__(self, other):
        return self._binary("sub", other)

    def __mul__(self, other):
        """Element-wise product; an int is broadcast (reduced mod r)."""
        return self._binary("mul", other)

    __rmul__ = __mul__

    def __neg__(self):
        return self._unary("neg")

    def inverse(self) -> "FrArray":
        """Element-wise 1/x (the inverse of 0 is 0)."""
        return self._unary("inv")

    def is_zero(self) -> np.ndarray:
        """Boolean mask of the zero elements."""
        return np.logical_not(self.limbs.any(axis=1))
