"""The core's builder: agents become nodes, handoffs become conditional edges (the API's
``build_swarm_graph``, graph/swarm_graph.py, turns its options into :class:`GraphSettings`).

Each agent node does one Swarm turn per step: build the instructions from the
current context, call the agent's model, run the tool calls it asked for, and
switch the active agent if a tool handed off. The node itself then goes
(``Command(goto=...)``; every possible destination is declared, so the drawn graph
shows each one as a conditional edge)

- to ``END`` when the model replied without tool calls (or tools are not executed,
  or ``max_turns`` is used up),
- back to the same node when tools ran and nobody handed off (the model speaks again),
- to the target agent's node after a handoff.

Every target the code can name is a drawn edge; a handoff to an agent nobody could
find in advance goes through one extra node, ``dynamic_handoff``.

Example:
    >>> from swarmgraph.graph.core.discovery import find_topology
    >>> from swarmgraph.graph.core.types import Agent
    >>> from swarmgraph.graph.models import ModelResolver
    >>> triage = Agent(name="Triage", handoffs=[Agent(name="Sales")])
    >>> builder, _ = build_graph_and_runtime(find_topology([triage]), ModelResolver())
    >>> sorted(n for n in builder.compile().get_graph().nodes if not n.startswith("__"))
    ['Sales', 'Triage', 'dynamic_handoff']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send

from .discovery import Topology
from .graph_extension import ExtraNode, GraphExtension, GraphPlan, MakeExtension
from .members import MemberNode, member_kinds, node_of
from .node import AgentNode
from .node_names import DYNAMIC_NODE, HANDOFF_MODES
from .run_control import NO_HOOKS, RunHooks, current_control
from .runtime import ChatModels, GraphRuntime
from .schema import tool_spec
from .state import StateUpdate, SwarmState
from .types import Agent

try:  # a node with both a sync and an async body, without RunnableLambda's tracing cost
    from langgraph._internal._runnable import RunnableCallable
except ImportError:  # pragma: no cover - older/newer LangGraph layouts
    RunnableCallable = None  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from .runtime import ModelListener

__all__ = ["GraphSettings", "build_graph_and_runtime", "destinations"]


@dataclass(frozen=True)
class GraphSettings:
    """The builder's options, as one object (graph/swarm_graph.py's ``build_swarm_graph`` takes
    them as keywords; ``Swarm`` makes one per Swarm). See ``build_swarm_graph`` for each;
    ``lookup`` finds an agent outside the graph by name (see :class:`GraphRuntime`), ``resumes``:
    the entry asks the extensions where a resumed run goes on (:meth:`GraphExtension.entry`:
    e.g. a fan-out that paused for approval in a stateless run, ``Swarm.run(..., branches=)``)."""

    state_schema: type = SwarmState
    runtime_schema: type | None = None
    max_consecutive_handoffs: int = 10
    fixed_entry: bool = False
    lookup: Callable[[str], Agent | None] | None = None
    parallel_handoffs: str = "last"
    resumes: bool = False
    input_schema: type | None = None
    #: The graph's own ``prompt_context`` and ``tool_inputs``, as one object (each used when a
    #: run brings none: ``GraphRuntime.hooks``; the prompt context through the middleware the
    #: API installs with each agent's ``options``).
    hooks: RunHooks = NO_HOOKS
    #: The run's middleware, around each agent's own (graph/core/middleware.py).
    middleware: tuple[Any, ...] = ()
    #: What an agent's options install as middleware (graph/options.py's ``middleware_of``:
    #: ``Agent(history=...)``); None, options install nothing.
    options: Callable[[Agent], Sequence[Any]] | None = None
    #: The middleware a handoff target brings (graph/options.py's ``middleware_for_target``:
    #: ``CALLER`` brings the hand-back that resolves it); None, targets bring none.
    target_options: Callable[[Agent], Sequence[Any]] | None = None
    #: What listens to a model call that may stream (a handler in the config, a model that
    #: streams of itself): ``(runnable, config, kwargs) -> ModelListener or None``
    #: (graph/options.py's ``stream_listener``: streamed tool-call arguments held to the rule of
    #: non-streamed ones); None, nothing.
    listen: Callable[[Any, Any, Any], ModelListener | None] | None = None
    #: The ``StateGraph`` class of the graph (``build_swarm_graph``'s observes each invoke:
    #: graph/observed_graph.py; ``Swarm`` runs its own, observed by the run).
    graph_class: type[StateGraph] = StateGraph
    #: Factories of the features that add nodes of their own (graph/core/graph_extension.py;
    #: graph/options.py's ``GRAPH_EXTENSIONS``).
    extensions: tuple[MakeExtension, ...] = ()


def build_graph_and_runtime(
    topology: Topology, resolver: ChatModels, settings: GraphSettings = GraphSettings()
) -> tuple[StateGraph, GraphRuntime]:
    """``build_swarm_graph`` for a :class:`Topology` already found (its first agent is
    the default), and the :class:`GraphRuntime` its nodes share: ``Swarm`` keeps both, to
    hand each run its own agents and map node names back to them.

    Example:
        >>> from swarmgraph.graph import Agent
        >>> from swarmgraph.graph.core.discovery import find_topology
        >>> from swarmgraph.graph.models import ModelResolver
        >>> triage = Agent(name="Triage", handoffs=[Agent(name="Sales")])
        >>> builder, runtime = build_graph_and_runtime(find_topology([triage]), ModelResolver())
        >>> list(runtime.agents), runtime.default is triage
        (['Triage', 'Sales'], True)
    """
    state_schema = settings.state_schema
    parallel_handoffs, runtime_schema = settings.parallel_handoffs, settings.runtime_schema
    if parallel_handoffs not in HANDOFF_MODES:
        raise ValueError(
            f"parallel_handoffs must be 'last', 'first' or 'all', got {parallel_handoffs!r}"
        )
    nodes = topology.nodes
    for agent in nodes:
        for func in agent.tools:
            tool_spec(func)  # raises ToolSchemaError now rather than mid-run
    own_state = state_schema is SwarmState  # the channels join the output only over our state
    runtime = GraphRuntime(
        topology.agents, resolver, settings.max_consecutive_handoffs, settings.lookup
    )
    runtime.hooks = settings.hooks
    runtime.options = settings.options
    runtime.target_options = settings.target_options
    runtime.listen = settings.listen
    every = [*settings.middleware, *(m for a in nodes for m in getattr(a, "middleware", ()))]
    if every:  # their state_schema fields are channels of the graph's state
        from .middleware import middleware_state_schema

        runtime.middleware = list(settings.middleware)
        state_schema = middleware_state_schema(state_schema, every)
    runtime.first_handoff_wins = parallel_handoffs == "first"

    def graph(extensions: Sequence[GraphExtension]) -> StateGraph:  # a subgraph's (a branch's)
        return _graph(
            topology, runtime, extensions, state_schema, runtime_schema, outputs=own_state
        )

    # Features with nodes of their own (a fan-out's branch and join): graph/core/graph_extension.py.
    plan = GraphPlan(topology, runtime, settings, state_schema, graph)
    extensions = [e for make in settings.extensions if (e := make(plan)) is not None]
    builder = _graph(
        topology,
        runtime,
        extensions,
        state_schema,
        runtime_schema,
        outputs=own_state,
        fixed_entry=settings.fixed_entry,
        resumes=settings.resumes,
        kind=settings.graph_class,
        input_schema=settings.input_schema,
    )
    runtime.state_keys = frozenset(builder.channels)
    return builder, runtime


def _graph(
    topology: Topology,
    runtime: GraphRuntime,
    extensions: Sequence[GraphExtension],
    state_schema: type,
    runtime_schema: type | None,
    *,
    outputs: bool = False,
    fixed_entry: bool = False,
    resumes: bool = False,
    input_schema: type | None = None,
    kind: type[StateGraph] = StateGraph,
) -> StateGraph:
    """The StateGraph of ``topology``'s agents (its nodes share ``runtime``), with what the
    ``extensions`` add. ``resumes``: the entry asks them where a resumed run goes on
    (``Swarm.run(..., branches=)``); a branch's own graph never does."""
    nodes = topology.nodes
    # An extension's own channels are part of the output, so LangGraph's server streams
    # them in "updates" (it leaves out what the output schema does not name).
    output = [e.output_schema for e in extensions if e.output_schema is not None]
    builder: StateGraph = kind(
        state_schema,
        context_schema=runtime_schema,
        input_schema=input_schema,
        output_schema=output[0] if output and outputs else None,
    )
    names = list(topology.agents)
    targets = {agent: [nodes[t] for t in topology.targets[id(agent)]] for agent in nodes}
    declared = {agent: topology.declared_of(agent) for agent in nodes}
    for agent, name in nodes.items():
        ends = destinations(agent, nodes, targets, declared, runtime.options)
        for extension in extensions:  # e.g. a fanning agent's step goes to the branch node
            extension.agent_ends(agent, name, ends)
        _add_node(builder, name, _node_for(runtime, agent, name), ends)
    dynamic = _DynamicNode(runtime, AgentNode(runtime, None, DYNAMIC_NODE))
    dynamic_ends = [*names, DYNAMIC_NODE, END]
    entry_ends = [*names, DYNAMIC_NODE, END]
    for extension in extensions:
        dynamic_ends.extend(extension.dynamic_ends)
        for extra in extension.nodes():
            _add_step(builder, extra)
    _add_node(builder, DYNAMIC_NODE, dynamic, dynamic_ends)

    entering = list(extensions) if resumes else []
    if fixed_entry and not entering:
        builder.add_edge(START, runtime.default_node)
        return builder
    resumed = [n for e in entering for n in e.entry_ends]

    # ``Mapping``, not ``SwarmState``: LangGraph adds a branch's annotated input schema to the
    # graph's, and a typed context declares context_variables differently.
    def route_entry(state: Mapping[str, Any], config: RunnableConfig) -> str | list[Send]:
        for extension in entering:  # a paused run goes on where an extension left it
            goes = extension.entry(state, config)
            if goes is not None:
                return goes
        control = current_control(config)
        if not control.turns_left():
            return END
        key = state.get("active_agent")
        if key is None or fixed_entry:
            return runtime.default_node
        return runtime.node_for(key, control)

    entry_ends = [runtime.default_node, *resumed, END] if fixed_entry else entry_ends + resumed
    builder.add_conditional_edges(START, _branch(route_entry), entry_ends)
    return builder


