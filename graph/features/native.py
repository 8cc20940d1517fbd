"""LangGraph-native agents as swarm members, next to our ``Agent``s.

A compiled LangGraph graph with a name (``langchain.agents.create_agent(..., name="research")``,
``langgraph.prebuilt.create_react_agent``, or any ``StateGraph`` over a ``messages`` key
compiled with ``.compile(name=...)``) can stand wherever a swarm takes an agent:

- in ``build_swarm_graph([...])``, in ``Agent(handoffs=[...])``, or returned by a transfer
  function: the model hands the conversation to it like to any agent;
- it runs as one node: it gets the shared history (``messages``; ``context_variables`` too when
  its state has that key), and everything it adds joins the shared history, its replies
  stamped with its name as the sender;
- it hands back with :func:`~swarmgraph.graph.features.member_handoff.handoff_tool`, a LangChain
tool to
  give it when you build it: the call ends its turn (``return_direct``) and the swarm
  switches to the target.

It attaches as a member kind (graph/core/members.py's ``MemberKind``): importing this module
registers :data:`LANGGRAPH_MEMBERS`, and the API layer (graph/options.py) has the core import it
the first time it meets a compiled graph, so a program that never uses one never loads it.

Example:
    >>> from langchain.agents import create_agent
    >>> from swarmgraph import Agent, ScriptedChatModel, Swarm, handoff_tool, scripted_tool_call
    >>> triage = Agent(name="Triage")
    >>> research = create_agent(
    ...     ScriptedChatModel(["Bees see ultraviolet.", scripted_tool_call("transfer_to_triage")]),
    ...     tools=[handoff_tool(triage)], name="research")
    >>> triage.handoffs.append(research)
    >>> swarm = Swarm(chat_model=ScriptedChatModel([scripted_tool_call("transfer_to_research")]))
    >>> response = swarm.run(triage, [{"role": "user", "content": "What do bees see?"}])
    >>> response.agent.name, response.messages[-1]["sender"], response.messages[-1]["content"]
    ('research', 'research', 'Bees see ultraviolet.')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langgraph.types import Overwrite
from pydantic import ConfigDict, Field

from ..core.drivers import ASYNC, SYNC, Driver, drive
from ..core.errors import ContextValidationError
from ..core.marks import loaded
from ..core.members import register_member_kind
from ..core.run_control import RunControl, current_control
from ..core.state import StateUpdate, SwarmState
from ..core.types import Agent, is_compiled_graph

if TYPE_CHECKING:
    from ..core.runtime import GraphRuntime
    from .tracing import TracedRun

__all__ = ["LANGGRAPH_MEMBERS", "GraphAgent", "GraphNode", "LangGraphMembers", "as_member"]

# LangGraph names a compiled graph "LangGraph" when nobody gave it a name.
_UNNAMED = "LangGraph"
_MEMBER_ATTR = "_swarmgraph_member"


class GraphAgent(Agent):
    """The swarm's view of a compiled LangGraph graph: an ``Agent`` whose turn runs ``graph``.

    ``handoffs`` lists the targets of the :func:`handoff_tool` s found in the graph, so the
    swarm draws (and routes) those edges; the graph's own prompt, model and tools stay its own.
    Made by :func:`as_member`, one per graph.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    instructions: str = "(a LangGraph graph: its own prompt, model and tools)"
    graph: Any = Field(default=None, repr=False)
    #: tool name -> target, for the handoff tools inside the graph
    handoff_by_tool: dict[str, Any] = Field(default_factory=dict, repr=False)


def as_member(value: Any) -> Agent:
    """``value`` as a swarm member: an ``Agent`` as it is, a named compiled graph as its
    :class:`GraphAgent` (the same one every time, so it is one node however often named).

    Example:
        >>> from langchain.agents import create_agent
        >>> from swarmgraph.graph import ScriptedChatModel
        >>> graph = create_agent(ScriptedChatModel([]), tools=[], name="research")
        >>> member = as_member(graph)
        >>> member.name, member.graph is graph, as_member(graph) is member
        ('research', True, True)
    """
    if isinstance(value, Agent):
        return value
    if not is_compiled_graph(value):
        raise TypeError(f"not an Agent or a compiled LangGraph graph: {value!r}")
    member = getattr(value, _MEMBER_ATTR, None)
    if isinstance(member, GraphAgent) and member.name == value.name:
        return member
    if value.name == _UNNAMED:
        raise ValueError(
            "a LangGraph graph joins a swarm under its name, and this one has none: build it "
            "with create_agent(..., name='research') or compile it with .compile(name=...)"
        )
    from .member_handoff import handoff_targets  # LangChain's tools, only once a graph joins

    targets = handoff_targets(value)
    member = GraphAgent(
        name=value.name,
        graph=value,
        handoff_by_tool=targets,
        handoffs=list(dict.fromkeys(targets.values())),
    )
    setattr(value, _MEMBER_ATTR, member)  # the graph keeps its member alive, and no longer
    return member


