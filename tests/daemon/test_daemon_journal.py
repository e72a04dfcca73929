# SPDX-License-Identifier: Apache-2.0
"""The daemon's journal and payload checks on their own (no process): jobs
and partitions recorded durably, the first ending stands, a lost proof file
is proved again, the sweep, and paths confined to the input roots."""
import json
import os
import random
import sqlite3
import threading
import time
import uuid

import pytest

from porep_prover.daemon import payloads
from porep_prover.daemon.journal import JobRecord, Journal
from porep_prover.errors import InputPathError, InvalidInputError


def record(**fields):
    base = dict(id=uuid.uuid4().hex, request_id=None, kind="demo", partitions=3, priority=2,
                payload=json.dumps({"constraints": 9}), submitted=time.time())
    base.update(fields)
    return JobRecord(**base)


TIMES = {"queue_wait": 0.1, "srs_load": 0.0, "synthesis": 0.2, "gpu_compute": 0.3, "total": 0.7, "started": 1.0}


def test_jobs_partitions_and_their_endings(tmp_path):
    journal = Journal(str(tmp_path))
    assert sqlite3.connect(journal.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    job = record(request_id="r-1")
    assert journal.add(job) == (job, False)
    again = record(request_id="r-1", partitions=9)
    assert journal.add(again) == (job, True)                        # a request id names one job
    proofs = {i: os.urandom(192) for i in random.sample(range(3), 2)}
    for i, proof in proofs.items():
        journal.add_partition(job.id, i, proof, [i, 10 ** 70], TIMES)
        journal.add_partition(job.id, i, os.urandom(192), [0], TIMES)    # recorded again: the first stays
    assert journal.get(job.id).proved == 2 and journal.proved_indices(job.id) == set(proofs)
    got = journal.partitions(job.id)
    assert [p.index for p in got] == sorted(proofs) and all(p.proof == proofs[p.index] for p in got)
    assert all(p.public == [p.index, 10 ** 70] and p.timings == TIMES for p in got)
    assert [r.id for r in journal.unfinished()] == [job.id]
    assert journal.finish(job.id, "cancelled", "by its owner") and not journal.finish(job.id, "completed")
    assert journal.get(job.id).state == "cancelled" and journal.unfinished() == []
    assert journal.counts() == {"cancelled": 1}
    journal.close()


def test_a_proof_lost_on_disk_is_proved_again(tmp_path):
    journal = Journal(str(tmp_path))
    job = record()
    journal.add(job)
    for i in range(3):
        journal.add_partition(job.id, i, os.urandom(192), [i], TIMES)
    lost = random.randrange(3)
    os.unlink(tmp_path / "results" / job.id / f"{lost}.proof")
    (tmp_path / "results" / job.id / f"{(lost + 1) % 3}.proof").write_bytes(b"short")
    assert journal.proved_indices(job.id) == {(lost + 2) % 3}
    assert journal.get(job.id).proved == 1 and len(journal.partitions(job.id)) == 1


def test_writers_on_many_threads(tmp_path):
    journal = Journal(str(tmp_path))
    jobs = [record(partitions=4) for _ in range(8)]
    errors = []

    def write(job):
        try:
            journal.add(job)
            for i in range(4):
                journal.add_partition(job.id, i, os.urandom(192), [i], TIMES)
            journal.finish(job.id, "completed")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and journal.counts() == {"completed": 8}
    assert all(journal.get(j.id).proved == 4 for j in jobs)


def test_the_sweep_removes_jobs_past_their_time(tmp_path):
    journal = Journal(str(tmp_path))
    old, fetched, fresh, running = (record() for _ in range(4))
    for job in (old, fetched, fresh, running):
        journal.add(job)
        journal.add_partition(job.id, 0, os.urandom(192), [0], TIMES)
    for job in (old, fetched, fresh):
        journal.finish(job.id, "completed")
    journal.mark_fetched(fetched.id)
    (tmp_path / "results" / "orphan").mkdir()
    grace = random.uniform(10, 1000)
    later = time.time() + grace + 1
    assert journal.sweep(3600, grace + 2, now=later) == []                 # fetched, within its time
    assert journal.sweep(3600, grace, now=later) == [fetched.id]           # fetched a while ago
    removal = journal.removal(fetched.id)
    assert "fetched" in removal and "daemon.fetched_retention_seconds" in removal
    assert sorted(journal.sweep(grace, 3600, now=later, orphans=True)) == sorted([old.id, fresh.id])
    assert "daemon.result_retention_seconds" in journal.removal(old.id)
    assert journal.removal(running.id) is None
    assert journal.get(running.id) is not None                             # unfinished: never swept
    assert sorted(os.listdir(tmp_path / "results")) == [running.id]
    assert Journal(str(tmp_path)).removal(fresh.id) == journal.removal(fresh.id)   # kept across a restart


def test_paths_are_confined(tmp_path):
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f").write_text("x")
    (root / "out").symlink_to(tmp_path)
    roots = (os.path.realpath(root),)
    keys = ("one", "many")
    ok = payloads.confine({"one": str(root / "sub" / "f"), "many": [str(root / "sub")], "other": "/x"}, keys, roots)
    assert ok == {"one": os.path.realpath(root / "sub" / "f"), "many": [os.path.realpath(root / "sub")],
                  "other": "/x"}
    for value in (str(tmp_path), str(root / "out" / "x"), f"{root}/sub/../sub/f", "sub/f", str(root) + "x/f"):
        with pytest.raises(InputPathError):
            payloads.confine({"one": value}, keys, roots)
    with pytest.raises(InputPathError, match="reads no files"):
        payloads.confine({"one": str(root / "sub" / "f")}, keys, ())
    for value in ("", 5, None, ["ok", 3], "a\0b"):
        with pytest.raises(InvalidInputError):
            payloads.confine({"many": value} if isinstance(value, list) else {"one": value}, keys, roots)


@pytest.mark.parametrize("data, words", [(b"[]", "JSON object"), (b"{", "not JSON"), (b"\xff", "UTF-8"),
                                         (b"[" * 100_000, "nested too deeply")],
                         ids=["a list", "cut short", "not UTF-8", "deep"])
def test_payloads_that_are_not_a_json_object(data, words):
    with pytest.raises(InvalidInputError, match=words):
        payloads.decode(data)
    assert payloads.decode(b"") == {} and payloads.decode(b'{"a": [1]}') == {"a": [1]}
