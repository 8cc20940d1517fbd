"""Who does a step's I/O: one body, written once as ``async def``, for ``run`` and ``arun``.

The agent step (graph/core/node.py) and the tool runner (graph/core/tool_calls.py) are each one
coroutine that hands every call that may wait to a driver: the model call, a tool call, a
middleware hook, a sync store round trip. :data:`SYNC` does each one in place and never
suspends, so :func:`drive` runs the coroutine to its end without an event loop; :data:`ASYNC`
awaits (``ainvoke``, async tools and hooks, ``asyncio.to_thread`` for sync stores). A fix
to the step is made once: the two paths differ only in this module (the pattern of httpx's
shared client logic, and of a sans-IO protocol handing its I/O to the caller). (A ``Session``
turn is one body the same way, a generator of the steps it waits on: memory/turn_driver.py.)

Example:
    >>> async def body(io: Driver) -> str:
    ...     return await io.call_tool(lambda name: f"hi {name}", {"name": "Ming"})
    >>> drive(body(SYNC))
    'hi Ming'
    >>> import asyncio
    >>> asyncio.run(body(ASYNC))
    'hi Ming'
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable, RunnableConfig

__all__ = [
    "ASYNC",
    "STAND_IN",
    "SYNC",
    "AsyncDriver",
    "Driver",
    "drive",
]

T = TypeVar("T")


class Driver:
    """The sync driver: every call in place (an async tool runs to its end here, as long as
    no event loop runs in this thread)."""

    async def invoke(
        self, runnable: Runnable, prompt: Any, config: RunnableConfig, kwargs: Mapping[str, Any]
    ) -> Any:
        return runnable.invoke(prompt, config, **kwargs)

    async def call_tool(self, func: Callable[..., Any], kwargs: Mapping[str, Any]) -> Any:
        raw = func(**kwargs)
        return _run_coroutine(raw) if inspect.isawaitable(raw) else raw

    async def off_loop(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)``: sync work that must not hold up an event loop (a store)."""
        return func(*args)

    async def stream(
        self, app: Any, state: Any, config: RunnableConfig, seen: Callable[[Any], None]
    ) -> None:
        """Run the compiled graph ``app`` (a parallel branch), handing ``seen`` each state."""
        for values in app.stream(state, config, stream_mode="values"):
            seen(values)


class AsyncDriver(Driver):
    """The async driver: ``ainvoke``, async tools and guardrails awaited, sync store round
    trips in a worker thread. Where :data:`STAND_IN` holds a driver (a durable engine's, set
    for one run: swarmgraph.temporal), the model call, tool calls and store trips go to it."""

    async def invoke(
        self, runnable: Runnable, prompt: Any, config: RunnableConfig, kwargs: Mapping[str, Any]
    ) -> Any:
        other = STAND_IN.get()
        if other is not None:
            return await other.invoke(runnable, prompt, config, kwargs)
        return await runnable.ainvoke(prompt, config, **kwargs)

    async def call_tool(self, func: Callable[..., Any], kwargs: Mapping[str, Any]) -> Any:
        other = STAND_IN.get()
        if other is not None:
            return await other.call_tool(func, kwargs)
        raw = func(**kwargs)
        return await raw if inspect.isawaitable(raw) else raw

    async def off_loop(self, func: Callable[..., T], *args: Any) -> T:
        other = STAND_IN.get()
        if other is not None:
            return await other.off_loop(func, *args)
        return await asyncio.to_thread(func, *args)

    async def stream(
        self, app: Any, state: Any, config: RunnableConfig, seen: Callable[[Any], None]
    ) -> None:
        async for values in app.astream(state, config, stream_mode="values"):
            seen(values)


SYNC = Driver()
ASYNC = AsyncDriver()
#: The driver the async path hands its I/O to instead, in this context (None: its own). A
#: context variable, so it follows one run's tasks (parallel branches too) and no other run.
STAND_IN: ContextVar[Driver | None] = ContextVar("swarmgraph_stand_in_driver", default=None)


def drive(body: Coroutine[Any, Any, T]) -> T:
    """Run a body driven by :data:`SYNC` to its end: it never suspends, so one ``send``
    finishes it (its result is in the ``StopIteration``)."""
    try:
        body.send(None)
    except StopIteration as done:
        return done.value
    body.close()
    raise RuntimeError("a step driven synchronously awaited something that suspends")


def _run_coroutine(awaitable: Any) -> Any:
    """Await an async tool from the sync path (no loop may be running in this thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    raise RuntimeError("an async tool was called from a sync run inside an event loop; use arun")


async def _await(awaitable: Any) -> Any:
    return await awaitable
