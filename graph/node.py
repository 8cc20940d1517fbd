"""One agent node: a Swarm turn as one graph step.

Read :class:`AgentNode` top-down; the three places the seed's sequence diagram names are:

- **instructions are built** in :meth:`AgentNode._prompt` (``agent.instructions``, called with
  the current ``context_variables`` when it is a function), which also picks the model;
- **tools run** in :func:`swarmgraph.graph.tool_calls.execute_tool_calls` (or its async twin),
  called from :meth:`AgentNode.step` / :meth:`AgentNode.astep` once the model replied;
- **the active agent switches** in :meth:`AgentNode._apply`, where a tool returned an Agent
  (:meth:`AgentNode._next_agent` also resolves ``CALLER`` and the agent's routes) and
  ``update["active_agent"]`` is set; :meth:`GraphRuntime.next_node` then sends the run to
  that agent's node with ``Command(goto=...)``.

Control of a running swarm hooks in at those places: ``Agent(history=...)`` narrows the prompt
in ``_prompt``; the budget is asked before the model call (``_over_budget``) and before tools
and handoffs (``_admit``, ``_next_agent``); approval-marked calls are held in ``_admit`` and
decided at the start of the agent's next step (``_decide``: ``Swarm.run`` stops, the compiled
graph calls ``interrupt()``).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from typing import Any, NamedTuple

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langgraph.types import Command, Overwrite, interrupt

from .approvals import (
    WaitingCalls,
    held_calls,
    hold_marked_calls,
    open_calls,
    pending_as_payload,
    resume_decisions,
    split_by_decision,
)
from .errors import HandoffLoopError
from .handback import caller_of
from .history_views import view_for
from .messages import to_openai
from .models import ModelResolver
from .node_names import DYNAMIC_NODE
from .routes import first_route
from .run_control import RunControl, current_control
from .schema import tool_spec
from .tool_calls import ToolOutcome, aexecute_tool_calls, execute_tool_calls
from .types import CALLER, Agent

__all__ = ["DYNAMIC_NODE", "AgentNode", "GraphRuntime", "ModelCall"]

# OpenAI rejects a message "name" with whitespace or <|\\/>; ChatOpenAI sends
# AIMessage.name (our sender) as that field, so unsafe senders are rewritten for it.
_UNSAFE_NAME = re.compile(r"[\s<|\\/>]")
_SENDS_NAMES = {"ChatOpenAI", "AzureChatOpenAI"}

# Chat models known to accept Swarm's parallel_tool_calls argument in bind_tools;
# others would forward an unknown keyword to their API, so they only get it when False.
_PARALLEL_AWARE = {"ChatOpenAI", "AzureChatOpenAI", "OpenAIClientChatModel", "ScriptedChatModel"}


#: Unforeseen agents remembered per graph when it runs outside ``Swarm`` (no run roster):
#: one slot per name, the oldest names forgotten first, so the map cannot grow forever.
MAX_DYNAMIC_AGENTS = 256


class GraphRuntime:
    """What the nodes of one compiled swarm graph share: agents by node name, models, caches.

    ``agents`` are the agents the graph was built from, by node name (see
    :mod:`swarmgraph.graph.node_names`: an agent's own name unless LangGraph cannot take it
    or another agent holds it). ``Swarm`` compiles one graph per
    topology and hands each run its own agents (``RunControl.agents``, same names), so the
    run's objects, not the first ones, are what the nodes read.
    """

    def __init__(
        self, agents: dict[str, Agent], resolver: ModelResolver, max_consecutive_handoffs: int
    ) -> None:
        self.agents = agents
        self.dynamic: OrderedDict[str, Agent] = OrderedDict()
        self.resolver = resolver
        self.max_consecutive_handoffs = max_consecutive_handoffs
        self._bound: dict[tuple, tuple[tuple, Runnable, dict[str, Any]]] = {}
        self.default_node, self.default = next(iter(agents.items()))
        #: Finds an agent outside this graph by name (a caller that handed off to this
        #: graph's start agent in an earlier run); Swarm sets it to search its other rosters.
        self.lookup: Callable[[str], Agent | None] | None = None

    # -- names <-> agents ------------------------------------------------------
    def roster(self, control: RunControl | None) -> dict[str, Agent]:
        """This run's agents by node name (``Swarm`` passes each run's own in ``control``)."""
        return self._maps(control)[0]

    def _maps(self, control: RunControl | None) -> tuple[dict[str, Agent], dict[str, Agent]]:
        """(agents by node name, unforeseen agents by key) for this run."""
        if control is not None and control.agents is not None:
            return control.agents, control.dynamic
        return self.agents, self.dynamic

    def switch(
        self,
        agent: Agent,
        target: Agent,
        state: dict,
        update: dict,
        control: RunControl,
        route: str | None = None,
    ) -> bool:
        """Hand the conversation from ``agent`` to ``target`` in ``update`` (the handoff
        trail and its loop check, the active agent, the ledger), unless the budget's
        ``max_handoffs`` would be passed: then the run halts and this returns False. Our
        agents' nodes and LangGraph members' nodes both switch through here."""
        exceeded = control.ledger.before_handoff(agent.name)
        if exceeded is not None:
            control.halted = exceeded
            return False
        trail = [*state.get("handoff_trail", ()), agent.name]
        if len(trail) >= self.max_consecutive_handoffs:
            raise HandoffLoopError([*trail, target.name], self.max_consecutive_handoffs)
        update["handoff_trail"] = trail
        update["active_agent"] = self.key_for(target, control)
        control.ledger.handed_off(agent.name, target.name, route=route)
        return True

    def key_for(self, agent: Agent, control: RunControl | None = None) -> str:
        """The state key for ``agent``: its node name, or a unique key for unforeseen agents."""
        agents, dynamic = self._maps(control)
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
        if dynamic is self.dynamic:
            self.dynamic.move_to_end(key)
            while len(self.dynamic) > MAX_DYNAMIC_AGENTS:
                self.dynamic.popitem(last=False)
        return key

    def agent_for(self, key: str | None, control: RunControl | None = None) -> Agent:
        agents, dynamic = self._maps(control)
        default = agents.get(self.default_node) or self.default
        if key is None:
            return default
        return agents.get(key) or dynamic.get(key) or default

    def agent_named(self, name: str | None, control: RunControl | None = None) -> Agent | None:
        """The agent a message's sender names (a handoff back, approvals of another agent)."""
        if name is None:
            return None
        agents, dynamic = self._maps(control)
        found = agents.get(name) or dynamic.get(name) or dynamic.get(f"{name}#dynamic")
        if found is None:  # a mapped node name: senders are the agents' real names
            found = next((a for a in agents.values() if a.name == name), None)
        if found is None and self.lookup is not None:
            found = self.lookup(name)
        return found

    def node_for(self, key: str, control: RunControl | None = None) -> str:
        agents, dynamic = self._maps(control)
        if key in agents:
            return key
        if key in dynamic:
            return DYNAMIC_NODE
        # A checkpoint written by another process may name an unforeseen agent this
        # process never saw; the default agent picks the conversation up.
        return self.default_node

    # -- routing -------------------------------------------------------------------
    def next_node(
        self, name: str, update: dict, state: dict, control: RunControl
    ) -> dict | Command:
        """Where node ``name`` goes after ``update``: a plain update ends the run (the model
        answered, or ``max_turns`` is used up); otherwise ``Command(goto=...)`` to the same
        node (tools ran, nobody handed off) or to the active agent's node (a handoff)."""
        added = update.get("messages")
        last = added[-1] if added else (state["messages"][-1] if state["messages"] else None)
        if last is None or not control.turns_left():  # (turns_left: also approvals, budgets)
            return update
        # An assistant message whose tool calls all wait for approval goes on: the active
        # agent's node asks for the decisions. Any other assistant message ends the run.
        if isinstance(last, AIMessage) and not (last.tool_calls and control.execute_tools):
            return update
        key = update.get("active_agent", state.get("active_agent"))
        return Command(update=update, goto=name if key is None else self.node_for(key, control))

    # -- models ------------------------------------------------------------------
    def model_for(self, agent: Agent, control: RunControl) -> ModelCall:
        """How to call ``agent``'s model: the runnable, the keyword arguments that carry
        its bound tools, the tool functions. Cached per model and tool set."""
        model = self.resolver.get(control.model_override or agent.model)
        tools = agent.tools
        safe_names = type(model).__name__ in _SENDS_NAMES
        if not tools:
            return ModelCall(model, _NO_KWARGS, tools, safe_names)
        # Keyed by the tools' specs, not the functions: agents built per request bring fresh
        # functions with the same schemas, and binding them again every turn costs.
        specs = tuple(tool_spec(f) for f in tools)
        key = (id(model), tuple(map(id, specs)), agent.tool_choice, agent.parallel_tool_calls)
        cached = self._bound.get(key)
        if cached is not None and cached[0][0] is model and cached[0][1] == specs:
            return ModelCall(cached[1], cached[2], tools, safe_names)
        kwargs: dict[str, Any] = {}
        if agent.tool_choice is not None:
            kwargs["tool_choice"] = agent.tool_choice
        if type(model).__name__ in _PARALLEL_AWARE or not agent.parallel_tool_calls:
            kwargs["parallel_tool_calls"] = agent.parallel_tool_calls
        bound = model.bind_tools([spec.schema for spec in specs], **kwargs)
        runnable, call_kwargs = _unwrap_binding(bound)
        if len(self._bound) > 512:  # agents created per request must not grow this forever
            self._bound.clear()
        self._bound[key] = ((model, specs), runnable, call_kwargs)
        return ModelCall(runnable, call_kwargs, tools, safe_names)


