# SPDX-License-Identifier: Apache-2.0
"""The daemon's settings: the config's [daemon] section, which the daemon
declares (declare_settings, registered as a built-in when porep_prover is
imported), resolved once at start: addresses parsed, folders made absolute,
the TLS files and the token read, and the exposure rule applied.

The rule: the service listens on a loopback address or a Unix socket unless
daemon.allow_remote is true, and even then only with TLS (daemon.tls_cert
and daemon.tls_key) or a bearer token (daemon.token_file); the status
server, which has neither, only on loopback unless daemon.allow_remote.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import os

from ..config import DEFAULT_CACHE_GIB, MAX_CACHE_GIB, default_state_dir
from ..config_schema import Form, SettingsRegistry
from ..errors import ConfigError
from .private import check_private

MIN_TOKEN_CHARS = 16
CUZK_INBOX = "cuzk-inputs"           # <state_dir>/cuzk-inputs: the vanilla proofs of jobs the reference wire accepted
DEFAULT_LISTEN = "127.0.0.1:9820"
# Upper bounds (far above any useful value, low enough that a typing slip is an error)
MAX_PENDING = 1_000_000              # jobs accepted and unfinished
MAX_WAITERS = 4096                   # AwaitProof / Prove calls at once (a thread each)
MIN_REQUEST_BYTES = 1024
MAX_REQUEST_BYTES = (1 << 31) - 1    # gRPC's limit on a message (a signed 32-bit length)
MAX_RETENTION_SECONDS = 365 * 86400.0
MAX_DRAIN_SECONDS = 86400.0
MAX_JOB_CONSTRAINTS = 1 << 50        # 65,536 partitions of 2^34 constraints


def is_address(v: str) -> bool:
    """HOST:PORT ([IPV6]:PORT; port 0 to 65535, 0: any free one), or unix:/ABSOLUTE/PATH."""
    if v.startswith("unix:"):
        return v[5:].startswith("/") and "\0" not in v
    host, sep, port = v.rpartition(":")
    if not sep or not port.isdigit() or len(port) > 5 or int(port) > 65535:
        return False
    if host.startswith("[") and host.endswith("]"):
        try:
            return ipaddress.ip_address(host[1:-1]).version == 6
        except ValueError:
            return False
    return bool(host) and not any(c.isspace() or c in ":/[]" for c in host)


ADDRESS_WANTED = '"HOST:PORT" (port 0 to 65535, 0: a free one), "[IPV6]:PORT" or "unix:/absolute/path"'
ADDRESS = Form(is_address, ADDRESS_WANTED)
ADDRESS_OR_OFF = Form(lambda v: v == "" or is_address(v), ADDRESS_WANTED + ', or "" (off)')


def declare_settings(settings: SettingsRegistry) -> None:
    """The [daemon] section (each key explained at length in
    contrib/porep-prover.example.toml); called as the hook
    porep_prover_register_settings is."""
    (settings.section("daemon", "The proving daemon: its addresses, folder, limits and access")
        .string("listen", DEFAULT_LISTEN, "where the gRPC service listens", form=ADDRESS)
        .string("status_listen", "127.0.0.1:9821", 'where GET /status and /metrics are served; "" = off',
                form=ADDRESS_OR_OFF)
        .string("state_dir", "", 'the journal, results and parameters; "" = the default state folder')
        .strings("input_roots", [], "folders the files a payload names must lie in")
        .strings("kinds", [], "the job kinds accepted; [] = every kind installed")
        .integer("max_pending", 1024, 1, MAX_PENDING, "jobs accepted and not finished at most")
        .integer("max_waiters", 64, 1, MAX_WAITERS, "AwaitProof and Prove calls waiting at once")
        .integer("max_request_bytes", 128 << 20, MIN_REQUEST_BYTES, MAX_REQUEST_BYTES, "the largest request, bytes")
        .integer("max_job_constraints", 1 << 33, 0, MAX_JOB_CONSTRAINTS,
                 "a job's partitions x the constraints of one, at most (kinds that count them); 0 = no limit")
        .integer("params_cache_gib", DEFAULT_CACHE_GIB, 0, MAX_CACHE_GIB,
                "GiB the parameters the job kinds make may take in <state_dir>/params-cache; 0 = no bound")
        .number("result_retention_seconds", 86400.0, 1, MAX_RETENTION_SECONDS,
                "seconds a finished job's result is kept")
        .number("fetched_retention_seconds", 3600.0, 1, MAX_RETENTION_SECONDS,
                "seconds a result is kept once fetched")
        .number("drain_timeout_seconds", 60.0, 0, MAX_DRAIN_SECONDS,
                "seconds the partitions in flight may finish in at SIGTERM or SIGINT")
        .string("tls_cert", "", "TLS certificate chain (PEM); with tls_key")
        .string("tls_key", "", "TLS private key (PEM); with tls_cert")
        .string("token_file", "", "a file holding the bearer token every call must bring")
        .boolean("allow_remote", False, "allow addresses that are not loopback (the service with TLS or a token)")
        .boolean("cuzk_wire", True, "also serve the reference engine's service, cuzk.v1.ProvingEngine, at listen"))


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
    AwaitProof / Prove calls at once, max_request_bytes a message,
    max_job_constraints a job's partitions x constraints (0: none);
    params_cache_bytes: what the parameter cache may hold (0: no bound);
    result_retention, fetched_retention and drain_timeout in seconds.
    cuzk_inbox: where the reference wire (cuzk.v1, daemon/cuzk) writes the
    vanilla proofs of the jobs it accepts, one of input_roots while it is
    served; "" when daemon.cuzk_wire is off."""
    listen: Address
    status_listen: Address | None
    state_dir: str
    input_roots: tuple[str, ...]
    kinds: tuple[str, ...]
    max_pending: int
    max_waiters: int
    max_request_bytes: int
    max_job_constraints: int
    params_cache_bytes: int
    result_retention: float
    fetched_retention: float
    drain_timeout: float
    tls: tuple[bytes, bytes] | None
    token: bytes | None
    allow_remote: bool
    cuzk_inbox: str

    @classmethod
    def resolve(cls, config) -> "DaemonSettings":
        """The [daemon] settings of config (an EngineConfig), checked: ConfigError
        naming the key for an input root that is not a folder, TLS files or a
        token file that cannot be read, and an exposed address the rule refuses."""
        get = config.get
        listen = Address.parse(get("daemon.listen"))
        status = get("daemon.status_listen")
        state_dir = os.path.abspath(os.path.expanduser(get("daemon.state_dir") or default_state_dir()))
        roots = tuple(_root(r) for r in get("daemon.input_roots"))
        # a folder only the daemon writes; a root so that the jobs' payloads name their files there, at a
        # submit and at a resume alike (made when the wire starts, hence resolved here without _root's check)
        inbox = os.path.realpath(os.path.join(state_dir, CUZK_INBOX)) if get("daemon.cuzk_wire") else ""
        settings = cls(
            listen=listen,
            status_listen=Address.parse(status) if status else None,
            state_dir=state_dir,
            input_roots=roots + ((inbox,) if inbox else ()),
            kinds=tuple(dict.fromkeys(get("daemon.kinds"))),
            max_pending=get("daemon.max_pending"),
            max_waiters=get("daemon.max_waiters"),
            max_request_bytes=get("daemon.max_request_bytes"),
            max_job_constraints=get("daemon.max_job_constraints"),
            params_cache_bytes=get("daemon.params_cache_gib") << 30,
            result_retention=get("daemon.result_retention_seconds"),
            fetched_retention=get("daemon.fetched_retention_seconds"),
            drain_timeout=get("daemon.drain_timeout_seconds"),
            tls=_tls(get("daemon.tls_cert"), get("daemon.tls_key")),
            token=_token(get("daemon.token_file")),
            allow_remote=get("daemon.allow_remote"),
            cuzk_inbox=inbox,
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
