# SPDX-License-Identifier: Apache-2.0
"""Filecoin's StackedDRG PoRep circuit (V1_1) as R1CS, placed as bellperson
synthesizes it: the same variables in the same order, the same constraints
in the same order, the same public inputs.

A partition (storage-proofs-porep's StackedCircuit, one per partition of a
commit-phase-1 output), with L layers, C challenges, tree_d of depth D
(binary SHA-256) and tree_c / tree_r_last paths of P levels (Poseidon of
the levels' arities):

    replica_id     a number, a public input, its 255 bits (256 after byte reversal)
    comm_d, comm_r numbers, public inputs; comm_r_last, comm_c numbers
    comm_r = Poseidon-2(comm_c, comm_r_last)
    per challenge:
      data leaf; its tree_d path: per level an index bit, a sibling, insert_2,
        both children's bits, SHA-256 (2 compressions), the digest packed;
        the index bits packed into a public input; the root equal to comm_d
      14 parent columns (6 DRG, 8 expander): L numbers, their Poseidon-L hash,
        its tree_c path (per level: index bits, siblings, insert_8, Poseidon-8),
        a public input, the root equal to comm_c
      the challenge: 64 bits (UInt64), packed into a public input
      per layer: the parents' labels' bits (6 in layer 1, 14 after), the label:
        SHA-256 over 20 blocks (replica id, layer, node; 37 parents), packed
      encoding = last label + data leaf; its tree_r_last path; root = comm_r_last
      Poseidon-L of the challenge's labels; its tree_c path; root = comm_c

Public inputs: 3 + 18 C, and the one (22 for the toy circuit, 40 at 2 KiB,
328 at 32 GiB).

Per gadget (constraints / aux variables), each traced once as a template:

    SHA-256 compression        25,840 / 25,814 from the IV with every message
                               bit allocated (bellperson's test); in a label its
                               first block 25,363 / 25,337, the 18 between
                               26,184 / 26,158, the last 25,593 / 25,567
    a label (create_label)     522,269 (the blocks and the packing); in
                               create_label.rs's test, every input bit allocated
                               and counted: 532,025
    Poseidon (neptune legacy)  311 / 505 / 598 for arities 2 / 8 / 11, as many aux
    to_bits_le                 256 / 255
    insert_2 / insert_8        2 / 22 (picks and two bits)
    tree_d level               45,382 / 45,335 (index bit, sibling, insert_2, both
                               children's bits, 2 compressions, packing)
    tree_c / tree_r_last level 530 / 537 at arity 8 (index bits, 7 siblings,
                               insert_8, Poseidon-8)

Composed, these give rust-fil-proofs' numbers: the toy circuit of
stacked_circuit.rs (8 nodes, arity 8, 2 layers, 1 challenge) 1,199,620
constraints and 22 inputs (binary tree_c: 1,206,212); a 32 GiB partition
(11 layers, 18 challenges, tree_c / tree_r_last LCTree<U8, U8, U0>, tree_d
of depth 30) 130,278,541 constraints, 328 inputs, 130,169,893 aux. The
reference engine counts 130,278,869 constraints: the same plus the 328
constraints input_i * 0 = 0 that the Groth16 prover adds, one a public
input (the proving system's R1CS). Other partitions: 2 KiB 2,687,921 /
40 / 2,685,673; 8 MiB 3,844,929 / 40 / 3,842,449; 512 MiB 4,423,433 / 40 /
4,420,837; 64 GiB 131,185,849 / 328 / 131,076,643.

Variables and constraints are placed in bellperson's order (allocation
order, constraint order, the same linear combinations), so a canonical
parameter file should fit; none is at hand here to check that against.

Modules: system (the tracing constraint system and value rules), boolean,
sha256, poseidon, gadgets (bellperson's and storage-proofs-core's gadgets,
allocation for allocation), template (a gadget traced once), builder
(placing templates, the CSR matrices), hashes and stacked (the partition).
"""
