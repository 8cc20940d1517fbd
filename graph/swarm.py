"""``Swarm``: OpenAI Swarm's client API on top of the compiled LangGraph graph.

``Swarm.run`` keeps Swarm's signature and return value, so code written for Swarm
runs unchanged; underneath, each topology (the agents' names and handoff edges, from the
start agent) gets one compiled graph, built once and cached, and a run is one
``graph.stream`` call that carries the caller's own Agent objects in its config. So a
service that builds fresh agents per request (per-user instructions, fresh tool
functions) compiles nothing after its first request.

Example:
    >>> from swarmgraph.graph import Agent, Swarm, ScriptedChatModel, scripted_tool_call
    >>> sales = Agent(name="Sales", instructions="Sell bees.")
    >>> def transfer_to_sales():
    ...     '''Hand the customer to sales.'''
    ...     return sales
    >>> triage = Agent(name="Triage", instructions=lambda ctx: f"Greet {ctx['name']}.",
    ...                functions=[transfer_to_sales])
    >>> model = ScriptedChatModel([scripted_tool_call("transfer_to_sales"), "Bees are $5."])
    >>> response = Swarm(chat_model=model).run(
    ...     agent=triage, messages=[{"role": "user", "content": "I want bees"}],
    ...     context_variables={"name": "Ming"})
    >>> response.agent.name, [m["role"] for m in response.messages]
    ('Sales', ['assistant', 'tool', 'assistant'])
    >>> response.messages[1]["content"], response.messages[-1]["sender"]
    ('{"assistant": "Sales"}', 'Sales')
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from operator import is_
from typing import TYPE_CHECKING, Any, cast

from langchain_core.language_models import BaseChatModel
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import Unpack

from .core.builder import build_graph_and_runtime
from .core.discovery import FUNCTIONS, Topology
from .core.discovery import find_topology as _find_topology
from .core.node_names import HANDOFF_MODES
from .core.runtime import GraphRuntime
from .core.schema import tool_spec
from .core.state import SwarmState
from .core.types import Agent, Response
from .models import ModelResolver
from .options import TOOL_TRAITS, middleware_of
from .prepared_run import NO_HOOKS, PreparedRun, RunExtras, RunRequest, hooks_of
from .swarm_graph import api_settings

if TYPE_CHECKING:
    from .features.budget import Budget
    from .features.context_schema import ContextSchema

__all__ = ["DEFAULT_STEP_LIMIT", "MAX_CACHED_GRAPHS", "MAX_CACHED_STARTS", "Swarm"]

#: Compiled graphs kept per Swarm (one per topology: agent names and handoff edges).
MAX_CACHED_GRAPHS = 128
#: Start agents whose discovered topology is remembered (skips discovery for reused agents).
MAX_CACHED_STARTS = 128
#: LangGraph steps a run without ``max_turns`` may take: generous enough for any real
#: conversation; a loop is stopped by the handoff-loop check long before this.
DEFAULT_STEP_LIMIT = 1000


class Swarm:
    """OpenAI Swarm's client, running on LangGraph.

    ``client``: any OpenAI-compatible client object (only
    ``client.chat.completions.create`` is used, with Swarm's arguments).
    ``chat_model``: a LangChain chat model, or ``model_name -> chat model``.
    Neither: ``ChatOpenAI(model=agent.model)`` honouring ``OPENAI_API_KEY`` and
    ``OPENAI_BASE_URL``. ``max_consecutive_handoffs`` stops handoff ping-pong.
    ``step_limit``: the LangGraph steps a run without ``max_turns`` may take before it
    raises :class:`StepLimitError` (each model reply and each tool round is one step).
    ``context_schema``: a pydantic model or ``TypedDict`` that types ``context_variables``
    (validated on entry and after every tool update, per-key reducers as ``Annotated[T, fn]``;
    see :mod:`swarmgraph.graph.features.context_schema`); without it the context is a plain dict.
    ``parallel_handoffs``: when one reply calls several transfer tools, ``"last"`` (the
    default, Swarm's behaviour) runs them all, answers each with its own result and hands off
    to the last; ``"first"`` hands off to the first and does not run the later ones (each is
    answered that it was not run); ``"all"`` runs every target at once, as one
    :class:`~swarmgraph.graph.features.parallel.Parallel`, each transfer call answered with its own
    branch's answer.
    ``middleware``: LangChain 1.x ``AgentMiddleware`` every agent's steps call, around each
    agent's own ``Agent(middleware=...)`` (graph/core/middleware.py, docs/middleware.md).
    """

    def __init__(
        self,
        client: Any = None,
        *,
        chat_model: BaseChatModel | Callable[[str], BaseChatModel] | None = None,
        max_consecutive_handoffs: int = 10,
        step_limit: int = DEFAULT_STEP_LIMIT,
        parallel_handoffs: str = "last",
        context_schema: type | None = None,
        middleware: Sequence[Any] = (),
    ) -> None:
        if isinstance(step_limit, bool) or not isinstance(step_limit, int) or step_limit < 1:
            raise ValueError(f"step_limit must be a positive int, got {step_limit!r}")
        if parallel_handoffs not in HANDOFF_MODES:
            raise ValueError(
                f"parallel_handoffs must be 'last', 'first' or 'all', got {parallel_handoffs!r}"
            )
        self.parallel_handoffs = parallel_handoffs
        #: The typed context (read once), or None: Swarm's plain dict.
        self.context_schema: ContextSchema | None = None
        if context_schema is not None:
            from .features.context_schema import ContextSchema

            self.context_schema = ContextSchema.of(context_schema)
        self.client = client
        self.resolver = ModelResolver(client=client, chat_model=chat_model)
        self.max_consecutive_handoffs = max_consecutive_handoffs
        self.step_limit = step_limit
        # Compiled graphs by topology key, and topologies by start agent, least recently used
        # first. Both hold agents, so entries never die on their own: a service that builds
        # agents per request would grow them forever without the bounds.
        self._graphs: OrderedDict[tuple, tuple[CompiledStateGraph, GraphRuntime]] = OrderedDict()
        self._starts: OrderedDict[int, tuple[Agent, Topology]] = OrderedDict()
        self._lock = threading.Lock()
        #: How this Swarm's graphs are built: each run starts at the agent it is given.
        self._settings = api_settings(
            self.context_schema,
            middleware,
            max_consecutive_handoffs=max_consecutive_handoffs,
            fixed_entry=True,
            lookup=self._agent_named,
            parallel_handoffs=parallel_handoffs,
            resumes=True,  # a fan-out paused for approval goes on (Swarm.run(branches=))
        )

    # -- the agents and the compiled graph for a start agent -----------------------------
    def reachable_agents(self, agent: Agent) -> list[Agent]:
        """``agent`` and every agent it can hand off to, directly or not, in discovery order.

        Handoff discovery runs once per start agent; later calls (and runs) starting at the
        same agent read it from this Swarm's cache.

        Example:
            >>> sales = Agent(name="Sales")
            >>> triage = Agent(name="Triage", handoffs=[sales])
            >>> [a.name for a in Swarm().reachable_agents(triage)]
            ['Triage', 'Sales']
        """
        return list(self._topology(_member(agent)).agents.values())

    def graph_for(self, agent: Agent) -> tuple[CompiledStateGraph, GraphRuntime]:
        """The compiled graph that starts at ``agent`` (one per topology, then cached)."""
        app, runtime, _ = self._prepare(_member(agent))
        return app, runtime

    def _topology(self, agent: Agent) -> Topology:
        """The topology from ``agent``: cached per start agent, discovered on a miss (and its
        tools' schemas checked then, as the builder does, so a bad one fails before a run
        even when the compiled graph is shared)."""
        with self._lock:
            start = self._starts.get(id(agent))
            if start is not None and start[0] is agent:
                self._starts.move_to_end(id(agent))
                return start[1]
        topology = find_topology([agent])
        for member in topology.agents.values():
            for func in member.tools:
                tool_spec(func)
        with self._lock:
            self._starts[id(agent)] = (agent, topology)
            while len(self._starts) > MAX_CACHED_STARTS:
                self._starts.popitem(last=False)
        return topology

    def _prepare(self, agent: Agent) -> tuple[CompiledStateGraph, GraphRuntime, Topology]:
        """(graph, runtime, topology: this run's agents by node name) for a run starting at
        ``agent``."""
        topology = self._topology(agent)
        with self._lock:
            compiled = self._graphs.get(topology.key)
            if compiled is not None:
                self._graphs.move_to_end(topology.key)
                return compiled[0], compiled[1], topology
        builder, runtime = build_graph_and_runtime(topology, self.resolver, self._settings)
        with self._lock:
            compiled = self._graphs.setdefault(topology.key, (builder.compile(), runtime))
            while len(self._graphs) > MAX_CACHED_GRAPHS:
                self._graphs.popitem(last=False)
        return compiled[0], compiled[1], topology

    def _agent_named(self, name: str) -> Agent | None:
        """An agent some earlier run of this Swarm knows by ``name`` (newest first): a run that
        starts at Refunds can still hand back to the Triage that handed off to it."""
        with self._lock:
            rosters = [entry[1].agents for entry in reversed(self._starts.values())]
        for roster in rosters:
            found = next((a for a in roster.values() if a.name == name), None)
            if found is not None:
                return found
        return None

    def _start(self, request: RunRequest) -> PreparedRun:
        agent = request.agent
        if not isinstance(agent, Agent):  # a named compiled LangGraph graph may start the run too
            agent = _member(agent)
        app, runtime, topology = self._prepare(agent)
        run = PreparedRun.prepare(request, agent, app, runtime, topology.agents, self.step_limit)
        # Discovery's marks (Topology.marked) hold while every agent's tools are the objects
        # it read (a tool added since may be marked: the run then reads them again).
        if run.control.marked is None:
            functions = tuple(chain.from_iterable(map(FUNCTIONS, topology.agents.values())))
            if len(functions) == len(topology.functions) and all(
                map(is_, functions, topology.functions)
            ):
                run.control.marked = topology.marked
        return run

    # -- run --------------------------------------------------------------------------------
    def run(
        self,
        agent: Agent,
        messages: list,
        context_variables: dict | None = None,
        model_override: str | None = None,
        stream: bool = False,
        debug: bool = False,
        max_turns: float = math.inf,
        execute_tools: bool = True,
        *,
        budget: Budget | None = None,
        approvals: Mapping[str, bool | str] | None = None,
        branches: Sequence[Mapping[str, Any]] | None = None,
        **extras: Unpack[RunExtras],
    ) -> Response | Iterator[dict]:
        """Run ``agent`` on ``messages`` until it answers; Swarm's arguments and result.

        ``budget`` (a :class:`Budget`) bounds model calls, tokens, tool calls and handoffs;
        passing a limit raises :class:`BudgetExceeded` (with ``.response``). When the model
        calls a tool marked ``@needs_approval`` the run stops and ``Response.pending`` lists
        the calls; run again with ``messages=history + response.messages`` and
        ``approvals={id: True | False | "reason"}`` to go on.

        ``**extras`` (:class:`~swarmgraph.graph.prepared_run.RunExtras`): ``tool_results``
        (below) and ``hooks``, what a ``Session`` hands the run as one
        :class:`~swarmgraph.graph.core.run_control.RunHooks` (its effect ledger, the prompt context
        of its long-term recall, the injected tool inputs; each also accepted by its own name,
        ``effects=``, ``prompt_context=``, ``tool_inputs=``).
        A tool that returns :class:`~swarmgraph.graph.features.parallel.Parallel` fans out: its
        agents run at once, each in its own branch, and ``Response.branches`` keeps each one's
        messages. If a branch stops for approval, resume with ``messages=history +
        response.messages``, ``approvals=`` and ``branches=response.branches``.

        ``max_turns`` counts new messages, as in Swarm. With ``stream=True`` this
        returns an iterator of Swarm-shaped events ending with ``{"response": ...}``;
        ``tool_results=True`` adds each tool answer as ``{"tool_result": message}`` right
        after the reply that called it (Swarm streams none; a terminal shows them live).
        A handoff loop raises :class:`HandoffLoopError`, and a run that takes LangGraph's
        whole step budget without answering (no ``max_turns``: ``Swarm(step_limit=)``, 1,000
        steps by default) raises :class:`StepLimitError`; each one's ``.response`` holds
        everything produced before it.

        Without an effect ledger (``RunHooks.effects``, which ``Session`` passes), as in Swarm,
        a tool runs whenever the model asks: a stateless run has nowhere to remember that it
        ran (see docs/storage.md, "Durability").
        """
        run = self._start(
            RunRequest(
                agent,
                messages,
                context_variables,
                model_override,
                debug,
                max_turns,
                execute_tools,
                budget,
                approvals,
                hooks_of(extras) if extras else NO_HOOKS,
                branches,
            )
        )
        if stream:
            return run.events(tool_results=extras.get("tool_results", False))
        if run.control.turns_left():  # max_turns <= 0: Swarm never calls the model
            with run:  # a failing run's error holds the Response of what it produced
                for values in run.app.stream(run.state, run.config, stream_mode="values"):
                    run.final = cast("SwarmState", values)
        return run.finish()

    async def arun(
        self,
        agent: Agent,
        messages: list,
        context_variables: dict | None = None,
        model_override: str | None = None,
        stream: bool = False,
        debug: bool = False,
        max_turns: float = math.inf,
        execute_tools: bool = True,
        *,
        budget: Budget | None = None,
        approvals: Mapping[str, bool | str] | None = None,
        branches: Sequence[Mapping[str, Any]] | None = None,
        **extras: Unpack[RunExtras],
    ) -> Response | AsyncIterator[dict]:
        """Async twin of :meth:`run` (``stream=True`` gives an async iterator).

        Example:
            >>> import asyncio
            >>> from swarmgraph.graph import Agent, ScriptedChatModel
            >>> swarm = Swarm(chat_model=ScriptedChatModel(["hi"]))
            >>> response = asyncio.run(swarm.arun(Agent(), [{"role": "user", "content": "hey"}]))
            >>> response.messages[0]["content"]
            'hi'
        """
        run = self._start(
            RunRequest(
                agent,
                messages,
                context_variables,
                model_override,
                debug,
                max_turns,
                execute_tools,
                budget,
                approvals,
                hooks_of(extras) if extras else NO_HOOKS,
                branches,
            )
        )
        if stream:
            return run.aevents(tool_results=extras.get("tool_results", False))
        if run.control.turns_left():
            with run:
                async for values in run.app.astream(run.state, run.config, stream_mode="values"):
                    run.final = cast("SwarmState", values)
        return run.finish()


def find_topology(start: Iterable[Agent]) -> Topology:
    """The :class:`Topology` from ``start``, the destinations the agents' options declare
    (routes: graph/options.py's ``middleware_of``) walked too."""
    return _find_topology(start, middleware_of, TOOL_TRAITS)


def _member(agent: Any) -> Agent:
    """``agent`` as a swarm member: an Agent as it is, a named compiled LangGraph graph as its
    member (graph/features/native.py, loaded only then)."""
    if isinstance(agent, Agent):
        return agent
    from .features.native import as_member

    return as_member(agent)
