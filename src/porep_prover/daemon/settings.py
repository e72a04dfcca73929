# SPDX-License-Identifier: Apache-2.0
"""The daemon's settings (the config's [daemon] section), resolved once at
start: addresses parsed, folders made absolute, the TLS files and the token
read, and the exposure rule applied.

The rule: the service listens on a loopback address or a Unix socket unless
daemon.allow_remote is true, and even then only with TLS (daemon.tls_cert
and daemon.tls_key) or a bearer token (daemon.token_file); the status
server, which has neither, only on loopback unless daemon.allow_remote.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import os

from ..config import default_state_dir
from ..errors import ConfigError
from .private import check_private

MIN_TOKEN_CHARS = 16


@dataclasses.dataclass(frozen=True)
class Address:
    """Where a server listens: host and port (port 0: a free one, read back
    after binding), or a Unix socket's path."""
    host: str = ""
    port: int = 0
    path: str = ""

    @classmethod
    def parse(cls, text: str) -> "Address":
        """HOST:PORT, [IPV6]:PORT or unix:/PATH (the config has checked the form)."""
        if text.startswith("unix:"):
            return cls(path=text[5:])
        host, _, port = text.rpartition(":")
        return cls(host=host.strip("[]"), port=int(port))

    @property
    def is_unix(self) -> bool:
        return bool(self.path)

    def target(self, port: int | None = None) -> str:
        """The address as gRPC writes it (port: the one bound, in place of 0)."""
        if self.is_unix:
            return f"unix:{self.path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port if port is None else port}"

    def is_loopback(self) -> bool:
        """A Unix socket, "localhost", or a loopback IP address; any other
        name (it might resolve anywhere) and the wildcard addresses are not."""
        if self.is_unix or self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False


@dataclasses.dataclass(frozen=True)
class DaemonSettings:
    """What the daemon runs with (every key is documented in
    contrib/porep-prover.example.toml).

    listen, status_listen: the gRPC service's address and the HTTP status
    server's (None: off). state_dir: the journal, results and parameters;
    input_roots: absolute real paths of the folders payload paths may lie
    in. kinds: the job kinds it accepts (empty: every one installed).
    tls: (private key, certificate chain), PEM bytes, or None; token:
    the bearer token's bytes, or None. Limits: max_pending jobs, max_waiters
    AwaitProof / Prove calls at once, max_request_bytes a message;
    result_retention, fetched_retention and drain_timeout in seconds."""
    listen: Address
    status_listen: Address | None
    state_dir: str
    input_roots: tuple[str, ...]
    kinds: tuple[str, ...]
    max_pending: int
    max_waiters: int
    max_request_bytes: int
    result_retention: float
    fetched_retention: float
    drain_timeout: float
    tls: tuple[bytes, bytes] | None
    token: bytes | None
    allow_remote: bool

    @classmethod
    def resolve(cls, config) -> "DaemonSettings":
        """The [daemon] settings of config (an EngineConfig), checked: ConfigError
        naming the key for an input root that is not a folder, TLS files or a
        token file that cannot be read, and an exposed address the rule refuses."""
        get = config.get
        listen = Address.parse(get("daemon.listen"))
        status = get("daemon.status_listen")
        settings = cls(
            listen=listen,
            status_listen=Address.parse(status) if status else None,
            state_dir=os.path.abspath(os.path.expanduser(get("daemon.state_dir") or default_state_dir())),
            input_roots=tuple(_root(r) for r in get("daemon.input_roots")),
            kinds=tuple(dict.fromkeys(get("daemon.kinds"))),
            max_pending=get("daemon.max_pending"),
            max_waiters=get("daemon.max_waiters"),
            max_request_bytes=get("daemon.max_request_bytes"),
            result_retention=get("daemon.result_retention_seconds"),
            fetched_retention=get("daemon.fetched_retention_seconds"),
            drain_timeout=get("daemon.drain_timeout_seconds"),
            tls=_tls(get("daemon.tls_cert"), get("daemon.tls_key")),
            token=_token(get("daemon.token_file")),
            allow_remote=get("daemon.allow_remote"),
        )
        settings.check_exposure()
        return settings

    def check_exposure(self) -> None:
        """ConfigError when an address is not loopback and the rule does not allow it."""
        if self.status_listen is not None and self.status_listen.is_unix:
            raise ConfigError("daemon.status_listen: the status server listens on HOST:PORT, not a Unix socket",
                              key="daemon.status_listen")
        if not self.listen.is_loopback():
            if not self.allow_remote:
                raise ConfigError(f"daemon.listen {self.listen.target()} is not a loopback address: set "
                                  "daemon.allow_remote = true, with TLS (daemon.tls_cert, daemon.tls_key) or a "
                                  "bearer token (daemon.token_file)", key="daemon.listen")
            if self.tls is None and self.token is None:
                raise ConfigError(f"daemon.listen {self.listen.target()} is not a loopback address: it needs TLS "
                                  "(daemon.tls_cert, daemon.tls_key) or a bearer token (daemon.token_file)",
                                  key="daemon.listen")
        if self.status_listen is not None and not self.status_listen.is_loopback() and not self.allow_remote:
            raise ConfigError(f"daemon.status_listen {self.status_listen.target()} is not a loopback address: set "
                              "daemon.allow_remote = true to serve /status and /metrics there (without TLS or a "
                              "token)", key="daemon.status_listen")


def _root(path: str) -> str:
    if not os.path.isabs(path):
        raise ConfigError(f"daemon.input_roots: {path!r} is not an absolute path", key="daemon.input_roots")
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        raise ConfigError(f"daemon.input_roots: {path} is not a folder", key="daemon.input_roots")
    return real


def _read(path: str, key: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except OSError as exc:
        raise ConfigError(f"{key}: {path}: {exc.strerror or exc}", key=key) from None


def _tls(cert: str, key: str) -> tuple[bytes, bytes] | None:
    if not cert and not key:
        return None
    if not cert or not key:
        missing = "daemon.tls_key" if cert else "daemon.tls_cert"
        raise ConfigError(f"TLS needs both daemon.tls_cert and daemon.tls_key; {missing} is not set", key=missing)
    chain, private = _read(cert, "daemon.tls_cert"), _read(key, "daemon.tls_key")
    check_private(key, "daemon.tls_key")
    for name, data, mark in (("daemon.tls_cert", chain, b"CERTIFICATE"), ("daemon.tls_key", private, b"PRIVATE KEY")):
        if b"-----BEGIN" not in data or mark not in data:
            raise ConfigError(f"{name}: not a PEM file holding a {mark.decode().lower()}", key=name)
    return private, chain


def _token(path: str) -> bytes | None:
    if not path:
        return None
    token = _read(path, "daemon.token_file").strip()
    if len(token) < MIN_TOKEN_CHARS or any(c < 0x21 or c > 0x7e for c in token):
        raise ConfigError(f"daemon.token_file: {path}: the token must be at least {MIN_TOKEN_CHARS} printable "
                          "ASCII characters without spaces", key="daemon.token_file")
    check_private(path, "daemon.token_file")
    return token
