"""Graph node names for agents: any agent name works, as in Swarm.

An agent's name is free text (``"Support: Tier 1"``, ``"Sales|EU"``, ``"__start__"``,
Swarm's default ``"Agent"`` for every agent), but a LangGraph node name may not contain
``:`` or ``|``, may not be ``__start__``/``__end__``, and must be unique. Node names are
ours to choose, so each agent gets one:

* a name LangGraph accepts that no earlier agent holds stays exactly as it is (so the
  usual case, and every checkpoint written before this mapping existed, is unchanged);
* otherwise ``:`` and ``|`` become ``_`` and, if that is still taken or reserved, ``#2``,
  ``#3``... is appended (the first free one).

The mapping depends only on the agents' names and their discovery order, so the same
swarm gets the same node names in every process. Everything a person reads (``sender``,
``Response.agent``, the handoff message ``{"assistant": name}``, debug output, drawings)
keeps the real name; only graph internals (node ids, ``state["active_agent"]``) use these.

Example:
    >>> from swarmgraph.graph.core.types import Agent
    >>> agents = [Agent(name="Support: Tier 1"), Agent(name="Agent"), Agent(name="Agent"),
    ...           Agent(name="__start__"), Agent(name="Sales")]
    >>> list(assign_node_names(agents).values())
    ['Support_ Tier 1', 'Agent', 'Agent#2', '__start__#2', 'Sales']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from langgraph.graph import END, START

from .types import Agent

#: The node that runs agents nobody could find before the run (see ``builder``).
DYNAMIC_NODE = "dynamic_handoff"
#: The nodes a graph whose agents can fan out gets (see ``branches``): never an agent's.
HELPER_NODES = ("parallel_branch", "parallel_join")

#: ``Swarm(parallel_handoffs=...)``: when one reply calls several transfer tools, ``"last"``
#: runs them all and takes the last (Swarm's behaviour, the default), ``"first"`` takes the
#: first and does not run the later ones, and ``"all"`` runs every target as one ``Parallel``
#: (graph/features/parallel.py), each transfer call answered with its own branch's answer.
HANDOFF_MODES = ("last", "first", "all")

_RESERVED = frozenset({START, END, DYNAMIC_NODE})
# LangGraph's namespace separators (NS_SEP, NS_END): not allowed inside a node name.
_FORBIDDEN = re.compile(r"[|:]")


def accepted_as_is(name: str) -> bool:
    """Whether LangGraph (and this package) take ``name`` as a node name unchanged.

    Example:
        >>> accepted_as_is("Refunds Team"), accepted_as_is("Sales|EU"), accepted_as_is("")
        (True, False, False)
    """
    return bool(name) and name not in _RESERVED and not _FORBIDDEN.search(name)


def assign_node_names(agents: Sequence[Agent], taken: Iterable[str] = ()) -> dict[Agent, str]:
    """A unique node name for each agent (see the module docstring), in the given order.

    ``taken`` are names no agent may get (nodes the caller adds besides the agents).
    """
    used = set(taken)
    names: dict[Agent, str] = {}
    # First pass: names LangGraph accepts keep themselves (the first agent holding one wins),
    # so a mapped name can never push a literal "Sales_EU" agent off its own name.
    for agent in agents:
        if accepted_as_is(agent.name) and agent.name not in used:
            names[agent] = agent.name
            used.add(agent.name)
    for agent in agents:
        if agent in names:
            continue
        base = _FORBIDDEN.sub("_", agent.name) or "Agent"
        candidate, n = base, 2
        while candidate in used or candidate in _RESERVED:
            candidate, n = f"{base}#{n}", n + 1
        names[agent] = candidate
        used.add(candidate)
    return {agent: names[agent] for agent in agents}
