"""What the nodes of one compiled swarm graph share: :class:`GraphRuntime`.

Agents by node name (the graph's own, or each run's through :class:`RunControl`), the chat
models with their tools bound, the routing after a step, and the handoff switch. The builder
makes one per graph and returns it beside the graph (``Swarm`` keeps the pair); the nodes hold it.

Example:
    >>> from swarmgraph.graph.models import ModelResolver
    >>> from swarmgraph.graph.core.types import Agent
    >>> sales = Agent(name="Sales")
    >>> runtime = GraphRuntime({"Sales": sales}, ModelResolver(), max_consecutive_handoffs=10)
    >>> runtime.key_for(sales), runtime.agent_for("Sales") is sales
    ('Sales', True)
"""

from __future__ import annotations

import json
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    NamedTuple,
    Protocol,
    TypeAlias,
    TypeVar,
    cast,
)

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableBinding
from langgraph.types import Command

from .errors import HandoffLoopError, UnknownAgentWarning
from .handoffs import Handoff, Way, handoff_verdict
from .loop import switch_agent
from .marks import any_marked, marked_middleware
from .messages import reanswer
from .node_names import DYNAMIC_NODE
from .run_control import NO_HOOKS, RunControl, RunHooks
from .schema import tool_spec
from .state import StateUpdate, SwarmState
from .types import AGENTS_KEPT, Agent, AgentFunction

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.runnables import RunnableConfig
    from langgraph.errors import GraphInterrupt

    from .drivers import Driver
    from .middleware import MiddlewareStack

__all__ = [
    "MAX_DYNAMIC_AGENTS",
    "AfterHandoffs",
    "CallRecords",
    "ChatModels",
    "GraphRuntime",
    "HandoffValue",
    "ModelCall",
    "ModelListener",
    "MultiHandoff",
    "RecordedOutcome",
    "StepStart",
    "ToolOutcome",
    "Turn",
]

# Chat models known to accept Swarm's parallel_tool_calls argument in bind_tools;
# others would forward an unknown keyword to their API, so they only get it when False.
_PARALLEL_AWARE = {
    *("ChatOpenAI", "AzureChatOpenAI", "SwarmChatOpenAI"),  # SwarmChatOpenAI: the default model
    *("OpenAIClientChatModel", "ScriptedChatModel"),
}
# These send AIMessage.name (our sender) as OpenAI's "name", which rejects some characters.
_SENDS_NAMES = {"ChatOpenAI", "AzureChatOpenAI", "SwarmChatOpenAI"}

#: Unforeseen agents remembered per graph when it runs outside ``Swarm`` (no run roster):
#: one slot per name, the oldest names forgotten first, so the map cannot grow forever.
MAX_DYNAMIC_AGENTS = 256


class ChatModels(Protocol):
    """Which chat model answers for a model name (``agent.model``, or ``model_override``): the
    API's choice of client, chat model or default (graph/models.py's ``ModelResolver``)."""

    def get(self, model_name: str) -> BaseChatModel: ...


class MultiHandoff(Protocol):
    """What a tool may return to hand the conversation to several agents at once: a feature's
    value (its class sets graph/core/types.py's ``MULTI_HANDOFF_ATTR``), which the core passes
    on to the graph extension that runs it (:attr:`GraphRuntime.after_handoffs`). The core reads
    its ``name`` and ``targets``, and asks it for the answer to its call when it is not run:
    ``overtaken(later)`` (a later call of the reply handed off to agent ``later``) or
    ``unplaced(agent)`` (``agent``'s graph has nothing that runs it)."""

    @property
    def name(self) -> str: ...

    @property
    def targets(self) -> Sequence[Agent]: ...

    def overtaken(self, later: str) -> str: ...

    def unplaced(self, agent: str) -> str: ...


#: What a tool may hand off to: an Agent, or a handoff to several agents.
HandoffValue: TypeAlias = "Agent | MultiHandoff"


