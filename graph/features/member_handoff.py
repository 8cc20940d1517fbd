"""The tool a LangGraph-native swarm member hands the conversation back with.

Its own module because it needs LangChain's tool classes, which the engine otherwise never
loads: ``from swarmgraph import Agent, Swarm`` stays ~4 ms lighter until a graph joins.

Example:
    >>> handoff_targets(object())  # a graph without tool nodes hands to nobody
    {}
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from ..core.types import Agent, _tool_suffix, is_compiled_graph

__all__ = ["HandoffTool", "handoff_targets", "handoff_tool"]


class _NoArguments(BaseModel):
    """A handoff takes no arguments."""


class HandoffTool(StructuredTool):
    """A LangChain tool that, called inside a LangGraph member, hands the swarm to ``target``."""

    target: Any = Field(default=None, exclude=True, repr=False)


def handoff_tool(target: Any, *, description: str | None = None) -> HandoffTool:
    """A ``transfer_to_<name>`` LangChain tool for a LangGraph-native member to hand back with.

    ``target`` is an ``Agent`` (or another named compiled graph). Give the tool to the graph
    when you build it (``create_agent(model, tools=[..., handoff_tool(triage)], name=...)``).
    It is ``return_direct``: calling it ends the member's turn, and the swarm switches to
    ``target``. Its answer is the same ``{"assistant": name}`` our own transfers give.

    Example:
        >>> from swarmgraph.graph import Agent
        >>> tool = handoff_tool(Agent(name="Triage"))
        >>> tool.name, tool.return_direct, tool.invoke({})
        ('transfer_to_triage', True, '{"assistant": "Triage"}')
    """
    if not isinstance(target, Agent) and not is_compiled_graph(target):
        raise TypeError(f"handoff_tool needs an Agent or a named compiled graph, not {target!r}")
    answer = json.dumps({"assistant": target.name})

    def transfer() -> str:
        return answer

    return HandoffTool(
        name=f"transfer_to_{_tool_suffix(target.name)}",
        description=description or f"Transfer the conversation to the {target.name} agent.",
        func=transfer,
        args_schema=_NoArguments,
        return_direct=True,
        target=target,
    )


def handoff_targets(graph: Any) -> dict[str, Any]:
    """``tool name -> target`` for every :class:`HandoffTool` in the graph's tool nodes."""
    found: dict[str, Any] = {}
    for node in getattr(graph, "nodes", {}).values():
        tools = getattr(getattr(node, "bound", None), "tools_by_name", None) or {}
        for name, tool in tools.items():
            if isinstance(tool, HandoffTool):
                found.setdefault(name, tool.target)
    return found