def members_in(value: Any) -> list[Agent]:
    """Members a value holds (discovery's hook): named graphs become their ``GraphAgent``."""
    if is_compiled_graph(value) and value.name != _UNNAMED:
        return [as_member(value)]
    return []


class GraphNode:
    """The node for a :class:`GraphAgent`: one turn of the member's own graph.

    ``agent=None`` is the dynamic node's case: the active agent is resolved at run time.
    """

    # The member's model runs in a subgraph, whose tokens stream_mode="messages" leaves out
    # unless the caller streams with subgraphs=True (Swarm's stream=True does, when a member
    # can run); a traced node also hands the messages it added to that stream whole when it
    # ends, so a plain app.stream(stream_mode="messages") sees them too.
    traced = True

    def __init__(
        self, runtime: GraphRuntime, agent: GraphAgent | None, name: str | None = None
    ) -> None:
        self.runtime = runtime
        self.agent = agent
        # Its node name: the member's own unless mapped (a ":" in it, a second "research").
        self.name = name if name is not None else getattr(agent, "name", "")

    def _member(self, state: SwarmState, control: RunControl) -> GraphAgent:
        if self.agent is None:
            found = self.runtime.agent_for(state.get("active_agent"), control)
        elif control.agents is not None:  # the run's own members (Swarm: one graph per topology)
            found = control.agents.get(self.name, self.agent)
        else:
            found = self.agent
        assert isinstance(found, GraphAgent)  # the node runs members only (see _DynamicNode)
        return found

    @staticmethod
    def _input(agent: GraphAgent, state: SwarmState) -> dict[str, Any]:
        graph_input: dict[str, Any] = {"messages": list(state["messages"])}
        if "context_variables" in getattr(agent.graph, "channels", {}):
            graph_input["context_variables"] = dict(state.get("context_variables") or {})
        return graph_input

    def step(self, state: SwarmState, config: RunnableConfig) -> StateUpdate:
        control = current_control(config)
        agent = self._member(state, control)
        if _over_budget(agent, control, state):
            return {}
        traced = _traced()
        if traced is None:
            output = agent.graph.invoke(self._input(agent, state), config)
        else:  # a traced run (graph/features/tracing.py): the member's turn span
            with traced.member_turn(agent):
                output = agent.graph.invoke(self._input(agent, state), config)
        return drive(self._update(agent, state, output, control, SYNC))

    async def astep(self, state: SwarmState, config: RunnableConfig) -> StateUpdate:
        control = current_control(config)
        agent = self._member(state, control)
        if _over_budget(agent, control, state):
            return {}
        traced = _traced()
        if traced is None:
            output = await agent.graph.ainvoke(self._input(agent, state), config)
        else:  # a traced run (graph/features/tracing.py): the member's turn span
            with traced.member_turn(agent):
                output = await agent.graph.ainvoke(self._input(agent, state), config)
        return await self._update(agent, state, output, control, ASYNC)

    async def _update(
        self, agent: GraphAgent, state: SwarmState, output: Any, control: RunControl, io: Driver
    ) -> StateUpdate:
        """The member's turn as an update; a handoff it made switches the agent through the
        target's ``before_handoff`` hooks (:meth:`GraphRuntime.hand_off`)."""
        seen = {m.id for m in state["messages"]}
        added = [m for m in _messages(output) if m.id is None or m.id not in seen]
        added = [_stamped(m, agent.name) for m in added]
        _count_usage(control, added, agent.name)
        update: StateUpdate = {"messages": added}
        context = state.get("context_variables") or {}
        written = output.get("context_variables") if isinstance(output, dict) else None
        if written is not None and written != context:
            context = self._context(agent, written, update, control) or context
        answer = _handoff_answer(agent, added)
        if answer is not None:  # the member handed off: through the target's hooks
            target = as_member(agent.handoff_by_tool[answer.name or ""])
            await self.runtime.hand_off(
                agent, target, state, update, control, context, io, call_id=answer.tool_call_id
            )
            return update
        if added and isinstance(added[-1], AIMessage) and state.get("handoff_trail"):
            update["handoff_trail"] = []  # the member answered: the handoff chain is over
        return update

    def _context(
        self, agent: GraphAgent, written: Any, update: StateUpdate, control: RunControl
    ) -> dict[str, Any] | None:
        """The member's context into ``update``: merged key by key as it is, or, typed, its
        final values validated (a context that does not fit is dropped, noted in the trajectory)."""
        # A typed context is a graph middleware (graph/features/context_middleware.py), which
        # cannot exist before its module is loaded.
        typed = loaded("context_middleware") if self.runtime.middleware else None
        schema = None if typed is None else typed.schema_in(self.runtime.middleware)
        if schema is None:
            update["context_variables"] = written
            return None
        try:
            valid = schema.validate(written)
        except ContextValidationError as err:
            control.ledger.checked(agent.name, "context", "context_schema", str(err))
            return None
        update["context_variables"] = Overwrite(valid)  # final values: reduce nothing again
        return valid

    def _handoff(self, agent: GraphAgent, added: list[BaseMessage]) -> Agent | None:
        """The first handoff tool the member called this turn (first handoff wins, as ours)."""
        call = _handoff_answer(agent, added)
        return None if call is None else as_member(agent.handoff_by_tool[call.name or ""])


