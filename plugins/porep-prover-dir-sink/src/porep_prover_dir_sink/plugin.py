# SPDX-License-Identifier: Apache-2.0
"""The result sink "dir-sink": every finished job written into a directory
(POREP_PROVER_RESULT_DIR, default ./porep-prover-results). It runs only in
engines whose setting engine.result_sinks names it ("dir-sink"); installed
alone it writes nothing.

    <dir>/<job id>/proofs.bin          the partitions' 192-byte proofs, in order
    <dir>/<job id>/public.json         each partition's public inputs (decimal strings)
    <dir>/<job id>/status.json         {"job", "kind", "partitions", "ok", "seconds", "error"}

Files are written to a temporary name and renamed, so a reader never sees half
a result; status.json comes last."""
from __future__ import annotations

import json
import os
import pathlib

from porep_prover.hooks import hookimpl


def _atomic_write(path: pathlib.Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class DirectorySink:
    """root: the directory (default: POREP_PROVER_RESULT_DIR, else ./porep-prover-results)."""

    name = "dir-sink"

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = pathlib.Path(root or os.environ.get("POREP_PROVER_RESULT_DIR", "porep-prover-results"))

    def deliver(self, result) -> None:
        out = self.root / result.job.id
        out.mkdir(parents=True, exist_ok=True)
        if result.ok:
            _atomic_write(out / "proofs.bin", b"".join(p.to_bytes() for p in result.proofs))
            public = [[str(x) for x in p] for p in result.public_inputs]
            _atomic_write(out / "public.json", json.dumps(public).encode())
        status = {"job": result.job.id, "kind": result.job.kind, "partitions": result.job.partitions,
                  "ok": result.ok, "seconds": round(result.seconds, 3),
                  "error": None if result.ok else f"{type(result.error).__name__}: {result.error}"}
        _atomic_write(out / "status.json", json.dumps(status, indent=1).encode())


@hookimpl
def porep_prover_register_result_sinks(registry) -> None:
    registry.add_sink(DirectorySink.name, DirectorySink())
