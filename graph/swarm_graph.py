"""``build_swarm_graph``: the API's builder. Swarm's options and ours become the settings and
middleware of graph/core/builder.py's ``build_graph_and_runtime``, which makes agents nodes and
handoffs conditional edges.

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
from langgraph.graph import StateGraph

from .core.builder import GraphSettings, build_graph_and_runtime
from .core.discovery import find_topology
from .core.members import as_member
from .core.run_control import NO_HOOKS, PromptContext, RunHooks, ToolInputs
from .core.state import SwarmState
from .core.types import Agent, check_middleware
from .models import ModelResolver
from .observed_graph import ObservedStateGraph
from .options import (
    GRAPH_EXTENSIONS,
    TOOL_TRAITS,
    context_middleware_of,
    middleware_for_target,
    middleware_of,
    stream_listener,
    told_first,
)

__all__ = ["api_settings", "build_swarm_graph", "checked_middleware"]


def build_swarm_graph(
    agents: Sequence[Agent | Any],
    *,
    default_agent: Agent | Any | None = None,
    chat_model: BaseChatModel | Callable[[str], BaseChatModel] | None = None,
    client: Any = None,
    state_schema: type = SwarmState,
    context_schema: type | None = None,
    runtime_schema: type | None = None,
    max_consecutive_handoffs: int = 10,
    fixed_entry: bool = False,
    parallel_handoffs: str = "last",
    input_schema: type | None = None,
    prompt_context: PromptContext | None = None,
    tool_inputs: ToolInputs | None = None,
    middleware: Sequence[Any] = (),
) -> StateGraph:
    """Build an uncompiled LangGraph ``StateGraph`` for a swarm of agents.

    ``agents`` need not list everyone: agents reachable through handoff tools are
    found and added. The entry goes to ``state["active_agent"]`` when set (a resumed
    thread), else to ``default_agent`` (default: the first agent). Compile it with
    any checkpointer or store you like. A compiled LangGraph graph with a name (e.g. from
    ``langchain.agents.create_agent(..., name=...)``) may stand for an agent here, in
    ``handoffs`` and as a transfer function's return value (a member of another kind:
    graph/core/members.py).

    Models come from ``chat_model`` (a LangChain chat model, or ``model_name ->
    chat model``), or ``client`` (an OpenAI-compatible client), or else
    ``ChatOpenAI(model=agent.model)`` on first use. Tool schemas are checked here,
    so an unsupported annotation fails now, not mid-run.

    ``fixed_entry=True`` always starts at ``default_agent`` (a plain ``START`` edge, one
    routing step less per run): for callers that never resume a thread mid-conversation,
    as ``Swarm`` does (it starts every run at the agent it is given).

    An agent with a tool that returns :class:`~swarmgraph.graph.features.parallel.Parallel` (its
    code names ``Parallel``) fans out: the graph gets a ``parallel_branch`` node (one task per
    branch, sent with ``Send``) and a ``parallel_join`` node, added through the builder's
    extension (graph/core/graph_extension.py; graph/features/fan_out_nodes.py adds them).
    ``parallel_handoffs="all"`` also fans out a reply that calls several transfer tools
    (``"last"``, the default, takes the last, as Swarm does; ``"first"`` takes the first and
    does not run the later ones).
    ``input_schema``: what a caller may write when it invokes the graph (LangGraph's own
    option; other keys of the input are dropped). A graph served to clients should take
    messages only (:data:`~swarmgraph.graph.core.state.SwarmInput`): otherwise a client can set
    ``context_variables`` or ``active_agent`` itself (see swarmgraph/app/served.py).

    ``context_schema`` types ``context_variables`` (a pydantic model or a ``TypedDict``, with
    per-key reducers as ``Annotated[T, fn]``; see :mod:`swarmgraph.graph.features.context_schema`,
    installed as the first of the graph's ``middleware``: graph/features/context_middleware.py's
    ``ContextSchemaMiddleware``): the state declares its fields, the input and every tool
    update are validated. Without it the
    context is Swarm's plain dict. ``runtime_schema`` is LangGraph's own run-time context
    (``StateGraph(context_schema=...)``, read with ``get_runtime()``), passed through.

    ``prompt_context`` and ``tool_inputs``: the hooks ``Swarm.run`` takes per run, fixed for
    this graph (``swarmgraph.memory.long_term_hooks`` makes a pair that reads the
    ``store=`` the graph is compiled with and ``config["configurable"]["user_id"]``).

    ``middleware``: LangChain 1.x ``AgentMiddleware`` every agent's steps call, around each
    agent's own ``Agent(middleware=...)``; their ``state_schema`` fields join the graph's state
    (graph/core/middleware.py).

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
    # A compiled LangGraph graph with a name is a member too (another kind: graph/core/members.py).
    members = [as_member(a) for a in agents]
    default = as_member(default_agent) if default_agent is not None else members[0]
    settings = api_settings(
        context_schema,
        middleware,
        state_schema=state_schema,
        runtime_schema=runtime_schema,
        max_consecutive_handoffs=max_consecutive_handoffs,
        fixed_entry=fixed_entry,
        parallel_handoffs=parallel_handoffs,
        input_schema=input_schema,
        hooks=RunHooks(prompt_context=prompt_context, tool_inputs=tool_inputs),
        graph_class=ObservedStateGraph,  # each invoke of its own is a run (tracing)
    )
    topology = find_topology([default, *members], middleware_of, TOOL_TRAITS)
    builder, _ = build_graph_and_runtime(
        topology, ModelResolver(client=client, chat_model=chat_model), settings
    )
    if isinstance(builder, ObservedStateGraph):  # what its runs are named by
        builder.default_agent, builder.agents = default, dict(topology.agents)
        builder.hooks = settings.hooks  # its observers see its recall
    return builder


def api_settings(
    context_schema: Any, middleware: Sequence[Any], *, hooks: RunHooks = NO_HOOKS, **settings: Any
) -> GraphSettings:
    """The core builder's settings with the API's options in them (``build_swarm_graph``'s and
    ``Swarm``'s alike): a typed context's middleware first, around the caller's ``middleware``;
    the middleware an agent's options, the graph's own prompt context (in ``hooks``) and a
    handoff target install; the stream listener; the features with nodes of their own
    (graph/options.py). ``settings``: the other fields."""
    told = hooks.prompt_context
    return GraphSettings(
        middleware=(*context_middleware_of(context_schema), *checked_middleware(middleware)),
        hooks=hooks,
        options=middleware_of if told is None else told_first(told),
        target_options=middleware_for_target,
        listen=stream_listener,
        extensions=GRAPH_EXTENSIONS,
        **settings,
    )


def checked_middleware(middleware: Sequence[Any]) -> tuple[Any, ...]:
    """``middleware=`` checked (each an ``AgentMiddleware``) and frozen; none: nothing loaded."""
    if not middleware:
        return ()
    return tuple(check_middleware(middleware))
