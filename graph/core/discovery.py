"""Find, before anything runs, which agents each agent can hand off to.

A handoff is a tool that returns an ``Agent`` (or a ``Result`` carrying one). A tool that
declares its destination (``__swarmgraph_target__``: the generated ``transfer_to_*`` tools of
``handoffs=``, and ``transfer_back``) is taken at its word, as langgraph-swarm reads its handoff
tools' metadata. A hand-written transfer function declares nothing, so its code is read
instead: closure cells, module globals the function names, ``functools.partial`` arguments and
the functions they wrap. A function that names an agent but never returns it still yields an
edge: the graph shows every *possible* handoff, and a handoff nobody could see in advance still
works at run time (see ``builder``).

Example:
    >>> from swarmgraph.graph.core.types import Agent
    >>> sales = Agent(name="Sales")
    >>> def transfer_to_sales():
    ...     return sales
    >>> triage = Agent(name="Triage", functions=[transfer_to_sales])
    >>> [a.name for a in handoff_targets(triage)]
    ['Sales']
    >>> [a.name for a in reachable_agents([triage])]
    ['Triage', 'Sales']
    >>> list(find_topology([triage]).agents)  # node name -> agent, in the same order
    ['Triage', 'Sales']
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any

from .marks import any_marked
from .members import as_member, members_in
from .middleware_tools import LANGCHAIN_TOOL
from .node_names import DYNAMIC_NODE, HELPER_NODES, assign_node_names
from .types import CALLER, Agent

#: The attribute a handoff tool declares its destination in (set by ``types.transfer_tool``).
_TARGET_ATTR = "__swarmgraph_target__"
#: The metadata key a LangChain handoff tool names its destination agent by (langgraph-swarm's
#: ``create_handoff_tool``, whose ``Command(goto=name)`` the step follows at run time).
HANDOFF_DESTINATION = "__handoff_destination"
_UNDECLARED = object()


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):  # nested functions and comprehensions
            names |= _code_names(const)
    return names


def _agents_in(value: Any) -> list[Agent]:
    # CALLER stands for "whoever handed off here": never a node of its own.
    if isinstance(value, Agent):
        return [value] if value is not CALLER else []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [a for v in value for a in _one_agent(v)]
    if isinstance(value, dict):
        return [a for v in value.values() for a in _one_agent(v)]
    return members_in(value)  # another kind of member (graph/core/members.py)


def _one_agent(value: Any) -> list[Agent]:
    if isinstance(value, Agent):
        return [value] if value is not CALLER else []
    return members_in(value)


def _held(func: Callable[..., Any]) -> list[Any]:
    """What ``func`` names, where :func:`function_targets` looks for agents: its declared
    target (then nothing else), partial arguments, closure cells and the module globals its
    code names, wrapped functions included."""
    found: list[Any] = []
    seen: set[int] = set()
    add = found.append

    def visit(f: Any) -> None:
        if id(f) in seen:
            return
        seen.add(id(f))
        target = getattr(f, _TARGET_ATTR, _UNDECLARED)
        if target is not _UNDECLARED:
            add(target)
            return
        if isinstance(f, functools.partial):
            for value in (*f.args, *f.keywords.values()):
                add(value)
            visit(f.func)
            return
        if isinstance(f, types.MethodType):
            visit(f.__func__)
            return
        wrapped = getattr(f, "__wrapped__", None)
        if wrapped is not None:
            visit(wrapped)
        code = getattr(f, "__code__", None)
        if code is None:
            return
        for cell in getattr(f, "__closure__", None) or ():
            try:
                add(cell.cell_contents)
            except ValueError:  # an empty cell (variable not bound yet)
                continue
        module_globals = getattr(f, "__globals__", {})
        for name in sorted(_code_names(code)):
            if name in module_globals:
                add(module_globals[name])

    visit(func)
    return found


def function_targets(func: Callable[..., Any]) -> list[Agent]:
    """Agents a tool function may hand off to, in first-seen order: the destination the tool
    declares (``__swarmgraph_target__``), else what its code, closure and partial arguments name.

    Example:
        >>> from swarmgraph.graph.core.types import Agent
        >>> a, b = Agent(name="A"), Agent(name="B")
        >>> def make(target):
        ...     def go():
        ...         return target
        ...     return go
        >>> [t.name for t in function_targets(make(b))]
        ['B']
    """
    found = [agent for value in _held(func) for agent in _agents_in(value)]
    unique: dict[int, Agent] = {}
    for agent in found:
        unique.setdefault(id(agent), agent)
    return list(unique.values())


def handoff_targets(agent: Agent) -> list[Agent]:
    """Every agent ``agent`` may hand off to (never itself), in first-seen order."""
    unique: dict[int, Agent] = {}
    for func in agent.tools:
        for target in function_targets(func):
            if target is not agent:
                unique.setdefault(id(target), target)
    return list(unique.values())


#: What an agent's options install as middleware (graph/options.py's ``middleware_of``), as
#: the builder and ``Swarm`` hand it to discovery.
Options = Callable[[Agent], Sequence[Any]]
#: Tests of a tool that features need answered before the graph is built, by name (the API
#: layer's, graph/options.py's ``TOOL_TRAITS``): ``Topology.traits`` holds, for each, the
#: nodes of the agents with a tool that passes it, and the graph depends on them.
Traits = Mapping[str, Callable[[Any], bool]]


def declared_destinations(agent: Agent, options: Options | None = None) -> list[tuple[Agent, str]]:
    """``(agent, edge label)`` for every destination ``agent``'s middleware declares (the
    ``destinations`` of what its options install, then of its own ``Agent(middleware=)``:
    graph/core/middleware.py's ``Destination``), e.g. its routes' targets."""
    found: list[tuple[Agent, str]] = []
    every = [*(options(agent) if options is not None else ()), *getattr(agent, "middleware", ())]
    for m in every:
        for destination in getattr(m, "destinations", None) or ():
            found.append((destination[0], destination[1]))
    return found


def discover(
    agents: Iterable[Agent], options: Options | None = None
) -> tuple[list[Agent], dict[int, list[Agent]], dict[int, list[tuple[Agent, str]]]]:
    """The given agents plus every agent reachable from them through handoffs and the
    destinations their middleware declares (routes), in breadth-first order; each one's
    handoff targets by ``id``; and each one's declared destinations with their labels, by
    ``id`` (each agent's tools are read once: the walk, the builder and Swarm's topology key
    all need them). ``options``: what an agent's options install (graph/options.py's
    ``middleware_of``); without it only ``Agent(middleware=)``'s declarations are read."""
    order: list[Agent] = []
    targets: dict[int, list[Agent]] = {}
    declared: dict[int, list[tuple[Agent, str]]] = {}
    queue = [a if isinstance(a, Agent) else as_member(a) for a in agents]
    while queue:
        agent = queue.pop(0)
        if id(agent) in targets:
            continue
        targets[id(agent)] = handoff_targets(agent)
        declared[id(agent)] = declared_destinations(agent, options)
        order.append(agent)
        queue.extend(targets[id(agent)])
        queue.extend(to for to, _ in declared[id(agent)])  # middleware switch agents too
        if agent.on_trip is not None:  # so does a tripped guardrail
            queue.append(agent.on_trip)
    _add_named_targets(order, targets)
    return order, targets, declared


