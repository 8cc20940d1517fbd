"""One agent node: a Swarm turn as one graph step.

Read :meth:`AgentNode._step` top-down, as openai/swarm's ``core.py`` ``run`` loop (``step``
and ``astep`` both run it, with the sync or the async driver of graph/core/drivers.py). Swarm's
own semantics at its four places are the four functions of graph/core/loop.py, called here and
by the tool runner and the runtime:

- **the instructions are built** in :meth:`AgentNode._prompt` (``agent.instructions``,
  called with the current ``context_variables`` when it is a function), and the model is
  picked, in :meth:`AgentNode._begin`;
- **the model is called** in :meth:`AgentNode._ask`; :meth:`AgentNode._replied` books the
  reply and admits its tool calls;
- **tools run** in :meth:`AgentNode._tools`, through
  :func:`~swarmgraph.graph.core.tool_calls.run_tool_calls` (``context_variables`` injected
  by ``_Runner.inject``); :meth:`AgentNode._after_tools` books the results and
  :meth:`AgentNode._next_agent` says who takes over when a tool returned an Agent;
- **the active agent switches** in :meth:`GraphRuntime.hand_off`, called from ``_tools``
  (the target's ``before_handoff`` hooks, then :meth:`GraphRuntime.switch` sets
  ``update["active_agent"]``); :meth:`AgentNode._next` sends the run to that agent's node
  with ``Command(goto=...)``, to the same node after tools, or ends the run.

A step's progress lives in one :class:`Turn`, which keeps the core's fields only (see its
docstring). Features reach the step through their middleware (LangChain 1.x
``AgentMiddleware`` and the swarm's extensions on the same objects: graph/core/middleware.py)
and ``turn.goto`` (where they send it instead, e.g. a fan-out's branches): an agent without
middleware runs only the code of this module; what a step with middleware does at each hook's
moment (a hook that stops the run, pauses it, hands the conversation over, wraps the model or
tool calls) is :class:`~swarmgraph.graph.core.hooked_step.HookedStep`, this node's base.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.types import Command, Overwrite

from .drivers import ASYNC, SYNC, Driver, drive
from .hooked_step import HookedStep, paused_after_model
from .loop import instructions
from .messages import open_calls, reanswer, to_openai
from .node_names import DYNAMIC_NODE
from .run_control import RunControl, current_control
from .runtime import GraphRuntime, ModelCall, ToolOutcome, Turn
from .state import StateUpdate, SwarmState
from .tool_calls import run_tool_calls
from .tool_events import tool_events_for
from .types import CALLER, Agent, AgentFunction

if TYPE_CHECKING:
    from .middleware import StepHooks

__all__ = ["DYNAMIC_NODE", "AgentNode", "Turn"]

# OpenAI rejects a message "name" with whitespace or <|\\/>; ChatOpenAI sends
# AIMessage.name (our sender) as that field, so unsafe senders are rewritten for it.
_UNSAFE_NAME = re.compile(r"[\s<|\\/>]")


class AgentNode(HookedStep):
    """The node for one agent, or (``agent=None``) for whichever unforeseen agent is active.

    A step returns ``Command(goto=...)`` to the next node (itself after tools ran, the
    target after a handoff) or a plain update when the turn is over; the builder declares
    every possible destination, so the drawn graph still shows each handoff edge.
    """

    def __init__(self, runtime: GraphRuntime, agent: Agent | None, name: str) -> None:
        self.runtime = runtime
        self.agent = agent
        self.name = name

    def step(self, state: SwarmState, config: RunnableConfig) -> StateUpdate | Command:
        return drive(self._step(state, config, SYNC))

    async def astep(self, state: SwarmState, config: RunnableConfig) -> StateUpdate | Command:
        return await self._step(state, config, ASYNC)

    async def _step(
        self, state: SwarmState, config: RunnableConfig, io: Driver
    ) -> StateUpdate | Command:
        """The step, for ``step`` and ``astep`` alike: its model call, tool calls and hooks go
        through ``io`` (graph/core/drivers.py: in place, or awaited)."""
        control = current_control(config)
        if control.marked is None:  # a tool of the run is marked: its middleware joins the run's
            self.runtime.marked(control)
        turn = self._turn(state, control)
        stack = turn.stack = self.runtime.stack_for(turn.agent, control)
        if stack is None or not stack.step_starts or not await self._started(turn, config, io):
            self._begin(turn)
        if turn.goto is not None:  # a feature sends the step elsewhere before it runs
            return turn.goto
        stack = turn.stack
        hooks = None  # the agent's middleware (graph/core/middleware.py), for a step that asks
        if stack is not None and turn.call is not None:
            if _replaced(turn):  # the hooks see the context as a before_step hook replaced it
                state = {**state, "context_variables": turn.context}
            hooks = self._hooks(turn, state, config, io)
            paused = hooks.paused_reply()
            if paused is not None:  # its after_model hooks paused the run: they go on first
                return await self._resume_after_model(turn, paused, hooks, io, config)
            # (each moment asked only where the stack has a hook for it: most have neither)
            entered = stack.enters and await hooks.enter()
            if entered or (stack.before_model and await hooks.before_model()):
                if hooks.handed is not None:  # a hook hands the conversation over: no model call
                    return await self._handed(turn, hooks, hooks.handed, io)
                return await self._stopped(turn, hooks)
            if hooks.written:  # a hook changed the conversation: the prompt is read from it
                self._reprompt(turn, hooks.messages)
        if turn.call is not None:  # the model speaks
            call = turn.call
            if hooks is None or not hooks.stack.model_wrappers:
                reply = await self._ask(turn, call, turn.prompt, config, io)
            else:  # through each wrap_model_call, down to the same call
                reply = await self._ask_through(turn, call, hooks, config, io)
            self._replied(turn, call, reply)
            if hooks is not None:
                after = await self._after_model(turn, call, reply, hooks)
                if after is not None:  # the run stops here, or pauses before the tools
                    return after
                if hooks.handed is not None:  # a hook hands the conversation over
                    return await self._handed(turn, hooks, hooks.handed, io)
        if turn.ran is not None:  # tools run
            wrapping = hooks
            if hooks is None and stack is not None and stack.tool_wrappers:
                # calls a before_step hook decided (no model call): through wrap_tool_call too
                wrapping = self._hooks(turn, state, config, io)
            await self._tools(turn, io, wrapping, config)
        if hooks is None or not hooks.stack.leaves:
            return self._next(turn)
        return await self._leaving(turn, hooks, self._next(turn))

    async def _tools(
        self, turn: Turn, io: Driver, hooks: StepHooks | None, config: RunnableConfig
    ) -> None:
        """**Tools run here** (graph/core/tool_calls.py), ``context_variables`` injected; then the
        results are booked (``_after_tools``) and a handoff switches the agent
        (:meth:`GraphRuntime.hand_off`)."""
        control = turn.control
        assert turn.ran is not None
        hook = control.hooks.tool_inputs or self.runtime.hooks.tool_inputs
        writer = None if turn.stack is None else turn.stack.context_writer
        writes = None if writer is None else writer.tool_context(control)
        outcome = await run_tool_calls(
            turn.ran,
            turn.tools,
            turn.context,
            io,
            debug=control.debug_print if control.debug else None,
            writes=writes,  # a middleware's rules for each call's context change
            records=turn.records,  # calls that run at most once (a middleware's hold_calls)
            inputs=hook(turn.agent) if hook is not None else None,  # injected parameters
            first_handoff_wins=self.runtime.first_handoff_wins,
            around=None if hooks is None else self._around(hooks),
            events=tool_events_for(config, io is ASYNC),  # LangChain's tool callbacks
            pauses=not control.swarm_run,  # a checkpointed graph resumes a tool's interrupt()
            state=lambda: self._state_read(turn, hooks),  # for a ToolRuntime, an InjectedState
            state_keys=self.runtime.state_keys,  # what a tool's Command(update=...) may write
            agents=lambda name: self.runtime.agent_named(name, control),  # its Command(goto=)
        )
        if outcome.paused is not None:  # a tool asked a human (LangGraph's interrupt())
            self._paused(turn, outcome, writes is not None)
            return
        target, label, call_id = self._after_tools(turn, turn.ran, outcome, writes is not None)
        if target is not None:  # a tool (or a route) hands off: the agent switches here
            await self.runtime.hand_off(
                turn.agent,
                target,
                turn.state,
                turn.update,
                turn.control,
                turn.context if outcome.context_variables is None else outcome.context_variables,
                io,
                way="handoff" if label is None else "route",
                route=label,
                call_id=call_id,
            )

    def _state_read(self, turn: Turn, hooks: StepHooks | None) -> SwarmState:
        """The state as this step's tools read it: with what its hooks wrote so far (a
        ``before_agent`` hook's keys: ``ShellToolMiddleware``'s session; a ``before_model``
        hook's messages), and its agent active (a run's first step has no ``active_agent``
        yet: the graph's entry picked this node)."""
        state = turn.state
        if hooks is not None and hooks.values:
            state = {**state, **hooks.values}  # type: ignore[typeddict-item]
        if hooks is not None and hooks.written:  # the conversation as the hooks left it
            state = {**state, "messages": hooks.messages}  # type: ignore[typeddict-item]
        if "active_agent" in state or self.agent is None:
            return state
        return {**state, "active_agent": self.name}

    # -- the model call ------------------------------------------------------------------------
    async def _ask(
        self,
        turn: Turn,
        call: ModelCall,
        prompt: list[BaseMessage],
        config: RunnableConfig,
        io: Driver,
    ) -> AIMessage:
        """**The model is called here**: ``call`` with ``prompt``, through the driver (the
        senders' names made what the model's API takes, where it sends them)."""
        if turn.control.debug:  # Swarm prints the plain message dicts it sends
            turn.control.debug_print("Getting chat completion for...:", to_openai(prompt))
        if call.safe_names:
            prompt = [_as_sent(m) for m in prompt]
        heard = None  # what listens to a call that may stream (GraphRuntime.listen)
        callbacks: Any = config.get("callbacks")
        if call.streams or getattr(callbacks, "handlers", callbacks):  # it may stream
            listen = self.runtime.listen
            heard = None if listen is None else listen(call.runnable, config, call.kwargs)
        # (a ModelListener is a LangChain callback handler: typed as any, it goes in the config)
        sent = config if heard is None else merge_configs(config, {"callbacks": [cast(Any, heard)]})
        reply = await io.invoke(call.runnable, prompt, sent, call.kwargs)
        return reply if heard is None else heard.finish(reply)

    def _next(self, turn: Turn) -> StateUpdate | Command:
        """Where the step goes: after tools, where :meth:`GraphRuntime.next_node` says; after a
        fallback took over, its node; else nowhere (the run ends here)."""
        control = turn.control
        if turn.stack is not None and "context_variables" not in turn.update and _replaced(turn):
            turn.update["context_variables"] = Overwrite(turn.context)  # written as it is
        if turn.goto is not None:  # a feature sends it (a fan-out's branches)
            return turn.goto
        if turn.ran is not None:
            return self.runtime.next_node(self.name, turn.update, turn.state, control)
        # No tools ran, yet the agent switched: a hook handed the conversation over (_handed).
        key = turn.update.get("active_agent")
        if key is not None and control.turns_left():
            return Command(update=turn.update, goto=self.runtime.node_for(key, control))
        return turn.update

    # -- before the model: calls that were waiting, or the prompt ----------------------
    def _turn(self, state: SwarmState, control: RunControl) -> Turn:
        """The step as it starts: its agent, state and context."""
        context = state.get("context_variables") or {}
        return Turn(self._agent_of(state, control), control, state, context)

    def _paused(self, turn: Turn, outcome: ToolOutcome, written: bool) -> None:
        """A tool called LangGraph's ``interrupt()``: the graph pauses there, and on resume the
        step runs the reply's calls that have no answer yet (:meth:`_begin`), that one first,
        whose ``interrupt()`` now returns the human's answer. LangGraph runs a paused node again
        from its start, so what this step did before the call (the model's reply, the calls
        that ran) is written first, in a step of its own that comes back here: the pause
        itself is raised only by a step that did nothing before it, and no call runs twice.
        A handoff by an earlier call of the reply is not taken (the agent still has calls to
        run); its answer says so."""
        update = turn.update
        if not update.get("messages") and not outcome.messages and not turn.answers:
            raise outcome.paused  # type: ignore[misc]
        done = {m.tool_call_id for m in outcome.messages}
        calls = turn.ran.tool_calls if turn.ran is not None else []
        self._book(turn, [c for c in calls if c.get("id") in done], outcome, written)
        if outcome.handoff is not None:
            reanswer(
                update["messages"],
                outcome.handoff_call,
                f"Not transferred to {outcome.handoff.name}: a later call of this reply waits "
                "for a human's decision, and the conversation stays here until it has run.",
            )
        turn.goto = Command(update=update, goto=self.name)

    def _begin(self, turn: Turn) -> None:
        """The step's plan: ask the model (``turn.call``), with the prompt it reads; or, in a
        graph that can pause (not ``Swarm.run``), run the calls of this agent's reply that have
        no answer yet, where a tool's ``interrupt()`` paused the graph (:meth:`_paused`)."""
        agent, control = turn.agent, turn.control
        if not control.swarm_run:
            found = open_calls(turn.state["messages"])  # this agent's, left by a pause
            if found is not None and found[0].name == agent.name and not paused_after_model(turn):
                reply, calls = found
                waiting = reply.model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})
                turn.update = {"messages": []}
                self._admit(turn, waiting, self.runtime.tools_of(agent))
                return
        prompt = self._prompt(agent, turn.context, turn.state["messages"])
        call = self.runtime.model_for(agent, control)
        turn.prompt = prompt  # as the agent reads it; as sent: _ask
        turn.call = call

    def _prompt(
        self, agent: Agent, context: dict[str, Any], messages: Sequence[BaseMessage]
    ) -> list[BaseMessage]:
        """**The instructions are built here**: ``agent.instructions`` (called with the current
        context when it is a function) as the system prompt, then what the agent reads of the
        conversation."""
        return [SystemMessage(instructions(agent, context)), *messages]

    def _agent_of(self, state: SwarmState, control: RunControl) -> Agent:
        """The agent this step runs: the node's own (the run's object of it, under Swarm), or
        for the dynamic node whichever unforeseen agent is active."""
        if self.agent is None:
            return self.runtime.agent_for(state.get("active_agent"), control)
        if control.agents is not None:  # the run's own Agent objects (Swarm)
            return control.agents[self.name]
        return self.agent

    def _admit(
        self, turn: Turn, reply: AIMessage, tools: list[AgentFunction], *, hold: bool = True
    ) -> None:
        """``turn.ran``: ``reply`` narrowed to the calls that run now; ``turn.answers`` for
        those that do not: calls a middleware's ``hold_calls`` hook holds are left unanswered
        (``hold=False``: none is, they were decided). (Calls a middleware refuses, a budget's
        past its allowance, it answers in ``after_model``.)"""
        held: list[ToolCall] = []
        control = turn.control
        stack = turn.stack
        if hold and stack is not None and stack.holders:  # (approvals: graph/features/decisions.py)
            for m in stack.holders:
                reply, more = m.hold_calls(turn, reply, tools)
                held += more
        turn.tools = tools
        turn.ran = reply
        if held and control.exceeded is not None:
            # A limit stopped the run (a middleware refused calls of this reply): the held
            # calls are answered too, so every call has its answer.
            turn.answers = [
                ToolMessage(
                    content=f"Error: {control.exceeded}",
                    tool_call_id=c.get("id") or "",
                    name=c["name"],
                )
                for c in held
            ]

    # -- after the model answered ---------------------------------------------------
    def _replied(self, turn: Turn, call: ModelCall, reply: Any) -> None:
        """Book the reply (sender, usage, the turn's update); when it asks for tools (and
        tools run), admit its calls."""
        agent, control = turn.agent, turn.control
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
            input_tokens = count_tokens_approximately(turn.prompt)
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
        turn.update = {"messages": [reply]}
        asks = bool(reply.tool_calls or reply.invalid_tool_calls)
        if not asks and turn.state.get("handoff_trail"):
            turn.update["handoff_trail"] = []  # someone answered: the handoff chain is over
        if asks and control.execute_tools:
            self._admit(turn, reply, call.tools)
        else:
            if control.debug:
                control.debug_print("Ending turn.")

    def _after_tools(
        self, turn: Turn, ran: AIMessage, outcome: ToolOutcome, written: bool = False
    ) -> tuple[Agent | None, str | None, str | None]:
        """Book the tool results into the update, and say who takes over when a tool (or a
        route) hands off (:meth:`_next_agent`). ``written``: a middleware's ``ContextWrites``
        applied the calls' context changes (the result is final)."""
        context = self._book(turn, ran.tool_calls, outcome, written)
        after = self.runtime.after_handoffs  # a graph extension's (e.g. a fan-out's)
        if outcome.handoffs and after is not None:
            turn.goto = after(turn, outcome, context)
            if turn.goto is not None:
                return None, None, None
        return self._next_agent(turn, outcome, context)

    @staticmethod
    def _book(
        turn: Turn, calls: Sequence[ToolCall], outcome: ToolOutcome, written: bool
    ) -> dict[str, Any]:
        """Book ``calls`` (those that ran) in the run's ledger, and their answers and context
        change into the step's update; the context after them."""
        agent, control, update = turn.agent, turn.control, turn.update
        for call in calls:
            control.ledger.tool_called(agent.name, call["name"], call.get("id") or "", call["args"])
        update.setdefault("messages", []).extend([*turn.answers, *outcome.messages])
        if outcome.state:  # a tool's Command wrote the graph's other keys
            update.update(outcome.state)  # type: ignore[typeddict-item]
        control.new_messages += len(turn.answers) + len(outcome.messages)
        new = outcome.context_variables
        if new is None:
            return turn.context
        if written or any(key not in new for key in turn.context):
            # A tool deleted a key in place (Swarm hands tools the live dict), or a middleware's
            # rules already applied the tools' updates (a typed context's reducers, and
            # checked it): the step's context replaces the channel's, not merged again.
            update["context_variables"] = Overwrite(new)
        else:
            update["context_variables"] = new
        return new

    def _next_agent(
        self, turn: Turn, outcome: ToolOutcome, context: dict[str, Any]
    ) -> tuple[Agent | None, str | None, str | None]:
        """Who takes over after this step's tools: ``(agent, route label or None, the
        transfer's tool call id or None)``.

        A tool's handoff, as the agent's middleware's ``next_agent`` hooks leave it
        (:meth:`_chosen`: ``Agent(routes=)`` picks one when no tool handed off, ``CALLER`` is
        resolved to the agent that handed off to this one). Whether the switch may happen is
        asked where it happens (:meth:`GraphRuntime.hand_off`: ``before_handoff``).
        """
        agent, control = turn.agent, turn.control
        if control.exceeded is not None:  # a limit stopped the run (refused calls, above)
            return None, None, None
        target, label, call_id = outcome.handoff, None, outcome.handoff_call
        if target is not None and not isinstance(target, Agent):  # several agents: none runs them
            reanswer(turn.update.get("messages", []), call_id, target.unplaced(agent.name))
            target = None
        stack = turn.stack  # the agent's, as the step's start found it (or _started moved it)
        choosers = [] if stack is None else stack.choosers  # middleware that picks who takes over
        brings = self.runtime.target_options
        if target is not None and brings is not None:  # a placeholder brings its resolution
            choosers = [*brings(target), *choosers]
        if choosers:
            target, label, call_id = self._chosen(turn, choosers, target, context, call_id)
        if target is CALLER:  # a placeholder no middleware resolved: never a node of its own
            reanswer(
                turn.update.get("messages", []),
                call_id,
                f"Error: {CALLER.name} stands for the agent that handed the conversation to "
                f"{agent.name}, and nothing in this run resolves it. Carry on with the "
                "conversation yourself.",
            )
            target = None
        if target is None:
            return None, None, None
        return target, label, call_id


def _replaced(turn: Turn) -> bool:
    """Whether a ``before_step`` hook replaced the step's context (a typed context's, its
    defaults filled in): then the step writes it. A step whose state holds no context, or an
    empty one, starts from a new ``{}``, which is not a replacement (writing it would only
    put ``{}`` over ``{}``, a channel write each step with middleware paid)."""
    given = turn.state.get("context_variables")
    return turn.context is not given and bool(given or turn.context)


def _as_sent(message: BaseMessage) -> BaseMessage:
    """What Swarm sends for ``message`` to a model that sends ``name`` (ChatOpenAI): an
    assistant message without one (Swarm's assistant dicts carry ``sender``, never ``name``;
    OpenAI would show the model a name Swarm never sent), any other name made API-safe
    (``"Spanish Agent"`` -> ``"Spanish_Agent"``)."""
    name = message.name
    if name and isinstance(message, AIMessage):
        return message.model_copy(update={"name": None})
    if not name or not _UNSAFE_NAME.search(name):
        return message
    return message.model_copy(update={"name": _UNSAFE_NAME.sub("_", name)})
