# SPDX-License-Identifier: Apache-2.0
"""NTT kernels: the radix-2 FFT over Fr (`_cpu`), and the Groth16 H polynomial.
Callers go through `porep_prover.backend`."""
