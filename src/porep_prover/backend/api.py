# SPDX-License-Identifier: Apache-2.0
"""Public kernel functions: validate, pick the backend, run."""
from __future__ import annotations

from typing import cast

from ..config import resolve_threads
from ..curve.points import G1Array, G1Point, G2Array, G2Point, _PointArray
from ..errors import DomainSizeError, InvalidInputError, LengthMismatchError
from ..field.constants import FR_TWO_ADICITY
from ..field.fr_array import FrArray
from . import get_backend


def _points(points: object, what: str) -> G1Array | G2Array:
    if not isinstance(points, _PointArray):
        raise InvalidInputError(f"{what}: points must be a G1Array or G2Array, got {type(points).__name__}")
    return cast("G1Array | G2Array", points)     # every point array is one of the two groups' (or their points)


def _scalars(scalars: object, what: str) -> FrArray:
    if isinstance(scalars, FrArray):
        return scalars
    if isinstance(scalars, (list, tuple)):
        return FrArray.from_ints(scalars)
    raise InvalidInputError(f"{what}: scalars must be an FrArray or a list of ints, got {type(scalars).__name__}")


def msm(points: G1Array | G2Array, scalars: FrArray | list[int] | tuple[int, ...], backend: str = "cpu",
        threads: int | None = None, stats: dict[str, int] | None = None) -> G1Point | G2Point:
    """Multi-scalar multiplication sum_i scalars[i] * points[i].

    Parameters
    ----------
    points : G1Array or G2Array
    scalars : FrArray (or a list of ints in [0, r)), the same length as points
    backend : "cpu", "gpu" or "auto"
    threads : CPU threads (default: POREP_PROVER_THREADS or all cores)
    stats : if a dict is given, it receives how the scalars were split
        (zeros, ones, full) and the Pippenger window size.

    Returns
    -------
    G1Point or G2Point (same group as points).

    Raises
    ------
    LengthMismatchError, InvalidInputError, UnknownBackendError,
    BackendUnavailableError, NativeMemoryError.
    """
    points = _points(points, "msm")
    scalars = _scalars(scalars, "msm")
    if len(points) != len(scalars):
        raise LengthMismatchError(f"msm: {len(points)} points but {len(scalars)} scalars")
    result, split = get_backend(backend).msm(points, scalars, resolve_threads(threads))
    if stats is not None:
        stats.update(split)
    return result


def batch_sum(points: G1Array | G2Array, backend: str = "cpu", threads: int | None = None) -> G1Point | G2Point:
    """sum_i points[i] by batch-affine addition."""
    points = _points(points, "batch_sum")
    return get_backend(backend).batch_sum(points, resolve_threads(threads))


def domain_log(n: int) -> int:
    """log2(n) for a power of two n <= 2^32; DomainSizeError otherwise."""
    if n < 1 or n & (n - 1) or n > 1 << FR_TWO_ADICITY:
        raise DomainSizeError(f"NTT length {n} is not a power of two in [1, 2^{FR_TWO_ADICITY}]")
    return n.bit_length() - 1


def ntt(values: FrArray | list[int] | tuple[int, ...], inverse: bool = False, coset: bool = False,
        backend: str = "cpu", threads: int | None = None) -> FrArray:
    """Forward or inverse NTT over Fr, optionally on the coset 7*<omega>.

    forward: X_k = sum_j x_j w^(jk), w = 7^((r-1)/n); inverse: the exact inverse
    (including 1/n). With coset=True the forward transform evaluates on
    7*<w> (inputs scaled by 7^j first) and the inverse undoes that. The input
    is not modified. Raises DomainSizeError unless len is a power of two <= 2^32.
    """
    values = _scalars(values, "ntt")
    domain_log(len(values))
    return get_backend(backend).ntt(values, bool(inverse), bool(coset), resolve_threads(threads))
