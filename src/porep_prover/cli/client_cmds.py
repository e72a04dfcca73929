# SPDX-License-Identifier: Apache-2.0
"""`porep-prover client`: the proving daemon's commands, over porep_prover.client.

    porep-prover client [--address HOST:PORT] [--token-file F] [--tls-ca F] ACTION ...
      submit --kind K [--partitions P] [--priority LEVEL] [--payload JSON|@FILE] [--request-id ID]
      await JOB_ID [--timeout S] [--vk FILE] [-o PROOFS] [--json]
      prove --kind K ... (submit, then await)
      status | list [--state S] [--limit N] | cancel JOB_ID | metrics | preload --kind K --payload ... | evict KEY

The connection options may also follow the action. await and prove print
the job's progress on standard error while they wait (one line rewritten on a
terminal, a line per change otherwise) and exit 0 only when the daemon says
COMPLETED and, given --vk, every partition's proof verifies here too; 1 for a
job that failed, was cancelled, did not finish within --timeout, or a proof
that does not verify (the reason printed); 2 for errors (the daemon's, as one
line). cancel and evict exit 1 when there was nothing to do.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from typing import Any

from ..errors import InvalidInputError
from . import arguments

PRIORITIES = ("low", "normal", "high", "critical")
STATES = ("queued", "running", "completed", "failed", "cancelled")
PARTITIONS = arguments.integer(1, 65536)         # the service's bound (proving.proto)
LIMIT = arguments.integer(1, 100_000)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, got {text!r}")
    return value


# The client (grpc, protobuf, groth16) is imported by these commands only, when they run.

def default_address() -> str:
    """Where a daemon of this user listens when --address is not given: the
    address its state folder's daemon.json records (the default folder's,
    written while it runs), else daemon.listen's default."""
    import json
    import os
    from ..config import default_state_dir
    from ..daemon.settings import DEFAULT_LISTEN
    try:
        with open(os.path.join(default_state_dir(), "daemon.json"), encoding="utf-8") as f:
            listen = json.load(f).get("listen")
        if isinstance(listen, str) and listen:
            return listen
    except (OSError, ValueError, AttributeError):
        pass
    return DEFAULT_LISTEN


def _client(args):
    from ..client import Client
    if args.address is None:
        args.address = default_address()
    token = None
    if args.token_file:
        from ..text import read_text
        token = read_text(args.token_file, InvalidInputError, "a bearer token").strip()
        if not token:
            raise InvalidInputError(f"{args.token_file}: the token file is empty")
    tls = args.tls_ca if args.tls_ca else (True if args.tls else None)
    return Client(args.address, token=token, tls=tls, tls_server_name=args.tls_server_name, timeout=args.call_timeout)


def _payload(text: str) -> dict:
    from ..groth16.encoding_json import parse_json
    from ..text import read_text
    if text.startswith("@"):
        where, text = text[1:], read_text(text[1:], InvalidInputError, "a JSON payload")
    else:
        where = "--payload"
    obj = parse_json(text, InvalidInputError, where)
    if not isinstance(obj, dict):
        raise InvalidInputError(f"{where}: a payload is a JSON object, got {type(obj).__name__}")
    return obj


def _progress_printer():
    """progress(job) for the waits: on a terminal one line rewritten, otherwise a line per change."""
    terminal = sys.stderr.isatty()

    def show(job) -> None:
        line = (f"{job.job_id}: {job.state.value}, {job.proved}/{job.partitions} proved, "
                f"{job.in_flight} in flight, {job.queued} queued" + (f", {job.failed} failed" if job.failed else ""))
        if terminal:
            print(f"\r\x1b[K{line}", end="\n" if job.finished else "", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)
    return show


def _result_json(result) -> dict:
    return {"job_id": result.job_id, "status": result.status.value, "error_message": result.error_message,
            "proofs": [p.to_bytes().hex() for p in result.proofs],
            "public_inputs": [[str(v) for v in inputs] for inputs in result.public_inputs],
            "timings_ms": dataclasses.asdict(result.timings),
            "job": None if result.job is None else dataclasses.asdict(result.job)}


def _verifying_key(args):
    """--vk read before the wait (a bad file is an error at once, not after it)."""
    if not args.vk:
        return None
    from ..groth16.verifier import PreparedVerifyingKey
    from ..groth16.verifier_files import read_verifying_key
    return PreparedVerifyingKey(read_verifying_key(args.vk))


