# SPDX-License-Identifier: Apache-2.0
"""The daemon's journal: every accepted job and every proved partition, in
an embedded SQLite database in the state folder, so that nothing accepted
is lost when the process dies.

    <state_dir>/journal.sqlite3 (+ -wal, -shm)   jobs, partitions
    <state_dir>/results/<job id>/<partition>.proof   each partition's 192-byte proof

Durability: WAL mode with synchronous=FULL, so that a commit has reached
the disk when it returns (what an acknowledgement promises, also over a
power loss). A job's row is committed before its submit is answered; a
partition's proof file is written whole (a temporary name, fsync, rename,
the folder's fsync) before its row, so a row always has its file. Each
thread has its own connection; writes are BEGIN IMMEDIATE transactions.

A job's state is "queued" (accepted and unfinished, whatever its
partitions do: what a restart resumes), then "completed", "failed" or
"cancelled". Finished jobs stay, rows and files, until the sweep removes
them: retention seconds after they finished, or fetched_retention seconds
after their result was first fetched, whichever comes first. A removed
job's id is remembered with when and why (the last MAX_REMOVED), so that
asking for it again says so.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from typing import cast

from ..atomic import atomic_write

LOG = logging.getLogger("porep_prover.daemon")
MAX_REMOVED = 100_000             # removed jobs remembered (why, when), the oldest forgotten first
UNFINISHED = "queued"
FINISHED = ("completed", "failed", "cancelled")
PROOF_BYTES = 192

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    request_id TEXT,
    kind TEXT NOT NULL,
    partitions INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    submitted REAL NOT NULL,
    finished REAL,
    error TEXT NOT NULL DEFAULT '',
    fetched REAL,
    proved INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_request_id ON jobs (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, submitted);
CREATE TABLE IF NOT EXISTS partitions (
    job_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    public TEXT NOT NULL,
    queue_wait REAL NOT NULL,
    srs_load REAL NOT NULL,
    synthesis REAL NOT NULL,
    gpu_compute REAL NOT NULL,
    total REAL NOT NULL,
    started REAL NOT NULL,
    proved_at REAL NOT NULL,
    PRIMARY KEY (job_id, idx)
);
CREATE TABLE IF NOT EXISTS removed_jobs (
    id TEXT PRIMARY KEY,
    removed REAL NOT NULL,
    reason TEXT NOT NULL
);
"""
_JOB_COLUMNS = "id, request_id, kind, partitions, priority, payload, state, submitted, finished, error, fetched, proved"


@dataclasses.dataclass(frozen=True)
class JobRecord:
    """A job's row. payload: the JSON text as submitted; priority: the
    service's Priority number; submitted / finished / fetched: seconds since
    the epoch (None: not yet); proved: partitions with a proof on disk."""
    id: str
    request_id: str | None
    kind: str
    partitions: int
    priority: int
    payload: str
    state: str = UNFINISHED
    submitted: float = 0.0
    finished: float | None = None
    error: str = ""
    fetched: float | None = None
    proved: int = 0


@dataclasses.dataclass(frozen=True)
class PartitionRecord:
    """A proved partition: its proof's bytes, public inputs (ints) and timings (seconds)."""
    index: int
    proof: bytes
    public: list
    timings: dict