class RecordedOutcome(Protocol):
    """What a record of a call that ran once holds, as the tool runner reads it to answer the
    call again without running it (a feature's value: graph/features/effects.py's
    ``EffectOutcome``). ``status``: ``"done"``, or anything else for a call that started and
    may or may not have happened; ``value``: the answer the model read (an ``Error:`` when
    ``error``); ``context_variables``: the context change the call made; ``handoff``: the name
    of the agent it handed off to."""

    @property
    def status(self) -> str: ...

    @property
    def value(self) -> str: ...

    @property
    def context_variables(self) -> dict[str, Any] | None: ...

    @property
    def handoff(self) -> str | None: ...

    @property
    def error(self) -> bool: ...


class CallRecords(Protocol):
    """Where the tool runner (graph/core/tool_calls.py) records the calls of one reply that
    must run at most once, around each: a middleware's bookkeeping (its ``hold_calls`` hook
    sets ``Turn.records``), which a step hands the runner as ``records=``; the core calls only
    this, and hands it to an injected parameter's ``make`` (graph/core/injected.py).

    ``ledgered(func)``: whether calls of ``func`` are recorded; ``call(id, tool, args)``: the
    record's name for a call (passed back to the other methods as it is); ``before(call,
    context)``: record it started, or what an earlier attempt left (then it is answered from
    that, not run); ``done(call, value, context_variables, handoff, error)``: record it done,
    right after it ran; ``paused(call)``: it stopped at a human's question (LangGraph's
    ``interrupt()``), and the graph runs it again from its start when resumed;
    ``resolve(name)``: the agent a recorded handoff names."""

    def ledgered(self, func: Any) -> bool: ...
    def call(self, call_id: str, tool: str, arguments: Any) -> Any: ...
    def before(self, call: Any, context: dict[str, Any]) -> RecordedOutcome | None: ...
    def done(
        self,
        call: Any,
        value: str,
        context_variables: dict[str, Any] | None,
        handoff: str | None,
        error: bool,
    ) -> None: ...
    def paused(self, call: Any) -> None: ...
    def resolve(self, name: str) -> Agent | None: ...


@dataclass
class ToolOutcome:
    """What a reply's tool calls produced: answers, context updates, the handoff (if any)."""

    messages: list[ToolMessage] = field(default_factory=list)
    context_variables: dict[str, Any] | None = None  # the full working copy, None if untouched
    handoff: HandoffValue | None = None  # the one taken: the last (Swarm), or the first
    handoff_call: str | None = None  # the id of the tool call that handed off
    #: Every handoff the reply made, ``(call id, target, the tool's value)``, in call order:
    #: what ``Swarm(parallel_handoffs="all")`` fans out to.
    handoffs: list[tuple[str, HandoffValue, str]] = field(default_factory=list)
    #: A call asked for a human's decision with LangGraph's ``interrupt()`` and the graph can
    #: pause (``run_tool_calls(pauses=True)``): its pause; that call and the ones after it have
    #: no answer (graph/core/node.py's ``AgentNode._paused``).
    paused: GraphInterrupt | None = None
    #: The state keys the calls wrote besides the context (a tool's ``Command(update=...)``:
    #: a middleware's ``state_schema`` keys, say), for the step's update.
    state: dict[str, Any] = field(default_factory=dict)


class AfterHandoffs(Protocol):
    """What an agent node calls once its tools ran and handed off, when a graph extension set
    it (:attr:`GraphRuntime.after_handoffs`): a ``Command`` that sends the run to the
    extension's nodes instead of the switch (e.g. a ``Send`` per branch of a fan-out), or
    ``None`` (the switch goes on as usual)."""

    def __call__(
        self, turn: Turn, outcome: ToolOutcome, context: dict[str, Any]
    ) -> Command | None: ...


class ModelCall(NamedTuple):
    """One model call's recipe: ``runnable.invoke(prompt, config, **kwargs)``."""

    runnable: Runnable
    kwargs: dict[str, Any]
    tools: list[AgentFunction]
    safe_names: bool  # the model sends senders as OpenAI "name"s: rewrite unsafe ones
    #: The model streams of itself (``streaming=True``, a bound ``stream=True``): the call is
    #: listened to (:attr:`GraphRuntime.listen`) even when the run's config asks for no stream.
    streams: bool = False


