# SPDX-License-Identifier: Apache-2.0
"""The blocking client of the proving daemon (porep_prover.v1.ProvingEngine):
the calls of porep_prover.client.calls, each step done as it comes."""
from __future__ import annotations

import time

import grpc

from . import channel as ch
from .calls import Calls, Progress, front_end
from .plans import DEFAULT, Invoke, Plan, R, Report, Sleep

__all__ = ["Client", "Progress"]


@front_end
class Client(Calls):
    """A connection to a daemon, used from one thread or several (gRPC channels are thread-safe).

    address "HOST:PORT" or "unix:/path"; token: sent as `authorization: Bearer
    TOKEN` with every call; tls: None (plain), True (gRPC's default roots) or
    a root certificate file (PEM); tls_server_name: the name the daemon's
    certificate carries when it is not the address's host; timeout: the
    deadline, in seconds, of every call but the waits (await_proof, prove),
    whose deadline is their own timeout plus DEADLINE_GRACE.

    Arguments are checked before anything is sent (InvalidInputError); a call
    the daemon fails raises the DaemonError subclass of its status
    (DaemonUnavailableError, DaemonLimitError, DaemonRequestError,
    DaemonPermissionError, DaemonAuthenticationError, DaemonDeadlineError,
    JobNotFoundError), its message the daemon's. Connecting is lazy: a daemon
    that is not there shows at the first call. A wait cut short by the
    daemon's restart raises DaemonUnavailableError; the job itself was
    journaled when accepted: await it again once the daemon is back.
    """
    _channels = grpc

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel (calls in flight end with DaemonError CANCELLED)."""
        self._channel.close()

    @staticmethod
    def _method(plan):
        def method(self, *args, **kwargs):
            return self._run(plan(self, *args, **kwargs))
        return method

    def _run(self, plan: Plan[R]) -> R:
        """The plan's result, its steps done in this thread."""
        reply = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as end:
                return end.value
            if type(step) is Invoke:
                timeout = self.timeout if step.timeout is DEFAULT else step.timeout
                try:
                    reply = self._rpcs[step.rpc](step.request, timeout=timeout, metadata=self._metadata)
                except grpc.RpcError as exc:
                    raise ch.daemon_error(exc, self.address) from exc
            elif type(step) is Report:
                step.progress(step.job)
                reply = None
            elif type(step) is Sleep:
                time.sleep(step.seconds)
                reply = None
            else:
                raise TypeError(f"{step!r} is not a step of a plan")
