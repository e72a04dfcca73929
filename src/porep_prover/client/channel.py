# SPDX-License-Identifier: Apache-2.0
"""How the client reaches the daemon: the address, TLS, the bearer token, and
gRPC statuses turned into porep_prover.errors.

Addresses are "HOST:PORT" (a name, an IPv4 address or a bracketed IPv6
address; port 1 to 65535) or "unix:/path" (a Unix socket). Every mistake in
them is an InvalidInputError naming it, raised before any connection is made.
"""
from __future__ import annotations

import os
import re
from typing import Any, Literal, overload

import grpc

from ..errors import (DaemonAuthenticationError, DaemonDeadlineError, DaemonError, DaemonLimitError,
                      DaemonPermissionError, DaemonRequestError, DaemonUnavailableError, InvalidInputError,
                      JobNotFoundError)

# 256 MiB each way: a job's reply holds its partitions' proofs and public inputs
DEFAULT_MAX_MESSAGE_BYTES = 256 << 20
# seconds a call may take beyond the wait it asks the daemon for (AwaitProof's timeout_ms)
DEADLINE_GRACE = 10.0

ERRORS = {
    "UNAVAILABLE": DaemonUnavailableError,
    "RESOURCE_EXHAUSTED": DaemonLimitError,
    "INVALID_ARGUMENT": DaemonRequestError,
    "PERMISSION_DENIED": DaemonPermissionError,
    "UNAUTHENTICATED": DaemonAuthenticationError,
    "DEADLINE_EXCEEDED": DaemonDeadlineError,
    "NOT_FOUND": JobNotFoundError,
}

_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")
_TOKEN = re.compile(r"[\x21-\x7e]+")        # printable ASCII without spaces: what a metadata value carries


def target(address) -> str:
    """The gRPC target of an address ("HOST:PORT" or "unix:/path");
    InvalidInputError for anything else."""
    if not isinstance(address, str):
        raise InvalidInputError(f"a daemon address is a string HOST:PORT or unix:/path, got {type(address).__name__}")
    if address.startswith("unix:"):
        path = address[len("unix:"):]
        if not path.startswith("/") or "\x00" in path:
            raise InvalidInputError(f"a Unix socket address is unix:/absolute/path, got {address!r}")
        return address
    match = _HOST_PORT.fullmatch(address)
    if not match or not 1 <= int(match["port"]) <= 65535:
        raise InvalidInputError(f"a daemon address is HOST:PORT (port 1 to 65535) or unix:/path, got {address!r}")
    return address


def credentials(tls) -> grpc.ChannelCredentials | None:
    """Channel credentials: None or False for a plain channel, True for TLS
    against gRPC's default root certificates, a path for TLS against the
    root certificates (PEM) in that file. InvalidInputError when the file
    cannot be read or holds no certificate."""
    if tls is None or tls is False:
        return None
    if tls is True:
        return grpc.ssl_channel_credentials()
    if not isinstance(tls, (str, os.PathLike)):
        raise InvalidInputError(f"tls is True, False, None or a root certificate file, got {type(tls).__name__}")
    try:
        with open(tls, "rb") as f:
            roots = f.read()
    except OSError as exc:
        raise InvalidInputError(f"{os.fspath(tls)}: cannot read root certificates: {exc.strerror or exc}") from None
    if b"-----BEGIN CERTIFICATE-----" not in roots:
        raise InvalidInputError(f"{os.fspath(tls)}: no PEM certificate in the file")
    return grpc.ssl_channel_credentials(root_certificates=roots)


def channel_options(max_message_bytes: int, tls_server_name: str | None) -> list[tuple]:
    """gRPC channel options: the message size limit both ways, and the name the
    daemon's certificate must carry when it is not the address's host."""
    if isinstance(max_message_bytes, bool) or not isinstance(max_message_bytes, int) \
            or not 1 <= max_message_bytes <= (1 << 31) - 1:
        raise InvalidInputError(f"max_message_bytes must be an integer from 1 to 2^31 - 1, got {max_message_bytes!r}")
    options: list[tuple[str, int | str]] = [("grpc.max_receive_message_length", max_message_bytes),
                                            ("grpc.max_send_message_length", max_message_bytes)]
    if tls_server_name is not None:
        if not isinstance(tls_server_name, str) or not tls_server_name:
            raise InvalidInputError(f"tls_server_name must be a host name, got {tls_server_name!r}")
        options.append(("grpc.ssl_target_name_override", tls_server_name))
    return options


def call_metadata(token) -> tuple:
    """The metadata sent with every call: `authorization: Bearer TOKEN` when a
    token is given. InvalidInputError for a token that metadata cannot carry."""
    if token is None:
        return ()
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        raise InvalidInputError("a bearer token is a non-empty string of printable ASCII without spaces")
    return (("authorization", f"Bearer {token}"),)


def open_channel(channels, address, *, token, tls, tls_server_name, max_message_bytes: int):
    """(channel, call metadata) to the daemon at address, the channel made by
    `channels` (the grpc module or grpc.aio: the same calls, blocking or for
    asyncio); every argument is checked first (InvalidInputError), and
    nothing connects until the first call."""
    target_ = target(address)
    metadata = call_metadata(token)
    options = channel_options(max_message_bytes, tls_server_name)
    creds = credentials(tls)
    channel = (channels.secure_channel(target_, creds, options=options) if creds is not None
               else channels.insecure_channel(target_, options=options))
    return channel, metadata


@overload
def seconds(name: str, value: Any, allow_none: Literal[False] = False) -> float: ...


@overload
def seconds(name: str, value: Any, allow_none: bool) -> float | None: ...


def seconds(name: str, value: Any, allow_none: bool = False) -> float | None:
    """A duration argument: a finite number of seconds above 0 (or None when
    allowed); InvalidInputError otherwise."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise InvalidInputError(f"{name} must be a number of seconds above 0, got {value!r}")
    return float(value)


# what gRPC's transport says of a port that answers HTTP/1 (a web server, the daemon's status page)
NOT_HTTP2 = ("Failed parsing HTTP/2", "http1.x server", "Expected SETTINGS frame")


def daemon_error(exc: grpc.RpcError, address: str) -> DaemonError:
    """The named error for a failed call (a grpc.RpcError or grpc.aio.AioRpcError);
    one at a port that answers HTTP/1 says so, naming the status page's and
    the service's settings (the likely mix-up)."""
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    details = (exc.details() if callable(getattr(exc, "details", None)) else None) or ""
    cls = ERRORS.get(name, DaemonError)
    if any(sign in details for sign in NOT_HTTP2):
        return cls(f"daemon at {address}: the port answers HTTP/1, not gRPC: a status page (the daemon's "
                   f"daemon.status_listen, which `porep-prover status` reads) rather than its service "
                   f"(daemon.listen)? ({name}: {details})", code=name, details=details)
    return cls(f"daemon at {address}: {name}: {details or 'no message'}", code=name, details=details)
