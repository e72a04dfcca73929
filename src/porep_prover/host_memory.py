# SPDX-License-Identifier: Apache-2.0
"""What kind of host memory an array lives in."""
from __future__ import annotations

import mmap

import numpy as np


def is_mapped(array: np.ndarray) -> bool:
    """Whether array's memory is a file mapping (page cache the kernel can
    reclaim) rather than anonymous memory: some array it views was made
    over an mmap (np.memmap, np.frombuffer of an mmap.mmap)."""
    base: object = array
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = getattr(base, "base", None)
    return False
