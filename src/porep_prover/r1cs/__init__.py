# SPDX-License-Identifier: Apache-2.0
"""Rank-1 constraint systems, all their pieces together: the circuit and
its file formats (`system`: R1CS, SparseMatrix, Density, witnesses; the
.npz archive reader), the native evaluation and gathers (`_r1cs`), and on
the GPU (`gpu`, kernels in kernels/r1cs.cu): A w, B w and C w from a
circuit's matrices resident on the device, the satisfaction check, and the
gathers and scatters of a witness's rows that the queries' scalars take.
A leaf beside msm/ and ntt/: it imports only the layers below the backends,
which compose it; groth16/ above uses it. Callers go through
`porep_prover.groth16` (R1CS and friends) and `porep_prover.backend`."""
