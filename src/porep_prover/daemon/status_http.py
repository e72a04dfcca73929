# SPDX-License-Identifier: Apache-2.0
"""GET /status (JSON) and GET /metrics (Prometheus text) over HTTP, on the
daemon's status address (daemon.status_listen), for operators and scrapers;
GET / the live status page (daemon/page/status.html: one self-contained file,
no other asset), which reads GET /status/live every second.

A stdlib ThreadingHTTPServer on a daemon thread, bound to exactly the
address given (the daemon decides which addresses are allowed); each
connection is read and written within a time limit, at most MAX_CONNECTIONS
are served at once (more get 503), and stop() returns in bounded time.
engine_status_view(engine) is the engine's part of the status dict.
"""
from __future__ import annotations

import functools
import http.server
import importlib.resources
import json
import logging
import platform
import socket
import socketserver
import threading
import urllib.parse
from typing import Callable, cast

from prometheus_client import CONTENT_TYPE_LATEST

from ..engine.memory import host_available_bytes, host_memory_bytes
from ..engine.timeline_window import MAX_WINDOW_SECONDS
from ..errors import ConfigError, InvalidInputError

LOG = logging.getLogger("porep_prover.daemon.status")
REQUEST_TIMEOUT_SECONDS = 10.0     # a connection's reads and writes, each
MAX_CONNECTIONS = 32               # served at once; more are answered 503 at once
STOP_SECONDS = 5.0                 # stop() waits this long at most for the serving thread
POLL_SECONDS = 0.2                 # how often the serving loop looks for a stop
WINDOW_SECONDS = 60.0              # the timeline /status/live gives by default (?window=SECONDS: another)
PAGE_HEADERS = {"Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; style-src "
                "'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'",
                "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def engine_status_view(engine) -> dict:
    """The engine's part of the status dict (StatusServer documents the
    whole): accepting, devices, workers, partitions, engine_jobs, srs,
    memory, plugin_calls_stuck, timeline (a job's partitions:
    engine.job_progress), and cluster (every node) where engine.cluster is
    set. Only JSON types; a device whose memory cannot be read has memory None."""
    s, settings = engine.status(), engine.settings
    workers = settings.gpu_workers_per_device if engine.devices else 0
    device_workers = workers * len(engine.devices)
    return {
        "accepting": bool(s["accepting"]),
        "devices": [_device(d, workers) for d in engine.devices],
        "workers": {"synthesis": settings.partition_workers, "per_device": workers, "device": device_workers,
                    "finalizers": max(1, device_workers) if engine.devices else 0},
        "partitions": {"waiting": s["partitions_waiting"], "ready": s["partitions_ready"],
                       "in_flight": s["partitions_in_flight"]},
        "engine_jobs": {"active": s["jobs_active"], "submitted": s["jobs_total"], "succeeded": s["jobs_succeeded"],
                        "failed": s["jobs_failed"], "cancelled": s["jobs_cancelled"]},
        "srs": {"resident_bytes": sum(e["bytes"] for e in s["srs"]), "budget_bytes": settings.srs_budget_bytes,
                "sets": s["srs"]},
        "memory": {"host": {"total_bytes": host_memory_bytes(), "available_bytes": host_available_bytes(),
                            "in_flight_bytes": s["memory_in_flight"], "pending_bytes": s["memory_pending"],
                            "held_bytes": s["memory_held"], "budget_bytes": s["memory_budget"]}},
        "plugin_calls_stuck": s["plugin_calls_stuck"],
        "timeline": s["timeline_events"],
        **({"cluster": s["cluster"]} if "cluster" in s else {}),
    }


def _device(device, workers: int) -> dict:
    """One device's entry: its names, workers, and memory (a CUDA device's,
    read now: free and total, resident, and the process's budget, planned
    peak, allocated now and peak since the plan, streamed and pinned bytes;
    None for the host, or a backend that does not tell), and the seconds
    its kernels have stood waiting for streamed chunks, as of the last
    kernel region's end (None for the host)."""
    backend = device.backend
    memory: dict[str, int | None] | None = None
    if device.kind == "gpu":
        try:
            # the card's total and free, the budget and the plan (planned None before one), held and at most held
            status = backend.memory_status()
            if status:
                memory = {f"{key}_bytes": None if value is None else int(value) for key, value in status.items()}
        except Exception as exc:  # noqa: BLE001 - a status page shows what it can; the cause goes to the log
            LOG.warning("device %s: memory not readable: %s", device.label, exc)
    info = getattr(backend, "info", None)
    name = getattr(info, "name", device.label) if device.kind == "gpu" else _cpu_name()
    waited = getattr(getattr(backend, "memory", None), "copy_wait_seen_ms", None) if device.kind == "gpu" else None
    return {"label": device.label, "kind": device.kind, "identity": device.identity, "name": name,
            "workers": workers, "memory": memory,
            "copy_wait_seconds": None if not isinstance(waited, (int, float)) else waited / 1e3}


@functools.cache
def _cpu_name() -> str:
    """The host processor's model name (/proc/cpuinfo), else the platform's word for it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


@functools.cache
def status_page() -> bytes:
    """The live status page (HTML with its script and style inline), from the package's data."""
    return importlib.resources.files(__package__).joinpath("page", "status.html").read_bytes()


class StatusServer:
    """GET /status: status() as JSON; GET /status/live: {"status": status(),
    "window": engine.timeline_window(WINDOW_SECONDS, or ?window=SECONDS from
    1 to 3600, else 400) (None without an engine; engine.timeline_window
    documents it)} as JSON; GET /: the live status page (HTML), which reads
    /status/live every second (GET /?window=SECONDS: over that window);
    GET /metrics:
    metrics.observe(status(), engine) then metrics.text(), as Prometheus
    text; any other path 404, any other method 405; a status() that raises,
    500 (logged).

    address: (host, port); port 0 picks a free one (read .port after
    start()). status: a callable returning the daemon's status dict;
    metrics: a daemon.metrics.DaemonMetrics; engine: the engine whose
    timeline the metrics read (None: the gauges of the status dict only).

    The status dict (what the daemon's status() returns; engine_status_view
    gives the keys marked E, the daemon adds the others from its journal;
    bytes and seconds as numbers, names as strings):
        version            str: the package's version
        uptime_seconds     float
        accepting          bool: jobs are accepted (False while draining)      E, daemon may clear it
        devices            [{label ("cpu", "gpu0", ...), kind ("cpu" | "gpu"), identity (the
                           interlock's key: a GPU's UUID), name, workers (device workers on it),
                           memory: {total_bytes, free_bytes, resident_bytes (parameters kept on the
                           device)} or None (the host's CPU, or memory not readable)}]              E
        workers            {synthesis, per_device, device (all device workers), finalizers}        E
        queue              {low, normal, high, critical}: jobs accepted, no partition started
        jobs               {counts: {queued, running, completed, failed, cancelled},
                            active: [{job_id, request_id, kind, priority ("low" .. "critical"),
                                      state ("queued" | "running"), partitions, queued, in_flight,
                                      proved, failed, submitted_unix_ms}]}
        partitions         {waiting (for a synthesis worker), ready (synthesized, for a device),
                           in_flight (handed to a worker, not yet proved or failed)}               E
        engine_jobs        {active, submitted, succeeded, failed, cancelled}: the engine's own,
                           since it started                                                          E
        srs                {resident_bytes, budget_bytes (0: none), sets: [{key, bytes, leases,
                           loads, idle_seconds (None: never released), loading}]}                  E
        memory             {host: {total_bytes, available_bytes (None: unknown), in_flight_bytes,
                           pending_bytes, budget_bytes}}; a device's is in devices[].memory         E
        plugin_calls_stuck [str]: plugin calls past their time limit, still running               E
        timeline           {kept, emitted}: events in memory, events since start                 E
        cluster            only where engine.cluster is set: {name, address, nodes: [{node_id,     E
                           label, address, state, devices, device_figures ([{label, efficiency,
                           busy_seconds, regions, longest_gap_seconds, longest_gap_cause}]: the node's
                           own, over its last figures_seconds), srs, partitions_done, partitions_failed,
                           partitions_rerun, in_flight, dispatch_ms, ...}]} (engine.Cluster.status)
    (jobs.active[]'s queued / in_flight / proved of a job in the engine: engine.job_progress.)
    """

    def __init__(self, address: tuple[str, int], status: Callable[[], dict], metrics, engine=None,
                 timeout: float = REQUEST_TIMEOUT_SECONDS):
        if not (isinstance(address, tuple) and len(address) == 2 and isinstance(address[0], str)
                and isinstance(address[1], int) and not isinstance(address[1], bool) and 0 <= address[1] <= 65535):
            raise InvalidInputError(f"status address must be (host, port 0 to 65535), got {address!r}")
        if not callable(status):
            raise InvalidInputError("status must be a callable returning the status dict")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
            raise InvalidInputError(f"timeout must be seconds above 0, at most 3600, got {timeout!r}")
        self.address, self.status, self.metrics, self.engine = address, status, metrics, engine
        self.timeout = timeout
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int | None:
        """The port listened on (None before start())."""
        return self._server.server_address[1] if self._server is not None else None

    def start(self) -> "StatusServer":
        """Bind and serve on a daemon thread. ConfigError naming the address
        when it cannot be listened on (in use, not this host's, not allowed)."""
        if self._server is not None:
            return self
        host, port = self.address
        try:
            server = _Server((host.strip("[]"), port), _handler(self))
        except OSError as exc:
            raise ConfigError(f"status address {host}:{port}: cannot listen there: {exc.strerror or exc}",
                              key="daemon.status_listen") from None
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": POLL_SECONDS},
                                        name="status-http", daemon=True)
        self._thread.start()
        LOG.info("status on http://%s:%d/ (the live page), /status and /metrics", host, self.port)
        return self

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """Stop serving and close the socket, waiting at most timeout seconds
        for the serving thread (connections still open end by their own
        time limit); start() may serve again after. Again, or before start(),
        does nothing."""
        server, thread, self._thread = self._server, self._thread, None
        if server is None or thread is None:
            return
        stopper = threading.Thread(target=server.shutdown, name="status-http-stop", daemon=True)
        stopper.start()      # shutdown() waits for the loop; the loop looks every POLL_SECONDS
        stopper.join(timeout)
        thread.join(max(0.0, timeout - POLL_SECONDS))
        server.server_close()
        self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------ answers

    def answer(self, path: str) -> tuple[int, str, bytes]:
        """(HTTP status, content type, body) for a GET of path."""
        parts = urllib.parse.urlsplit(path)
        path = parts.path
        if path == "/":
            return 200, "text/html; charset=utf-8", status_page()
        if path not in ("/status", "/status/live", "/metrics"):
            return 404, "text/plain; charset=utf-8", b"not found: GET /, /status, /status/live or /metrics\n"
        seconds = _window_seconds(parts.query) if path == "/status/live" else WINDOW_SECONDS
        if seconds is None:
            return 400, "text/plain; charset=utf-8", (f"window must be seconds from 1 to {MAX_WINDOW_SECONDS:g}"
                                                      "\n").encode()
        try:
            status = self.status()
            if path == "/status":
                return 200, "application/json", json.dumps(status, allow_nan=False).encode() + b"\n"
            if path == "/status/live":
                window = self.engine.timeline_window(seconds) if self.engine is not None else None
                return 200, "application/json", json.dumps({"status": status, "window": window},
                                                           allow_nan=False).encode() + b"\n"
            self.metrics.observe(status, self.engine)
            return 200, CONTENT_TYPE_LATEST, self.metrics.text().encode()
        except Exception as exc:  # noqa: BLE001 - one failed answer, the server goes on
            LOG.exception("GET %s failed", path)
            return 500, "application/json", json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode()


