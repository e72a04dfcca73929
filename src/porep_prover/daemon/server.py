# SPDX-License-Identifier: Apache-2.0
"""The daemon as a process: the gRPC server (the service, the reference
engine's beside it while daemon.cuzk_wire is on (daemon/cuzk), the gRPC
health service, server reflection; TLS and the bearer token when configured; a
request that does not parse answered INVALID_ARGUMENT), the HTTP status
server, and a run that ends with a drain.

    serve(config, stop)     start everything; block until stop is set (SIGTERM, SIGINT);
                            then drain and end; returns when all is closed

Once listening, the addresses bound (a port 0 resolved) are written to
<state_dir>/daemon.json ({"pid", "listen", "status_listen"}), and removed
at the end.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import hmac
import json
import logging
import os
import threading

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..atomic import atomic_write
from ..errors import ConfigError
from .core import Daemon
from .cuzk import proving_pb2_grpc as cuzk_pb2_grpc
from .cuzk.service import SERVICE as CUZK_SERVICE
from .cuzk.service import CuzkService
from .service import ProvingService
from .status_http import StatusServer
from .v1 import proving_pb2, proving_pb2_grpc

LOG = logging.getLogger("porep_prover.daemon")
SERVICE = proving_pb2.DESCRIPTOR.services_by_name["ProvingEngine"].full_name
CALL_THREADS = 16            # server threads beyond the waits: every other call is short
QUEUED_CALLS_PER_THREAD = 4  # calls queued for a thread beyond those running; more are RESOURCE_EXHAUSTED
STOP_GRACE_SECONDS = 2.0     # calls still running when the server stops get this long


class TokenCheck(grpc.ServerInterceptor):
    """Every call needs the metadata `authorization: Bearer <token>`
    (compared in constant time); any other is UNAUTHENTICATED."""

    def __init__(self, token: bytes):
        self._expected = b"Bearer " + token

    def intercept_service(self, continuation, details):
        given = next((v for k, v in details.invocation_metadata or () if k == "authorization"), "")
        given = given.encode("utf-8", "replace") if isinstance(given, str) else bytes(given)
        handler = continuation(details)
        if hmac.compare_digest(given, self._expected) or handler is None:
            return handler
        return _refusing(handler)


def _refusing(handler):
    """A handler of handler's shape that answers UNAUTHENTICATED."""
    def refuse(request, context):
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "a bearer token is required (metadata authorization: "
                                                       "Bearer <token>), and the one given, if any, is wrong")
    return _like(handler, refuse, handler.request_deserializer)


def _like(handler, behavior, request_deserializer):
    """A handler of handler's shape (each way a stream or one message) that runs behavior."""
    make = {(False, False): grpc.unary_unary_rpc_method_handler, (False, True): grpc.unary_stream_rpc_method_handler,
            (True, False): grpc.stream_unary_rpc_method_handler, (True, True): grpc.stream_stream_rpc_method_handler}
    return make[(handler.request_streaming, handler.response_streaming)](
        behavior, request_deserializer=request_deserializer, response_serializer=handler.response_serializer)


class Malformed:
    """A request message that did not parse, and why."""

    def __init__(self, why: str):
        self.why = why


class MalformedRequests(grpc.ServerInterceptor):
    """A request that is not its method's message (bytes that do not parse:
    a string field that is not UTF-8, a field cut short, a varint of more
    than 64 bits) is answered INVALID_ARGUMENT, saying why. gRPC alone would
    answer INTERNAL, as if the daemon had failed."""

    def intercept_service(self, continuation, details):
        handler = continuation(details)
        if handler is None or handler.request_deserializer is None:
            return handler
        return _tolerant(handler, details.method)


def _tolerant(handler, method: str):
    """handler, with a request that does not parse answered INVALID_ARGUMENT."""
    parse = handler.request_deserializer

    def tolerant(data: bytes):
        try:
            return parse(data)
        except Exception as exc:  # noqa: BLE001 - whatever the parser raises, the bytes are the caller's
            return Malformed(f"{type(exc).__name__}: {exc}")

    def refuse(request: Malformed, context):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request is not a {method} request message "
                                                        f"({request.why})")

    behavior = next(b for b in (handler.unary_unary, handler.unary_stream, handler.stream_unary,
                                handler.stream_stream) if b is not None)
    if not handler.request_streaming:
        def checked(request, context):
            if isinstance(request, Malformed):
                refuse(request, context)
            return behavior(request, context)
    else:
        def checked(requests, context):
            def each():
                for request in requests:
                    if isinstance(request, Malformed):
                        refuse(request, context)
                    yield request
            return behavior(each(), context)
    return _like(handler, checked, tolerant)