class ModelListener(Protocol):
    """What listens to one model call that may stream: a LangChain callback handler (a
    ``BaseCallbackHandler``: it is put in the call's config), which then leaves the reply the
    call assembled as it should be
    (graph/features/streamed_arguments.py's ``StreamedArguments`` holds streamed tool-call
    arguments to the rule of non-streamed ones). Made per call by :attr:`GraphRuntime.listen`."""

    def finish(self, reply: AIMessage) -> AIMessage:
        """``reply`` once the call is over: itself, or a corrected copy."""
        ...


T = TypeVar("T")


@dataclass(slots=True)
class Turn:
    """One step of one agent's node (graph/core/node.py), filled in as it goes: what the step
    does next is what is set here.

    ``call`` and ``prompt``: the model to ask (unset when calls that waited for approval
    resume). ``ran``: the tool calls to run now, with ``tools`` to run them and ``answers``
    for the calls that do not run (held, refused, denied). ``update``: what the step returns.
    Features reach the step through their middleware's hooks (docs/internals.md), their own
    state here (:meth:`own`, :meth:`state_of`) and ``goto``.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Seen:
        ...     calls: int = 0
        >>> turn = Turn(Agent(), RunControl(), {"messages": []}, {})
        >>> turn.state_of(Seen) is None, turn.own(Seen) is turn.own(Seen)
        (True, True)
    """

    agent: Agent
    control: RunControl
    state: SwarmState
    context: dict[str, Any]
    update: StateUpdate = field(default_factory=StateUpdate)
    call: ModelCall | None = None
    prompt: list[BaseMessage] = field(default_factory=list)
    ran: AIMessage | None = None
    tools: list[AgentFunction] = field(default_factory=list)
    answers: list[ToolMessage] = field(default_factory=list)
    #: Where the step goes instead of where the core would send it (set by a feature: a
    #: fan-out's branches; the same node again, for a call in doubt asked about in a step of
    #: its own, graph/features/decisions.py).
    goto: Command | None = None
    #: The tool runner's records of calls that must run at most once (None: no call is; set by
    #: a middleware's ``hold_calls`` hook, graph/core/middleware.py).
    records: CallRecords | None = None
    #: The middleware the step asks (``GraphRuntime.stack_for``), None: none.
    stack: MiddlewareStack | None = None
    #: A middleware's own state for this step, by its class (:meth:`own`, :meth:`state_of`;
    #: None until one makes some: a plain step allocates nothing for it).
    states: dict[type, Any] | None = None

    def state_of(self, kind: type[T]) -> T | None:
        """This step's state of the middleware whose state is ``kind``, if it made one."""
        return None if self.states is None else cast("T | None", self.states.get(kind))

    def own(self, kind: type[T]) -> T:
        """This step's state of the middleware whose state is ``kind``, made (``kind()``) if
        new."""
        if self.states is None:
            self.states = {}
        found = self.states.get(kind)
        if found is None:
            found = self.states[kind] = kind()
        return cast("T", found)


@dataclass(frozen=True)
class StepStart:
    """The moment before a step asks the model: what a middleware's ``before_step`` hook reads
    (graph/core/middleware.py), which may plan the step itself: answer calls an earlier step
    (or a process that died) left waiting, instead of asking the model.

    ``turn``: the step so far (its agent, state, context); a hook that plans it sets
    ``turn.agent``, ``turn.update`` and, through ``admit(turn, reply, tools)``, the calls that
    run now (``turn.ran``; the budget may refuse some: ``turn.answers``), or sends the step
    elsewhere (``turn.goto``). ``runtime``: the graph's; ``config``: the step's; ``io``: the
    step's driver (``io.off_loop`` for blocking work); ``node``: the step's node.
    """

    turn: Turn
    runtime: GraphRuntime
    config: RunnableConfig
    io: Driver
    node: str
    admit: Callable[[Turn, AIMessage, list[AgentFunction]], None]


