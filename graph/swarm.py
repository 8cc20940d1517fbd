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

import copy
import json
import math
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph

from .approvals import check_decisions
from .budget import Budget
from .builder import build_swarm_graph
from .discovery import discover
from .errors import BudgetExceeded, StepLimitError, SwarmError
from .messages import to_langchain, to_openai
from .models import ModelResolver
from .native import GraphAgent, as_member
from .node import GraphRuntime, waiting_for
from .node_names import DYNAMIC_NODE, assign_node_names
from .run_control import RunControl
from .schema import tool_spec
from .types import Agent, Response

#: Compiled graphs kept per Swarm (one per topology: agent names and handoff edges).
MAX_CACHED_GRAPHS = 128
#: Start agents whose discovered roster is remembered (skips discovery for reused agents).
MAX_CACHED_STARTS = 128

# Generous enough for any real conversation; a loop without max_turns is stopped by
# the handoff-loop check long before this.
_RECURSION_LIMIT = 1000


class Swarm:
    """OpenAI Swarm's client, running on LangGraph.

    ``client``: any OpenAI-compatible client object (only
    ``client.chat.completions.create`` is used, with Swarm's arguments).
    ``chat_model``: a LangChain chat model, or ``model_name -> chat model``.
    Neither: ``ChatOpenAI(model=agent.model)`` honouring ``OPENAI_API_KEY`` and
    ``OPENAI_BASE_URL``. ``max_consecutive_handoffs`` stops handoff ping-pong.
    """

    def __init__(
        self,
        client: Any = None,
        *,
        chat_model: BaseChatModel | Callable[[str], BaseChatModel] | None = None,
        max_consecutive_handoffs: int = 10,
    ) -> None:
        self.client = client
        self.resolver = ModelResolver(client=client, chat_model=chat_model)
        self.max_consecutive_handoffs = max_consecutive_handoffs
        # Compiled graphs by topology, and rosters by start agent, least recently used
        # first. Both hold agents, so entries never die on their own: a service that builds
        # agents per request would grow them forever without the bounds.
        self._graphs: OrderedDict[tuple, tuple[CompiledStateGraph, GraphRuntime]] = OrderedDict()
        self._starts: OrderedDict[int, tuple[Agent, tuple, dict[str, Agent]]] = OrderedDict()
        self._lock = threading.Lock()

    # -- the compiled graph for a start agent ------------------------------------------
    def graph_for(self, agent: Agent) -> tuple[CompiledStateGraph, GraphRuntime]:
        """The compiled graph that starts at ``agent`` (one per topology, then cached)."""
        app, runtime, _ = self._prepare(agent)
        return app, runtime

    def _prepare(self, agent: Agent) -> tuple[CompiledStateGraph, GraphRuntime, dict[str, Agent]]:
        """(graph, runtime, this run's agents by node name) for a run starting at ``agent``."""
        with self._lock:
            start = self._starts.get(id(agent))
            if start is not None and start[0] is agent:
                self._starts.move_to_end(id(agent))
                topology, roster = start[1], start[2]
                compiled = self._graphs.get(topology)
                if compiled is not None:
                    self._graphs.move_to_end(topology)
                    return compiled[0], compiled[1], roster
        topology, roster = _discover(agent)
        with self._lock:
            compiled = self._graphs.get(topology)
            if compiled is None:
                builder = build_swarm_graph(
                    [agent],
                    resolver=self.resolver,
                    max_consecutive_handoffs=self.max_consecutive_handoffs,
                    fixed_entry=True,
                )
                runtime: GraphRuntime = builder.swarm_runtime  # type: ignore[attr-defined]
                runtime.lookup = self._agent_named
                compiled = (builder.compile(), runtime)
                self._graphs[topology] = compiled
                while len(self._graphs) > MAX_CACHED_GRAPHS:
                    self._graphs.popitem(last=False)
            else:
                self._graphs.move_to_end(topology)
                for member in roster.values():  # what the builder checks on a miss
                    for func in member.tools:
                        tool_spec(func)
            self._starts[id(agent)] = (agent, topology, roster)
            while len(self._starts) > MAX_CACHED_STARTS:
                self._starts.popitem(last=False)
        return compiled[0], compiled[1], roster

    def _agent_named(self, name: str) -> Agent | None:
        """An agent some earlier run of this Swarm knows by ``name`` (newest first): a run that
        starts at Refunds can still hand back to the Triage that handed off to it."""
        with self._lock:
            rosters = [entry[2] for entry in reversed(self._starts.values())]
        for roster in rosters:
            found = next((a for a in roster.values() if a.name == name), None)
            if found is not None:
                return found
        return None

    def _start(
        self,
        agent: Agent,
        messages: list,
        context_variables: dict | None,
        model_override: str | None,
        debug: bool,
        max_turns: float,
        execute_tools: bool,
        budget: Budget | None = None,
        approvals: dict | None = None,
    ) -> _Run:
        agent = as_member(agent)  # a named compiled LangGraph graph may start the run too
        app, runtime, roster = self._prepare(agent)
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget must be a Budget, got {type(budget).__name__}")
        # Swarm deep-copies both inputs; dicts are rebuilt by to_langchain, and
        # LangChain messages are copied so add_messages never stamps ids on the caller's.
        history = to_langchain(
            [m.model_copy() if isinstance(m, BaseMessage) else copy.deepcopy(m) for m in messages]
        )
        control = RunControl(
            model_override=model_override,
            max_turns=max_turns,
            execute_tools=execute_tools,
            debug=debug,
            agents=roster,
            budget=budget,
            stop_for_approval=True,  # stateless, as Swarm: return Response.pending
        )
        control.approvals = checked_approvals(runtime, agent, history, approvals, control)
        state = {
            "messages": history,
            "context_variables": copy.deepcopy(context_variables or {}),
            "active_agent": runtime.key_for(agent, control),
            "handoff_trail": [],
        }
        limit = _RECURSION_LIMIT if math.isinf(max_turns) else max(int(max_turns) + 5, 25)
        return _Run(app, runtime, control, state, control.config(limit), len(history))

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
        approvals: dict[str, bool | str] | None = None,
    ) -> Response | Iterator[dict]:
        """Run ``agent`` on ``messages`` until it answers; Swarm's arguments and result.

        ``budget`` (a :class:`Budget`) bounds model calls, tokens, tool calls and handoffs;
        passing a limit raises :class:`BudgetExceeded` (with ``.response``). When the model
        calls a tool marked ``@needs_approval`` the run stops and ``Response.pending`` lists
        the calls; run again with ``messages=history + response.messages`` and
        ``approvals={id: True | False | "reason"}`` to go on.

        ``max_turns`` counts new messages, as in Swarm. With ``stream=True`` this
        returns an iterator of Swarm-shaped events ending with ``{"response": ...}``.
        A handoff loop raises :class:`HandoffLoopError`, and a run that takes LangGraph's
        whole step budget without answering (no ``max_turns``: 1,000 steps) raises
        :class:`StepLimitError`; each one's ``.response`` holds everything produced before it.
        """
        run = self._start(
            agent, messages, context_variables, model_override, debug, max_turns, execute_tools,
            budget, approvals,
        )  # fmt: skip
        if stream:
            return run.events()
        if not run.control.turns_left():  # max_turns <= 0: Swarm never calls the model
            return run.response(run.state)
        final = run.state
        try:
            for values in run.app.stream(run.state, run.config, stream_mode="values"):
                final = values  # kept so a failing run still returns what it produced
        except SwarmError as exc:
            exc.response = run.response(final)
            raise
        except GraphRecursionError as exc:
            raise run.step_limit(final) from exc
        return run.finish(final)

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
        approvals: dict[str, bool | str] | None = None,
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
            agent, messages, context_variables, model_override, debug, max_turns, execute_tools,
            budget, approvals,
        )  # fmt: skip
        if stream:
            return run.aevents()
        if not run.control.turns_left():
            return run.response(run.state)
        final = run.state
        try:
            async for values in run.app.astream(run.state, run.config, stream_mode="values"):
                final = values
        except SwarmError as exc:
            exc.response = run.response(final)
            raise
        except GraphRecursionError as exc:
            raise run.step_limit(final) from exc
        return run.finish(final)


