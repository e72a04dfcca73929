# SPDX-License-Identifier: Apache-2.0
"""R1CS evaluation on the GPU (`gpu`): A w, B w and C w from a circuit's
matrices resident on the device, the satisfaction check, and the gathers and
scatters of a witness's rows that the queries' scalars take. The kernels are
in groth16/kernels/r1cs.cu, beside the circuit format they serve; the host
code sits here, a leaf beside msm/ and ntt/ that imports only the layers
below the backends, because the GPU backend composes it and groth16/ is a
layer above the backends (its package imports the prover). Callers go
through `porep_prover.backend`."""