def _add_named_targets(agents: list[Agent], targets: dict[int, list[Agent]]) -> None:
    """Add to each agent's handoff targets the agents its LangChain handoff tools name
    (:data:`HANDOFF_DESTINATION`) that are among ``agents``; a name no agent here has draws no
    edge (the run answers such a handoff with an error the model reads)."""
    by_name: dict[str, Agent] = {}
    for agent in agents:
        by_name.setdefault(agent.name, agent)  # the first of a name, as the runtime finds it
    for agent in agents:
        found = targets[id(agent)]
        for func in agent.tools:
            metadata = getattr(getattr(func, LANGCHAIN_TOOL, None), "metadata", None)
            name = metadata.get(HANDOFF_DESTINATION) if isinstance(metadata, dict) else None
            target = by_name.get(name) if isinstance(name, str) else None
            if target is not None and target is not agent and all(t is not target for t in found):
                found.append(target)


def reachable_agents(agents: Iterable[Agent], options: Options | None = None) -> list[Agent]:
    """The given agents plus every agent reachable from them through handoffs (BFS order);
    ``options`` as :func:`discover` takes it (graph/options.py's ``reachable_agents`` passes
    the API's, so routes' targets are found)."""
    return discover(agents, options)[0]


#: Reads an agent's ``functions`` (C-level, for the identity check in ``Swarm``).
FUNCTIONS = attrgetter("functions")