def checked_approvals(
    runtime: GraphRuntime, agent: Agent, history: list, approvals: Any, control: RunControl
) -> dict[str, bool | str] | None:
    """``approvals``, checked against the calls the history waits on: a decision for a call
    that is not waiting is a clear error (a typo would otherwise be silently ignored)."""
    if approvals is None:
        return None
    decisions = check_decisions(approvals)
    waiting = waiting_for(runtime, agent, history, control)
    ids = {p.id for p in waiting[1].pending} if waiting is not None else set()
    unknown = sorted(set(decisions) - ids)
    if unknown:
        raise ValueError(
            f"approvals: no tool call waits for approval with id {', '.join(map(repr, unknown))}; "
            f"waiting: {sorted(ids) or 'none'}. Pass the messages of the run that stopped "
            "(history + response.messages) and the ids in response.pending."
        )
    return decisions


@dataclass
class _Run:
    """One prepared run: the compiled graph, its input state and config, and its counters."""

    app: CompiledStateGraph
    runtime: GraphRuntime
    control: RunControl
    state: dict
    config: dict
    start: int  # messages before this index were the caller's history

    def response(self, final: dict) -> Response:
        new = final["messages"][self.start :]
        agent = self.runtime.agent_for(final.get("active_agent"), self.control)
        # With execute_tools=False the caller runs the tools: nothing waits for approval.
        waiting = self.control.execute_tools and waiting_for(
            self.runtime, agent, final["messages"], self.control
        )
        response = Response(
            messages=to_openai(new),
            agent=agent,
            context_variables=final.get("context_variables", {}),
            usage=self.control.ledger.usage,
            trajectory=list(self.control.ledger.trajectory),
            pending=waiting[1].pending if waiting else [],
        )
        response._langchain_messages = new
        return response

    def step_limit(self, final: dict) -> StepLimitError:
        """LangGraph's recursion limit as a :class:`StepLimitError` that names the agent and
        the tools its last replies kept calling, holding the run's Response."""
        calls: dict[str, int] = {}
        for message in reversed(final["messages"][self.start :]):
            if isinstance(message, AIMessage):
                if not message.tool_calls:
                    break  # a reply without tool calls: the loop began after it
                for call in message.tool_calls:
                    calls[call["name"]] = calls.get(call["name"], 0) + 1
        agent = self.runtime.agent_for(final.get("active_agent"), self.control)
        calls = dict(sorted(calls.items(), key=lambda item: -item[1]))
        error = StepLimitError(self.config["recursion_limit"], agent.name, calls)
        error.response = self.response(final)
        return error

    def finish(self, final: dict) -> Response:
        """The run's Response, or :class:`BudgetExceeded` (holding it) if a budget stopped it."""
        response = self.response(final)
        halted = self.control.halted
        if isinstance(halted, BudgetExceeded):
            halted.response = response
            raise halted
        return response

    def has_members(self) -> bool:
        """Whether a LangGraph member can run: then the stream also reads inside subgraphs,
        so the member's own model streams its tokens (it costs ~30% of a streamed run, so
        only then)."""
        agents = self.runtime.roster(self.control).values()
        return any(isinstance(agent, GraphAgent) for agent in agents)

    def events(self) -> Iterator[dict]:
        """Swarm's stream: ``{"delim": ...}`` markers, deltas, then ``{"response": ...}``."""
        events = _SwarmEvents(self.runtime, self.control, self.state)
        if not self.control.turns_left():  # max_turns <= 0: no model call, no events
            yield {"response": self.response(self.state)}
            return
        modes = ["messages", "values"]
        subgraphs = self.has_members()
        try:
            for item in self.app.stream(
                self.state, self.config, stream_mode=modes, subgraphs=subgraphs
            ):
                ns, mode, payload = item if subgraphs else ((), *item)
                yield from events.feed(ns, mode, payload)
        except SwarmError as exc:
            exc.response = self.response(events.final)
            raise
        except GraphRecursionError as exc:
            raise self.step_limit(events.final) from exc
        yield from events.close()
        yield {"response": self.finish(events.final)}

    async def aevents(self) -> AsyncIterator[dict]:
        events = _SwarmEvents(self.runtime, self.control, self.state)
        if not self.control.turns_left():
            yield {"response": self.response(self.state)}
            return
        modes = ["messages", "values"]
        subgraphs = self.has_members()
        try:
            async for item in self.app.astream(
                self.state, self.config, stream_mode=modes, subgraphs=subgraphs
            ):
                ns, mode, payload = item if subgraphs else ((), *item)
                for event in events.feed(ns, mode, payload):
                    yield event
        except SwarmError as exc:
            exc.response = self.response(events.final)
            raise
        except GraphRecursionError as exc:
            raise self.step_limit(events.final) from exc
        for event in events.close():
            yield event
        yield {"response": self.finish(events.final)}


