# SPDX-License-Identifier: Apache-2.0
"""Multi-scalar multiplication kernels (`_cpu`: Pippenger with batch-affine
buckets and the 0 / 1 / full scalar split), and beside their CUDA sources
(kernels/) the GPU host code, the package `gpu`: `gpu.msm` (the MSM and
batch sums), `gpu.sort` (its counting sort), `gpu.buckets` (its bucket
accumulation and reductions), `gpu.plan` (its plan and MsmTuning),
`gpu.table` (window tables), `gpu.fixed_base` (fixed-base products); the
package registers its kernel modules with cuda.modules as it loads.
Callers go through `porep_prover.backend`, which
validates inputs and picks the implementation."""