def _handoff_answer(agent: GraphAgent, added: list[BaseMessage]) -> ToolMessage | None:
    """The answer to the first handoff tool call the member made this turn that did not fail."""
    for message in added:
        if not isinstance(message, ToolMessage) or message.status == "error":
            continue
        if message.name in agent.handoff_by_tool:
            return message
    return None


def _messages(output: Any) -> list[BaseMessage]:
    if isinstance(output, dict):
        return list(output.get("messages") or [])
    return []


def _stamped(message: BaseMessage, sender: str) -> BaseMessage:
    if isinstance(message, AIMessage) and message.name != sender:
        return message.model_copy(update={"name": sender})
    return message


def _over_budget(agent: GraphAgent, control: RunControl, state: SwarmState) -> bool:
    """A budget is asked before the member's turn (it runs its own loop inside it): a run
    with one has its middleware (``control.middleware``, graph/features/budget.py)."""
    run = control.middleware
    return run is not None and run.refuses_model_call(agent, state["messages"])


def _count_usage(control: RunControl, added: list[BaseMessage], sender: str) -> None:
    """Book what the member did into the run's ledger (usage, by agent, trajectory). A member
    runs its own loop, so a budget is checked before its turn, not inside it."""
    control.new_messages += len(added)
    ledger = control.ledger
    for message in added:
        if isinstance(message, ToolMessage):
            ledger.tool_called(sender, message.name or "", message.tool_call_id, None)
            continue
        if not isinstance(message, AIMessage):
            continue
        meta = message.usage_metadata
        if meta:
            tokens = (meta.get("input_tokens", 0), meta.get("output_tokens", 0))
        else:  # the member's model reported nothing: count what it wrote
            tokens = (0, count_tokens_approximately([message]))
        ledger.model_called(
            sender,
            "langgraph",
            input_tokens=tokens[0],
            output_tokens=tokens[1],
            tool_calls=message.tool_calls,
        )


class LangGraphMembers:
    """Named compiled LangGraph graphs as a member kind (graph/core/members.py): the core asks
    it for a value that is not an ``Agent`` and for the node of a :class:`GraphAgent`."""

    def as_member(self, value: Any) -> Agent | None:
        """The graph's :class:`GraphAgent`; ``None`` for a value that is not a compiled graph."""
        return as_member(value) if is_compiled_graph(value) else None

    def members_in(self, value: Any) -> list[Agent]:
        """A named graph's member (an unnamed one is no member: ``[]``)."""
        return members_in(value)

    def owns(self, agent: Agent) -> bool:
        """Whether ``agent`` is a graph's member."""
        return isinstance(agent, GraphAgent)

    def node(self, runtime: GraphRuntime, agent: Agent | None, name: str) -> GraphNode:
        """One turn of the member's graph (``agent=None``: whichever member is active)."""
        if agent is None:
            return GraphNode(runtime, None)
        assert isinstance(agent, GraphAgent)  # the core asks only for an agent it owns
        return GraphNode(runtime, agent, name)


#: The kind this module registers when it is imported.
LANGGRAPH_MEMBERS = LangGraphMembers()
register_member_kind(LANGGRAPH_MEMBERS)


def _traced() -> TracedRun | None:
    """The run's spans when it is traced (graph/features/tracing.py is loaded only then)."""
    tracing = loaded("tracing")
    return None if tracing is None else tracing.traced_run()