def _report(args, result, vk) -> int:
    """Say how the wait ended (with --json: the result as JSON on standard
    output, these words on standard error); 0 only for a completed job whose
    proofs all verify with vk (when given). The proofs are written (-o) only then."""
    from ..client import ProofStatus
    say = functools.partial(print, file=sys.stderr if args.json else sys.stdout)
    bad = None
    if result.ok and vk is not None:
        try:
            bad = result.failed_partitions(vk)
        except InvalidInputError as exc:         # the key is another circuit's (its count of inputs)
            raise InvalidInputError(f"--vk {args.vk}: {exc}") from None
    if args.json:
        print(json.dumps(_result_json(result) | ({} if bad is None else {"failed_partitions": bad}), indent=1))
    if result.status is ProofStatus.TIMEOUT:
        state = result.job.state.value if result.job else "unfinished"
        within = f" within {args.timeout:g} s" if args.timeout else ""
        say(f"{result.job_id}: not finished{within} (still {state})")
        return 1
    if not result.ok:
        say(f"{result.job_id}: {result.status.value}" + (f": {result.error_message}" if result.error_message else ""))
        return 1
    count = len(result.proofs)
    if bad:
        say(f"{result.job_id}: the proof of partition{'s' if len(bad) > 1 else ''} "
            f"{', '.join(map(str, bad))} of {count} does not verify with {args.vk}")
        return 1
    if args.output:
        from ..atomic import atomic_write
        with atomic_write(args.output) as f:
            f.write(result.proof_bytes)
    proofs = f"{count} partition proof{'s' if count > 1 else ''}"
    say(f"{result.job_id}: completed, " + (f"{proofs}, each verified with {args.vk}" if vk is not None else
                                           f"{proofs} (verified by the daemon; --vk FILE verifies them here too)"))
    t = result.timings
    say(f"  queue wait {t.queue_wait_ms} ms, srs load {t.srs_load_ms} ms, synthesis {t.synthesis_ms} ms, "
        f"device compute {t.gpu_compute_ms} ms, total {t.total_ms} ms"
        + (f"; proofs written to {args.output}" if args.output else ""))
    return 0


# ------------------------------------------------------------------ commands


def cmd_submit(args) -> int:
    with _client(args) as client:
        sub = client.submit(args.kind, _payload(args.payload), args.partitions, args.priority, args.request_id)
    print(sub.job_id)
    if sub.existing:
        print(f"{sub.job_id}: submitted before with request id {args.request_id!r}; nothing new accepted",
              file=sys.stderr)
    return 0


def cmd_await(args) -> int:
    vk = _verifying_key(args)
    with _client(args) as client:
        result = client.await_proof(args.job_id, args.timeout, _progress_printer(), args.interval)
    return _report(args, result, vk)


def cmd_client_prove(args) -> int:
    """`client prove`: submit a job to the daemon and await its proofs."""
    vk = _verifying_key(args)
    with _client(args) as client:
        sub = client.submit(args.kind, _payload(args.payload), args.partitions, args.priority, args.request_id)
        print(f"{sub.job_id}: submitted" + (" before (same request id)" if sub.existing else ""), file=sys.stderr)
        result = client.await_proof(sub.job_id, args.timeout, _progress_printer(), args.interval)
    return _report(args, result, vk)


def cmd_client_status(args) -> int:
    """`client status`: the daemon's status over its service (JSON)."""
    with _client(args) as client:
        print(json.dumps(client.status(), indent=1))
    return 0


def cmd_list(args) -> int:
    with _client(args) as client:
        jobs = client.list_jobs(args.state or None, args.limit)
    if args.json:
        print(json.dumps([dataclasses.asdict(j) for j in jobs], indent=1))
        return 0
    for j in jobs:
        print(f"{j.job_id}  {j.state.value:<9}  {j.kind}  {j.proved}/{j.partitions} proved  "
              f"{j.priority.value if j.priority else '?'}" + (f"  {j.error_message}" if j.error_message else ""))
    if not jobs:
        print("no jobs", file=sys.stderr)
    return 0


def cmd_cancel(args) -> int:
    with _client(args) as client:
        outcome = client.cancel(args.job_id)
    if outcome.cancelled:
        print(f"{args.job_id}: cancelled" + (" (it was running)" if outcome.was_running else " (it was queued)"))
        return 0
    print(f"{args.job_id}: not cancelled: it had already ended")
    return 1


def cmd_metrics(args) -> int:
    with _client(args) as client:
        sys.stdout.write(client.metrics())
    return 0


