"""What a tool's LangChain annotations ask of the step that runs it.

LangGraph's ``ToolNode`` fills some parameters itself, by their annotation, and hides them from
the model: ``runtime: ToolRuntime``, ``Annotated[str, InjectedToolCallId]``,
``Annotated[dict, InjectedState]`` (or ``InjectedState("field")``),
``Annotated[BaseStore, InjectedStore()]``, and a parameter annotated ``RunnableConfig``. A
swarm step fills the same ones the same way, for a plain function as for a ``@tool``
(graph/core/schema.py reads them, the tool runner fills them), so a tool written for
``create_agent`` runs on a swarm agent unchanged. The state a tool reads is the swarm's
(``messages`` with the reply that asked for the call, ``active_agent``, ``context_variables``,
live as a ``context_variables`` parameter gets them, and the state keys middleware declare).

Nothing here imports LangChain's tools: a program whose tools carry these annotations has
imported them already, and a plain Swarm program never pays for that import.

Example:
    >>> from typing import Annotated
    >>> from langchain_core.runnables import RunnableConfig
    >>> from langchain_core.tools import InjectedToolCallId
    >>> from langgraph.prebuilt import InjectedState, ToolRuntime
    >>> [filled_by_step(a) for a in (ToolRuntime, Annotated[str, InjectedToolCallId],
    ...     Annotated[list, InjectedState("messages")], RunnableConfig | None, int)]
    [Filled(kind='runtime', field=None), Filled(kind='tool_call_id', field=None), \
Filled(kind='state', field='messages'), Filled(kind='config', field=None), None]
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

__all__ = [
    "JSON_SCHEMA",
    "Filled",
    "filled_by_step",
    "is_langchain_tool",
    "step_values",
    "tool_runtime",
]

#: Set on the function made for a LangChain tool that describes its arguments as a JSON schema
#: (an MCP tool's, from langchain-mcp-adapters): that schema, which the model is told as it is
#: (graph/core/schema.py).
JSON_SCHEMA = "__swarmgraph_json_schema__"

Kind = Literal["config", "runtime", "tool_call_id", "state", "store", "unfilled"]


@dataclass(frozen=True)
class Filled:
    """A parameter the step fills: ``kind`` says with what; ``field``, for ``"state"``, the
    state key (None: the whole state)."""

    kind: Kind
    field: str | None = None


def is_langchain_tool(value: Any) -> bool:
    """Whether ``value`` is a LangChain tool (a ``BaseTool``, what ``@tool`` makes), without
    importing LangChain: a program that made one has imported it.

    Example:
        >>> from langchain_core.tools import tool
        >>> @tool
        ... def ping() -> str:
        ...     '''Ping.'''
        ...     return "pong"
        >>> is_langchain_tool(ping), is_langchain_tool(print)
        (True, False)
    """
    tools = sys.modules.get("langchain_core.tools")
    return tools is not None and isinstance(value, tools.BaseTool)


def filled_by_step(annotation: Any) -> Filled | None:
    """What fills a parameter annotated ``annotation``, when LangChain's rules say it is not the
    model's to fill; ``"unfilled"`` for an ``InjectedToolArg`` of another kind (its caller
    fills it in LangChain, and nothing does in a swarm)."""
    if _is_config(annotation):
        return Filled("config")
    tools = sys.modules.get("langchain_core.tools")
    if tools is None:  # nothing is marked so in a program that never loaded LangChain's tools
        return None
    node = sys.modules.get("langgraph.prebuilt.tool_node")
    runtime = getattr(node, "ToolRuntime", None)
    if runtime is not None and _is_a(get_origin(annotation) or annotation, runtime):
        return Filled("runtime")
    for mark in _marks(annotation):
        if not _is_a(mark, tools.InjectedToolArg):
            continue
        if _is_a(mark, tools.InjectedToolCallId):
            return Filled("tool_call_id")
        if node is not None and _is_a(mark, node.InjectedState):
            return Filled("state", getattr(mark, "field", None))
        if node is not None and _is_a(mark, node.InjectedStore):
            return Filled("store")
        return Filled("unfilled")
    return None


def step_values(
    wanted: Mapping[str, Filled],
    call_id: str,
    state: Callable[[], Mapping[str, Any]],
    tools: Callable[[], list[Any]],
) -> dict[str, Any] | str:
    """The values for ``wanted`` (a tool's parameters by name) in one call: its id, the
    step's config, LangGraph's runtime (context, store, stream writer) and ``state()``, the
    swarm's state as the call sees it; or why one cannot be had (the model reads it)."""
    from langchain_core.runnables.config import ensure_config

    config = ensure_config()
    runtime = config.get("configurable", {}).get("__pregel_runtime")  # LangGraph's Runtime
    store = getattr(runtime, "store", None)
    values: dict[str, Any] = {}
    for name, filled in wanted.items():
        kind = filled.kind
        if kind == "config":
            values[name] = config
        elif kind == "tool_call_id":
            values[name] = call_id
        elif kind == "store":
            if store is None:
                return f"needs a LangGraph store ({name!r}); this graph was compiled without one"
            values[name] = store
        elif kind == "state":
            whole = state()
            values[name] = whole if filled.field is None else whole.get(filled.field)
        elif kind == "runtime":
            values[name] = tool_runtime(state(), runtime, config, call_id, tools())
    return values


def tool_runtime(
    state: Mapping[str, Any], runtime: Any, config: Any, call_id: str | None, tools: list[Any]
) -> Any:
    """LangChain's ``ToolRuntime`` for one call, as ``ToolNode`` makes it: ``runtime`` is
    LangGraph's (context, store, stream writer; None outside a graph run)."""
    from langgraph.prebuilt import ToolRuntime

    return ToolRuntime(
        state=state,
        context=getattr(runtime, "context", None),
        config=config,
        stream_writer=getattr(runtime, "stream_writer", None) or _no_writer,
        tool_call_id=call_id,
        store=getattr(runtime, "store", None),
        tools=tools,
    )


def _no_writer(chunk: Any) -> None:
    """The stream writer outside a graph run: nothing listens."""


def _is_config(annotation: Any) -> bool:
    """Whether ``annotation`` is LangChain's ``RunnableConfig`` (or an optional one)."""
    config = getattr(sys.modules.get("langchain_core.runnables.config"), "RunnableConfig", None)
    if config is None:
        return False
    if annotation is config:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        return len(kept) == 1 and kept[0] is config
    return False


def _is_a(mark: Any, cls: type) -> bool:
    """``mark`` is ``cls`` or one of its instances (LangChain takes both)."""
    return isinstance(mark, cls) or (isinstance(mark, type) and issubclass(mark, cls))


def _marks(annotation: Any) -> list[Any]:
    """The ``Annotated`` metadata of ``annotation`` (an optional one's too)."""
    if get_origin(annotation) is Annotated:
        return list(annotation.__metadata__)
    if get_origin(annotation) in (Union, types.UnionType):
        return [m for a in get_args(annotation) for m in _marks(a)]
    return []
