"""Routes: handoffs decided by the state, not by the model.

``Agent(routes=[Route(when=..., to=...)])``: after this agent's tools ran, and before its model
would be called again, the first route whose ``when(context_variables)`` holds switches the
active agent, with no model call. In the graph a route is a conditional edge labelled with the
route's name.

Example:
    >>> from swarmgraph.graph.core.types import Agent
    >>> triage = Agent(name="Triage")
    >>> done = Route(when=lambda ctx: ctx.get("refund_status") == "approved", to=triage)
    >>> refunds = Agent(name="Refunds", routes=[done])
    >>> first_route(refunds, {"refund_status": "approved"}).label
    'Triage'
    >>> first_route(refunds, {"refund_status": "pending"}) is None
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.types import Agent


@dataclass(frozen=True)
class Route:
    """Switch to ``to`` when ``when(context_variables)`` is true; ``name`` labels the edge.

    ``when`` reads the run's current ``context_variables`` (a plain dict it must not change).

    Example:
        >>> Route(when=lambda ctx: True, to=Agent(name="Billing"), name="paid").label
        'paid'
    """

    when: Callable[[dict[str, Any]], Any]
    to: Agent
    name: str | None = None

    def __post_init__(self) -> None:
        if not callable(self.when):
            raise TypeError(
                f"Route.when must be a function of context_variables, got {self.when!r}"
            )
        if not isinstance(self.to, Agent):
            raise TypeError(f"Route.to must be an Agent, got {self.to!r}")

    @property
    def label(self) -> str:
        """The edge's label in the drawn graph (and the trajectory's ``name``)."""
        return self.name or self.to.name


def routes_of(agent: Agent) -> list[Route]:
    """``agent.routes``, checked: anything but a :class:`Route` is a clear error."""
    for route in agent.routes:
        if not isinstance(route, Route):
            raise TypeError(f"agent {agent.name!r}: routes must be Route objects, got {route!r}")
    return agent.routes


def first_route(agent: Agent, context: Mapping[str, Any]) -> Route | None:
    """The first of ``agent``'s routes whose condition holds on ``context``."""
    for route in agent.routes:
        if route.when(context):
            return route
    return None
