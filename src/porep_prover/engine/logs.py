# SPDX-License-Identifier: Apache-2.0
"""Logging as the settings [logging] say: level, destination, format, and the
file the timeline events go to.

logging.format = "text": `TIME LEVEL LOGGER MESSAGE` lines (a timeline
event's message: `TIMELINE {json}`). "json": one JSON object a line, its
fields named for good (JsonFormatter): what log collectors index without a
parser of their own. `porep-prover timeline` reads either.
"""
from __future__ import annotations

import datetime
import json
import logging
from typing import TYPE_CHECKING

from .timeline import LOG as TIMELINE_LOG
from .timeline import RECORD_FIELDS

if TYPE_CHECKING:
    from .config import EngineConfig

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
TIMELINE_FORMAT = "%(asctime)s %(message)s"


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON with the fields

        time      UTC, ISO 8601 to the millisecond ("2026-12-05T10:11:12.345Z")
        level     DEBUG, INFO, WARNING, ERROR, CRITICAL
        logger    the logger's name (porep_prover.engine, porep_prover.timeline, ...)
        message   the message, its arguments put in (a timeline event's: the event's name)
        exception the traceback, when the record carries one (absent otherwise)

    and, on a timeline event's record, its fields (engine.timeline):

        event     SYNTH_START, GPU_START, GPU_END, JOB_END, ... (as message)
        ts        when it happened, seconds since the epoch (a float)
        job       the job's id ("" for none)
        partition the partition's index (-1 for none)
        worker    the engine thread's name: synth0, cpu.w0, gpu1.w0, finalize_0 ("" for none)
        device    the device's identity: "cpu", or "gpu-" and the GPU's UUID ("" for none)

    These names and types are kept from release to release."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, RECORD_FIELDS, None)
        stamp = datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc)
        out = {"time": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
               "level": record.levelname, "logger": record.name,
               "message": fields["event"] if fields else record.getMessage()}
        if fields:
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            out["exception"] = record.exc_text
        return json.dumps(out, separators=(",", ":"), default=str)


def formatter(config: EngineConfig, text_format: str = FORMAT) -> logging.Formatter:
    """The formatter logging.format names (text_format: the text form's line)."""
    return JsonFormatter() if config.get("logging.format") == "json" else logging.Formatter(text_format)


def configure_logging(config: EngineConfig) -> list[logging.Handler]:
    """Set the package loggers up (porep_prover.*); returns the handlers added,
    for remove_handlers() when the run ends."""
    root = logging.getLogger("porep_prover")
    root.setLevel(config.get("logging.level"))
    path = config.get("logging.file")
    handler = logging.FileHandler(path) if path else logging.StreamHandler()
    handler.setFormatter(formatter(config))
    root.addHandler(handler)
    added: list[logging.Handler] = [handler]
    timeline = config.get("logging.timeline")
    if timeline:
        th = logging.FileHandler(timeline)
        th.setFormatter(formatter(config, TIMELINE_FORMAT))
        TIMELINE_LOG.addHandler(th)
        TIMELINE_LOG.setLevel(logging.INFO)
        TIMELINE_LOG.propagate = False   # the events go to their own file only
        added.append(th)
    elif root.getEffectiveLevel() > logging.DEBUG:
        # no timeline file: the events (a dozen a partition) would drown the main log at INFO; they reach
        # it at logging.level = "DEBUG", and the engine keeps its last ones in memory either way
        TIMELINE_LOG.setLevel(logging.WARNING)
    return added


def remove_handlers(handlers: list[logging.Handler]) -> None:
    TIMELINE_LOG.propagate = True
    TIMELINE_LOG.setLevel(logging.NOTSET)
    for h in handlers:
        for name in ("porep_prover", TIMELINE_LOG.name):
            logging.getLogger(name).removeHandler(h)
        h.close()
