# SPDX-License-Identifier: Apache-2.0
"""The reference engine's wire in the daemon's terms (daemon/cuzk), without
a daemon: its .proto is the reference engine's interface, field for field;
each proof kind becomes the job the contract says (kind, partitions by
Filecoin's published constants, priority, payload); circuit ids; the inbox
of vanilla proofs; and daemon.cuzk_wire turning the wire and its input root
on and off."""
import hashlib
import json
import os
import struct
import threading
import types

import grpc
import pytest

from porep_prover.daemon import server
from porep_prover.daemon.cuzk import proving_pb2 as pb
from porep_prover.daemon.cuzk.requests import Inbox, circuit, circuit_ids, served, wire_job
from porep_prover.daemon.journal import JobRecord, Journal
from porep_prover.daemon.service import Refusal
from porep_prover.daemon.settings import DaemonSettings
from porep_prover.engine import load_config
from porep_prover.errors import InvalidInputError

SIZES = (2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30)     # by RegisteredSealProof number mod 5
POREP_PARTITIONS = (1, 1, 1, 10, 10)     # filecoin-proofs' POREP_PARTITIONS, for the sizes above
SNAP_PARTITIONS = (1, 4, 16, 16, 16)     # storage-proofs-update's partition_count, for the sizes above

# The reference engine's interface (curio extern/cuzk, cuzk-proto/proto/cuzk/v1/proving.proto):
# each message's fields as (number, name, type); 9 string, 8 bool, 4 uint64, 13 uint32, 12 bytes,
# 14 enum, 11 message; a trailing + marks a repeated field
INTERFACE = {
    "SubmitProofRequest": "1 request_id 9, 2 proof_kind 14, 3 sector_size 4, 4 registered_proof 4, 5 priority 14, "
                          "10 vanilla_proof 12, 11 vanilla_proofs 12+, 20 sector_number 4, 21 miner_id 4, "
                          "22 randomness 12, 23 partition_index 13, 30 comm_r_old 12, 31 comm_r_new 12, "
                          "32 comm_d_new 12",
    "SubmitProofResponse": "1 job_id 9, 2 queue_position 13, 3 assigned_gpu 9",
    "AwaitProofRequest": "1 job_id 9, 2 timeout_ms 4",
    "AwaitProofResponse": "1 job_id 9, 2 status 14, 3 proof 12, 4 error_message 9, 10 queue_wait_ms 4, "
                          "11 srs_load_ms 4, 12 synthesis_ms 4, 13 gpu_compute_ms 4, 14 total_ms 4",
    "ProveRequest": "1 submit 11", "ProveResponse": "1 result 11",
    "CancelProofRequest": "1 job_id 9", "CancelProofResponse": "1 was_running 8",
    "GetStatusRequest": "", "GetMetricsRequest": "", "GetMetricsResponse": "1 prometheus_text 9",
    "GetStatusResponse": "1 gpus 11+, 2 loaded_srs 11+, 3 queues 11+, 4 total_proofs_completed 4, "
                         "5 total_proofs_failed 4, 6 uptime_seconds 4, 7 pinned_memory_bytes 4, "
                         "8 pinned_memory_limit_bytes 4",
    "GPUStatus": "1 ordinal 13, 2 name 9, 3 vram_total_bytes 4, 4 vram_free_bytes 4, 5 current_job_id 9, "
                 "6 current_proof_kind 9",
    "SRSStatus": "1 circuit_id 9, 2 tier 14, 3 size_bytes 4, 4 ref_count 13",
    "QueueStatus": "1 proof_kind 9, 2 pending 13, 3 in_progress 13",
    "PreloadSrsRequest": "1 circuit_id 9", "PreloadSrsResponse": "1 already_loaded 8, 2 load_time_ms 4",
    "EvictSrsRequest": "1 circuit_id 9", "EvictSrsResponse": "1 was_loaded 8, 2 freed_bytes 4",
}
ENUMS = {"ProofKind": "0 PROOF_KIND_UNSPECIFIED, 1 POREP_SEAL_COMMIT, 2 SNAP_DEALS_UPDATE, 3 WINDOW_POST_PARTITION, "
                      "4 WINNING_POST",
         "Priority": "0 PRIORITY_UNSPECIFIED, 1 LOW, 2 NORMAL, 3 HIGH, 4 CRITICAL",
         "AwaitProofResponse.Status": "0 UNKNOWN, 1 COMPLETED, 2 FAILED, 3 CANCELLED, 4 TIMEOUT",
         "SRSStatus.Tier": "0 HOT, 1 WARM, 2 COLD"}