def destinations(
    agent: Agent,
    nodes: dict[Agent, str],
    targets: dict[Agent, list[str]],
    declared: Mapping[Agent, list[tuple[Agent, str]]] | None = None,
    options: Callable[[Agent], Sequence[Any]] | None = None,
) -> dict[str, str]:
    """Where ``agent``'s node may go, each with its edge label (LangGraph draws a label that
    differs from the node's name): handoff targets, its own node, the callers a
    ``transfer_back`` returns to, and each destination its middleware declares
    (``declared``: ``Topology.declared_of``, e.g. a route's target, labelled with its name);
    the fallbacks a tripped guardrail hands to (``on_trip``); an edge into an agent says what
    the target's middleware says of it (``handoff_label``, e.g. what ``requires=`` needs:
    ``options`` is graph/options.py's ``middleware_of``)."""
    name = nodes[agent]
    ends = dict.fromkeys([name, *targets[agent]])
    declared = declared or {}
    if agent.can_return:  # transfer_back goes to whoever can hand off here
        ends.update(dict.fromkeys(nodes[a] for a in nodes if name in targets[a]))
        routed = [a for a in nodes if any(to is agent for to, _ in declared.get(a, ()))]
        ends.update(dict.fromkeys(nodes[a] for a in routed))
    labels: dict[str, list[str]] = {}
    for to, label in declared.get(agent, ()):  # found by discover()
        target = nodes.get(to)
        if target is not None and label not in labels.setdefault(target, []):
            labels[target].append(label)
    # A tripped guardrail hands to a fallback: this agent's own, or one of an agent it enters.
    by_node = {node: a for a, node in nodes.items()}
    for entered in [by_node[n] for n in [*ends, *labels] if n in by_node]:
        fallback = entered.on_trip
        if fallback in nodes and nodes[fallback] not in ends and nodes[fallback] not in labels:
            labels[nodes[fallback]] = ["on_trip"]
    ends.update(dict.fromkeys([DYNAMIC_NODE, END]))
    labelled = {node: node for node in ends}
    for target_agent, target in nodes.items():
        entering = target != name and (target in ends or target in labels)
        if entering:
            said = [*(options(target_agent) if options else ()), *target_agent.middleware]
            for m in said:
                drawn = getattr(m, "handoff_label", None)
                if isinstance(drawn, str):
                    labels.setdefault(target, []).append(drawn)
    labelled.update({target: " / ".join(names) for target, names in labels.items() if names})
    return labelled


