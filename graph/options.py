"""Our agent options turned into the middleware they install: the API's side of the middleware
core. ``Agent(history=view)`` is sugar for :class:`~swarmgraph.graph.features.history_views.
HistoryViewMiddleware`; ``Agent(input_guardrails=..., output_guardrails=..., on_trip=...,
requires=...)`` for :class:`~swarmgraph.graph.features.guardrail_middleware.GuardrailsMiddleware`.
The builder hands :func:`middleware_of` to the graph's runtime, which puts what it returns inside
the agent's own ``Agent(middleware=...)`` (graph/core/runtime.py's ``stack_for``). An agent that
uses none of them gets none, and loads no feature.

Example:
    >>> from swarmgraph.graph.features.history_views import last
    >>> from swarmgraph.graph.core.types import Agent
    >>> middleware_of(Agent())
    ()
    >>> [type(m).__name__ for m in middleware_of(Agent(name="Refunds", history=last(2)))]
    ['HistoryViewMiddleware']
    >>> [type(m).__name__ for m in middleware_of(Agent(requires=["order_id"], history=last(2)))]
    ['GuardrailsMiddleware', 'HistoryViewMiddleware']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from .core.types import Agent

__all__ = ["middleware_of"]

#: One GuardrailsMiddleware per Agent object, by id (the agent kept, to check the id is still
#: its): a stack is cached by its members, so the same agent must get the same object.
_GUARDS: dict[int, tuple[Agent, Any]] = {}


def middleware_of(agent: Agent) -> Sequence[Any]:
    """The middleware ``agent``'s options install (none for a plain agent): its contracts
    outermost (a refused message never reaches a view), then its history view."""
    guarded = agent.input_guardrails or agent.output_guardrails or agent.requires is not None
    if agent.history is None:
        return (_guard(agent),) if guarded else ()
    view = _history_view(agent.history, agent.name)
    return (_guard(agent), view) if guarded else (view,)


def _guard(agent: Agent) -> Any:
    known = _GUARDS.get(id(agent))
    if known is not None and known[0] is agent:
        return known[1]
    from .features.guardrail_middleware import GuardrailsMiddleware

    if len(_GUARDS) > 512:  # agents created per request must not grow this forever
        _GUARDS.clear()
    guard = GuardrailsMiddleware(agent)
    _GUARDS[id(agent)] = (agent, guard)
    return guard


@lru_cache(maxsize=512)  # one object per view and agent: a stack is cached by its members
def _history_view(view: Callable[[list], list], name: str) -> Any:
    from .features.history_views import HistoryViewMiddleware

    return HistoryViewMiddleware(view, name)