class _SwarmEvents:
    """Turns LangGraph's ``messages`` + ``values`` stream into Swarm's event shapes."""

    def __init__(self, runtime: GraphRuntime, control: RunControl, state: dict) -> None:
        self.runtime = runtime
        self.control = control
        self.final = state
        self.open_id: str | None = None
        self.streamed: set[str] = set()  # ids of replies already streamed

    def feed(self, ns: tuple[str, ...], mode: str, payload: Any) -> Iterator[dict]:
        """One item of the stream; ``ns`` is the namespace of a LangGraph member's own
        graph (``("research:<task id>",)``) when the item comes from inside it."""
        if mode == "values":
            if not ns:  # a member's own state is not the swarm's
                yield from self.close()
                self.final = payload
            return
        chunk, meta = payload
        if not isinstance(chunk, AIMessage):
            return  # tool results arrive in the final response, as in Swarm
        if not isinstance(chunk, AIMessageChunk):  # a LangGraph member's reply, whole
            if chunk.id in self.streamed:
                return  # its model streamed it already, token by token, from inside
            chunk = _as_chunk(chunk)
        first = chunk.id != self.open_id
        content = chunk.content if isinstance(chunk.content, str) else None
        if not first and not content and not chunk.tool_call_chunks:
            return  # LangChain's closing chunk carries nothing Swarm would show
        if first:
            yield from self.close()
            self.open_id = chunk.id
            if chunk.id is not None:
                self.streamed.add(chunk.id)
            yield {"delim": "start"}
        tool_calls = [
            {
                "index": c.get("index") or 0,
                "id": c.get("id"),
                "function": {"arguments": c.get("args") or "", "name": c.get("name")},
                # the provider names the type on a call's first delta only, as here
                "type": "function" if c.get("id") else None,
            }
            for c in chunk.tool_call_chunks
        ] or None
        delta: dict[str, Any] = {
            "content": content or None,
            "function_call": None,
            "refusal": None,
            "role": "assistant" if first else None,
            "tool_calls": tool_calls,
        }
        if first:  # Swarm stamps the sender on the delta that carries the role
            control = self.control
            # The node that runs it: ours, or the member whose graph the namespace names.
            node = ns[0].split(":")[0] if ns else meta.get("langgraph_node")
            agent = self.runtime.roster(control).get(node)  # None: the dynamic node
            if agent is None:
                agent = self.runtime.agent_for(self.final.get("active_agent"), control)
            delta["sender"] = agent.name  # the real name, not the node name it runs under
        yield delta

    def close(self) -> Iterator[dict]:
        if self.open_id is not None:
            self.open_id = None
            yield {"delim": "end"}


