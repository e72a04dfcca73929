# SPDX-License-Identifier: Apache-2.0
"""C sources of the native core (headers shared with the CUDA kernels).

Nothing here is imported at run time; the package exists so the headers, C
files and the Cython declarations in `cnative.pxd` ship together.
"""
import pathlib

INCLUDE_DIR = pathlib.Path(__file__).resolve().parent
