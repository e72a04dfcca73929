# SPDX-License-Identifier: Apache-2.0
"""`porep-prover status`: a proving daemon's live status, read from its
status address (daemon.status_listen; GET /status/live), in a terminal.

    porep-prover status [--address HOST:PORT] [--json]
    porep-prover status --watch [--interval S] [--count N] [--address HOST:PORT]

Once: the view (status_view.render), or with --json the answer as JSON.
--watch: the view redrawn every --interval seconds (0.2 to 3600, default 1)
in place on a terminal (rich Live), or printed as plain text after a line
naming the time when standard output is not a terminal; until Ctrl-C (exit
130) or --count views. While watching, a daemon that does not answer is
shown as such and asked again; once, it is an error (exit 2).
"""
from __future__ import annotations

import argparse
import json
import os
import time
import urllib.parse

from ..errors import DaemonError, DaemonUnavailableError, InvalidInputError
from . import arguments

DEFAULT_ADDRESS = "127.0.0.1:9821"     # the daemon's default daemon.status_listen
FETCH_SECONDS = 10.0                   # one request's limit
MAX_ANSWER_BYTES = 64 << 20
COUNT = arguments.integer(1, 10_000_000)
PLAIN_WIDTH = 120                      # columns of the view off a terminal (COLUMNS, when set, wins)


def _interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.2 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"must be seconds from 0.2 to 3600, got {text!r}")
    return value


def live_url(address: str) -> str:
    """http://HOST:PORT/status/live for HOST:PORT, [V6]:PORT or an http:// URL
    (its path replaced). InvalidInputError for anything else."""
    text = address.strip()
    parts = urllib.parse.urlsplit(text if "://" in text else f"http://{text}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not parts.hostname or port is None or parts.username or parts.password:
        raise InvalidInputError(f"--address must be the daemon's status address HOST:PORT (daemon.status_listen), "
                                f"got {address!r}")
    return f"http://{parts.netloc}/status/live"


def fetch_live(url: str, timeout: float = FETCH_SECONDS) -> dict:
    """The daemon's /status/live answer (asked directly: proxy settings are
    not used). DaemonUnavailableError when nothing answers there; DaemonError
    for an answer that is not the status's."""
    import http.client               # with urllib: email and ssl, for this command only
    import urllib.error
    import urllib.request
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))     # the address itself, never a proxy
    try:
        with direct.open(url, timeout=timeout) as reply:
            body = reply.read(MAX_ANSWER_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise DaemonError(f"{url}: HTTP {exc.code} {exc.reason}", code=str(exc.code)) from None
    except http.client.HTTPException as exc:        # an answer, but not HTTP/1's (before OSError: some are both)
        raise DaemonError(f"{url}: the port does not answer HTTP/1 ({type(exc).__name__}): a gRPC service (the "
                          f"daemon's daemon.listen, which `porep-prover client` talks to) rather than its status "
                          f"page (daemon.status_listen)?") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DaemonUnavailableError(f"{url}: no status answered: {reason}", code="UNAVAILABLE") from None
    try:
        live = json.loads(body) if len(body) <= MAX_ANSWER_BYTES else None
    except ValueError:
        live = None
    if not isinstance(live, dict) or not isinstance(live.get("status"), dict) or "window" not in live:
        raise DaemonError(f"{url}: the answer is not a daemon's live status (a porep-prover daemon's status "
                          f"address?)")
    return live


def cmd_live_status(args) -> int:
    """`porep-prover status`: the daemon's live view, once or --watch."""
    url = live_url(args.address)
    if not args.watch:
        live = fetch_live(url)
        if args.json:
            print(json.dumps(live, indent=1))
            return 0
        from .status_view import render
        console = _console()
        console.print(render(live, console.width, url))
        return 0
    return watch(url, args.interval, args.count)


def _view(url: str, width: int):
    from rich.text import Text
    from .status_view import render
    try:
        return render(fetch_live(url), width, url)
    except DaemonError as exc:
        return Text(f"{exc} (asking again)", style="bold red")


def watch(url: str, interval: float, count: int | None, console=None) -> int:
    """The view every `interval` seconds, `count` times (None: until Ctrl-C,
    which ends it with KeyboardInterrupt, the command's exit 130). On a
    terminal console, redrawn in place; otherwise printed after a line
    naming the time."""
    from rich.live import Live
    console = console if console is not None else _console()
    shown = 0
    if not console.is_terminal:
        while True:
            console.print(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')}")
            console.print(_view(url, console.width))
            shown += 1
            if count is not None and shown >= count:
                return 0
            time.sleep(interval)
    with Live(_view(url, console.width), console=console, auto_refresh=False, transient=False) as live:
        shown = 1
        while count is None or shown < count:
            time.sleep(interval)
            live.update(_view(url, console.width), refresh=True)
            shown += 1
    return 0


def _console():
    from rich.console import Console
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(width=PLAIN_WIDTH)
    return console


def register(sub, common) -> None:
    p = sub.add_parser("status", help="a proving daemon's live status: timeline lanes, efficiency, queue, jobs "
                                      "(--watch: redrawn every second)")
    p.add_argument("--address", default=DEFAULT_ADDRESS, metavar="HOST:PORT",
                   help=f"the daemon's status address, daemon.status_listen (default {DEFAULT_ADDRESS})")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--watch", action="store_true", help="redraw every --interval seconds until Ctrl-C")
    p.add_argument("--interval", type=_interval, default=1.0, metavar="S",
                   help="seconds between views with --watch, 0.2 to 3600 (default 1)")
    p.add_argument("--count", type=COUNT, default=None, metavar="N", help="with --watch: stop after N views")
    how.add_argument("--json", action="store_true", help="print the status and the timeline's window as JSON")
    p.set_defaults(func=cmd_live_status)