class ModelCall(NamedTuple):
    """One model call's recipe: ``runnable.invoke(prompt, config, **kwargs)``."""

    runnable: Runnable
    kwargs: dict[str, Any]
    tools: list[Any]
    safe_names: bool  # the model sends senders as OpenAI "name"s: rewrite unsafe ones


_NO_KWARGS: dict[str, Any] = {}


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


class AgentNode:
    """The node for one agent, or (``agent=None``) for whichever unforeseen agent is active.

    A step returns ``Command(goto=...)`` to the next node (itself after tools ran, the
    target after a handoff) or a plain update when the turn is over; the builder declares
    every possible destination, so the drawn graph still shows each handoff edge.
    """

    def __init__(self, runtime: GraphRuntime, agent: Agent | None, name: str) -> None:
        self.runtime = runtime
        self.agent = agent
        self.name = name

    def _agent(self, state: dict, control: RunControl) -> Agent:
        if self.agent is None:
            return self.runtime.agent_for(state.get("active_agent"), control)
        if control.agents is not None:  # the run's own Agent objects (Swarm)
            return control.agents[self.name]
        return self.agent

    def _prompt(
        self, state: dict, control: RunControl
    ) -> tuple[Agent, ModelCall, list[BaseMessage], dict]:
        agent = self._agent(state, control)
        context = state.get("context_variables") or {}
        # Instructions are rebuilt on every model call from the current context;
        # missing keys read as "" exactly as in Swarm.
        instructions = agent.instructions
        if callable(instructions):
            instructions = instructions(defaultdict(str, context))
        # Agent(history=...) narrows what this agent's model reads; the state stays whole.
        prompt = [SystemMessage(content=instructions), *view_for(agent, state["messages"])]
        if control.debug:  # Swarm prints the plain message dicts it sends
            control.debug_print("Getting chat completion for...:", to_openai(prompt))
        call = self.runtime.model_for(agent, control)
        if call.safe_names:
            prompt = [_api_safe_name(m) for m in prompt]
        return agent, call, prompt, context

    def step(self, state: dict, config: RunnableConfig) -> dict | Command:
        control = current_control(config)
        waiting = self._waiting(state, control)
        if waiting is not None:  # tool calls wait for a human: decide, then run the approved
            owner, held = waiting
            decided = self._decide(owner, control, held)
            if decided is None:
                return {}
            ran, answers = decided
            context = state.get("context_variables") or {}
            outcome = execute_tool_calls(ran, owner.tools, context, debug=_debug_lines(control))
            update = self._apply(owner, control, ran, outcome, answers, {"messages": []}, state)
            return self._next(update, state, control)
        agent, call, prompt, context = self._prompt(state, control)
        if self._over_budget(agent, control, prompt):
            return {}
        reply = call.runnable.invoke(prompt, config, **call.kwargs)
        update, reply = self._reply(agent, control, prompt, reply, state)
        if not self._runs_tools(reply, control):
            return update  # no destination: the run ends here
        ran, answers = self._admit(agent, control, reply, call.tools)
        outcome = execute_tool_calls(ran, call.tools, context, debug=_debug_lines(control))
        update = self._apply(agent, control, ran, outcome, answers, update, state)
        return self._next(update, state, control)

    async def astep(self, state: dict, config: RunnableConfig) -> dict | Command:
        control = current_control(config)
        waiting = self._waiting(state, control)
        if waiting is not None:
            owner, held = waiting
            decided = self._decide(owner, control, held)
            if decided is None:
                return {}
            ran, answers = decided
            context = state.get("context_variables") or {}
            outcome = await aexecute_tool_calls(
                ran, owner.tools, context, debug=_debug_lines(control)
            )
            update = self._apply(owner, control, ran, outcome, answers, {"messages": []}, state)
            return self._next(update, state, control)
        agent, call, prompt, context = self._prompt(state, control)
        if self._over_budget(agent, control, prompt):
            return {}
        reply = await call.runnable.ainvoke(prompt, config, **call.kwargs)
        update, reply = self._reply(agent, control, prompt, reply, state)
        if not self._runs_tools(reply, control):
            return update
        ran, answers = self._admit(agent, control, reply, call.tools)
        outcome = await aexecute_tool_calls(ran, call.tools, context, debug=_debug_lines(control))
        update = self._apply(agent, control, ran, outcome, answers, update, state)
        return self._next(update, state, control)

    def _next(self, update: dict, state: dict, control: RunControl) -> dict | Command:
        """Tools ran: the same agent speaks again, or the handoff target does."""
        return self.runtime.next_node(self.name, update, state, control)

    # -- approvals and budgets: what may run ----------------------------------------------
    def _waiting(self, state: dict, control: RunControl) -> tuple[Agent, WaitingCalls] | None:
        """The calls waiting for approval at the end of the conversation, with the agent that
        asked for them (normally this node's; another one when its reply also handed off)."""
        messages = state["messages"]
        if not messages or not isinstance(messages[-1], (AIMessage, ToolMessage)):
            return None  # the usual case: a new user message
        return waiting_for(self.runtime, self._agent(state, control), messages, control)

    def _decide(
        self, agent: Agent, control: RunControl, held: WaitingCalls
    ) -> tuple[AIMessage, list[ToolMessage]] | None:
        """The calls to run now and the denials, or ``None`` when ``Swarm.run`` must stop."""
        decisions = dict(control.approvals or {})
        missing = [p for p in held.pending if p.id not in decisions]
        if missing and control.stop_for_approval:
            control.halted = held.pending  # Swarm.run returns them in Response.pending
            return None
        while missing:  # the compiled graph: ask through LangGraph (needs a checkpointer)
            decisions.update(resume_decisions(interrupt(pending_as_payload(missing)), missing))
            missing = [p for p in held.pending if p.id not in decisions]
        ran, denied = split_by_decision(held, decisions)
        for message in denied:
            control.ledger.tool_denied(
                agent.name, message.name, message.tool_call_id, message.content
            )
        ran, over = self._admit(agent, control, ran, agent.tools, hold=False)
        return ran, [*denied, *over]

    @staticmethod
    def _over_budget(agent: Agent, control: RunControl, prompt: list[BaseMessage]) -> bool:
        exceeded = control.ledger.before_model(agent.name, prompt)
        if exceeded is not None:
            control.halted = exceeded
            control.debug_print(str(exceeded))
        return exceeded is not None

    @staticmethod
    def _admit(
        agent: Agent, control: RunControl, reply: AIMessage, tools: list, *, hold: bool = True
    ) -> tuple[AIMessage, list[ToolMessage]]:
        """``reply`` narrowed to the calls that run now, and answers for those that do not:
        approval-marked calls are held (left unanswered), calls past the budget are refused."""
        held: list[dict] = []
        if hold:
            reply, held = hold_marked_calls(reply, tools)
        room, bound = control.ledger.tool_allowance(agent.name)
        calls = reply.tool_calls
        if len(calls) <= room:
            return reply, []
        assert bound is not None
        control.halted = bound
        # The run stops here: held calls are answered too, so every call has its answer.
        refused = [*calls[int(room) :], *held]
        answers = [
            ToolMessage(content=f"Error: {bound}", tool_call_id=c.get("id") or "", name=c["name"])
            for c in refused
        ]
        return reply.model_copy(update={"tool_calls": calls[: int(room)]}), answers

    # -- after the model answered ---------------------------------------------------
    @staticmethod
    def _runs_tools(reply: AIMessage, control: RunControl) -> bool:
        if (reply.tool_calls or reply.invalid_tool_calls) and control.execute_tools:
            return True
        control.debug_print("Ending turn.")
        return False

    @staticmethod
    def _reply(
        agent: Agent, control: RunControl, prompt: list[BaseMessage], reply: Any, state: dict
    ) -> tuple[dict, AIMessage]:
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        if reply.name != agent.name:  # the sender, as Swarm stamps it
            # Assigned, not copied: the reply is this call's own object (add_messages
            # stamps its id the same way), and a copy cost ~3% of a handoff.
            reply.name = agent.name
        meta = reply.usage_metadata
        if meta:
            input_tokens = meta.get("input_tokens", 0)
            output_tokens = meta.get("output_tokens", 0)
        else:  # the model reported nothing: estimate what was sent
            input_tokens = count_tokens_approximately(prompt)
            output_tokens = count_tokens_approximately([reply])
        control.ledger.model_called(
            agent.name,
            control.model_override or agent.model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            tool_calls=reply.tool_calls,
        )
        control.new_messages += 1
        if control.debug:
            control.debug_print("Received completion:", to_openai([reply])[0])
        update: dict[str, Any] = {"messages": [reply]}
        if not (reply.tool_calls or reply.invalid_tool_calls) and state.get("handoff_trail"):
            update["handoff_trail"] = []  # someone answered: the handoff chain is over
        return update, reply

    def _apply(
        self,
        agent: Agent,
        control: RunControl,
        ran: AIMessage,
        outcome: ToolOutcome,
        answers: list[ToolMessage],
        update: dict,
        state: dict,
    ) -> dict:
        for tool_call in ran.tool_calls:
            control.ledger.tool_called(
                agent.name, tool_call["name"], tool_call.get("id") or "", tool_call["args"]
            )
        update["messages"].extend([*answers, *outcome.messages])
        control.new_messages += len(answers) + len(outcome.messages)
        context = state.get("context_variables") or {}
        new_context = outcome.context_variables
        if new_context is not None:
            old = state.get("context_variables") or {}
            if any(key not in new_context for key in old):
                # A tool deleted a key in place (Swarm hands tools the live dict). The
                # channel's reducer merges key by key and cannot forget, so replace it.
                update["context_variables"] = Overwrite(new_context)
            else:
                update["context_variables"] = new_context
            context = new_context
        target, label, call_id = self._next_agent(agent, control, outcome, update, state, context)
        if target is None:
            return update
        if not self.runtime.switch(agent, target, state, update, control, route=label):
            if call_id is not None:  # the transfer call's answer says why nothing switched
                _reanswer(update["messages"], call_id, f"Error: {control.halted}")
            return update
        if label is not None:
            control.debug_print(f"{agent.name} \u21d2 {target.name} (route)")
        return update

    def _next_agent(
        self,
        agent: Agent,
        control: RunControl,
        outcome: ToolOutcome,
        update: dict,
        state: dict,
        context: dict,
    ) -> tuple[Agent | None, str | None, str | None]:
        """Who takes over after this step's tools: ``(agent, route label or None, the
        transfer's tool call id or None)``.

        A tool's handoff first (``CALLER`` resolved to the agent that handed off to this
        one), else the first route whose condition holds. The budget is checked by the
        switch itself (:meth:`GraphRuntime.switch`).
        """
        if control.halted is not None:
            return None, None, None
        target, label, call_id = outcome.handoff, None, outcome.handoff_call
        if target is CALLER:
            caller = caller_of([*state["messages"], *update["messages"]])
            target = self.runtime.agent_named(caller, control)
            if target is None:
                _reanswer(
                    update["messages"],
                    call_id,
                    f"Error: nobody handed the conversation to {agent.name}, so there is no "
                    "caller to return to. Carry on with the conversation yourself.",
                )
            else:  # Swarm's handoff answer names the agent, not the placeholder
                _reanswer(
                    update["messages"],
                    call_id,
                    json.dumps({"assistant": target.name}),
                    only_if=json.dumps({"assistant": CALLER.name}),
                )
        if target is None and agent.routes:
            route = first_route(agent, context)
            if route is not None:
                target, label, call_id = route.to, route.label, None
        if target is None:
            return None, None, None
        return target, label, call_id


