"""The run's I/O as Temporal activities: one model call, one tool call.

They run on any worker of the task queue, in the worker's own process: the model from the
worker's ``Swarm`` (its ``chat_model`` or client), the tool from the start agent's import path
(swarmgraph/temporal/roster.py). A tool's own exception is its result (the model reads it, as
in-process), so an activity fails only when its worker is lost, it times out, or its tool or
agent cannot be imported; a tool call that waits heartbeats, so a dead worker is noticed in
one heartbeat timeout instead of the whole call's.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..graph.core.node import _as_sent
from ..graph.core.runtime import _SENDS_NAMES
from ..graph.core.schema import tool_spec
from .errors import TemporalInputError
from .roster import Roster
from .wire import check_json, context_in, context_out, encode_result, messages_in, messages_out

if TYPE_CHECKING:
    from ..graph.swarm import Swarm

__all__ = ["MODEL_ACTIVITY", "TOOL_ACTIVITY", "SwarmActivities"]

MODEL_ACTIVITY = "swarmgraph.model_call"
TOOL_ACTIVITY = "swarmgraph.tool_call"


class SwarmActivities:
    """The activities of one worker: its ``swarm`` resolves model names to chat models; sync
    tools run on ``tool_threads`` threads of its own (asyncio's default pool has
    ``cpu_count + 4``: on a small machine, six slow tools would hold every other call up)."""

    def __init__(self, swarm: Swarm, tool_threads: int = 100) -> None:
        self.swarm = swarm
        self.threads = ThreadPoolExecutor(tool_threads, thread_name_prefix="swarmgraph-tool")

    @activity.defn(name=MODEL_ACTIVITY)
    async def model_call(self, call: dict[str, Any]) -> dict[str, Any]:
        """``{"model", "prompt", "kwargs"}``: the reply of the worker's model for that name,
        its tools bound from their schemas (Temporal retries a failed call with backoff)."""
        model: Any = self.swarm.resolver.get(call["model"])
        prompt = messages_in(call["prompt"])
        if (
            type(model).__name__ in _SENDS_NAMES
        ):  # as the in-process step sends (graph/core/node.py)
            prompt = [_as_sent(m) for m in prompt]
        kwargs = dict(call["kwargs"])
        tools = kwargs.pop("tools", None)
        if tools:
            model = model.bind_tools(tools, **kwargs)
            kwargs = {}
        reply = await _heartbeating(model.ainvoke, {"input": prompt, **kwargs}, self.threads)
        return messages_out([reply])[0]

    @activity.defn(name=TOOL_ACTIVITY)
    async def tool_call(self, call: dict[str, Any]) -> dict[str, Any]:
        """``{"start", "agent", "tool", "kwargs"}``: the tool's result (or the exception it
        raised), and the ``context_variables`` it was left with when it takes them."""
        try:
            func = Roster.load(call["start"]).tool(call["agent"], call["tool"])
        except TemporalInputError as exc:  # no retry finds it: this worker's code lacks it
            raise ApplicationError(
                str(exc), type="TemporalInputError", non_retryable=True
            ) from None
        kwargs = dict(call["kwargs"])
        if "context_variables" in kwargs:  # as the tool takes it in-process: typed, or a dict
            model = tool_spec(func).context_model
            kwargs["context_variables"] = context_in(
                kwargs["context_variables"], self.swarm.context_schema, model
            )
        out: dict[str, Any]
        try:
            raw = await _heartbeating(func, kwargs, self.threads)
            out = {"returned": encode_result(raw)}
        except Exception as exc:  # the tool's own error: the model reads it
            out = {"raised": type(exc).__name__, "message": str(exc)}
        if "context_variables" in kwargs:
            out["context_variables"] = context_out(kwargs["context_variables"])
        try:  # what cannot cross is said to the model; the call is never lost in doubt
            check_json(out, "a tool's context_variables")
        except TemporalInputError as exc:
            out.pop("context_variables", None)
            out = {"raised": "TemporalInputError", "message": f"{exc}; the change was dropped"}
        return out


async def _heartbeating(
    func: Callable[..., Any], kwargs: Mapping[str, Any], threads: ThreadPoolExecutor
) -> Any:
    """``func(**kwargs)`` (a sync tool in a thread, so the loop can heartbeat), heartbeating
    while it runs when the activity has a heartbeat timeout."""
    info = activity.info()
    every = info.heartbeat_timeout.total_seconds() / 3 if info.heartbeat_timeout else None
    if inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__func__", None)
    ):
        work: asyncio.Future[Any] = asyncio.ensure_future(func(**kwargs))
    else:
        call = functools.partial(contextvars.copy_context().run, func, **kwargs)
        work = asyncio.ensure_future(asyncio.get_running_loop().run_in_executor(threads, call))
    while True:
        done, _ = await asyncio.wait({work}, timeout=every)
        if done:
            raw = work.result()
            return await raw if inspect.isawaitable(raw) else raw
        activity.heartbeat()
