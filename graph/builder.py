"""``build_swarm_graph``: agents become nodes, handoffs become conditional edges.

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
    >>> from swarmgraph.graph import Agent, ScriptedChatModel
    >>> sales = Agent(name="Sales")
    >>> triage = Agent(name="Triage", handoffs=[sales])
    >>> app = build_swarm_graph([triage], chat_model=ScriptedChatModel([])).compile()
    >>> sorted(n for n in app.get_graph().nodes if not n.startswith("__"))
    ['Sales', 'Triage', 'dynamic_handoff']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from .discovery import discover
from .models import ModelResolver
from .native import as_member, member_node
from .node import AgentNode, GraphRuntime
from .node_names import DYNAMIC_NODE, assign_node_names
from .run_control import current_control
from .schema import tool_spec
from .state import SwarmState
from .types import Agent

try:  # a node with both a sync and an async body, without RunnableLambda's tracing cost
    from langgraph._internal._runnable import RunnableCallable
except ImportError:  # pragma: no cover - older/newer LangGraph layouts
    RunnableCallable = None  # type: ignore[assignment,misc]


def build_swarm_graph(
    agents: Sequence[Agent | Any],
    *,
    default_agent: Agent | Any | None = None,
    chat_model: BaseChatModel | Callable[[str], BaseChatModel] | None = None,
    client: Any = None,
    state_schema: type = SwarmState,
    context_schema: type | None = None,
    max_consecutive_handoffs: int = 10,
    resolver: ModelResolver | None = None,
    fixed_entry: bool = False,
) -> StateGraph:
    """Build an uncompiled LangGraph ``StateGraph`` for a swarm of agents.

    ``agents`` need not list everyone: agents reachable through handoff tools are
    found and added. The entry goes to ``state["active_agent"]`` when set (a resumed
    thread), else to ``default_agent`` (default: the first agent). Compile it with
    any checkpointer or store you like. A compiled LangGraph graph with a name (e.g. from
    ``langchain.agents.create_agent(..., name=...)``) may stand for an agent here, in
    ``handoffs`` and as a transfer function's return value (see :mod:`swarmgraph.graph.native`).

    Models come from ``chat_model`` (a LangChain chat model, or ``model_name ->
    chat model``), or ``client`` (an OpenAI-compatible client), or else
    ``ChatOpenAI(model=agent.model)`` on first use. Tool schemas are checked here,
    so an unsupported annotation fails now, not mid-run.

    ``fixed_entry=True`` always starts at ``default_agent`` (a plain ``START`` edge, one
    routing step less per run): for callers that never resume a thread mid-conversation,
    as ``Swarm`` does (it starts every run at the agent it is given).

    Example:
        >>> from swarmgraph.graph import Agent, ScriptedChatModel
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> model = ScriptedChatModel(["Hello Ming."])
        >>> triage = Agent(name="Triage", instructions=lambda ctx: f"Greet {ctx['name']}.")
        >>> builder = build_swarm_graph([triage], chat_model=model)
        >>> app = builder.compile(checkpointer=InMemorySaver())
        >>> out = app.invoke({"messages": [("user", "hi")], "context_variables": {"name": "Ming"}},
        ...                  {"configurable": {"thread_id": "t1"}})
        >>> out["messages"][-1].content, model.calls[0][0].content
        ('Hello Ming.', 'Greet Ming.')
    """
    if not agents:
        raise ValueError("build_swarm_graph needs at least one agent")
    # A compiled LangGraph graph with a name is a member too (graph/native.py runs it).
    agents = [as_member(a) for a in agents]
    default = as_member(default_agent) if default_agent is not None else agents[0]
    everyone, handoffs = discover([default, *agents])
    for agent in everyone:
        for func in agent.tools:
            tool_spec(func)  # raises ToolSchemaError now rather than mid-run
    # Any agent name works: node names are mapped where LangGraph cannot take the name or
    # another agent holds it (two agents both called "Agent" are two nodes).
    nodes = assign_node_names(everyone, taken=[DYNAMIC_NODE])

    runtime = GraphRuntime(
        agents={node: agent for agent, node in nodes.items()},
        resolver=resolver or ModelResolver(client=client, chat_model=chat_model),
        max_consecutive_handoffs=max_consecutive_handoffs,
    )
    builder = StateGraph(state_schema, context_schema=context_schema)
    names = list(nodes.values())
    targets = {agent: [nodes[t] for t in handoffs[id(agent)]] for agent in nodes}
    for agent, name in nodes.items():
        ends = destinations(agent, nodes, targets)
        node = member_node(runtime, agent, AgentNode(runtime, agent, name))
        _add_node(builder, name, node, ends)
    dynamic = member_node(runtime, None, AgentNode(runtime, None, DYNAMIC_NODE))
    _add_node(builder, DYNAMIC_NODE, dynamic, [*names, DYNAMIC_NODE, END])

    if fixed_entry:
        builder.add_edge(START, nodes[default])
    else:

        def route_entry(state: dict, config: RunnableConfig) -> str:
            control = current_control(config)
            if not control.turns_left():
                return END
            key = state.get("active_agent")
            if key is None:
                return nodes[default]
            return runtime.node_for(key, control)

        builder.add_conditional_edges(START, _branch(route_entry), [*names, DYNAMIC_NODE, END])
    # The runtime travels with the builder so Swarm can map names back to Agents.
    builder.swarm_runtime = runtime  # type: ignore[attr-defined]
    return builder


def destinations(
    agent: Agent, nodes: dict[Agent, str], targets: dict[Agent, list[str]]
) -> dict[str, str]:
    """Where ``agent``'s node may go, each with its edge label (LangGraph draws a label that
    differs from the node's name): handoff targets, its own node, the callers a
    ``transfer_back`` returns to, and each route's target, labelled with the route's name."""
    name = nodes[agent]
    ends = dict.fromkeys([name, *targets[agent]])
    if agent.can_return:  # transfer_back goes to whoever can hand off here
        ends.update(dict.fromkeys(nodes[a] for a in nodes if name in targets[a]))
        ends.update(dict.fromkeys(nodes[a] for a in nodes if any(r.to is agent for r in a.routes)))
    ends.update(dict.fromkeys([DYNAMIC_NODE, END]))
    labelled = {node: node for node in ends}
    labels: dict[str, list[str]] = {}
    for route in agent.routes:  # checked by discover()
        target = nodes.get(route.to)
        if target is not None and route.label not in labels.setdefault(target, []):
            labels[target].append(route.label)
    labelled.update({target: " / ".join(names) for target, names in labels.items()})
    return labelled


def _add_node(
    builder: StateGraph, name: str, node: Any, destinations: list[str] | dict[str, str]
) -> None:
    if not isinstance(node, AgentNode):  # a LangGraph member (native.py) returns a plain update
        node = _Routed(node, name)
    if RunnableCallable is not None:
        # Untraced: our nodes stream their model's tokens themselves. A LangGraph member
        # (native.py) is traced, so the messages it adds reach stream_mode="messages" whole.
        trace = getattr(node, "traced", False)
        runnable = RunnableCallable(node.step, node.astep, name=name, trace=trace)
        builder.add_node(name, runnable, destinations=_ends(destinations))
    else:  # pragma: no cover
        builder.add_node(name, node.step, destinations=_ends(destinations))


def _ends(destinations: list[str] | dict[str, str]) -> tuple[str, ...] | dict[str, str]:
    return destinations if isinstance(destinations, dict) else tuple(destinations)


class _Routed:
    """A node that returns a plain update, given the routing our own nodes do themselves:
    after its update, go where :meth:`GraphRuntime.next_node` says (or end)."""

    def __init__(self, node: Any, name: str) -> None:
        self.node, self.name = node, name
        self.traced = getattr(node, "traced", False)
        self.runtime = node.runtime

    def step(self, state: dict, config: RunnableConfig) -> Any:
        return self._route(self.node.step(state, config), state, config)

    async def astep(self, state: dict, config: RunnableConfig) -> Any:
        return self._route(await self.node.astep(state, config), state, config)

    def _route(self, update: Any, state: dict, config: RunnableConfig) -> Any:
        if isinstance(update, Command):  # our own node ran (the dynamic node picks per run)
            return update
        return self.runtime.next_node(self.name, update, state, current_control(config))


def _branch(route: Callable[[dict, RunnableConfig], str]) -> Any:
    """``route`` as a conditional edge with an async twin.

    A plain sync function given to ``add_conditional_edges`` runs in a thread pool on the
    async path (``arun``/``astream``): two thread hops per run, which queue behind each
    other when many runs share one event loop (200 sessions x 5 turns: 3.2 s -> 1.9 s).
    Routing only reads the state, so the async twin calls it inline.
    """
    if RunnableCallable is None:  # pragma: no cover
        return route

    async def aroute(state: dict, config: RunnableConfig) -> str:
        return route(state, config)

    return RunnableCallable(route, aroute, name=route.__name__, trace=False)