METHODS = {"SubmitProof": ("SubmitProofRequest", "SubmitProofResponse"),
           "AwaitProof": ("AwaitProofRequest", "AwaitProofResponse"), "Prove": ("ProveRequest", "ProveResponse"),
           "CancelProof": ("CancelProofRequest", "CancelProofResponse"),
           "GetStatus": ("GetStatusRequest", "GetStatusResponse"),
           "GetMetrics": ("GetMetricsRequest", "GetMetricsResponse"),
           "PreloadSRS": ("PreloadSrsRequest", "PreloadSrsResponse"),
           "EvictSRS": ("EvictSrsRequest", "EvictSrsResponse")}


def test_the_proto_is_the_reference_engines_interface():
    assert pb.DESCRIPTOR.package == "cuzk.v1"
    service = pb.DESCRIPTOR.services_by_name["ProvingEngine"]
    assert service.full_name == "cuzk.v1.ProvingEngine"
    assert {m.name: (m.input_type.full_name, m.output_type.full_name) for m in service.methods} == \
        {name: (f"cuzk.v1.{a}", f"cuzk.v1.{b}") for name, (a, b) in METHODS.items()}
    assert all(not m.client_streaming and not m.server_streaming for m in service.methods)
    messages = {}
    for message in pb.DESCRIPTOR.message_types_by_name.values():
        messages[message.name] = ", ".join(
            f"{f.number} {f.name} {f.type}{'+' if f.is_repeated else ''}" for f in message.fields)
    assert messages == INTERFACE
    enums = {e.name: e for e in pb.DESCRIPTOR.enum_types_by_name.values()}
    enums["AwaitProofResponse.Status"] = pb.AwaitProofResponse.DESCRIPTOR.enum_types_by_name["Status"]
    enums["SRSStatus.Tier"] = pb.SRSStatus.DESCRIPTOR.enum_types_by_name["Tier"]
    assert {name: ", ".join(f"{v.number} {v.name}" for v in e.values) for name, e in enums.items()} == ENUMS
    assert pb.GetStatusResponse.DESCRIPTOR.fields_by_name["gpus"].message_type.name == "GPUStatus"


def request(**fields) -> pb.SubmitProofRequest:
    return pb.SubmitProofRequest(**{"vanilla_proof": b"{}", **fields})


def test_a_seal_commit_becomes_a_porep_job_of_its_registered_proofs_partitions(rng):
    for registered in range(15):              # V1, V1_1, V1_1 with synthetic PoRep
        size, partitions = SIZES[registered % 5], POREP_PARTITIONS[registered % 5]
        number, miner = rng.randrange(1 << 64), rng.randrange(1 << 64)
        for given in (0, size):
            job = wire_job(request(proof_kind=pb.POREP_SEAL_COMMIT, registered_proof=registered, sector_size=given,
                                   sector_number=number, miner_id=miner))
            assert (job.kind, job.partitions, job.priority) == ("porep", partitions, pb.NORMAL)
            payload = json.loads(job.payload_json("/state/cuzk-inputs/x.vanilla"))
            assert payload == {"vanilla_proof": "/state/cuzk-inputs/x.vanilla", "registered_proof": registered,
                               "sector_size": size, "sector_number": number, "miner_id": miner}
        other = rng.choice([s for s in SIZES if s != size] + [size + 1])
        with pytest.raises(InvalidInputError, match=f"sector_size {other} is not registered_proof {registered}'s"):
            wire_job(request(proof_kind=pb.POREP_SEAL_COMMIT, registered_proof=registered, sector_size=other))
    for registered in (15, 19, 20, rng.randrange(21, 1 << 64)):
        with pytest.raises(InvalidInputError, match=f"registered_proof {registered} "):
            wire_job(request(proof_kind=pb.POREP_SEAL_COMMIT, registered_proof=registered))


