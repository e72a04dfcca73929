# SPDX-License-Identifier: Apache-2.0
"""The peers our CPU kernels are measured against, on the same inputs.

blst: supranational's C/assembly library, reached through the copy statically
linked into the `ckzg` wheel (its extension module exports the blst C API; an
accident of linking, fine for benchmarks, not for product code). ctypes drops
the GIL during each call, so halves of an MSM can run in two threads.
arkworks: `py_arkworks_bls12381` (Rust arkworks 0.4), multiexp_unchecked.
"""
from __future__ import annotations

import ctypes as C
import importlib.util
from concurrent.futures import ThreadPoolExecutor

from py_arkworks_bls12381 import G1Point as ArkG1, G2Point as ArkG2, Scalar

# group -> (jacobian bytes, affine bytes, compressed bytes, uncompressed bytes)
SIZES = {"p1": (144, 96, 48, 96), "p2": (288, 192, 96, 192)}


def _load_blst():
    spec = importlib.util.find_spec("ckzg")
    if spec is None or spec.origin is None:
        return None
    lib = C.CDLL(spec.origin)
    vp, sz = C.c_void_p, C.c_size_t
    for g in SIZES:
        for name, res, args in ((f"blst_{g}_deserialize", C.c_int, [vp, C.c_char_p]),
                                (f"blst_{g}_compress", None, [vp, vp]),
                                (f"blst_{g}_add_or_double", None, [vp, vp, vp]),
                                (f"blst_{g}s_mult_pippenger_scratch_sizeof", sz, [sz]),
                                (f"blst_{g}s_mult_pippenger", None, [vp, vp, sz, vp, sz, vp])):
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
    return lib


BLST = _load_blst()


class BlstInput:
    """Points (contiguous affine buffer) and scalars (32-byte LE) in blst's form."""

    def __init__(self, group: str, uncompressed: bytes, scalars: bytes, n: int):
        jac, aff, _, unc = SIZES[group]
        self.group, self.n = group, n
        self.points = (C.c_ubyte * (aff * n))()
        deser = getattr(BLST, f"blst_{group}_deserialize")
        base = C.addressof(self.points)
        for i in range(n):
            if deser(base + aff * i, uncompressed[unc * i:unc * (i + 1)]):
                raise ValueError(f"blst rejected point {i}")
        self.scalars = C.create_string_buffer(scalars, len(scalars))

    def _msm(self, lo: int, hi: int):
        g, (jac, aff, _, _) = self.group, SIZES[self.group]
        out = (C.c_ubyte * jac)()
        count = hi - lo
        scratch = (C.c_ubyte * getattr(BLST, f"blst_{g}s_mult_pippenger_scratch_sizeof")(count))()
        pp = (C.c_void_p * 2)(C.addressof(self.points) + aff * lo, None)
        sp = (C.c_void_p * 2)(C.addressof(self.scalars) + 32 * lo, None)
        getattr(BLST, f"blst_{g}s_mult_pippenger")(C.addressof(out), C.addressof(pp), count, C.addressof(sp),
                                                   255, C.addressof(scratch))
        return out

    def msm(self, threads: int, pool: ThreadPoolExecutor) -> bytes:
        """Compressed result; threads > 1 splits the points into that many parts."""
        g = self.group
        bounds = [self.n * t // threads for t in range(threads + 1)]
        parts = list(pool.map(lambda t: self._msm(bounds[t], bounds[t + 1]), range(threads)))
        acc = parts[0]
        for p in parts[1:]:
            getattr(BLST, f"blst_{g}_add_or_double")(C.addressof(acc), C.addressof(acc), C.addressof(p))
        out = (C.c_ubyte * SIZES[g][2])()
        getattr(BLST, f"blst_{g}_compress")(C.addressof(out), C.addressof(acc))
        return bytes(out)


class ArkInput:
    """Points and scalars as arkworks objects."""

    def __init__(self, group: str, compressed: bytes, scalars: list[int]):
        cls = ArkG1 if group == "p1" else ArkG2
        size = SIZES[group][2]
        self.cls = cls
        self.points = [cls.from_compressed_bytes_unchecked(compressed[i:i + size])
                       for i in range(0, len(compressed), size)]
        self.scalars = [Scalar(s) for s in scalars]

    def msm(self, threads: int, pool: ThreadPoolExecutor) -> bytes:
        n = len(self.points)
        bounds = [n * t // threads for t in range(threads + 1)]
        parts = list(pool.map(lambda t: self.cls.multiexp_unchecked(self.points[bounds[t]:bounds[t + 1]],
                                                                    self.scalars[bounds[t]:bounds[t + 1]]),
                              range(threads)))
        acc = parts[0]
        for p in parts[1:]:
            acc = acc + p
        return acc.to_compressed_bytes()