class GraphRuntime:
    """What the nodes of one compiled swarm graph share: agents by node name, models, caches.

    ``agents`` are the agents the graph was built from, by node name (see
    :mod:`swarmgraph.graph.core.node_names`: an agent's own name unless LangGraph cannot take it
    or another agent holds it). ``Swarm`` compiles one graph per topology and hands each run
    its own agents (``RunControl.agents``, same names), so the run's objects, not the first
    ones, are what the nodes read. ``lookup`` finds an agent outside this graph by name (a
    caller that handed off to this graph's start agent in an earlier run of the same Swarm).
    ``hooks``: the graph's own ``prompt_context`` and ``tool_inputs`` (``build_swarm_graph``'s,
    one :class:`~swarmgraph.graph.core.run_control.RunHooks`), each used when a run brings none
    (``Swarm.run``'s come in ``RunControl.hooks``).
    """

    def __init__(
        self,
        agents: dict[str, Agent],
        resolver: ChatModels,
        max_consecutive_handoffs: int,
        lookup: Callable[[str], Agent | None] | None = None,
    ) -> None:
        self.agents = agents
        self.dynamic: OrderedDict[str, Agent] = OrderedDict()
        self.resolver = resolver
        self.max_consecutive_handoffs = max_consecutive_handoffs
        self.lookup = lookup
        self._bound: dict[tuple, tuple[tuple, Runnable, dict[str, Any], bool]] = {}
        self._models: dict[str, BaseChatModel] = {}
        self._own_marked: bool | None = None  # see marked()
        #: An unforeseen agent of this graph (outside any run roster) has a marked tool.
        self.dynamic_marked = False
        self.default_node, self.default = next(iter(agents.items()))
        self.hooks: RunHooks = NO_HOOKS
        #: A graph extension's step after a step's tools handed off (graph/core/graph_extension.py:
        #: set by the extension's factory, e.g. a fan-out's), else None.
        self.after_handoffs: AfterHandoffs | None = None
        #: ``parallel_handoffs="first"``: a reply's first handoff is taken, not Swarm's last.
        self.first_handoff_wins = False
        # The builder's settings of the same names (graph/core/builder.py's GraphSettings say
        # what each is); one middleware stack per agent's list, made on first use.
        self.middleware: list[AgentMiddleware] = []
        self._stacks: dict[tuple[int, ...], MiddlewareStack] = {}
        self.options: Callable[[Agent], Sequence[AgentMiddleware]] | None = None
        self.target_options: Callable[[Agent], Sequence[AgentMiddleware]] | None = None
        self.listen: Callable[[Any, Any, Any], ModelListener | None] | None = None
        #: A check of its own that an agent passes before it takes the conversation in a
        #: parallel branch ``(agent, state, control) -> refusal or None``; None: the branch
        #: agent's ``before_handoff`` hooks decide (graph/features/branches.py).
        self.entry_check: Callable[[Agent, SwarmState, RunControl], str | None] | None = None
        #: The graph state's channels: what a tool's ``Command(update=...)`` may write.
        self.state_keys: frozenset[str] | None = None

    # -- what the agents' tools need ------------------------------------------------
    def tools_of(self, agent: Agent) -> list[AgentFunction]:
        """``agent.tools``, then the tools its middleware brings (``AgentMiddleware.tools``, the
        run's and its own, graph/core/middleware_tools.py), as ``create_agent`` binds them."""
        tools = agent.tools
        stack = self.stack_for(agent)
        if stack is not None and stack.tools:
            tools = [*tools, *stack.tools]
        return tools

    def has_marked_tool(self, agent: Agent) -> bool:
        """Whether a tool of ``agent``'s is marked (graph/core/marks.py's ``any_marked``; read
        on the paths that need it only: an unforeseen agent, a feature that keeps records)."""
        return any_marked(self.tools_of(agent))

    def marked(self, control: RunControl) -> bool:
        """Whether any agent of this run has a marked tool (graph/core/marks.py: a mark a
        feature registered, or an injected parameter that brings middleware); when none has,
        the middleware marks bring is never added. ``Swarm`` sets it from the topology
        (``Topology.marked``); kept as ``control.marked``."""
        known = control.marked
        if known is not None:
            return known
        if control.agents is None:  # the graph's own agents (read once), and unforeseen ones
            if self._own_marked is None:
                self._own_marked = any(map(self.has_marked_tool, self.agents.values()))
            found = self._own_marked or self.dynamic_marked
        else:
            agents = [*control.agents.values(), *control.dynamic.values()]
            found = any(map(self.has_marked_tool, agents))
        control.marked = found
        return found

    # -- names <-> agents ------------------------------------------------------
    def roster(self, control: RunControl | None) -> dict[str, Agent]:
        """This run's agents by node name (``Swarm`` passes each run's own in ``control``)."""
        return _maps(self, control)[0]

    def key_for(self, agent: Agent, control: RunControl | None = None) -> str:
        """The state key for ``agent``: its node name, or a unique key for unforeseen agents."""
        agents, dynamic = _maps(self, control)
        if agents.get(agent.name) is agent:  # the usual case: the node has the agent's name
            return agent.name
        for node, known in agents.items():  # a mapped node name ("Sales|EU", a second "Agent")
            if known is agent:
                return node
        # One slot per name, newest object wins: a tool that builds a fresh Agent on every
        # call must not grow this map (and the process) forever.
        key = agent.name
        while key in agents:
            key += "#dynamic"
        dynamic[key] = agent
        if control is not None and control.marked is False and self.has_marked_tool(agent):
            control.marked = True  # this run's own unforeseen agent brings its marks' middleware
        if dynamic is self.dynamic:
            self.dynamic_marked = self.dynamic_marked or self.has_marked_tool(agent)
            self.dynamic.move_to_end(key)
            while len(self.dynamic) > MAX_DYNAMIC_AGENTS:
                self.dynamic.popitem(last=False)
        return key

    def agent_for(self, key: str | None, control: RunControl | None = None) -> Agent:
        """The agent a state key names (``state["active_agent"]``); the default agent for none."""
        agents, dynamic = _maps(self, control)
        default = agents.get(self.default_node) or self.default
        if key is None:
            return default
        return agents.get(key) or dynamic.get(key) or default

    def agent_named(self, name: str | None, control: RunControl | None = None) -> Agent | None:
        """The agent a message's sender names (a handoff back, approvals of another agent)."""
        if name is None:
            return None
        agents, dynamic = _maps(self, control)
        found = agents.get(name) or dynamic.get(name) or dynamic.get(f"{name}#dynamic")
        if found is None:  # a mapped node name: senders are the agents' real names
            found = next((a for a in agents.values() if a.name == name), None)
        if found is None and self.lookup is not None:
            found = self.lookup(name)
        return found

    def node_for(self, key: str, control: RunControl | None = None) -> str:
        """The node that runs the agent a state key names."""
        agents, dynamic = _maps(self, control)
        if key in agents:
            return key
        if key in dynamic:
            return DYNAMIC_NODE
        # A checkpoint written by another process may name an unforeseen agent this
        # process never saw; the default agent picks the conversation up, and says so.
        warnings.warn(
            f"the conversation's active agent {key!r} is no agent of this graph (one a tool "
            f"made in another process, or a name given wrong); {self.default_node!r} picks "
            "the conversation up",
            UnknownAgentWarning,
            stacklevel=2,
        )
        return self.default_node

    # -- handoffs and routing ---------------------------------------------------------
    def switch(
        self,
        agent: Agent,
        target: Agent,
        state: SwarmState,
        update: StateUpdate,
        control: RunControl,
        route: str | None = None,
    ) -> None:
        """Hand the conversation from ``agent`` to ``target`` in ``update`` (the handoff
        trail and its loop check, the active agent, the ledger), once the ``before_handoff``
        hooks let it through (:meth:`hand_off`, which every switch goes through)."""
        trail = state.get("handoff_trail", ())
        key = self.key_for(target, control)
        switch_agent(update, trail, agent, target.name, key, limit=self.max_consecutive_handoffs)
        control.ledger.handed_off(agent.name, target.name, route=route)

    async def hand_off(
        self,
        source: Agent,
        target: Agent,
        state: SwarmState,
        update: StateUpdate,
        control: RunControl,
        context: Mapping[str, Any],
        io: Driver,
        *,
        way: Way = "handoff",
        route: str | None = None,
        call_id: str | None = None,
        note: Any = None,
    ) -> bool:
        """**The active agent switches here**: from ``source`` to ``target`` in ``update``,
        once the ``before_handoff`` hooks of ``target``'s middleware (the run's, then its own,
        then the run's own options', e.g. a budget's: graph/core/middleware.py) let it
        through, then :meth:`switch`. A hook that refuses leaves the active agent as it is, and
        the transfer call ``call_id`` (if any) is answered ``Error: <reason>``; one that
        redirects (``HandTo``) sends the conversation to its agent instead, through that
        agent's hooks in turn, and the transfer call's answer names it. False: nobody took
        over. An agent without middleware switches at once: a plain handoff asks nothing
        more."""
        redirects = 0
        while True:
            stack = self.stack_for(target, control)
            verdict = None
            if stack is not None and stack.handoff:
                messages = [*state["messages"], *update.get("messages", ())]
                moving = Handoff(
                    source,
                    target,
                    {"messages": messages, "context_variables": context},
                    way,
                    route,
                    note,
                    redirects,
                )
                verdict = await handoff_verdict(stack.handoff, moving, io, control)
            if verdict is None:
                break
            added = update.setdefault("messages", [])
            if isinstance(verdict, str):
                reanswer(added, call_id, f"Error: {verdict}")
                return False
            redirects += 1
            if redirects > self.max_consecutive_handoffs:  # hooks that redirect in a circle
                raise HandoffLoopError(
                    [source.name, target.name, verdict.agent.name], self.max_consecutive_handoffs
                )
            old, new = json.dumps({"assistant": target.name}), {"assistant": verdict.agent.name}
            reanswer(added, call_id, json.dumps(new), only_if=old)
            target, note, way = verdict.agent, verdict.note, "jump"
        self.switch(source, target, state, update, control, route=route)
        if route is not None:
            control.debug_print(f"{source.name} \u21d2 {target.name} (route)")
        return True

    def next_node(
        self, name: str, update: StateUpdate, state: SwarmState, control: RunControl
    ) -> StateUpdate | Command:
        """Where node ``name`` goes after ``update``: a plain update ends the run (the model
        answered, or ``max_turns`` is used up); otherwise ``Command(goto=...)`` to the same
        node (tools ran, nobody handed off) or to the active agent's node (a handoff)."""
        added = update.get("messages")
        last = added[-1] if added else (state["messages"][-1] if state["messages"] else None)
        if last is None or not control.turns_left():  # (also approvals, a limit, a stop)
            return update
        # An assistant message whose tool calls all wait for approval goes on: the active
        # agent's node asks for the decisions. Any other assistant message ends the run.
        if isinstance(last, AIMessage) and not (last.tool_calls and control.execute_tools):
            return update
        key = update.get("active_agent", state.get("active_agent"))
        return Command(update=update, goto=name if key is None else self.node_for(key, control))

    # -- middleware ----------------------------------------------------------------
    def stack_for(self, agent: Agent, control: RunControl | None = None) -> MiddlewareStack | None:
        """The middleware ``agent``'s steps call (the run's around its own), or None: a step
        without middleware asks nothing more. ``control``: the run, whose own options may
        install middleware too (``RunControl.middleware``: ``Swarm.run(budget=)``), and which
        may have a tool marked (graph/core/marks.py; ``control.marked``, set by
        :meth:`marked`): then the middleware marked tools bring (``marked_middleware``) joins
        the run's."""
        own = agent.middleware
        if self.options is not None:  # options that install middleware (history=, routes=...)
            implied = self.options(agent)
            if implied:
                own = [*implied, *own]
        run = self.middleware
        if control is not None and control.marked:
            run = [*run, *marked_middleware()]
        if control is not None and control.middleware is not None:  # the run's own options
            return control.middleware.stack_for(agent, run, own)
        if not own and not run:
            return None
        key = tuple(map(id, own))
        if run is not self.middleware:
            key = (*key, *(map(id, run)), -1)  # (the run's list is not the graph's)
        stack = self._stacks.get(key)
        if stack is None:
            from .middleware import MiddlewareStack

            if len(self._stacks) > AGENTS_KEPT:
                self._stacks.clear()
            stack = self._stacks[key] = MiddlewareStack(run, own)
        return stack

    # -- models ------------------------------------------------------------------
    def chat_model(self, agent: Agent, control: RunControl) -> BaseChatModel:
        """The chat model ``agent`` talks to in this run, its tools not bound."""
        name = control.model_override or agent.model
        model = self._models.get(name)
        if model is None:  # the resolver's own cache is behind a lock: this one is read freely
            model = self._models[name] = self.resolver.get(name)
        return model

    def model_for(self, agent: Agent, control: RunControl) -> ModelCall:
        """How to call ``agent``'s model: the runnable, the keyword arguments that carry
        its bound tools, the tool functions (the agent's and its middleware's: ``tools_of``).
        Cached per model and tool set."""
        model = self.chat_model(agent, control)
        tools = self.tools_of(agent)
        safe_names = type(model).__name__ in _SENDS_NAMES
        if not tools:
            streams = getattr(model, "streaming", False) is True
            # Swarm sends an agent's tool_choice without tools too; client= sends Swarm's request
            choice = agent.tool_choice if type(model).__name__ == "OpenAIClientChatModel" else None
            sent = _NO_KWARGS if choice is None else {"tool_choice": choice}
            return ModelCall(model, sent, tools, safe_names, streams)
        # Keyed by the tools' specs, not the functions: agents built per request bring fresh
        # functions with the same schemas, and binding them again every turn costs.
        specs = tuple(map(tool_spec, tools))
        key = (id(model), tuple(map(id, specs)), agent.tool_choice, agent.parallel_tool_calls)
        cached = self._bound.get(key)
        if cached is not None and cached[0][0] is model and cached[0][1] == specs:
            return ModelCall(cached[1], cached[2], tools, safe_names, cached[3])
        kwargs: dict[str, Any] = {}
        if agent.tool_choice is not None:
            kwargs["tool_choice"] = agent.tool_choice
        if type(model).__name__ in _PARALLEL_AWARE or not agent.parallel_tool_calls:
            kwargs["parallel_tool_calls"] = agent.parallel_tool_calls
        bound = model.bind_tools([spec.schema for spec in specs], **kwargs)
        runnable, call_kwargs = _unwrap_binding(bound)
        if len(self._bound) > AGENTS_KEPT:
            self._bound.clear()
        streams = _streams_itself(runnable, call_kwargs)
        self._bound[key] = ((model, specs), runnable, call_kwargs, streams)
        return ModelCall(runnable, call_kwargs, tools, safe_names, streams)


