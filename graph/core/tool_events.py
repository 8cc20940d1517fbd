"""LangChain's tool callbacks for a swarm's tool calls: ``on_tool_start`` / ``on_tool_end`` /
``on_tool_error`` once per call, as a ``BaseTool`` run would send them.

A swarm's tools are plain functions run by the step (graph/core/tool_calls.py), not LangChain
tools, so nothing would tell a callback handler, LangSmith or ``astream_events(version="v2")``
that a tool ran. The step hands the tool runner a :class:`ToolEvents` when its config carries
a callback handler (``None`` otherwise: a run nobody listens to pays one check per reply).
The input is the arguments as the model sent them (never the injected ``context_variables``);
the output is the text the model reads. A LangChain tool run through ``tool.invoke`` tells
them itself (graph/core/middleware_tools.py's ``REPORTS_ITSELF``), with the runs nested in it.

Example:
    >>> from langchain_core.callbacks import BaseCallbackHandler
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, build_swarm_graph, scripted_tool_call
    >>> class Seen(BaseCallbackHandler):
    ...     events = []
    ...     def on_tool_start(self, serialized, input_str, **kwargs):
    ...         self.events.append(("start", serialized["name"], kwargs["inputs"]))
    ...     def on_tool_end(self, output, **kwargs):
    ...         self.events.append(("end", output))
    >>> def lookup(city: str) -> str:
    ...     return f"sunny in {city}"
    >>> model = ScriptedChatModel([scripted_tool_call("lookup", {"city": "Oslo"}), "Sunny."])
    >>> graph = build_swarm_graph([Agent(functions=[lookup])], chat_model=model).compile()
    >>> _ = graph.invoke({"messages": [("user", "weather?")]}, {"callbacks": [Seen()]})
    >>> Seen.events
    [('start', 'lookup', {'city': 'Oslo'}), ('end', 'sunny in Oslo')]
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig

if TYPE_CHECKING:
    from langchain_core.callbacks import AsyncCallbackManager, CallbackManager

__all__ = ["ToolEvents", "tool_events_for"]


def tool_events_for(config: RunnableConfig, awaited: bool) -> ToolEvents | None:
    """The tool events of a step whose config is ``config`` (``awaited``: the async driver
    runs it), or ``None`` when no callback handler listens."""
    callbacks: Any = config.get("callbacks")
    if not getattr(callbacks, "handlers", callbacks) and not _context_listens():
        return None
    from langchain_core.runnables.config import (
        get_async_callback_manager_for_config,
        get_callback_manager_for_config,
    )

    manager: CallbackManager | AsyncCallbackManager = (
        get_async_callback_manager_for_config(config)
        if awaited
        else get_callback_manager_for_config(config)
    )
    return ToolEvents(manager, awaited=awaited) if manager.handlers else None


def _context_listens() -> bool:
    """Whether a handler set for the running context listens (``collect_runs()``,
    ``tracing_v2_enabled()``, LangSmith tracing switched on by its environment variables):
    LangChain adds those to every callback manager, and a ``Swarm.run`` takes no config."""
    try:
        from langchain_core.tracers.context import _configure_hooks, _tracing_v2_is_enabled
    except ImportError:  # LangChain moved them: ask the manager itself
        return True
    return bool(_tracing_v2_is_enabled()) or any(hook[0].get() for hook in _configure_hooks)


class ToolEvents:
    """Sends one tool call's start, end or error to the step's callback manager."""

    def __init__(self, manager: CallbackManager | AsyncCallbackManager, *, awaited: bool) -> None:
        self.manager = manager
        self.awaited = awaited

    async def around(
        self,
        name: str,
        call_id: str,
        args: Any,
        run: Callable[[], Awaitable[Any]],
        shown: Callable[[Any], str],
    ) -> Any:
        """``run()`` the call between its start and end (or error) events; ``shown(raw)`` is
        the text the model reads of its value."""
        inputs = args if isinstance(args, dict) else {"input": args}
        text = args if isinstance(args, str) else json.dumps(args, default=str)
        serialized = {"name": name, "description": ""}
        started: Any = self.manager.on_tool_start(
            serialized, text, inputs=inputs, tool_call_id=call_id, name=name
        )
        if self.awaited:
            started = await started
        try:
            raw = await run()
        except BaseException as error:
            ended = started.on_tool_error(error, tool_call_id=call_id, name=name)
            if self.awaited:
                await ended
            raise
        ended = started.on_tool_end(shown(raw), tool_call_id=call_id, name=name)
        if self.awaited:
            await ended
        return raw
