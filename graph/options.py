"""Our agent options turned into the middleware they install: the API's side of the middleware
core. ``Agent(history=view)`` is sugar for :class:`~swarmgraph.graph.features.history_views.
HistoryViewMiddleware`, ``Agent(input_guardrails=..., output_guardrails=..., on_trip=...,
requires=...)`` for :class:`~swarmgraph.graph.features.guardrail_middleware.GuardrailsMiddleware`,
``Agent(memory_tools=True)`` for :class:`~swarmgraph.graph.features.memory_tools.
MemoryToolsMiddleware` (its tools join the agent's), ``Agent(routes=[...])`` for
:class:`~swarmgraph.graph.features.routes.RoutesMiddleware`; and a tool's ``CALLER`` brings
:class:`~swarmgraph.graph.features.handback.HandBackMiddleware` (:func:`middleware_for_target`;
both act through the step's ``next_agent`` hook, graph/core/handoffs.py's ``Takeover``). A
run whose tools are marked (``@needs_approval``, ``@effect``) gets the middleware the marks
bring without this module: each feature registers its mark when its module is imported
(graph/core/marks.py), and its injected tool parameters with graph/core/injected.py (their
modules are named up front in graph/__init__.py). The
builder hands :func:`middleware_of` to the graph's runtime, which puts what it returns inside the
agent's own ``Agent(middleware=...)`` (graph/core/runtime.py's ``stack_for``), and to discovery,
which reads the routes' destinations from it. An agent that uses none of them gets none, and
loads no feature.

An option of the whole graph is a middleware of the whole graph: ``context_schema=`` installs
:class:`~swarmgraph.graph.features.context_middleware.ContextSchemaMiddleware` first in the
graph's run middleware (:func:`context_middleware_of`), so it wraps every agent's step. A model
call that may stream is listened to by :func:`stream_listener`
(graph/features/streamed_arguments.py, loaded on the first call that may stream), an object the
builder hands the core.

Example:
    >>> from swarmgraph.graph.features.history_views import last
    >>> from swarmgraph.graph.core.types import Agent
    >>> middleware_of(Agent())
    ()
    >>> [type(m).__name__ for m in middleware_of(Agent(name="Refunds", history=last(2)))]
    ['HistoryViewMiddleware']
    >>> [type(m).__name__ for m in middleware_of(Agent(requires=["order_id"], history=last(2)))]
    ['GuardrailsMiddleware', 'HistoryViewMiddleware']
    >>> [type(m).__name__ for m in middleware_of(Agent(memory_tools=True))]
    ['MemoryToolsMiddleware']
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .core.discovery import reachable_agents as _reachable
from .core.discovery import tool_says
from .core.members import load_kind_on
from .core.types import AGENTS_KEPT, CALLER, Agent, is_compiled_graph

if TYPE_CHECKING:
    from .core.graph_extension import GraphExtension, GraphPlan
    from .core.run_control import PromptContext
    from .core.runtime import ModelListener

__all__ = [
    "FAN_OUT_TRAIT",
    "GRAPH_EXTENSIONS",
    "TOOL_TRAITS",
    "context_middleware_of",
    "fan_out_nodes",
    "fans_out",
    "middleware_for_target",
    "middleware_of",
    "reachable_agents",
    "stream_listener",
    "told_first",
]

# A named compiled LangGraph graph stands for an agent (graph/features/native.py registers its
# member kind): loaded the first time the core meets one, never for a program without one.
load_kind_on(is_compiled_graph, f"{__package__}.features.native")

#: One GuardrailsMiddleware per Agent object, by id (the agent kept, to check the id is still
#: its): a stack is cached by its members, so the same agent must get the same object.
_GUARDS: dict[int, tuple[Agent, Any]] = {}


def middleware_of(agent: Agent) -> Sequence[Any]:
    """The middleware ``agent``'s options install (none for a plain agent): its contracts
    outermost (a refused message never reaches a view), then its history view, memory tools
    and routes."""
    guarded = agent.input_guardrails or agent.output_guardrails or agent.requires is not None
    if not guarded and agent.history is None and not agent.memory_tools and not agent.routes:
        return ()
    found: list[Any] = []
    if guarded:
        found.append(_guard(agent))
    if agent.history is not None:
        found.append(_history_view(agent.history, agent.name))
    if agent.memory_tools:
        found.append(_memory_tools())
    if agent.routes:
        found.append(_routes(agent))
    return tuple(found)


def told_first(prompt_context: PromptContext) -> Callable[[Agent], Sequence[Any]]:
    """What a graph built with ``prompt_context`` installs for each agent: the prompt
    context's middleware (graph/features/prompt_context.py), outermost, then what the agent's
    options install (:func:`middleware_of`).

    Example:
        >>> of = told_first(lambda agent, messages: "Today is Monday.")
        >>> [type(m).__name__ for m in of(Agent(history=lambda messages: messages))]
        ['PromptContextMiddleware', 'HistoryViewMiddleware']
    """
    from .features.prompt_context import prompt_context_of

    told = prompt_context_of(prompt_context)
    return lambda agent: (*told(agent), *middleware_of(agent))


def _guard(agent: Agent) -> Any:
    known = _GUARDS.get(id(agent))
    if known is not None and known[0] is agent:
        return known[1]
    from .features.guardrail_middleware import GuardrailsMiddleware

    if len(_GUARDS) > AGENTS_KEPT:
        _GUARDS.clear()
    guard = GuardrailsMiddleware(agent)
    _GUARDS[id(agent)] = (agent, guard)
    return guard


def middleware_for_target(target: Agent) -> Sequence[Any]:
    """The middleware a handoff target brings into the step that handed to it: ``CALLER``
    brings the hand-back that resolves it (asked first, so a failed hand-back may still
    route); any other target, none.

    Example:
        >>> [type(m).__name__ for m in middleware_for_target(CALLER)]
        ['HandBackMiddleware']
        >>> middleware_for_target(Agent())
        ()
    """
    if target is CALLER:
        return (_hand_back(),)
    return ()


def reachable_agents(agents: Iterable[Agent]) -> list[Agent]:
    """The given agents plus every agent reachable from them (BFS order): through handoffs,
    routes and the other destinations the agents' options declare.

    Example:
        >>> from swarmgraph.graph.features.routes import Route
        >>> done = Agent(name="Done")
        >>> start = Agent(name="Start", routes=[Route(when=lambda ctx: True, to=done)])
        >>> [a.name for a in reachable_agents([start])]
        ['Start', 'Done']
    """
    return _reachable(agents, middleware_of)


@lru_cache(maxsize=AGENTS_KEPT)  # one object per view and agent: a stack is cached by its members
def _history_view(view: Callable[[list], list], name: str) -> Any:
    from .features.history_views import HistoryViewMiddleware

    return HistoryViewMiddleware(view, name)


@lru_cache(maxsize=1)  # stateless: one for every agent, so their stacks share it
def _memory_tools() -> Any:
    from .features.memory_tools import MemoryToolsMiddleware

    return MemoryToolsMiddleware()


@lru_cache(maxsize=1)  # stateless: one for every agent, so their stacks share it
def _hand_back() -> Any:
    from .features.handback import HandBackMiddleware

    return HandBackMiddleware()


def _routes(agent: Agent) -> Any:
    """The agent's :class:`RoutesMiddleware`, one per list of routes (a stack is cached by its
    members), kept on the agent (``Agent._options``): a cache here would keep the routes'
    target agents alive after a request that built them."""
    routes = tuple(agent.routes)
    cached = agent._options
    if cached is not None and cached[0] == routes:
        return cached[1]
    from .features.routes import RoutesMiddleware

    made = RoutesMiddleware(routes, agent.name)
    agent._options = (routes, made)
    return made


def context_middleware_of(schema: Any) -> tuple[Any, ...]:
    """The middleware ``context_schema=`` installs, first of the graph's run middleware: a
    :class:`~swarmgraph.graph.features.context_middleware.ContextSchemaMiddleware` for a
    pydantic model or ``TypedDict`` (or a ``ContextSchema``), one per schema (a stack is cached
    by its members); none for None (Swarm's plain dict: the feature is not loaded).

    Example:
        >>> from typing_extensions import TypedDict
        >>> class Desk(TypedDict):
        ...     order_id: int
        >>> context_middleware_of(Desk), context_middleware_of(None)
        ((ContextSchemaMiddleware(Desk),), ())
        >>> context_middleware_of(Desk)[0] is context_middleware_of(Desk)[0]
        True
    """
    if schema is None:
        return ()
    from .features.context_middleware import ContextSchemaMiddleware
    from .features.context_schema import ContextSchema

    typed = ContextSchema.of(schema)
    found = _TYPED.get(typed.schema)
    if found is None:
        found = _TYPED.setdefault(typed.schema, ContextSchemaMiddleware(typed))
    return (found,)


#: One ContextSchemaMiddleware per schema class (weakly: a schema made per request dies).
_TYPED: weakref.WeakKeyDictionary[type, Any] = weakref.WeakKeyDictionary()


def stream_listener(model: Any, config: Any, kwargs: Any) -> ModelListener | None:
    """What listens to a model call that may stream: streamed tool-call arguments held to the
    rule of non-streamed ones (graph/features/streamed_arguments.py's ``listener_for``; None
    when the call cannot stream). The builder hands it to the core (``GraphRuntime.listen``),
    which asks it only for a call that may stream: a plain run never loads the feature.

    Example:
        >>> from swarmgraph.graph import ScriptedChatModel
        >>> stream_listener(ScriptedChatModel(["hi"]), {}, {}) is None
        True
        >>> type(stream_listener(ScriptedChatModel(["hi"]), {}, {"stream": True})).__name__
        'StreamedArguments'
    """
    from .features.streamed_arguments import listener_for

    return listener_for(model, config, kwargs)


def fan_out_nodes(plan: GraphPlan) -> GraphExtension | None:
    """The branch and join nodes of a fan-out, for a graph with an agent that can fan out (a
    tool that may return ``Parallel``, or several handoffs under ``parallel_handoffs="all"``):
    graph/features/fan_out_nodes.py, through the builder's extension
    (graph/core/graph_extension.py), loaded only for such a graph; ``None`` for any other.

    Example:
        >>> from swarmgraph.graph.core.builder import GraphSettings, build_graph_and_runtime
        >>> from swarmgraph.graph.core.discovery import find_topology
        >>> from swarmgraph.graph.models import ModelResolver
        >>> plain = find_topology([Agent(name="Triage", handoffs=[Agent(name="Sales")])])
        >>> settings = GraphSettings(extensions=(fan_out_nodes,))
        >>> _, runtime = build_graph_and_runtime(plain, ModelResolver(), settings)
        >>> runtime.after_handoffs is None  # nothing fans out: the feature is not even loaded
        True
    """
    topology = plan.topology
    several = plan.settings.parallel_handoffs == "all" and any(
        len(targets) > 1 for targets in topology.targets.values()
    )
    if not topology.traits.get(FAN_OUT_TRAIT) and not several:
        return None
    from .features.fan_out_nodes import fan_out_nodes as nodes

    return nodes(plan)


#: The features with nodes of their own in a swarm's graph (``GraphSettings.extensions``):
#: what ``Swarm`` and ``build_swarm_graph`` hand the builder.
GRAPH_EXTENSIONS = (fan_out_nodes,)

#: The trait of a tool that may return ``Parallel`` (``Topology.traits``).
FAN_OUT_TRAIT = "fan_out"
#: Set on a tool (``True``/``False``) to say whether it may return ``Parallel``
#: (graph/features/parallel.py's ``FANS_OUT_ATTR``: the same name, so the feature's module
#: need not load for discovery to ask).
FANS_OUT_ATTR = "__swarmgraph_fans_out__"


def fans_out(func: Callable[..., Any]) -> bool:
    """Whether a tool may return ``Parallel``: it says so (``__swarmgraph_fans_out__``), or its
    code names ``Parallel`` (graph/core/discovery.py's ``tool_says``). The graph of an agent
    with such a tool gets the branch and join nodes (:func:`fan_out_nodes`). The same test as
    graph/features/parallel.py's ``fans_out``, here so a plain program's discovery asks it
    without loading the feature.

    Example:
        >>> from swarmgraph.graph.features.parallel import Parallel
        >>> def ask_both():
        ...     return Parallel(Agent(name="A"), Agent(name="B"))
        >>> fans_out(ask_both), fans_out(lambda: "42")
        (True, False)
    """
    return tool_says(func, FANS_OUT_ATTR, "Parallel")


#: The tests of a tool the graph depends on, by trait (graph/core/discovery.py's ``Traits``):
#: what ``Swarm`` and ``build_swarm_graph`` hand discovery.
TOOL_TRAITS: Mapping[str, Callable[[Any], bool]] = MappingProxyType({FAN_OUT_TRAIT: fans_out})