def _reanswer(
    messages: list[BaseMessage], call_id: str | None, content: str, only_if: str | None = None
) -> None:
    """Replace the answer to tool call ``call_id`` (a handoff that turned out otherwise)."""
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
            if only_if is None or message.content == only_if:
                messages[index] = message.model_copy(update={"content": content})
            return


def waiting_for(
    runtime: GraphRuntime, agent: Agent, messages: list[BaseMessage], control: RunControl | None
) -> tuple[Agent, WaitingCalls] | None:
    """The approval-marked calls ``messages`` end on and the agent whose tools they are."""
    found = open_calls(messages)  # the usual case after tools ran: every call answered
    if found is None:
        return None
    reply = found[0]
    owner = agent
    if reply.name not in (None, agent.name):
        owner = runtime.agent_named(reply.name, control) or agent
    held = held_calls(found, owner.tools)
    return None if held is None else (owner, held)


def _debug_lines(control: RunControl) -> Callable[[str], None] | None:
    return control.debug_print if control.debug else None


def _api_safe_name(message: BaseMessage) -> BaseMessage:
    """A copy whose ``name`` OpenAI accepts (``"Spanish Agent"`` -> ``"Spanish_Agent"``)."""
    name = message.name
    if not name or not _UNSAFE_NAME.search(name):
        return message
    return message.model_copy(update={"name": _UNSAFE_NAME.sub("_", name)})