def _window_seconds(query: str) -> float | None:
    """/status/live's ?window=SECONDS (default WINDOW_SECONDS); None when not from 1 to MAX_WINDOW_SECONDS."""
    given = urllib.parse.parse_qs(query).get("window")
    if not given:
        return WINDOW_SECONDS
    try:
        seconds = float(given[-1])
    except ValueError:
        return None
    return seconds if 1 <= seconds <= MAX_WINDOW_SECONDS else None


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True            # a connection's thread never holds the process up (each is time-limited)

    def __init__(self, address, handler):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, handler)

    def server_bind(self):
        # HTTPServer's own looks the host's name up (a DNS query that can stall); the name is not needed
        socketserver.TCPServer.server_bind(self)
        # bound, the address is getsockname()'s of an AF_INET or AF_INET6 socket: its host a str
        self.server_name, self.server_port = cast(str, self.server_address[0]), self.server_address[1]


def _handler(owner: StatusServer) -> type:
    class Handler(http.server.BaseHTTPRequestHandler):
        server: _Server                          # the server it is made for (StatusServer.start)
        timeout = owner.timeout                  # the socket's: every read and write of the connection
        server_version = "porep-prover"
        sys_version = ""

        def handle(self):
            if not self.server.slots.acquire(blocking=False):
                self._busy()
                return
            try:
                super().handle()
            finally:
                self.server.slots.release()

        def _busy(self):
            try:
                self.wfile.write(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                 b"Retry-After: 1\r\nConnection: close\r\n\r\n")
            except OSError:
                pass

        def do_GET(self):
            code, kind, body = owner.answer(self.path)
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in (PAGE_HEADERS.items() if kind.startswith("text/html") else ()):
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _not_allowed(self):
            self.send_response(405)
            self.send_header("Allow", "GET")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

        def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
            LOG.debug("%s %s", self.address_string(), format % args)

    return Handler