def _as_chunk(message: AIMessage) -> AIMessageChunk:
    """A whole reply as one chunk: its text, and each tool call with its arguments as JSON."""
    return AIMessageChunk(
        content=message.content,
        id=message.id,
        name=message.name,
        tool_call_chunks=[
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(message.tool_calls)
        ],
    )


def _discover(start: Agent) -> tuple[tuple, dict[str, Agent]]:
    """``(topology, agents by node name)`` for the agents reachable from ``start``.

    The topology is what the compiled graph depends on: every agent's node name, kind (ours
    or a LangGraph member) and the nodes it can hand off to, in discovery order from
    ``start``. Two agent sets with the same topology share one compiled graph. Node names
    come from :func:`assign_node_names` over the same discovery order the builder uses, so
    the roster's keys are the compiled graph's nodes.
    """
    everyone, targets = discover([start])  # the builder's order
    nodes = assign_node_names(everyone, taken=[DYNAMIC_NODE])
    order = tuple(
        (
            nodes[agent],
            type(agent),
            tuple(nodes[t] for t in targets[id(agent)]),
            tuple((nodes[r.to], r.label) for r in agent.routes),  # drawn, labelled edges
            agent.can_return,
        )
        for agent in everyone
    )
    return order, {node: agent for agent, node in nodes.items()}
