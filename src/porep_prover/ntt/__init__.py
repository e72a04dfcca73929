# SPDX-License-Identifier: Apache-2.0
"""NTT kernels: the radix-2 FFT over Fr (`_cpu`), and the Groth16 H polynomial
(its flavors in `flavor`); beside their CUDA source (kernels/) the GPU host
code, `gpu` (GpuNtt, NttTuning). Callers go through `porep_prover.backend`."""
