# SPDX-License-Identifier: Apache-2.0
"""Multi-scalar multiplication kernels (`_cpu`: Pippenger with batch-affine
buckets and the 0 / 1 / full scalar split), and beside their CUDA sources
(kernels/) the GPU host code: `gpu` (the MSM and batch sums), `gpu_sort`
(its counting sort), `gpu_buckets` (its bucket accumulation and reductions),
`gpu_plan` (its plan and MsmTuning), `gpu_table` (window tables),
`gpu_fixed_base` (fixed-base products). Callers go through `porep_prover.backend`, which
validates inputs and picks the implementation."""