_NO_KWARGS: dict[str, Any] = {}


def _maps(
    runtime: GraphRuntime, control: RunControl | None
) -> tuple[dict[str, Agent], dict[str, Agent]]:
    """(agents by node name, unforeseen agents by key) for this run: ``Swarm`` passes each
    run's own in ``control``; a graph used directly has its own."""
    if control is not None and control.agents is not None:
        return control.agents, control.dynamic
    return runtime.agents, runtime.dynamic


def _streams_itself(model: Any, kwargs: Mapping[str, Any]) -> bool:
    """Whether calls of ``model`` with ``kwargs`` stream whatever the config says: a
    ``stream=True`` keyword, or ``streaming=True`` / a bound ``stream=True`` on the model or
    on what it wraps."""
    if kwargs.get("stream"):
        return True
    while model is not None:
        if getattr(model, "streaming", False) is True:
            return True
        if (getattr(model, "kwargs", None) or {}).get("stream"):
            return True
        model = getattr(model, "bound", None)
    return False


def _unwrap_binding(bound: Runnable) -> tuple[Runnable, dict[str, Any]]:
    """``(runnable, kwargs)`` such that ``runnable.invoke(x, config, **kwargs)`` is
    ``bound.invoke(x, config)``.

    ``bind_tools`` returns a ``RunnableBinding`` (or LangChain's typing-only subclass of
    it) with no config of its own; its ``invoke`` only re-merges that empty config into
    ours and forwards the bound kwargs, about 6% of a zero-latency handoff. Calling the
    chat model with the kwargs is the same call. Anything else (a config, config
    factories, a subclass that overrides invoke) is called as given.
    """
    kind = type(bound)
    if (
        isinstance(bound, RunnableBinding)
        and kind.invoke is RunnableBinding.invoke
        and kind.ainvoke is RunnableBinding.ainvoke
        and not bound.config
        and not bound.config_factories
        and isinstance(bound.bound, BaseChatModel)
    ):
        return bound.bound, dict(bound.kwargs)
    return bound, _NO_KWARGS
