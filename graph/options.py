"""Our agent options turned into the middleware they install: the API's side of the middleware
core. ``Agent(history=view)`` is sugar for :class:`~swarmgraph.graph.features.history_views.
HistoryViewMiddleware`, ``Agent(memory_tools=True)`` for :class:`~swarmgraph.graph.features.
memory_tools.MemoryToolsMiddleware` (its tools join the agent's); the builder hands
:func:`middleware_of` to the graph's runtime, which puts what it returns inside the agent's own
``Agent(middleware=...)`` (graph/core/runtime.py's ``stack_for``). An agent that uses none of
them gets none, and loads no feature.

Example:
    >>> from swarmgraph.graph.features.history_views import last
    >>> from swarmgraph.graph.core.types import Agent
    >>> middleware_of(Agent())
    ()
    >>> [type(m).__name__ for m in middleware_of(Agent(name="Refunds", history=last(2)))]
    ['HistoryViewMiddleware']
    >>> [type(m).__name__ for m in middleware_of(Agent(memory_tools=True))]
    ['MemoryToolsMiddleware']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from .core.types import Agent

__all__ = ["middleware_of"]


def middleware_of(agent: Agent) -> Sequence[Any]:
    """The middleware ``agent``'s options install (none for a plain agent)."""
    if agent.history is None and not agent.memory_tools:
        return ()
    found: list[Any] = []
    if agent.history is not None:
        found.append(_history_view(agent.history, agent.name))
    if agent.memory_tools:
        found.append(_memory_tools())
    return tuple(found)


@lru_cache(maxsize=512)  # one object per view and agent: a stack is cached by its members
def _history_view(view: Callable[[list], list], name: str) -> Any:
    from .features.history_views import HistoryViewMiddleware

    return HistoryViewMiddleware(view, name)


@lru_cache(maxsize=1)  # stateless: one for every agent, so their stacks share it
def _memory_tools() -> Any:
    from .features.memory_tools import MemoryToolsMiddleware

    return MemoryToolsMiddleware()
