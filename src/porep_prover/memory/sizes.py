# SPDX-License-Identifier: Apache-2.0
"""The units and sizes every memory figure is counted in, each defined
here once: GiB, a scalar, a point (affine and projective), the alignment
of arenas and device allocations, the device budget's margin and the
bytes no plan names, the process's own host bytes."""
from __future__ import annotations

GIB = 1 << 30
SCALAR_BYTES = 32                 # an Fr element: 4 limbs of 64 bits (field.fr_array.FR_BYTES)
POINT_BYTES = {1: 96, 2: 192}     # an affine point of G1, G2 (Fq limbs, Montgomery form)
PROJ_BYTES = {1: 192, 2: 384}     # an xyzz bucket sum of G1, G2
ALIGN = 256                       # an arena's arrays, and device allocations, start on it
# of a device budget: the context, the kernel modules and the pool's slack (the driver's limit is the budget less it)
MARGIN = 3 << 29                  # 1.5 GiB
# inside the budget's limit, beside what the model names: the split power tables, the MSMs' counters, sums and
# reductions, the pool's rounding (a 16 GiB plan of exactly its limit failed by 4.7 MB on an H100)
SMALL_BUFFERS = 128 << 20
PROCESS_BYTES = 1 << 30           # the interpreter, numpy, the native modules, the kernel cache's reads
CONTEXT_BYTES = 512 << 20         # a CUDA context's host side (its driver state, staging buffers)


def aligned(nbytes: int) -> int:
    """nbytes rounded up to ALIGN."""
    return -(-nbytes // ALIGN) * ALIGN