def test_the_other_kinds_and_the_priorities(rng):
    """A PoSt or SnapDeals request: its vanilla proofs (field 11, or a single one
    in field 10) in one file as bincode writes a Vec<Vec<u8>>, its randomness
    and partition (PoSt) or commitments (SnapDeals) as hex."""
    defaults = {pb.POREP_SEAL_COMMIT: pb.NORMAL, pb.SNAP_DEALS_UPDATE: pb.NORMAL, pb.WINDOW_POST_PARTITION: pb.HIGH,
                pb.WINNING_POST: pb.CRITICAL}
    kinds = {pb.SNAP_DEALS_UPDATE: "snap-update", pb.WINDOW_POST_PARTITION: "window-post",
             pb.WINNING_POST: "winning-post"}
    for kind, name in kinds.items():
        for size, snap in zip(SIZES, SNAP_PARTITIONS):
            randomness, comm = rng.randbytes(32), rng.randbytes(rng.randrange(0, 40))
            proofs = [rng.randbytes(rng.randrange(1, 300)) for _ in range(rng.randrange(1, 5))]
            job = wire_job(pb.SubmitProofRequest(proof_kind=kind, registered_proof=3, sector_size=size,
                                                 randomness=randomness, comm_r_new=comm, partition_index=7,
                                                 miner_id=1000, vanilla_proofs=proofs))
            assert (job.kind, job.partitions, job.priority) == \
                (name, snap if kind == pb.SNAP_DEALS_UPDATE else 1, defaults[kind])
            fields = {"registered_proof": 3, "sector_size": size, "sector_number": 0, "miner_id": 1000}
            if kind == pb.SNAP_DEALS_UPDATE:
                fields |= {"comm_r_old": "", "comm_r_new": comm.hex(), "comm_d_new": ""}
            else:
                fields |= {"randomness": randomness.hex(), "partition_index": 7}
            assert job.fields == fields and job.inbox_key == "vanilla_proofs"
            assert job.data == struct.pack("<Q", len(proofs)) + b"".join(struct.pack("<Q", len(x)) + x
                                                                         for x in proofs)
            single = wire_job(request(proof_kind=kind, sector_size=size, vanilla_proof=proofs[0]))
            assert single.data == struct.pack("<QQ", 1, len(proofs[0])) + proofs[0]
            assert json.loads(job.payload_json("/x"))["vanilla_proofs"] == "/x"
        for priority in (pb.LOW, pb.NORMAL, pb.HIGH, pb.CRITICAL):
            assert wire_job(request(proof_kind=kind, sector_size=SIZES[0], priority=priority)).priority == priority
        for bad in (pb.SubmitProofRequest(proof_kind=kind, sector_size=SIZES[0]),
                    pb.SubmitProofRequest(proof_kind=kind, sector_size=SIZES[0], vanilla_proofs=[b"x", b""])):
            with pytest.raises(InvalidInputError, match="vanilla_proofs is empty or holds an empty proof"):
                wire_job(bad)
    with pytest.raises(InvalidInputError, match="sector_size 12345 is not a sector size"):
        wire_job(request(proof_kind=pb.SNAP_DEALS_UPDATE, sector_size=12345))
    with pytest.raises(InvalidInputError, match="randomness of 257 bytes: at most 256"):
        wire_job(request(proof_kind=pb.WINNING_POST, randomness=b"r" * 257))
    with pytest.raises(InvalidInputError, match="comm_d_new of 300 bytes: at most 256"):
        wire_job(request(proof_kind=pb.SNAP_DEALS_UPDATE, sector_size=SIZES[0], comm_d_new=b"c" * 300))
    for bad in (5, -3, 1 << 20):
        with pytest.raises(InvalidInputError, match=f"priority {bad} is not one of"):
            wire_job(request(proof_kind=pb.WINNING_POST, priority=bad))


def test_a_kind_not_served_is_refused_naming_why():
    jobs = types.SimpleNamespace(kinds=lambda: ["demo", "porep"],
                                 registry=types.SimpleNamespace(providers={"demo": 1, "porep": 2, "window-post": 3}))
    served("porep", "proof kind POREP_SEAL_COMMIT", jobs)
    for kind, why in (("window-post", "left out of daemon.kinds"), ("snap-update", "no synthesis provider serves it")):
        with pytest.raises(Refusal) as refused:
            served(kind, "proof kind X", jobs)
        assert refused.value.code == grpc.StatusCode.UNIMPLEMENTED
        assert str(refused.value) == f"proof kind X (job kind {kind!r}) is not served by this daemon: {why} " \
                                     "(served: demo, porep)"


