# SPDX-License-Identifier: Apache-2.0
"""A benchmark's JSON report, whole after every row: a run stopped at any
point (a time limit, the OOM killer) leaves every row it finished."""
from __future__ import annotations

import json
import os
import threading

from ..atomic import atomic_write


class ReportFile:
    """A JSON object of fields and a list of rows under `key`, rewritten
    whole through atomic_write each time a row is added or a field set, so
    that a reader finds the last complete file, never a part of one. path
    None: kept in memory only (rows and fields still readable). Safe from
    any thread; rows keep the order they were added in."""

    def __init__(self, path: str | os.PathLike | None, key: str = "rows", **fields: object):
        self.path, self.key = path, key
        self.fields: dict[str, object] = dict(fields)
        self.rows: list[dict] = []
        self._lock = threading.Lock()
        self._save()

    def add(self, row: dict) -> None:
        """row appended, and the file rewritten."""
        with self._lock:
            self.rows.append(row)
            self._save()

    def set(self, **fields: object) -> None:
        """fields set (replacing those of the same name), and the file rewritten."""
        with self._lock:
            self.fields.update(fields)
            self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        data = json.dumps({**self.fields, self.key: self.rows}, indent=1, default=str).encode()
        with atomic_write(self.path) as f:
            f.write(data)
