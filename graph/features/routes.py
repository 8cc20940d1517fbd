"""Routes: handoffs decided by the state, not by the model.

``Agent(routes=[Route(when=..., to=...)])``: after this agent's tools ran, and before its model
would be called again, the first route whose ``when(context_variables)`` holds switches the
active agent, with no model call. In the graph a route is a conditional edge labelled with the
route's name.

Routes attach as middleware: ``routes=`` is sugar that installs :class:`RoutesMiddleware`
(graph/options.py's ``middleware_of``), whose ``next_agent`` hook (the step's "who takes over"
moment, graph/core/handoffs.py's ``Takeover``) picks the first route that holds when no
tool handed off, and whose ``destinations`` tell discovery and the drawn graph where routes go.

Example:
    >>> from swarmgraph.graph.core.types import Agent
    >>> triage = Agent(name="Triage")
    >>> done = Route(when=lambda ctx: ctx.get("refund_status") == "approved", to=triage)
    >>> refunds = Agent(name="Refunds", routes=[done])
    >>> first_route(refunds, {"refund_status": "approved"}).label
    'Triage'
    >>> first_route(refunds, {"refund_status": "pending"}) is None
    True
    >>> [(d.agent.name, d.label) for d in RoutesMiddleware(refunds.routes, "Refunds").destinations]
    [('Triage', 'Triage')]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware

from ..core.handoffs import Destination, Takeover
from ..core.types import Agent

__all__ = ["Route", "RoutesMiddleware", "first_route", "routes_of"]


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


class RoutesMiddleware(AgentMiddleware):
    """``Agent(routes=[...])`` as the middleware it installs: when no tool of the step handed
    off, the first route whose condition holds takes over (``next_agent``); ``destinations``
    lists every route's target with its label. Anything but a :class:`Route` is refused here,
    so the first walk of a roster says so.

    Example:
        >>> from swarmgraph.graph.core.handoffs import Takeover
        >>> billing = Agent(name="Billing")
        >>> paid = RoutesMiddleware([Route(when=lambda c: c.get("paid"), to=billing)], "Shop")
        >>> def now(context):
        ...     return Takeover(Agent(name="Shop"), None, context, [], [], lambda n: None)
        >>> paid.next_agent(now({"paid": True})).target.name
        'Billing'
        >>> paid.next_agent(now({})) is None
        True
    """

    def __init__(self, routes: Sequence[Any], agent: str) -> None:
        super().__init__()
        for route in routes:
            if not isinstance(route, Route):
                raise TypeError(f"agent {agent!r}: routes must be Route objects, got {route!r}")
        self.routes: tuple[Route, ...] = tuple(routes)
        self.destinations = [Destination(route.to, route.label) for route in self.routes]

    @property
    def name(self) -> str:
        return "RoutesMiddleware"

    def next_agent(self, takeover: Takeover) -> Takeover | None:
        """The first route that holds, when no tool handed off."""
        if takeover.target is not None:
            return None
        for route in self.routes:
            if route.when(takeover.context):
                return takeover.replace(target=route.to, label=route.label, call_id=None)
        return None