def test_circuit_ids():
    assert circuit("porep-32g") == ("porep", {"sector_size": 32 << 30})
    assert circuit("winning-2k") == ("winning-post", {"sector_size": 2 << 10})
    assert circuit("snap-512m") == ("snap-update", {"sector_size": 512 << 20})
    assert circuit("wpost-64g") == ("window-post", {"sector_size": 64 << 30})
    ids = circuit_ids()
    assert len(ids) == len({i for i, _, _ in ids}) == 20 and all(circuit(i) == (k, o) for i, k, o in ids)
    for bad in ("porep-32G", "porep-31g", "porep32g", " porep-32g", "porep-32g\n", "", "post-32g"):
        with pytest.raises(InvalidInputError, match="is not KIND-SIZE"):
            circuit(bad)


def test_the_inbox_keeps_what_unfinished_jobs_name(tmp_path, rng):
    journal = Journal(str(tmp_path / "state"))
    inbox = Inbox(str(tmp_path / "state" / "cuzk-inputs"), journal)
    inbox.sweep_seconds = 3600.0                 # swept here when the test says
    datas = [rng.randbytes(rng.randrange(1, 5000)) for _ in range(3)]
    paths = []
    for i, data in enumerate(datas):
        with inbox.holding(data) as path:
            assert os.path.basename(path) == hashlib.sha256(data).hexdigest() + ".vanilla"
            assert open(path, "rb").read() == data and os.stat(path).st_mode & 0o777 == 0o600
            assert inbox.sweep() == []               # held
            journal.add(JobRecord(f"job{i}", None, "porep", 1, 2, json.dumps({"vanilla_proof": path})))
        paths.append(path)
    with inbox.holding(datas[0]) as again:
        assert again == paths[0]
    journal.finish("job1", "completed")
    assert inbox.sweep() == [os.path.basename(paths[1])]
    assert [os.path.exists(p) for p in paths] == [True, False, True]
    stray = tmp_path / "state" / "cuzk-inputs" / "notes.txt"
    stray.write_text("an operator's")
    journal.finish("job0", "failed")
    journal.finish("job2", "cancelled")
    assert sorted(inbox.sweep()) == sorted(os.path.basename(p) for p in (paths[0], paths[2]))
    assert os.listdir(inbox.folder) == ["notes.txt"]          # only its own files go
    journal.close()


def test_equal_bytes_written_at_once_make_one_whole_file(tmp_path, rng):
    journal = Journal(str(tmp_path / "state"))
    inbox = Inbox(str(tmp_path / "state" / "cuzk-inputs"), journal)
    data, seen, errors = rng.randbytes(1 << 20), [], []

    def submit():
        try:
            with inbox.holding(data) as path:
                seen.append(open(path, "rb").read() == data)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and seen == [True] * 8
    assert os.listdir(inbox.folder) == [hashlib.sha256(data).hexdigest() + ".vanilla"]
    journal.close()


def test_the_setting_turns_the_wire_and_its_input_root_on_and_off(tmp_path):
    roots = tmp_path / "inputs"
    roots.mkdir()
    base = {"daemon.state_dir": str(tmp_path / "state"), "daemon.input_roots": [str(roots)]}
    on = DaemonSettings.resolve(load_config(overrides=base))
    assert on.cuzk_inbox == os.path.realpath(tmp_path / "state" / "cuzk-inputs")
    assert on.input_roots == (os.path.realpath(roots), on.cuzk_inbox)
    assert server.services(on) == ("porep_prover.v1.ProvingEngine", "cuzk.v1.ProvingEngine")
    off = DaemonSettings.resolve(load_config(overrides={**base, "daemon.cuzk_wire": False}))
    assert off.cuzk_inbox == "" and off.input_roots == (os.path.realpath(roots),)
    assert server.services(off) == ("porep_prover.v1.ProvingEngine",)
