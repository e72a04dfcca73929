# SPDX-License-Identifier: Apache-2.0
"""Logging as the settings [logging] say: level, destination, and the file the
timeline events go to."""
from __future__ import annotations

import logging

from .timeline import LOG as TIMELINE_LOG

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def configure_logging(config) -> list[logging.Handler]:
    """Set the package loggers up (porep_prover.*); returns the handlers added,
    for remove_handlers() when the run ends."""
    root = logging.getLogger("porep_prover")
    root.setLevel(config.get("logging.level"))
    path = config.get("logging.file")
    handler = logging.FileHandler(path) if path else logging.StreamHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    added = [handler]
    timeline = config.get("logging.timeline")
    if timeline:
        th = logging.FileHandler(timeline)
        th.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        TIMELINE_LOG.addHandler(th)
        TIMELINE_LOG.setLevel(logging.INFO)
        TIMELINE_LOG.propagate = False   # the events go to their own file only
        added.append(th)
    return added


def remove_handlers(handlers: list[logging.Handler]) -> None:
    TIMELINE_LOG.propagate = True
    for h in handlers:
        for name in ("porep_prover", TIMELINE_LOG.name):
            logging.getLogger(name).removeHandler(h)
        h.close()
