# SPDX-License-Identifier: Apache-2.0
"""The proving daemon: the engine as a service (`porep-prover daemon`).

    client (any language) ──gRPC porep_prover.v1.ProvingEngine (v1/proving.proto)──▶ service
      service ──▶ jobs ──▶ journal (SQLite in the state folder: jobs, partitions; proofs on disk)
                    └───▶ engine (Job with only= / on_partition=: each proof journaled as it comes)
      status_http: GET /status, GET /metrics (metrics: Prometheus)

settings    the [daemon] settings, resolved once (addresses, input roots, TLS, token, limits)
journal     every accepted job and proved partition, durable before it is acknowledged
jobs        accept, resume after a restart, wait, cancel, progress
payloads    a request's JSON payload, its paths confined to the input roots
demo        the built-in job kind "demo"
core        Daemon: the parts wired, the drain
service     the gRPC methods and their statuses
server      the process: gRPC server (health, reflection, TLS, token), status server, signals' drain

The package's modules load on first use of their names (Daemon,
DaemonSettings, serve), so that the client, which needs only v1/, loads
none of the server's.
"""
import importlib

_LAZY = {"Daemon": ".core", "DaemonSettings": ".settings", "serve": ".server"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'porep_prover.daemon' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = ["Daemon", "DaemonSettings", "serve"]
