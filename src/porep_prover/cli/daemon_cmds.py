# SPDX-License-Identifier: Apache-2.0
"""`porep-prover daemon`: the proving daemon (porep_prover.daemon), in the
foreground until SIGTERM or SIGINT, which drain it and end it with status 0.

    porep-prover daemon [--config FILE] [--set daemon.listen=127.0.0.1:9820 ...]

Settings: the [daemon] section (and the engine's, the logging's) of the
config file, --set overrides as the engine commands take them; see
contrib/porep-prover.example.toml.
"""
from __future__ import annotations

import signal
import threading

# The daemon (grpc, the engine, pluggy) is imported when the command runs: the other commands start without it.


def cmd_daemon(args) -> int:
    from ..daemon.server import serve
    from ..engine.logs import configure_logging, remove_handlers
    from .engine_cmds import read_config
    config = read_config(args)
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    handlers = configure_logging(config)
    try:
        serve(config, stop, announce=lambda line: print(line, flush=True))
    finally:
        remove_handlers(handlers)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def register(sub, common) -> None:
    from .engine_cmds import engine_options
    p = sub.add_parser("daemon", help="the proving daemon: gRPC service, journal, status and metrics over HTTP")
    engine_options(p)
    p.set_defaults(func=cmd_daemon)
