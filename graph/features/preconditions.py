"""Handoff preconditions: ``Agent(requires=["order_id"])`` or ``Agent(requires=callable)``.

A handoff into an agent whose precondition fails does not switch: a transfer tool's call is
answered ``Error: Refunds needs order_id`` so the model can fix the context and try again; a
route (or a ``CALLER`` return, a fallback) into it is not taken. This holds for every way into
an agent but the run's first one: the caller chose that agent itself.

- ``requires=["order_id", "customer"]``: each key must be in ``context_variables`` and not
  ``None`` (a typed context's ``order_id: int | None = None`` counts as missing until set).
- ``requires=callable``: ``callable(context_variables) -> None | reason``; ``None`` (or any
  false value) passes, a reason refuses: ``Error: Refunds can't take the conversation: <reason>``.

The graph draws it: the edges into the agent are labelled with what it needs.

Example:
    >>> from swarmgraph.graph.core.types import Agent
    >>> refunds = Agent(name="Refunds", requires=["order_id"])
    >>> unmet(refunds, {}), unmet(refunds, {"order_id": 7})
    ('Refunds needs order_id', None)
    >>> requires_label(refunds)
    'needs order_id'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.types import Agent

__all__ = ["requires_label", "unmet"]


def unmet(agent: Agent, context: Mapping[str, Any]) -> str | None:
    """Why ``agent`` cannot take the conversation with ``context`` (``None``: it can).

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> def verified(ctx):
        ...     return None if ctx.get("verified") else "the customer is not verified"
        >>> unmet(Agent(name="Refunds", requires=verified), {})
        "Refunds can't take the conversation: the customer is not verified"
        >>> unmet(Agent(name="Refunds", requires=["order_id", "email"]), {"order_id": None})
        'Refunds needs order_id and email'
    """
    requires = agent.requires
    if requires is None:
        return None
    if callable(requires):
        reason = requires(context)
        return f"{agent.name} can't take the conversation: {reason}" if reason else None
    missing = [key for key in requires if context.get(key) is None]
    return f"{agent.name} needs {' and '.join(missing)}" if missing else None


def requires_label(agent: Agent) -> str | None:
    """What the edges into ``agent`` say it needs (``None`` when it needs nothing).

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> def verified(ctx): ...
        >>> requires_label(Agent(requires=verified)), requires_label(Agent())
        ('needs verified', None)
    """
    requires = agent.requires
    if requires is None:
        return None
    if callable(requires):
        return f"needs {getattr(requires, '__name__', type(requires).__name__)}"
    return f"needs {', '.join(requires)}"
