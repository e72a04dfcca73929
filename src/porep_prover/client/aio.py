# SPDX-License-Identifier: Apache-2.0
"""The asyncio client of the proving daemon (grpc.aio): the calls of
porep_prover.client.calls as coroutines, each step awaited as it comes."""
from __future__ import annotations

import asyncio
import inspect

import grpc
import grpc.aio

from . import channel as ch
from .calls import Calls, front_end
from .plans import DEFAULT, Invoke, Plan, R, Report, Sleep


@front_end
class AsyncClient(Calls):
    """Client (see it for the arguments, the results and the errors) for
    asyncio: make it, use it and close it on one event loop. progress may be
    a function or a coroutine function. A call whose task is cancelled
    raises CancelledError where it waits, and the RPC in flight is cancelled
    with it (a job already submitted goes on: cancel() stops it)."""
    _channels = grpc.aio

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    @staticmethod
    def _method(plan):
        async def method(self, *args, **kwargs):
            return await self._run(plan(self, *args, **kwargs))
        return method

    async def _run(self, plan: Plan[R]) -> R:
        """The plan's result, its steps awaited on this event loop."""
        reply = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as end:
                return end.value
            if type(step) is Invoke:
                timeout = self.timeout if step.timeout is DEFAULT else step.timeout
                try:
                    reply = await self._rpcs[step.rpc](step.request, timeout=timeout, metadata=self._metadata)
                except grpc.RpcError as exc:
                    raise ch.daemon_error(exc, self.address) from exc
            elif type(step) is Report:
                outcome = step.progress(step.job)
                if inspect.isawaitable(outcome):
                    await outcome
                reply = None
            elif type(step) is Sleep:
                await asyncio.sleep(step.seconds)
                reply = None
            else:
                raise TypeError(f"{step!r} is not a step of a plan")