def _add_node(
    builder: StateGraph, name: str, node: Any, destinations: list[str] | dict[str, str]
) -> None:
    if not isinstance(node, AgentNode):  # another kind's member node returns a plain update
        node = _Routed(node, name)
    if RunnableCallable is not None:
        # Untraced: our nodes stream their model's tokens themselves. Another kind's member
        # node may be traced, so the messages it adds reach stream_mode="messages" whole.
        trace = getattr(node, "traced", False)
        runnable = RunnableCallable(node.step, node.astep, name=name, trace=trace)
        builder.add_node(name, runnable, destinations=_ends(destinations))
    else:  # pragma: no cover
        builder.add_node(name, node.step, destinations=_ends(destinations))


def _add_step(builder: StateGraph, extra: ExtraNode) -> None:
    """An extension's node (graph/core/graph_extension.py): it routes itself (``Command``), and
    reads ``extra.input_schema`` (e.g. a ``Send``'s task, or the state with what a fan-out keeps
    until its join)."""
    node, name = extra.node, extra.name
    runnable: Any = node.step
    if RunnableCallable is not None:
        runnable = RunnableCallable(node.step, node.astep, name=name, trace=False)
    builder.add_node(
        name,
        runnable,
        destinations=extra.destinations,
        input_schema=extra.input_schema,
        defer=extra.defer,
    )


