# SPDX-License-Identifier: Apache-2.0
"""Multi-scalar multiplication kernels (`_cpu`: Pippenger with batch-affine
buckets and the 0 / 1 / full scalar split). Callers go through
`porep_prover.backend`, which validates inputs and picks the implementation."""
