# SPDX-License-Identifier: Apache-2.0
"""The reference engine's wire: the gRPC service cuzk.v1.ProvingEngine
(proving.proto here; curio's extern/cuzk interface, its names and numbers
kept), served by the daemon at daemon.listen beside its own
porep_prover.v1.ProvingEngine while daemon.cuzk_wire is true (the
default), so that an orchestrator configured for the reference engine
submits its requests unchanged. It is a second front on the same daemon:
the same job book and journal (a job accepted here survives a restart and
is listed by the daemon's own service), limits, bearer token, TLS and drain.

    requests   a request in the daemon's terms: the job it becomes, a circuit id, the inbox
    status     GetStatus and GetMetrics in the reference engine's terms
    service    CuzkService, the servicer (server.py registers it beside the daemon's own)

The contract with the synthesis providers. A SubmitProofRequest becomes a
job of the kind its proof kind names, of the partitions that kind's proof
has, at the request's priority (unspecified: CRITICAL for WinningPoSt,
HIGH for WindowPoSt, else NORMAL):

    POREP_SEAL_COMMIT      porep         1 partition (2 KiB, 8 MiB, 512 MiB sectors) or 10 (32, 64 GiB):
                                         the registered seal proof's (0 to 14; non-interactive PoRep,
                                         15 to 19, is refused); sector_size, when given, must be its
    SNAP_DEALS_UPDATE      snap-update   1 (2 KiB), 4 (8 MiB) or 16 (512 MiB and up), by sector_size
                                         (0: the registered update proof's, 0 to 4)
    WINDOW_POST_PARTITION  window-post   1
    WINNING_POST           winning-post  1

A PoRep request's vanilla_proof bytes, unchanged, and the other kinds'
vanilla_proofs (field 11; a single proof also taken from vanilla_proof) in
one file as bincode writes a Vec<Vec<u8>> (a u64 little-endian count, then
each proof's u64 length and bytes), go to a file of
the daemon's state folder (<state_dir>/cuzk-inputs/<sha256>.vanilla, mode
0600, on disk before the job is journaled; one file for equal bytes) whose
path the payload carries, so that a 50 MB commit-phase-1 output or a 59 MB
WindowPoSt partition is neither copied into the journal nor held in memory
while its job waits. That folder is one of the daemon's input roots while
the wire is on; a file goes once no unfinished job names it. The payload (a
JSON object):

    porep:             {"vanilla_proof": PATH, "registered_proof": N, "sector_size": BYTES,
                        "sector_number": N, "miner_id": N}
    winning-post, window-post:
                       {"vanilla_proofs": PATH, "registered_proof": N (RegisteredPoStProof),
                        "sector_size": BYTES as given, "sector_number": N, "miner_id": N,
                        "randomness": HEX, "partition_index": N}
    snap-update:       {"vanilla_proofs": PATH, "registered_proof": N (RegisteredUpdateProof), the same
                        sector fields, "comm_r_old", "comm_r_new", "comm_d_new": HEX (32 bytes or a CID's)}

so the kind's provider declares payload_paths naming that key and reads
the file: for porep, rust-fil-proofs' SealCommitPhase1Output as JSON
(filecoin-ffi's serialization), which curio sends to the reference engine
wrapped as {"SectorNum": N, "SectorSize": BYTES, "Phase1Out": base64 of that
JSON}, with the prover id made from miner_id as filecoin-ffi makes it; for
winning-post and window-post, filecoin-proofs-api's FallbackPoStSectorProofs. Each
partition's proof is 192 bytes (A, B, C compressed); the job's result is
answered as the reference engine returns it, the partitions' proofs
concatenated in partition order. PreloadSRS and EvictSRS name a circuit
("porep-32g": porep, snap, wpost or winning, then 2k, 8m, 512m, 32g or 64g):
its kind's provider is given the payload {"sector_size": BYTES} alone, which
its parse_payload, srs_key and load_srs must take (the parameters depend on
the sector size only). A proof kind or circuit whose job kind no provider
serves, or that daemon.kinds leaves out, is refused UNIMPLEMENTED with a
message naming both.

A request is at most daemon.max_request_bytes (128 MiB by default: a 32 GiB
sector's commit-phase-1 output, some 50 to 70 MB as curio sends it, fits;
an operator raising it for larger ones raises the orchestrator's own send
limit too). A request_id names its job while the journal keeps it, unless
that job failed or was cancelled: then it names the next one submitted
with it (an orchestrator's retry is proved again, as the reference engine
proves it).
"""