class NamedHealth(health.HealthServicer):
    """The standard health service over the services named, whose NOT_FOUND
    for a service it does not know names that service: an empty status text
    tells a caller nothing."""

    def __init__(self, services: tuple[str, ...], **kwargs):
        super().__init__(**kwargs)
        self.services = services

    def Check(self, request, context):
        answer = super().Check(request, context)
        if context.code() == grpc.StatusCode.NOT_FOUND:
            context.set_details(f"no health is kept for service {request.service[:200]!r}; "
                                f"known: '' (the whole server) and {', '.join(map(repr, self.services))}")
        return answer


def services(settings) -> tuple[str, ...]:
    """The full names of the proving services the server serves."""
    return (SERVICE, CUZK_SERVICE) if settings.cuzk_inbox else (SERVICE,)


def build_server(daemon: Daemon) -> tuple[grpc.Server, health.HealthServicer, int]:
    """The gRPC server over daemon, bound (not started): (server, its health
    service, the port bound; 0 for a Unix socket). ConfigError when the
    address cannot be listened on."""
    settings = daemon.settings
    threads = settings.max_waiters + CALL_THREADS
    server = grpc.server(
        concurrent.futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="grpc"),
        # the token is checked first: a caller without it learns nothing of its requests' form
        interceptors=[*([TokenCheck(settings.token)] if settings.token else []), MalformedRequests()],
        options=[("grpc.max_receive_message_length", settings.max_request_bytes),
                 ("grpc.max_send_message_length", -1),
                 ("grpc.so_reuseport", 0)],          # a port in use is an error, not shared with its holder
        maximum_concurrent_rpcs=threads * QUEUED_CALLS_PER_THREAD)
    own = ProvingService(daemon)
    proving_pb2_grpc.add_ProvingEngineServicer_to_server(own, server)
    if settings.cuzk_inbox:
        cuzk_pb2_grpc.add_ProvingEngineServicer_to_server(CuzkService(own), server)
    health_service = NamedHealth(services(settings), experimental_non_blocking=True)
    health_pb2_grpc.add_HealthServicer_to_server(health_service, server)
    reflection.enable_server_reflection((*services(settings), health.SERVICE_NAME, reflection.SERVICE_NAME),
                                        server)
    target = settings.listen.target()
    try:
        if settings.tls is not None:
            port = server.add_secure_port(target, grpc.ssl_server_credentials([settings.tls]))
        else:
            port = server.add_insecure_port(target)
    except RuntimeError as exc:
        raise ConfigError(f"daemon.listen {target}: cannot listen there: {exc}", key="daemon.listen") from None
    if not port and not settings.listen.is_unix:
        raise ConfigError(f"daemon.listen {target}: cannot listen there (in use?)", key="daemon.listen")
    return server, health_service, port


def serve(config, stop: threading.Event, announce=print) -> None:
    """Run the daemon of config until stop is set, then drain and end.
    announce(line) is told where it listens. ConfigError for bad settings,
    an address it cannot listen on, or a state folder in use."""
    daemon = Daemon(config)
    status_server = server = None
    address_file = None
    try:
        daemon.start()
        server, health_service, port = build_server(daemon)
        settings = daemon.settings
        if settings.status_listen is not None:
            status_server = StatusServer((settings.status_listen.host, settings.status_listen.port),
                                         status=daemon.status, metrics=daemon.metrics, engine=daemon.engine).start()
        server.start()
        if settings.listen.is_unix:
            os.chmod(settings.listen.path, 0o600)
        for name in ("", *services(settings)):
            health_service.set(name, health_pb2.HealthCheckResponse.SERVING)
        listen = settings.listen.target(port)
        status = f"{settings.status_listen.host}:{status_server.port}" \
            if status_server is not None and settings.status_listen is not None else ""
        address_file = _write_address(settings.state_dir, listen, status)
        announce(f"porep-prover daemon {listen} ({'TLS' if settings.tls else 'plaintext'}"
                 f"{', bearer token' if settings.token else ''}); status "
                 f"{'http://' + status + '/ (the live page; /status, /metrics)' if status else 'off'}; "
                 f"state {settings.state_dir}")
        while not stop.wait(1.0):
            pass
        LOG.info("stopping: draining")
        health_service.enter_graceful_shutdown()
        daemon.drain()
    finally:
        if server is not None:
            server.stop(STOP_GRACE_SECONDS).wait(STOP_GRACE_SECONDS + 1)
        if status_server is not None:
            status_server.stop()
        if daemon.engine is not None and daemon.jobs is not None and daemon.jobs.accepting:
            daemon.drain()               # an error above: still journal what is in flight
        daemon.close()
        if address_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(address_file)


def _write_address(state_dir: str, listen: str, status: str) -> str:
    path = os.path.join(state_dir, "daemon.json")
    with atomic_write(path) as f:
        f.write(json.dumps({"pid": os.getpid(), "listen": listen, "status_listen": status}).encode())
    os.chmod(path, 0o600)               # as the rest of the state folder (daemon/private.py)
    return path
