# SPDX-License-Identifier: Apache-2.0
"""The `porep-prover` command.

    porep-prover demo                     the main job: circuit, setup, prove, verify, timings
    porep-prover circuit generate ...     a demo circuit, its witness and public inputs
    porep-prover setup CIRCUIT -o PARAMS  INSECURE test parameters (bellperson format)
    porep-prover prove PARAMS CIRCUIT WITNESS -o PROOF
    porep-prover verify KEY PUBLIC PROOF  exit 0 and "OK!" when valid, 1 when not
    porep-prover params info PARAMS       sizes and layout of a parameters file
    porep-prover params digest | check    Filecoin's digest of a parameters file; check it (exit 1: no match)
    porep-prover groth16 prove|verify     snarkjs's argument order and files
    porep-prover zkey export verificationkey | insecure-setup
    porep-prover gpu info | warm          CUDA devices; compile the kernels into the cache
    porep-prover plan [--scale S] ...     the memory plan of a workload, host and device (no GPU needed)
    porep-prover bench batch | sweep      engine throughput (seconds per proof, GPU efficiency)
    porep-prover timeline [LOG]           GPU efficiency, gaps, lock wait/hold; --gantt PNG
    porep-prover plugins                  installed plugins, what they register, those skipped and why
    porep-prover config [--json]          the settings: each section's owner, each key's type, default, range
    porep-prover cache [prune]            parameter files the job kinds made; remove the least recently used
    porep-prover daemon                   the proving daemon (gRPC; SIGTERM drains it)
    porep-prover status [--watch]         a daemon's live status from its status address (rich)

Engine settings (--config FILE, --set KEY=VALUE) go before the command or
after it, on the engine commands (bench batch, bench sweep, timeline, daemon,
config); the command's own --config replaces the global one, its --set
entries follow the global ones. Given to any other command they are a usage
error. --threads N (1 to MAX_THREADS) on a command is what every native
kernel it runs uses.

Exit status: 0 done; 1 a proof did not verify (or a benchmark had failures);
2 an error of the input or the environment, printed as one line naming what
is wrong (also argparse's usage errors, numbers out of their range included);
3 an internal error, printed as one line (POREP_PROVER_DEBUG=1 prints its
traceback, and those of the errors of status 2); 130 Ctrl-C; 143 SIGTERM
(both unwind the command first: partly written files are removed; the
daemon drains on either and ends with 0); 141
standard output closed early (`| head`), quietly.

A command imports what it uses when it runs: building the parser imports
argparse-level modules only (no numpy, native kernels, rich, grpc, pluggy or
engine), so `porep-prover --help` and the commands that need little start
fast (tests/cli/test_imports.py holds each command to its list).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading

from .._version import __version__
from ..config import debug_wanted, default_threads, threads_default
from ..errors import PorepProverError
from . import arguments, core, engine_cmds, gpu_cmds, plan_cmds, plugin_cmds, snarkjs_cmds
from . import cache_cmds, client_cmds, config_cmds, daemon_cmds, status_cmds

EXIT_ERROR, EXIT_INTERNAL, EXIT_PIPE, EXIT_INTERRUPT, EXIT_TERMINATED = 2, 3, 141, 130, 143


class Terminated(BaseException):
    """SIGTERM arrived while a command ran: raised in the main thread so that
    the command unwinds as it does on Ctrl-C (finally blocks run, temporaries
    are removed). A BaseException, so that `except Exception` passes it on."""


def _common(p: argparse.ArgumentParser, backend: bool = True) -> None:
    p.add_argument("--threads", type=arguments.THREADS, default=None,
                   help=f"CPU threads, 1 to {arguments.MAX_THREADS} (default: all cores)")
    if backend:
        p.add_argument("--backend", choices=arguments.BACKENDS, default="auto", help="compute backend (default: auto)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="porep-prover", description="Groth16 prover over BLS12-381")
    parser.add_argument("--version", action="version", version=f"porep-prover {__version__}")
    parser.add_argument("--config", dest="global_config", metavar="FILE",
                        help="engine settings (TOML) for the engine commands (bench, timeline)")
    parser.add_argument("--set", dest="global_set", action="append", metavar="KEY=VALUE",
                        help="override an engine setting (repeatable)")
    sub = parser.add_subparsers(dest="command", required=True)
    core.register(sub, _common)
    snarkjs_cmds.register(sub, _common)
    gpu_cmds.register(sub, _common)
    plan_cmds.register(sub, _common)
    engine_cmds.register(sub, _common)
    plugin_cmds.register(sub, _common)
    config_cmds.register(sub, _common)
    cache_cmds.register(sub, _common)
    client_cmds.register(sub, _common)
    daemon_cmds.register(sub, _common)
    status_cmds.register(sub, _common)
    return parser


def _engine_options(parser: argparse.ArgumentParser, args) -> None:
    """Merge the global --config / --set into the command's; a usage error
    for a command that takes no engine settings."""
    given = args.global_config is not None or args.global_set
    if not hasattr(args, "config"):
        if given:
            name = " ".join(v for v in (args.command, getattr(args, "action", None)) if v)
            parser.error(f"--config and --set are engine settings, for bench batch, bench sweep, timeline, daemon "
                         f"and config; {name} takes none")
        return
    args.config = args.config if args.config is not None else args.global_config
    args.set = (args.global_set or []) + (args.set or [])


@contextlib.contextmanager
def sigterm_unwinds():
    """Within the block, SIGTERM raises Terminated in the main thread (a
    second one ends the process at once, as before); elsewhere, or off the
    main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)

    def terminate(signum, frame):
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _fail(status: int, text: str, exc: BaseException) -> int:
    if debug_wanted():
        import traceback
        traceback.print_exception(exc)
    print(f"porep-prover: {text}", file=sys.stderr)
    return status


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _engine_options(parser, args)
    threads = getattr(args, "threads", None)
    if hasattr(args, "threads") and threads is None:
        threads = default_threads()     # POREP_PROVER_THREADS checked here, not inside a reader
    with threads_default(threads):
        status = args.func(args)
    sys.stdout.flush()    # here, where a closed pipe is caught, not at exit
    return status


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit status (argparse's usage errors and
    --help / --version exit through SystemExit, as argparse does)."""
    try:
        with sigterm_unwinds():
            try:
                return _run(argv)
            except SystemExit:
                sys.stdout.flush()
                raise
    except BrokenPipeError:
        # the reader of standard output is gone (| head): nothing more to say to it; send what is
        # left in the buffer nowhere, so that the interpreter's last flush does not fail again
        with contextlib.suppress(OSError, ValueError):    # ValueError: a stdout without a descriptor
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        return EXIT_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPT
    except Terminated:
        print("porep-prover: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except PorepProverError as exc:
        return _fail(EXIT_ERROR, f"error: {type(exc).__name__}: {exc}", exc)
    except OSError as exc:
        return _fail(EXIT_ERROR, f"error: {exc}", exc)
    except MemoryError as exc:
        return _fail(EXIT_ERROR, f"error: out of memory{': ' + str(exc) if str(exc) else ''}", exc)
    except Exception as exc:    # a fault of the program: one line, the traceback on request
        return _fail(EXIT_INTERNAL, f"internal error: {type(exc).__name__}: {exc} "
                                    "(POREP_PROVER_DEBUG=1 shows the traceback)", exc)


if __name__ == "__main__":
    sys.exit(main())
