"""One agent node: a Swarm turn as one graph step.

Read :meth:`AgentNode._step` top-down (``step`` and ``astep`` both run it, with the sync or
the async driver of graph/core/drivers.py); the three places the seed's sequence diagram names are:

- **instructions are built** in :meth:`AgentNode._begin` (``agent.instructions``, called with
  the current ``context_variables`` when it is a function), which also picks the model;
- **tools run** in :func:`swarmgraph.graph.core.tool_calls.run_tool_calls`, called from ``_step``
  once the model replied;
- **the active agent switches** in :meth:`AgentNode._tools`, where a tool returned an
  Agent (:meth:`AgentNode._next_agent` asks the middleware's ``next_agent`` hooks, which
  resolve ``CALLER`` and take the agent's routes) and :meth:`GraphRuntime.hand_off` asks the
  target's ``before_handoff`` hooks, then sets ``update["active_agent"]``;
  :meth:`GraphRuntime.next_node` then sends the run to that agent's node with
  ``Command(goto=...)``.

A step's progress lives in one :class:`Turn`, which keeps the core's fields only (see its
docstring): features reach the step through their middleware's hooks and ``turn.goto``
(where they send it instead), and keep their per-step state typed (``turn.own(Kind)``).
Features are entered only when the run uses them (docs/internals.md): ``Agent(history=...)``
installs a middleware that narrows the model request (graph/options.py), and
``Swarm.run(budget=)`` one for the run (``RunControl.middleware``: its ``before_model``,
``after_model`` and ``before_handoff`` hooks); when a tool of the run is marked
(graph/core/marks.py; ``RunControl.decides``), the run's middleware gets the one marked tools
bring (graph/features/decisions.py, ``GraphRuntime.stack_for(agent, control)``): its
``hold_calls`` hook holds approval-marked calls in ``_admit``, its ``before_step`` hook
(``_started``, before ``_begin``) decides them at the start of the agent's next step
(``Swarm.run`` stops, the compiled graph calls ``interrupt()``) and picks up a reply a step
that died left with the effect ledger, and effect calls run through ``turn.records``.
Contracts (``input_guardrails=``,
``output_guardrails=``, ``requires=``) are a middleware graph/options.py installs
(graph/features/guardrail_middleware.py): its ``before_model`` checks a user message, its
``after_model`` a final answer, its ``before_handoff`` an agent coming in; a hook that hands
the conversation to a fallback (``jump_to=HandTo(...)``) switches the agent here
(``_handed``), and the step goes to its node. A fan-out (graph/features/branches.py) sends
the step to its branches (``turn.goto``). A typed context's rules (``runtime.schema``, a
:class:`~swarmgraph.graph.core.context_rules.ContextRules` the API hands the builder for
``context_schema=``) are asked in ``_begin`` and by the tool runner. The run's hooks
(``RunControl.hooks``: a ``Session`` with long-term memory supplies ``prompt_context`` and
``tool_inputs``) add to the system prompt in ``_begin`` and give the tools their injected
parameters.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    RemoveMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.errors import GraphInterrupt
from langgraph.types import Command, Overwrite

from .drivers import ASYNC, SYNC, Driver, drive
from .hook_context import call_context
from .messages import reanswer, to_openai
from .node_names import DYNAMIC_NODE
from .run_control import RunControl, current_control
from .runtime import GraphRuntime, ModelCall, StepStart, ToolOutcome, Turn
from .schema import tool_spec
from .state import StateUpdate, SwarmState
from .tool_calls import CallsAround, run_tool_calls
from .tool_events import tool_events_for
from .types import CALLER, Agent, AgentFunction

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest

    from .middleware import HandTo, StepHooks

__all__ = ["DYNAMIC_NODE", "AgentNode", "Turn"]

# OpenAI rejects a message "name" with whitespace or <|\\/>; ChatOpenAI sends
# AIMessage.name (our sender) as that field, so unsafe senders are rewritten for it.
_UNSAFE_NAME = re.compile(r"[\s<|\\/>]")


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
        if control.decides is None:  # a tool of the run is marked: its middleware joins the run's
            self.runtime.decides(control)
        turn = self._turn(state, control)
        stack = turn.stack = self.runtime.stack_for(turn.agent, control)
        if stack is None or not stack.step_starts or not await self._started(turn, config, io):
            self._begin(turn)
        if turn.goto is not None:  # a feature sends the step elsewhere before it runs
            return turn.goto
        stack = turn.stack
        hooks = None  # the agent's middleware (graph/core/middleware.py), for a step that asks
        if stack is not None and turn.call is not None:
            from .middleware import StepHooks

            key = self.runtime.key_for(turn.agent, control)
            hooks = StepHooks(stack, state, config, io, key, control)
            paused = hooks.paused_reply()
            if paused is not None:  # its after_model hooks paused the run: they go on first
                return await self._resume_after_model(turn, paused, hooks, io, config)
            if await hooks.enter() or await hooks.before_model():
                if hooks.handed is not None:  # a hook hands the conversation over: no model call
                    return await self._handed(turn, hooks, hooks.handed, io)
                return await self._stopped(turn, hooks)
            if hooks.written:  # a hook changed the conversation: the prompt is read from it
                self._reprompt(turn, hooks.messages)
        if turn.call is not None:  # the model speaks
            call = turn.call
            if hooks is None or not stack.model_wrappers:  # type: ignore[union-attr]
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
            if hooks is None and stack is not None and stack.tool_wrappers:
                # calls a before_step hook decided (no model call): through wrap_tool_call too
                from .middleware import StepHooks

                key = self.runtime.key_for(turn.agent, control)
                wrapping = StepHooks(stack, state, config, io, key, control)
                await self._tools(turn, io, wrapping, config)
            else:
                await self._tools(turn, io, hooks, config)
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
        outcome = await run_tool_calls(
            turn.ran,
            turn.tools,
            turn.context,
            io,
            debug=control.debug_print if control.debug else None,
            schema=self.runtime.schema,
            effects=turn.records,  # calls that run at most once (a middleware's hold_calls)
            inputs=hook(turn.agent) if hook is not None else None,  # injected parameters
            observer=None if control.observers is None else control.observers.tools_of(turn.agent),
            first_handoff_wins=self.runtime.first_handoff_wins,
            around=None if hooks is None else self._around(hooks),
            events=tool_events_for(config, io is ASYNC),  # LangChain's tool callbacks
        )
        target, label, call_id = self._after_tools(turn, turn.ran, outcome)
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

    # -- middleware (graph/core/middleware.py): the model call, what the hooks wrote ------------
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
        control = turn.control
        if call.safe_names:
            prompt = [_as_sent(m) for m in prompt]
        heard = None  # what listens to a call that may stream (GraphRuntime.listen)
        callbacks: Any = config.get("callbacks")
        if call.streams or getattr(callbacks, "handlers", callbacks):  # it may stream
            listen = self.runtime.listen
            heard = None if listen is None else listen(call.runnable, config, call.kwargs)
        # (a ModelListener is a LangChain callback handler: typed as any, it goes in the config)
        sent = config if heard is None else merge_configs(config, {"callbacks": [cast(Any, heard)]})
        if control.observers is None:
            reply = await io.invoke(call.runnable, prompt, sent, call.kwargs)
        else:  # an observed run (graph/core/hooks.py): around the model call
            reply = await control.observers.model_call(
                turn.agent,
                control.model_override or turn.agent.model,
                lambda: io.invoke(call.runnable, prompt, sent, call.kwargs),
                call.runnable,
                prompt,
            )
        return reply if heard is None else heard.finish(reply)

    async def _ask_through(
        self, turn: Turn, call: ModelCall, hooks: StepHooks, config: RunnableConfig, io: Driver
    ) -> AIMessage:
        """The model call through each ``wrap_model_call``: a request the middleware left as it
        was is the step's own call; a changed one (model, tools, settings) is bound anew."""
        model = self.runtime.chat_model(turn.agent, turn.control)
        tools = [tool_spec(f).schema for f in call.tools]
        request = hooks.model_request(model, turn.prompt, tools, turn.agent.tool_choice)

        async def ask(req: ModelRequest) -> AIMessage:
            prompt: list[BaseMessage] = [*([req.system_message] if req.system_message else [])]
            prompt += req.messages
            same = req.model is model and req.tools is request.tools
            if same and req.tool_choice == request.tool_choice and not req.model_settings:
                return await self._ask(turn, call, prompt, config, io)
            settings = req.model_settings
            bound = (
                req.model.bind_tools(req.tools, tool_choice=req.tool_choice, **settings)
                if req.tools
                else req.model.bind(**settings)
            )
            return await self._ask(
                turn, call._replace(runnable=bound, kwargs={}), prompt, config, io
            )

        return await hooks.call_model(request, ask)

    @staticmethod
    def _around(hooks: StepHooks) -> CallsAround | None:
        """The tool calls through the middleware's ``wrap_tool_call`` hooks, if any has one."""
        if not hooks.stack.tool_wrappers:
            return None
        from .tool_wrapping import calls_around

        return calls_around(hooks)

    def _reprompt(self, turn: Turn, messages: Sequence[BaseMessage]) -> None:
        """The prompt again, from the conversation a ``before_model`` hook changed."""
        turn.prompt = self._prompt(turn.agent, turn.context, messages, turn.control)

    async def _after_model(
        self, turn: Turn, call: ModelCall, reply: AIMessage, hooks: StepHooks, resumed: bool = False
    ) -> StateUpdate | Command | None:
        """``after_model`` on the booked reply: None, the step goes on; else where it goes (a
        hook stopped the run, or paused it: the reply is kept and the hooks run again in the
        agent's next step). A hook that rewrote the reply (same id) or answered some of its
        calls changes what runs."""
        from .middleware import AFTER_MODEL_KEY, with_messages

        written = len(hooks.written)
        update = turn.update
        if not resumed:
            if hooks.written:  # before_model's messages come before the reply
                update["messages"] = [*hooks.written, *update.get("messages", ())]
            if not hooks.stack.after_model:
                update.update(hooks.written_update())  # type: ignore[typeddict-item]
                return None
            known = reply.id is not None and any(m.id == reply.id for m in hooks.messages)
            if reply.id is None or known:  # the channel's rules (an id given, or replaced)
                hooks.messages = with_messages(hooks.messages, [reply])
            else:  # a new reply with its id: appended, as add_messages would
                hooks.messages = [*hooks.messages, reply]
        try:
            if hooks.stack.after_model and await hooks.after_model():
                if hooks.handed is not None:  # handed over: the step switches (_handed)
                    return None
                return await self._stopped(turn, hooks)
        except GraphInterrupt:
            if resumed:  # the pause itself: LangGraph keeps the run here until it is resumed
                raise
            if turn.control.swarm_run:  # stateless: nothing can resume it, so the run stops
                hooks.stopped = hooks.paused_by
                # every call gets its answer, so the conversation stays one a model can read
                who = hooks.stopped.middleware if hooks.stopped else "a middleware"
                reason = (
                    f"Error: not run: {who} waits for a human's decision, and Swarm.run keeps no "
                    "state to resume from (a compiled graph with a checkpointer does)."
                )
                hooks.written += [
                    ToolMessage(content=reason, tool_call_id=c.get("id") or "", name=c["name"])
                    for c in reply.tool_calls
                ]
                return await self._stopped(turn, hooks)
            turn.ran, turn.answers = None, []
            update.update(hooks.written_update())  # type: ignore[typeddict-item]
            update[AFTER_MODEL_KEY] = reply.id  # type: ignore[literal-required]
            return Command(update=update, goto=self.name)
        after = hooks.written[written:]
        if after:
            update["messages"].extend(after)
            turn.control.new_messages += sum(1 for m in after if m.id != reply.id)
            now, answered = hooks.current(reply), hooks.answered()
            calls = [c for c in now.tool_calls if c.get("id") not in answered]
            turn.ran, turn.answers = None, []
            if turn.control.execute_tools and now.tool_calls:
                # every call a hook left unanswered runs; none left, the model is asked again
                self._admit(turn, now.model_copy(update={"tool_calls": calls}), call.tools)
        update.update(hooks.written_update())  # type: ignore[typeddict-item]
        if resumed:
            update[AFTER_MODEL_KEY] = None  # type: ignore[literal-required]
        return None

    async def _resume_after_model(
        self, turn: Turn, reply: AIMessage, hooks: StepHooks, io: Driver, config: RunnableConfig
    ) -> StateUpdate | Command:
        """The step after ``after_model`` hooks paused the run: they run again on the kept
        reply (a resumed ``interrupt()`` now returns the human's answer), then its calls run."""
        call = turn.call
        assert call is not None
        turn.call, turn.update = None, {"messages": []}
        if reply.tool_calls and turn.control.execute_tools:
            self._admit(turn, reply, call.tools)
        after = await self._after_model(turn, call, reply, hooks, resumed=True)
        if after is not None:
            return after
        if hooks.handed is not None:
            return await self._handed(turn, hooks, hooks.handed, io)
        if turn.ran is not None:
            await self._tools(turn, io, hooks, config)
        return await self._leaving(turn, hooks, self._next(turn))

    async def _stopped(self, turn: Turn, hooks: StepHooks) -> StateUpdate | Command:
        """A hook jumped to the end: the step writes what the hooks wrote and the run stops
        here, with the reason where ``Swarm.run``'s Response reads it."""
        control, agent = turn.control, turn.agent
        if control.exceeded is None and control.stop_error() is None:  # the first reason stands
            control.stopped = hooks.stopped
        control.debug_print(f"{hooks.stopped}")
        turn.call, turn.ran = None, None
        for message in hooks.written:  # the sender, as on any reply of this agent
            if isinstance(message, AIMessage) and message.name is None:
                message.name = agent.name
        known = {m.id for m in turn.update.get("messages", ())}
        new = [m for m in hooks.written if m.id not in known]
        turn.update.setdefault("messages", []).extend(new)
        control.new_messages += sum(1 for m in new if not isinstance(m, RemoveMessage))
        turn.update.update(hooks.written_update())  # type: ignore[typeddict-item]
        await hooks.leave(run_ends=True)
        self._wrote(turn, hooks, len(hooks.written))
        return turn.update

    async def _leaving(
        self, turn: Turn, hooks: StepHooks, result: StateUpdate | Command
    ) -> StateUpdate | Command:
        """``after_agent`` when the run ends on this agent or it hands off."""
        ends = not isinstance(result, Command)
        switched = "active_agent" in turn.update and turn.update["active_agent"] != hooks.agent_key
        if ends or switched:
            written = len(hooks.written)
            await hooks.leave(run_ends=ends)
            self._wrote(turn, hooks, written)
        return result

    @staticmethod
    def _wrote(turn: Turn, hooks: StepHooks, since: int) -> None:
        """Put what ``after_agent`` hooks wrote (from ``since`` on) into the step's update."""
        later = hooks.written[since:]
        if later:
            turn.update.setdefault("messages", []).extend(later)
            turn.control.new_messages += len(later)
        turn.update.update(hooks.written_update())  # type: ignore[typeddict-item]

    async def _handed(
        self, turn: Turn, hooks: StepHooks, to: HandTo, io: Driver
    ) -> StateUpdate | Command:
        """A ``before_model`` or ``after_model`` hook handed the conversation to ``to.agent``
        (``jump_to=HandTo(...)``): what the hooks wrote goes into the update, a tool call of
        the reply that has no answer is answered (nothing runs it now), and the agent switches
        through the target's ``before_handoff`` hooks; the step then goes to its node."""
        control, update = turn.control, turn.update
        known = {m.id for m in update.get("messages", ())}
        new = [m for m in hooks.written if m.id not in known]
        if turn.ran is not None:
            done = {*hooks.answered(), *(m.tool_call_id for m in turn.answers)}
            new += [
                ToolMessage(
                    content=f"Error: not run: the conversation went to {to.agent.name}.",
                    tool_call_id=c.get("id") or "",
                    name=c["name"],
                )
                for c in turn.ran.tool_calls
                if c.get("id") not in done
            ]
            new[:0] = turn.answers
        turn.call, turn.ran, turn.answers = None, None, []
        if new:
            update.setdefault("messages", []).extend(new)
            control.new_messages += sum(1 for m in new if not isinstance(m, RemoveMessage))
        update.update(hooks.written_update())  # type: ignore[typeddict-item]
        await self.runtime.hand_off(
            turn.agent,
            to.agent,
            turn.state,
            update,
            control,
            turn.context,
            io,
            way="jump",
            note=to.note,
        )
        return await self._leaving(turn, hooks, self._next(turn))

    def _next(self, turn: Turn) -> StateUpdate | Command:
        """Where the step goes: after tools, where :meth:`GraphRuntime.next_node` says; after a
        fallback took over, its node; else nowhere (the run ends here)."""
        control = turn.control
        if "filled" in turn.features and "context_variables" not in turn.update:
            turn.update["context_variables"] = Overwrite(turn.context)
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
        """The step as it starts: its agent, state and (typed: checked) context."""
        context = state.get("context_variables") or {}
        turn = Turn(self._agent_of(state, control), control, state, context)
        schema = self.runtime.schema
        if schema is not None and schema.kept(control) is not context:
            self._validate(turn)
        return turn

    async def _started(self, turn: Turn, config: RunnableConfig, io: Driver) -> bool:
        """The middleware's ``before_step`` hooks (graph/core/middleware.py), in order, up to
        the first that planned the step itself (calls an earlier step left waiting run or are
        answered now): True, the model is not asked."""
        stack = turn.stack
        assert stack is not None
        start = StepStart(turn, self.runtime, config, io, self.name, self._admit_all)
        agent = turn.agent
        for m in stack.step_starts:
            if await m.before_step(start):
                if turn.agent is not agent:  # the calls' owner's middleware, from here on
                    turn.stack = self.runtime.stack_for(turn.agent, turn.control)
                return True
        return False

    def _begin(self, turn: Turn) -> None:
        """The step's plan: ask the model (``turn.call``), with the prompt it reads."""
        agent, control = turn.agent, turn.control
        prompt = self._prompt(agent, turn.context, turn.state["messages"], control)
        call = self.runtime.model_for(agent, control)
        turn.prompt = prompt  # as the agent reads it; as sent: _ask
        turn.call = call

    def _prompt(
        self,
        agent: Agent,
        context: dict[str, Any],
        messages: Sequence[BaseMessage],
        control: RunControl,
    ) -> list[BaseMessage]:
        """**The instructions are built here**: ``agent.instructions`` (called with the current
        context when it is a function) as the system prompt, then what the agent reads of the
        conversation."""
        # Instructions are rebuilt on every model call from the current context;
        # missing keys read as "" exactly as in Swarm.
        instructions = agent.instructions
        if callable(instructions):
            instructions = instructions(defaultdict(str, context))
        # The run's prompt context (a Session's long-term recall) is asked per model call and
        # per agent: a handoff changes the agent, and so what it may be told.
        hook = control.hooks.prompt_context or self.runtime.hooks.prompt_context
        extra = None
        if hook is not None:
            with call_context(context):  # what the hook's helpers read as the run's context
                extra = hook(agent, messages)
        if extra:
            instructions = f"{instructions}\n\n{extra}"
        prompt: list[BaseMessage] = [SystemMessage(content=instructions), *messages]
        if control.debug:  # Swarm prints the plain message dicts it sends
            control.debug_print("Getting chat completion for...:", to_openai(prompt))
        return prompt

    def _validate(self, turn: Turn) -> None:
        """A typed context (``context_schema=``, its rules: graph/core/context_rules.py): the
        compiled graph's input may lack defaults (then the step writes them); a valid one is not
        checked twice."""
        schema, given = self.runtime.schema, turn.context
        assert schema is not None
        turn.context = schema.validate(given)
        if turn.context != given:
            turn.features["filled"] = True
        else:
            turn.context = given
            schema.keep(turn.control, given)

    def _agent_of(self, state: SwarmState, control: RunControl) -> Agent:
        """The agent this step runs: the node's own (the run's object of it, under Swarm), or
        for the dynamic node whichever unforeseen agent is active."""
        if self.agent is None:
            return self.runtime.agent_for(state.get("active_agent"), control)
        if control.agents is not None:  # the run's own Agent objects (Swarm)
            return control.agents[self.name]
        return self.agent

    def _admit_all(self, turn: Turn, reply: AIMessage, tools: list[AgentFunction]) -> None:
        """:meth:`_admit` with no call held: calls that were decided (``StepStart.admit``)."""
        self._admit(turn, reply, tools, hold=False)

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
        self, turn: Turn, ran: AIMessage, outcome: ToolOutcome
    ) -> tuple[Agent | None, str | None, str | None]:
        """Book the tool results into the update, and say who takes over when a tool (or a
        route) hands off (:meth:`_next_agent`)."""
        agent, control, update = turn.agent, turn.control, turn.update
        for call in ran.tool_calls:
            control.ledger.tool_called(agent.name, call["name"], call.get("id") or "", call["args"])
        update.setdefault("messages", []).extend([*turn.answers, *outcome.messages])
        control.new_messages += len(turn.answers) + len(outcome.messages)
        new = outcome.context_variables
        context = turn.context if new is None else new
        if new is None:
            pass
        elif self.runtime.schema is not None or any(key not in new for key in turn.context):
            # A tool deleted a key in place (Swarm hands tools the live dict), or a typed
            # context's reducers already ran on the tools' updates (and the tool runner
            # validated it): the step's context replaces the channel's, not merged again.
            update["context_variables"] = Overwrite(new)
            if self.runtime.schema is not None:
                self.runtime.schema.keep(control, new)
        else:
            update["context_variables"] = new
        if outcome.handoffs and self.runtime.fan_out is not None:  # Parallel, or "all"
            turn.goto = self.runtime.fan_out(turn, outcome, context)
            if turn.goto is not None:
                return None, None, None
        return self._next_agent(turn, outcome, context)

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
        if target is not None and not isinstance(target, Agent):  # a Parallel nobody can run
            reanswer(turn.update.get("messages", []), call_id, _NO_FAN_OUT.format(agent.name))
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

    def _chosen(
        self,
        turn: Turn,
        choosers: Sequence[Any],
        target: Agent | None,
        context: dict[str, Any],
        call_id: str | None,
    ) -> tuple[Agent | None, str | None, str | None]:
        """Each middleware's ``next_agent`` hook, in order, on who takes over (graph/core/
        middleware.py's ``Takeover``: a route picks one, a hand-back resolves ``CALLER``); the
        handing call's answer is reworded where a hook says so."""
        from .middleware import Takeover

        control = turn.control
        added = turn.update.setdefault("messages", [])
        takeover = Takeover(
            turn.agent,
            target,
            context,
            turn.state["messages"],
            added,
            lambda name: self.runtime.agent_named(name, control),
            call_id=call_id,
        )
        for m in choosers:
            changed = m.next_agent(takeover)
            if changed is None:
                continue
            if changed.answer is not None:  # reworded now: a later hook may hand elsewhere
                reanswer(added, changed.call_id, changed.answer, only_if=changed.answer_if)
                changed = changed.replace(answer=None, answer_if=None)
            takeover = changed
        return takeover.target, takeover.label, takeover.call_id


_NO_FAN_OUT = (
    "Error: {} cannot fan out: this graph was built without the branch and join nodes (a "
    "tool that returns Parallel must name Parallel in its code, or set "
    "tool.__swarmgraph_fans_out__ = True). Carry on with the conversation yourself."
)


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