def cmd_preload(args) -> int:
    with _client(args) as client:
        loaded = client.preload(args.kind, _payload(args.payload), args.timeout)
    how = "already resident" if loaded.already_loaded else f"loaded in {loaded.load_ms} ms"
    print(f"{loaded.srs_key}: {how}, {loaded.bytes} bytes")
    return 0


def cmd_evict(args) -> int:
    with _client(args) as client:
        outcome = client.evict(args.srs_key)
    if outcome.evicted:
        print(f"{args.srs_key}: evicted, {outcome.bytes_freed} bytes freed")
        return 0
    print(f"{args.srs_key}: not evicted (unknown, or a job is using it)")
    return 1


# ------------------------------------------------------------------ the parser


def _connection(p: argparse.ArgumentParser, again: bool) -> None:
    """The connection options; again (on an action): optional, and only set when given there."""
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if again else {}
    p.add_argument("--address", metavar="HOST:PORT", help="the daemon (or unix:/path); default: the one the "
                   "default state folder's daemon.json records, else daemon.listen's default, 127.0.0.1:9820",
                   **default)
    p.add_argument("--token-file", metavar="FILE", help="a file holding the bearer token", **default)
    p.add_argument("--tls-ca", metavar="FILE", help="TLS, trusting the root certificates in FILE (PEM)", **default)
    p.add_argument("--tls", action="store_true", help="TLS, trusting gRPC's default root certificates", **default)
    p.add_argument("--tls-server-name", metavar="NAME", help="the name in the daemon's certificate, when not "
                   "the address's host", **default)
    p.add_argument("--call-timeout", type=_seconds, metavar="S", help="deadline of each call but the waits "
                   "(default 30)", **({"default": 30.0} if not again else default))


def _job_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", required=True, help="the job's kind (a synthesis provider's, e.g. demo)")
    p.add_argument("--partitions", type=PARTITIONS, default=1, help="partitions to prove (1 to 65536; default 1)")
    p.add_argument("--priority", choices=PRIORITIES, default="normal", help="default normal")
    p.add_argument("--payload", default="{}", metavar="JSON|@FILE", help="the job's payload, a JSON object")
    p.add_argument("--request-id", help="the caller's id: submitting it again returns the same job")


def _wait_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=_seconds, metavar="S", help="wait at most S seconds (default: until it ends)")
    p.add_argument("--interval", type=_seconds, default=1.0, metavar="S", help="progress every S seconds (default 1)")
    p.add_argument("--vk", metavar="FILE", help="verify every partition's proof with this verifying key "
                   "(vk.json, a params or .pmap file, a binary key)")
    p.add_argument("-o", "--output", metavar="PROOFS", help="write the proofs (192 bytes a partition, in order)")
    p.add_argument("--json", action="store_true", help="also print the result as JSON")


def register(sub, common) -> None:
    c = sub.add_parser("client", help="the proving daemon's client: submit, await, prove, status, list, ...")
    _connection(c, again=False)
    actions = c.add_subparsers(dest="action", required=True)

    def action(name: str, func, help: str) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help)
        _connection(p, again=True)
        p.set_defaults(func=func)
        return p

    _job_options(action("submit", cmd_submit, "submit a job; prints its id"))
    p = action("await", cmd_await, "wait for a job, showing progress; exit 0 when every proof is done and verified")
    p.add_argument("job_id", metavar="JOB_ID")
    _wait_options(p)
    p = action("prove", cmd_client_prove, "submit a job and await it")
    _job_options(p)
    _wait_options(p)
    action("status", cmd_client_status, "the daemon's status (JSON)")
    p = action("list", cmd_list, "jobs, newest first")
    p.add_argument("--state", action="append", choices=STATES, help="only jobs in this state (repeatable)")
    p.add_argument("--limit", type=LIMIT, default=100, help="at most N jobs (default 100)")
    p.add_argument("--json", action="store_true", help="the jobs as JSON")
    p = action("cancel", cmd_cancel, "cancel a queued or running job")
    p.add_argument("job_id", metavar="JOB_ID")
    action("metrics", cmd_metrics, "the Prometheus metrics text")
    p = action("preload", cmd_preload, "load a kind's parameters now and keep them resident")
    p.add_argument("--kind", required=True, help="the job's kind")
    p.add_argument("--payload", default="{}", metavar="JSON|@FILE", help="a job's payload, a JSON object")
    p.add_argument("--timeout", type=_seconds, metavar="S", help="wait at most S seconds (default: no limit)")
    p = action("evict", cmd_evict, "drop a parameter set no job is using")
    p.add_argument("srs_key", metavar="SRS_KEY")