class Journal:
    """The journal in folder state_dir (made, mode 0700, when missing)."""

    def __init__(self, state_dir: str):
        self.folder = state_dir
        self.results = os.path.join(state_dir, "results")
        os.makedirs(self.results, mode=0o700, exist_ok=True)
        self.path = os.path.join(state_dir, "journal.sqlite3")
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        con = self._con()
        con.execute("PRAGMA journal_mode=WAL")
        con.executescript(_SCHEMA)

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            con.execute("PRAGMA synchronous=FULL")
            con.execute("PRAGMA busy_timeout=30000")
            self._local.con = con
            with self._guard:
                self._connections.append(con)
        return con

    def _write(self, fn):
        """fn(connection) in one BEGIN IMMEDIATE transaction, committed (durably) before this returns."""
        con = self._con()
        con.execute("BEGIN IMMEDIATE")
        try:
            out = fn(con)
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        return out

    def close(self) -> None:
        with self._guard:
            for con in self._connections:
                con.close()
            self._connections.clear()
        self._local = threading.local()

    # ------------------------------------------------------------ jobs

    def add(self, record: JobRecord) -> tuple[JobRecord, bool]:
        """Record an accepted job (durable on return): (the record, False);
        when its request_id names a job recorded before: (that job, True)."""
        def insert(con):
            try:
                con.execute(f"INSERT INTO jobs ({_JOB_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                            dataclasses.astuple(record))
            except sqlite3.IntegrityError:
                if record.request_id is None:
                    raise
                return None
            return record
        added = self._write(insert)
        if added is not None:
            return added, False
        assert record.request_id is not None    # insert() raised otherwise
        # the insert broke request_id's uniqueness: that job's row is there
        return cast(JobRecord, self.by_request(record.request_id)), True

    def release_request(self, job_id: str) -> None:
        """A finished job's request_id let go (durable on return), so that
        the same request_id names the next job submitted with it; the job
        keeps its id, its state and its results."""
        self._write(lambda con: con.execute("UPDATE jobs SET request_id = NULL WHERE id = ?", (job_id,)))

    def get(self, job_id: str) -> JobRecord | None:
        row = self._con().execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return JobRecord(*row) if row else None

    def by_request(self, request_id: str) -> JobRecord | None:
        row = self._con().execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE request_id = ?", (request_id,)).fetchone()
        return JobRecord(*row) if row else None

    def unfinished(self) -> list[JobRecord]:
        """The jobs a restart resumes, in the order they were accepted."""
        rows = self._con().execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE state = ? ORDER BY submitted, rowid",
                                   (UNFINISHED,)).fetchall()
        return [JobRecord(*r) for r in rows]

    def newest(self, states: tuple[str, ...], limit: int) -> list[JobRecord]:
        """At most limit jobs in these states (none given: any), newest first."""
        where = f"WHERE state IN ({','.join('?' * len(states))})" if states else ""
        rows = self._con().execute(f"SELECT {_JOB_COLUMNS} FROM jobs {where} ORDER BY submitted DESC, rowid DESC "
                                   "LIMIT ?", (*states, limit)).fetchall()
        return [JobRecord(*r) for r in rows]

    def finish(self, job_id: str, state: str, error: str = "") -> bool:
        """An unfinished job ends in state (one of FINISHED); False when it had
        ended already (the first ending stands)."""
        def update(con):
            return con.execute("UPDATE jobs SET state = ?, finished = ?, error = ? WHERE id = ? AND state = ?",
                               (state, time.time(), error, job_id, UNFINISHED)).rowcount
        return bool(self._write(update))

    def mark_fetched(self, job_id: str) -> None:
        self._write(lambda con: con.execute("UPDATE jobs SET fetched = ? WHERE id = ? AND fetched IS NULL",
                                            (time.time(), job_id)))

    def counts(self) -> dict[str, int]:
        """Jobs by state."""
        return dict(self._con().execute("SELECT state, COUNT(*) FROM jobs GROUP BY state").fetchall())

    # ------------------------------------------------------------ partitions

    def _proof_path(self, job_id: str, index: int) -> str:
        return os.path.join(self.results, job_id, f"{index}.proof")

    def add_partition(self, job_id: str, index: int, proof: bytes, public: list[int], timings: dict) -> None:
        """A partition's proof: its file written whole and synced, then its
        row (durable on return). A partition recorded before stays as it was."""
        if self._con().execute("SELECT 1 FROM partitions WHERE job_id = ? AND idx = ?", (job_id, index)).fetchone():
            return
        os.makedirs(os.path.join(self.results, job_id), mode=0o700, exist_ok=True)
        with atomic_write(self._proof_path(job_id, index), fsync=True) as f:
            f.write(proof)

        def insert(con):
            added = con.execute(
                "INSERT OR IGNORE INTO partitions (job_id, idx, public, queue_wait, srs_load, synthesis, gpu_compute, "
                "total, started, proved_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (job_id, index, json.dumps([str(x) for x in public]), timings["queue_wait"], timings["srs_load"],
                 timings["synthesis"], timings["gpu_compute"], timings["total"], timings["started"],
                 time.time())).rowcount
            if added:
                con.execute("UPDATE jobs SET proved = proved + 1 WHERE id = ?", (job_id,))
        self._write(insert)

    def proved_indices(self, job_id: str) -> set[int]:
        """The job's partitions whose proof is recorded and on disk; a row
        whose file is missing or of the wrong size is removed (that
        partition is proved again)."""
        rows = self._con().execute("SELECT idx FROM partitions WHERE job_id = ?", (job_id,)).fetchall()
        good: set[int] = set()
        lost: list[int] = []
        for (index,) in rows:
            try:
                ok = os.path.getsize(self._proof_path(job_id, index)) == PROOF_BYTES
            except OSError:
                ok = False
            (good.add if ok else lost.append)(index)
        if lost:
            LOG.warning("job %s: proofs of partitions %s are missing on disk; they are proved again", job_id, lost)

            def forget(con):
                con.executemany("DELETE FROM partitions WHERE job_id = ? AND idx = ?", [(job_id, i) for i in lost])
                con.execute("UPDATE jobs SET proved = ? WHERE id = ?", (len(good), job_id))
            self._write(forget)
        return good

    def partitions(self, job_id: str, with_proofs: bool = True) -> list[PartitionRecord]:
        """The job's proved partitions in order, their proofs read from disk
        (with_proofs=False: b"" in their place). OSError when a file has gone."""
        rows = self._con().execute(
            "SELECT idx, public, queue_wait, srs_load, synthesis, gpu_compute, total, started FROM partitions "
            "WHERE job_id = ? ORDER BY idx", (job_id,)).fetchall()
        out = []
        for index, public, *times in rows:
            proof = b""
            if with_proofs:
                with open(self._proof_path(job_id, index), "rb") as f:
                    proof = f.read(PROOF_BYTES + 1)
            timings = dict(zip(("queue_wait", "srs_load", "synthesis", "gpu_compute", "total", "started"), times))
            out.append(PartitionRecord(index, proof, [int(x) for x in json.loads(public)], timings))
        return out

    def removal(self, job_id: str) -> str | None:
        """Why and when the sweep removed a job ("removed at ...: ..."), or None when it did not (or long ago)."""
        row = self._con().execute("SELECT removed, reason FROM removed_jobs WHERE id = ?", (job_id,)).fetchone()
        return None if row is None else f"removed at {_when(row[0])}: {row[1]}"

    # ------------------------------------------------------------ the sweep

    def sweep(self, retention: float, fetched_retention: float, now: float | None = None,
              orphans: bool = False) -> list[str]:
        """Remove the finished jobs past their time (see the module's
        docstring), rows first, then their files; with orphans (at start,
        before any job runs), also the result folders no job owns (left by
        a removal cut short). Returns the job ids removed."""
        now = time.time() if now is None else now
        grace = min(retention, fetched_retention)

        def expire(con):
            marks = ",".join("?" * len(FINISHED))
            rows = con.execute(
                f"SELECT id, finished, fetched FROM jobs WHERE state IN ({marks}) AND (finished < ? OR fetched < ?)",
                (*FINISHED, now - retention, now - grace)).fetchall()
            for job_id, finished, fetched in rows:
                con.execute("DELETE FROM partitions WHERE job_id = ?", (job_id,))
                con.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
                reason = (f"it finished at {_when(finished)} and is kept {retention:g} s after "
                          "(daemon.result_retention_seconds)" if finished < now - retention
                          else f"its result was fetched at {_when(fetched)} and is kept {fetched_retention:g} s "
                          "after (daemon.fetched_retention_seconds)")
                con.execute("INSERT OR REPLACE INTO removed_jobs (id, removed, reason) VALUES (?, ?, ?)",
                            (job_id, now, reason))
            if rows:
                con.execute("DELETE FROM removed_jobs WHERE id NOT IN (SELECT id FROM removed_jobs "
                            "ORDER BY removed DESC LIMIT ?)", (MAX_REMOVED,))
            return [r[0] for r in rows]
        removed = self._write(expire)
        for job_id in removed:
            shutil.rmtree(os.path.join(self.results, job_id), ignore_errors=True)
        if orphans:
            owned = {r[0] for r in self._con().execute("SELECT id FROM jobs").fetchall()}
            for name in set(os.listdir(self.results)) - owned:
                shutil.rmtree(os.path.join(self.results, name), ignore_errors=True)
        return removed


def _when(t: float | None) -> str:
    """A moment for a message: UTC, to the second."""
    if t is None:
        return "an unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))