@dataclass(frozen=True)
class Topology:
    """The agents reachable from a start, found once: what a compiled graph is built from.

    ``agents``: node name -> agent, in discovery order (names from
    :func:`~swarmgraph.graph.core.node_names.assign_node_names`); ``nodes``: the reverse;
    ``targets``: each agent's handoff targets, by ``id``; ``declared``: the destinations its
    middleware declares (routes), ``(agent, label)`` by ``id``. ``key`` is what the compiled
    graph depends on: every agent's node name, type (ours, or another member kind's), the nodes it
    can hand off to, its declared destinations' (node, label), ``can_return``, the traits its
    tools have, its ``on_trip`` fallback and what it ``requires`` (both drawn). Two agent sets
    with the same key share one compiled graph (``Swarm`` caches by it).
    """

    agents: dict[str, Agent]
    nodes: dict[Agent, str]
    targets: dict[int, list[Agent]]
    key: tuple
    #: For each trait discovery was given (:data:`Traits`), the node names of the agents with
    #: a tool that has it (a feature's graph extension reads them: graph/core/graph_extension.py).
    traits: dict[str, frozenset[str]] = field(default_factory=dict)
    #: A tool of these agents carries a mark a feature registered, or takes an injected
    #: parameter that brings middleware (graph/core/marks.py): runs get that middleware.
    marked: bool = False
    #: Every agent's ``functions`` as discovery read them: ``marked`` holds while they are
    #: still these (``Swarm`` checks by identity before each run: an agent is a config
    #: object a program may change between runs).
    functions: tuple[Any, ...] = ()
    #: Each agent's middleware-declared destinations (routes), ``(agent, label)``, by ``id``.
    declared: dict[int, list[tuple[Agent, str]]] = field(default_factory=dict)

    def declared_of(self, agent: Agent) -> list[tuple[Agent, str]]:
        """``agent``'s declared destinations (none for an agent this topology did not find)."""
        return self.declared.get(id(agent), [])


def find_topology(
    start: Iterable[Agent], options: Options | None = None, traits: Traits | None = None
) -> Topology:
    """The :class:`Topology` of ``start`` and every agent reachable from it (``options``: what
    an agent's options install, as :func:`discover` takes it; ``traits``: the tests of a tool
    whose answers the graph depends on, :data:`Traits`)."""
    everyone, targets, declared = discover(start, options)
    nodes = assign_node_names(everyone, taken=[DYNAMIC_NODE, *HELPER_NODES])
    found = {
        trait: frozenset(nodes[a] for a in everyone if any(map(test, a.tools)))
        for trait, test in (traits or {}).items()
    }
    key = tuple(
        (
            nodes[agent],
            type(agent),
            tuple(nodes[t] for t in targets[id(agent)]),
            tuple((nodes[to], label) for to, label in declared[id(agent)]),  # drawn, labelled
            agent.can_return,
            tuple(trait for trait, has in found.items() if nodes[agent] in has),
            agent.on_trip and nodes[agent.on_trip],  # drawn edges: the fallback, what it needs
            _drawn(agent.requires),
            # the graph's state holds each middleware's state_schema fields
            tuple(m.state_schema for m in getattr(agent, "middleware", ())),
        )
        for agent in everyone
    )
    agents = {node: agent for agent, node in nodes.items()}
    marked = any(any_marked(agent.tools) for agent in everyone)
    functions = tuple(chain.from_iterable(map(FUNCTIONS, everyone)))
    return Topology(agents, nodes, targets, key, found, marked, functions, declared)


def _drawn(requires: Any) -> Any:
    """What the drawing of the edges into an agent depends on, of its ``requires``: the keys,
    or a function's name (agents built per request bring fresh functions with one name)."""
    if requires is None or not callable(requires):
        return None if requires is None else tuple(requires)
    return getattr(requires, "__name__", type(requires).__name__)


def tool_says(func: Callable[..., Any], attribute: str, name: str) -> bool:
    """Whether a tool says it does something: by ``attribute`` (``True``/``False`` set on it or
    on what it wraps), or else by naming ``name`` in its code (closures and wrapped functions
    too, read as discovery reads handoff targets). What a feature asks of the tools before
    the graph is built, through a trait the API layer hands discovery (:func:`find_topology`).

    Example:
        >>> def ask_both():
        ...     return Gather()  # a value some feature gives meaning to
        >>> def lookup():
        ...     return "42"
        >>> tool_says(ask_both, "__gathers__", "Gather"), tool_says(lookup, "__gathers__", "Gather")
        (True, False)
        >>> lookup.__gathers__ = True
        >>> tool_says(lookup, "__gathers__", "Gather")
        True
    """
    seen: set[int] = set()

    def visit(f: Any) -> bool:
        if id(f) in seen:
            return False
        seen.add(id(f))
        declared = getattr(f, attribute, None)
        if declared is not None:
            return bool(declared)
        if isinstance(f, functools.partial):
            return visit(f.func)
        if isinstance(f, types.MethodType):
            return visit(f.__func__)
        wrapped = getattr(f, "__wrapped__", None)
        if wrapped is not None and visit(wrapped):
            return True
        code = getattr(f, "__code__", None)
        return code is not None and name in _code_names(code)

    return visit(func)
