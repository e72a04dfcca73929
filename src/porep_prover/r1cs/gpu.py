# SPDX-License-Identifier: Apache-2.0
"""A, B, C evaluated on the GPU (kernels in r1cs/kernels/r1cs.cu, registered here): the
circuit's CSR matrices stay resident on the device (uploaded once per
circuit, like parameter points), each partition uploads only its witness,
and a, b, c never leave the device: they feed the H pipeline directly.
"""
from __future__ import annotations

import pathlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..cuda.arrays import DeviceScalars
from ..cuda.modules import register_module
from ..errors import InvalidInputError, UnsatisfiedError
from ..field.fr_array import FrArray

if TYPE_CHECKING:
    from ..cuda.kernel_host import DeviceBuffer, KernelHost
    from .system import R1CS, SparseMatrix

NONE_FAILED = 0xFFFFFFFF

register_module("r1cs", pathlib.Path(__file__).resolve().parent / "kernels" / "r1cs.cu")


class GpuR1cs:
    """The R1CS side of one GPU backend (its cuda.device.Device supplies alloc / launch / resident / upload)."""

    def __init__(self, gpu: KernelHost):
        self.gpu = gpu

    def _resident(self, array: NDArray[np.generic] | None) -> DeviceBuffer | int:
        """The device copy of array, or a null address for an empty or absent one."""
        return self.gpu.memory.resident.resident_array(array) if array is not None and len(array) else 0

    def matvec_into(self, matrix: SparseMatrix, w_buf: DeviceBuffer | int, out_buf: DeviceBuffer) -> None:
        """out_buf[:rows] = matrix w (out_buf zeroed beyond by the caller)."""
        gpu = self.gpu
        arrays = (matrix.indptr, matrix.col, matrix.coeff.limbs, matrix.coeff_id)   # coeff_id may be None
        with gpu.memory.resident.holding(*arrays):   # uploading one must not evict another
            gpu.launch("r1cs", "r1cs_matvec", matrix.rows,
                       [*(self._resident(a) for a in arrays), matrix.rows, w_buf, out_buf], block=128)

    def evaluate(self, r1cs: R1CS, witness: DeviceScalars, length: int, check: bool) -> list[DeviceBuffer]:
        """Device buffers a, b, c of length rows (A w with the inputs at rows
        m .. m + k - 1, as bellman lays them out; B w; C w; zero beyond), for
        a witness on the device (DeviceScalars of r1cs.num_variables).
        check: raise UnsatisfiedError naming the first failing constraint."""
        gpu = self.gpu
        if len(witness) != r1cs.num_variables:
            raise InvalidInputError(f"a witness of {len(witness)} values for {r1cs.num_variables} variables")
        bufs: list[DeviceBuffer] = []
        try:
            for matrix in (r1cs.a, r1cs.b, r1cs.c):
                buf = gpu.memory.alloc(32 * length)
                bufs.append(buf)
                buf.zero(gpu.stream)
                self.matvec_into(matrix, witness.address(), buf)
            if check:
                self._check(bufs, r1cs.num_constraints)
            m, k = r1cs.num_constraints, r1cs.num_inputs
            assert witness.buffer is not None       # witness.address() above refused a closed one
            bufs[0].copy_from(witness.buffer, 32 * k, dst_offset=32 * m, src_offset=32 * witness.first,
                              stream=gpu.stream)
            return bufs
        except BaseException:
            gpu.memory.free(*bufs)
            raise

    def take(self, values: DeviceScalars, index: NDArray[np.uint32]) -> DeviceScalars:
        """DeviceScalars values[index] (owned); index a uint32 array of rows < len(values)."""
        if index.dtype != np.uint32 or index.ndim != 1:
            raise InvalidInputError(f"take: the index is a 1-D uint32 array, not {index.dtype} of {index.ndim} dims")
        n = len(index)
        return self._moved("r1cs_take", index, n, lambda out, bad: [values.address(), len(values),
                                                                   self._resident(index), n, out.address(), bad],
                           lambda first: f"take: index[{first}] is past the {len(values)} values")

    def put(self, values: DeviceScalars, rows: NDArray[np.uint32], length: int) -> DeviceScalars:
        """DeviceScalars of length rows (owned), zero but row rows[i] = values[i]
        for every i whose rows[i] is not NO_ROW (2^32 - 1); rows a uint32 array
        of len(values), its other entries below length."""
        if rows.dtype != np.uint32 or rows.shape != (len(values),):
            raise InvalidInputError(f"put: rows is a uint32 array of {len(values)}, not {rows.dtype} {rows.shape}")
        return self._moved("r1cs_put", rows, length, lambda out, bad: [values.address(), self._resident(rows),
                                                                      len(rows), out.address(), length, bad],
                           lambda first: f"put: rows[{first}] is past the {length} rows")

    def _moved(self, kernel: str, index: NDArray[np.uint32], length: int,
               args: Callable[[DeviceScalars, DeviceBuffer], list[DeviceBuffer | int]],
               refused: Callable[[int], str]) -> DeviceScalars:
        """DeviceScalars of length (owned, zeroed first where the kernel leaves
        rows) from kernel over index (resident, held while it runs), launched
        with args(out, bad); the first entry it finds out of range (in *bad)
        raises InvalidInputError(refused(entry))."""
        gpu = self.gpu
        buffer = gpu.memory.alloc(max(32, 32 * length))
        out = DeviceScalars(gpu.memory, buffer, length)
        if kernel == "r1cs_put":
            buffer.zero(gpu.stream)
        if not len(index):
            return out
        bad = gpu.memory.upload(np.array([NONE_FAILED], dtype=np.uint32))
        try:
            with gpu.memory.resident.holding(index):
                gpu.launch("r1cs", kernel, len(index), args(out, bad))
            first = int(gpu.memory.download_array(bad, (1,), np.uint32)[0])
        except BaseException:
            out.close()
            raise
        finally:
            gpu.memory.free(bad)
        if first != NONE_FAILED:
            out.close()
            raise InvalidInputError(refused(first))
        return out

    def _check(self, bufs: Sequence[DeviceBuffer], m: int) -> None:
        gpu = self.gpu
        first = gpu.memory.upload(np.array([NONE_FAILED], dtype=np.uint32))
        try:
            gpu.launch("r1cs", "r1cs_unsatisfied", m, [*bufs, m, first])
            bad = int(gpu.memory.download_array(first, (1,), np.uint32)[0])
        finally:
            gpu.memory.free(first)
        if bad != NONE_FAILED:
            a, b, c = (FrArray(gpu.memory.download_array(buf, (bad + 1, 4))[bad:]) for buf in bufs)
            raise UnsatisfiedError(f"constraint {bad} is not satisfied: A.w * B.w != C.w "
                                   f"({a[0]:#x} * {b[0]:#x} != {c[0]:#x})", constraint=bad)
