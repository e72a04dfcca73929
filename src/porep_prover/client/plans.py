# SPDX-License-Identifier: Apache-2.0
"""A client call written once, as a plan that neither blocks nor awaits.

A plan is a generator: it checks the call's arguments, yields the steps the
call needs and returns the call's result. The steps:

    Invoke(rpc, request, timeout)   one call of the service; the reply message is sent back into the plan
    Report(progress, job)           hand the caller's progress function a JobInfo
    Sleep(seconds)                  pause

A front end runs plans: Client does each step blocking, AsyncClient awaits
it; neither knows any call. An Invoke's timeout is its deadline in seconds:
None for none, DEFAULT for the client's `timeout`. A plan sees no error
of gRPC's: the front end raises the DaemonError of a failed Invoke's status
(porep_prover.client.channel.daemon_error) and drops the plan.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Concatenate, Coroutine, Generator, Generic, ParamSpec, TypeVar, \
    overload

from . import channel as ch

if TYPE_CHECKING:
    from .aio import AsyncClient
    from .sync import Client

P = ParamSpec("P")
R = TypeVar("R")
DEFAULT: Any = ...           # an Invoke's timeout: the client's own


class Invoke:
    """Call the service's method `rpc` (its name in proving.proto) with request."""
    __slots__ = ("rpc", "request", "timeout")

    def __init__(self, rpc: str, request, timeout: float | None = DEFAULT):
        self.rpc, self.request, self.timeout = rpc, request, timeout


class Report:
    """progress(job); a front end for asyncio awaits what it returns when that is awaitable."""
    __slots__ = ("progress", "job")

    def __init__(self, progress: Callable, job):
        self.progress, self.job = progress, job


class Sleep:
    __slots__ = ("seconds",)

    def __init__(self, seconds: float):
        self.seconds = seconds


Plan = Generator["Invoke | Report | Sleep", Any, R]


def wait_deadline(ms: int) -> float | None:
    """The deadline of a call that asks the daemon to wait ms milliseconds (0: until the job ends)."""
    return None if ms == 0 else ms / 1000 + ch.DEADLINE_GRACE


class Call(Generic[P, R]):
    """One call of the client: the service method `rpc` it fronts, and its
    plan, a generator function over (the client, the call's arguments).

    The description lives on porep_prover.client.calls.Calls; each front end
    holds a method of its own made from it (calls.front_end). __get__'s
    overloads tell a type checker what those methods are: on a Client the
    call's result, on an AsyncClient a coroutine of it."""
    __slots__ = ("rpc", "plan", "name")

    def __init__(self, rpc: str, plan: Callable[Concatenate[Any, P], Plan[R]]):
        self.rpc, self.plan, self.name = rpc, plan, plan.__name__

    @overload
    def __get__(self, client: None, owner: type) -> Call[P, R]: ...
    @overload
    def __get__(self, client: AsyncClient, owner: type) -> Callable[P, Coroutine[Any, Any, R]]: ...
    @overload
    def __get__(self, client: Client, owner: type) -> Callable[P, R]: ...

    def __get__(self, client, owner):
        if client is None:
            return self
        raise TypeError(f"{self.name} is a call of Client and AsyncClient, not of {owner.__name__}")


def call(rpc: str) -> Callable[[Callable[Concatenate[Any, P], Plan[R]]], Call[P, R]]:
    """The decorator of a plan: the Call of the service method rpc."""
    return lambda plan: Call(rpc, plan)
