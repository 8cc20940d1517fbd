"""Swarm's loop in four functions: what openai/swarm's ``core.py`` does at the four places a
teacher points to, each written once here and called from where the graph does it.

- a run's start, ``copy.deepcopy(context_variables)`` in Swarm's ``run``: :func:`copy_context`,
  called by ``PreparedRun.prepare`` (graph/prepared_run.py);
- every model call, ``instructions(context_variables)`` in ``get_chat_completion``:
  :func:`instructions`, called by ``AgentNode._prompt`` (graph/core/node.py);
- every tool call, ``args["context_variables"] = context_variables`` in ``handle_tool_calls``:
  :func:`inject_context`, called by ``_Runner.inject`` (graph/core/tool_calls.py);
- a handoff, ``active_agent = partial_response.agent`` in ``run``: :func:`switch_agent`,
  called by ``GraphRuntime.switch`` (graph/core/runtime.py) once the target's
  ``before_handoff`` hooks let it through.

The step around them, read top-down, is ``AgentNode._step`` (graph/core/node.py).

Example (one turn of the four, by hand):
    >>> from swarmgraph.graph.core.types import Agent
    >>> given = {"user": {"name": "Ming"}}
    >>> context = copy_context(given)
    >>> triage = Agent(name="Triage", instructions=lambda cv: f"Help {cv['user']['name']}.")
    >>> instructions(triage, context)
    'Help Ming.'
    >>> def rename(context_variables):
    ...     context_variables["user"]["name"] = "Lee"
    >>> kwargs = {}
    >>> inject_context(kwargs, context)
    >>> rename(**kwargs)
    >>> context["user"]["name"], given["user"]["name"]  # the run's copy changed, not the caller's
    ('Lee', 'Ming')
    >>> update = {}
    >>> switch_agent(update, [], triage, "Sales", "sales", limit=10)
    >>> update
    {'handoff_trail': ['Triage'], 'active_agent': 'sales'}
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .errors import HandoffLoopError
from .injected import CONTEXT_PARAM
from .state import as_context

if TYPE_CHECKING:
    from .state import StateUpdate
    from .types import Agent

__all__ = ["copy_context", "inject_context", "instructions", "switch_agent"]


def copy_context(context_variables: Mapping[str, Any] | None) -> dict[str, Any]:
    """**``context_variables`` are copied at the start of a run**, deeply, as Swarm does: a
    tool's in-place writes change the run's copy, never the caller's dict, and the run's final
    values come back in ``Response.context_variables``.

    Example:
        >>> given = {"user": {"name": "Ming"}}
        >>> run = copy_context(given)
        >>> run["user"]["name"] = "Lee"
        >>> given["user"]["name"], copy_context(None)
        ('Ming', {})
    """
    return copy.deepcopy(as_context(context_variables or {}))


def instructions(agent: Agent, context_variables: Mapping[str, Any]) -> str:
    """**The instructions are built** for one model call: ``agent.instructions``, called with
    the current context when it is a function (rebuilt on every call, so a tool's write is
    seen by the next one; a missing key reads as ``""``, as in Swarm).

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> instructions(Agent(instructions=lambda cv: f"Hi {cv['name']}!"), {})
        'Hi !'
    """
    given = agent.instructions
    return given(defaultdict(str, context_variables)) if callable(given) else given


def inject_context(kwargs: dict[str, Any], context_variables: dict[str, Any]) -> None:
    """**``context_variables`` are injected** into a tool call that declares the parameter:
    the run's live dict, not a copy, so an in-place write is seen by the calls after it, as
    in Swarm. The model never sees the parameter (graph/core/schema.py leaves it out of the
    tool's schema), so it cannot forge it.

    Example:
        >>> kwargs, context = {"city": "Lyon"}, {"visits": 1}
        >>> inject_context(kwargs, context)
        >>> kwargs["context_variables"] is context
        True
    """
    kwargs[CONTEXT_PARAM] = context_variables


def switch_agent(
    update: StateUpdate,
    trail: Sequence[str],
    source: Agent,
    target_name: str,
    target_key: str,
    *,
    limit: int,
) -> None:
    """**The active agent switches** from ``source`` to the agent ``target_key`` names, in the
    step's ``update`` (the graph then goes to its node). ``trail``: the agents that handed off
    since someone last answered; a chain of ``limit`` handoffs with no answer is a loop
    (:class:`~swarmgraph.graph.core.errors.HandoffLoopError`), where Swarm would go round
    until ``max_turns``.

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> update = {}
        >>> switch_agent(update, ["A"], Agent(name="B"), "A", "a", limit=3)
        >>> update["handoff_trail"], update["active_agent"]
        (['A', 'B'], 'a')
        >>> switch_agent(update, ["A", "B"], Agent(name="A"), "B", "b", limit=3)
        Traceback (most recent call last):
        ...
        swarmgraph.graph.core.errors.HandoffLoopError: ...
    """
    handed = [*trail, source.name]
    if len(handed) >= limit:
        raise HandoffLoopError([*handed, target_name], limit)
    update["handoff_trail"] = handed
    update["active_agent"] = target_key