def _ends(destinations: list[str] | dict[str, str]) -> tuple[str, ...] | dict[str, str]:
    return destinations if isinstance(destinations, dict) else tuple(destinations)


class _Routed:
    """A node that returns a plain update, given the routing our own nodes do themselves:
    after its update, go where :meth:`GraphRuntime.next_node` says (or end)."""

    def __init__(self, node: Any, name: str) -> None:
        self.node, self.name = node, name
        self.traced = getattr(node, "traced", False)
        self.runtime: GraphRuntime = node.runtime
        self.agent: Agent | None = getattr(node, "agent", None)  # drawing.py reads it

    def step(self, state: SwarmState, config: RunnableConfig) -> StateUpdate | Command:
        return self._route(self.node.step(state, config), state, config)

    async def astep(self, state: SwarmState, config: RunnableConfig) -> StateUpdate | Command:
        return self._route(await self.node.astep(state, config), state, config)

    def _route(
        self, update: StateUpdate | Command, state: SwarmState, config: RunnableConfig
    ) -> StateUpdate | Command:
        if isinstance(update, Command):  # our own node ran (the dynamic node picks per run)
            return update
        return self.runtime.next_node(self.name, update, state, current_control(config))


def _branch(route: Callable[[Mapping[str, Any], RunnableConfig], Any]) -> Any:
    """``route`` as a conditional edge with an async twin.

    A plain sync function given to ``add_conditional_edges`` runs in a thread pool on the
    async path (``arun``/``astream``): two thread hops per run, which queue behind each
    other when many runs share one event loop (200 sessions x 5 turns: 3.2 s -> 1.9 s).
    Routing only reads the state, so the async twin calls it inline.
    """
    if RunnableCallable is None:  # pragma: no cover
        return route

    async def aroute(state: Mapping[str, Any], config: RunnableConfig) -> Any:
        return route(state, config)

    return RunnableCallable(route, aroute, name=route.__name__, trace=False)


def _node_for(runtime: GraphRuntime, agent: Agent, name: str) -> Any:
    """The node for ``agent``: ours, or its member kind's (graph/core/members.py)."""
    theirs = node_of(runtime, agent, name) if member_kinds() else None
    return theirs if theirs is not None else AgentNode(runtime, agent, name)


class _DynamicNode:
    """The dynamic-handoff node: runs whichever unforeseen member is active, ours or another
    kind's (graph/core/members.py: only once a kind is registered)."""

    traced = True

    def __init__(self, runtime: GraphRuntime, ours: AgentNode) -> None:
        self.ours = ours
        self.runtime = runtime
        self._theirs: dict[int, MemberNode] = {}  # by kind: the node that runs its members

    def _pick(self, state: SwarmState, config: RunnableConfig) -> Any:
        kinds = member_kinds()
        if not kinds:
            return self.ours
        agent = self.runtime.agent_for(state.get("active_agent"), current_control(config))
        for kind in kinds:
            if kind.owns(agent):
                node = self._theirs.get(id(kind))
                if node is None:
                    node = self._theirs.setdefault(id(kind), kind.node(self.runtime, None, ""))
                return node
        return self.ours

    def step(self, state: SwarmState, config: RunnableConfig) -> Any:
        return self._pick(state, config).step(state, config)

    async def astep(self, state: SwarmState, config: RunnableConfig) -> Any:
        return await self._pick(state, config).astep(state, config)
