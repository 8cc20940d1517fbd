"""One agent node: a Swarm turn as one graph step.

Read :meth:`AgentNode.step` top-down; the three places the seed's sequence diagram names are:

- **instructions are built** in :meth:`AgentNode._begin` (``agent.instructions``, called with
  the current ``context_variables`` when it is a function), which also picks the model;
- **tools run** in :func:`swarmgraph.graph.tool_calls.execute_tool_calls` (or its async twin),
  called from :meth:`AgentNode.step` / :meth:`AgentNode.astep` once the model replied;
- **the active agent switches** in :meth:`AgentNode._after_tools`, where a tool returned an
  Agent (:meth:`AgentNode._next_agent` also resolves ``CALLER`` and the agent's routes) and
  :meth:`GraphRuntime.switch` sets ``update["active_agent"]``; :meth:`GraphRuntime.next_node`
  then sends the run to that agent's node with ``Command(goto=...)``.

``step`` and ``astep`` are the same lines, one with ``await``: everything else is shared,
and a step's progress lives in one :class:`Turn`.

Control of a running swarm hooks in at those places: ``Agent(history=...)`` narrows the prompt
in ``_begin``; the budget is asked before the model call (``_begin``) and before tools
and handoffs (``_admit``, ``_next_agent``); approval-marked calls are held in ``_admit`` and
decided at the start of the agent's next step (``_decide``: ``Swarm.run`` stops, the compiled
graph calls ``interrupt()``). Contracts are gates the step waits at (``turn.gate``, run by
``_check``/``_acheck`` so async guardrails are awaited): the input guardrails of an agent taking
a user message after ``_begin``, output guardrails on a final answer after ``_replied``, and a
handoff's target's precondition and input guardrails after ``_after_tools``
(:mod:`~swarmgraph.graph.guarded_switch`). A typed context (``runtime.schema``) is validated in
``_begin`` and by the tool runner after every call. Effect tools (graph/effects.py) run through
the run's ledger: ``_begin`` asks it what the calls a conversation ends on left (done: answered
from it; in doubt: decided like an approval), and, before calling the model, whether a step
that died had already asked it (then that reply is used, not a new one).
The run's hooks (``prompt_context``, ``tool_inputs``: what a ``Session`` with long-term
memory supplies) add to the system prompt in ``_begin`` and give the tools their injected
parameters in ``step``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.types import Command, Overwrite, interrupt

from .approvals import (
    Decision,
    WaitingCalls,
    hold_marked_calls,
    open_calls,
    pending_as_payload,
    resume_decisions,
    split_by_decision,
)
from .effect_store import ledger_for
from .effects import (
    EffectCall,
    EffectLedger,
    EffectOutcome,
    RunEffects,
    effect_key,
    is_effect,
    question_key,
    stamp_id,
)
from .guarded_switch import GuardedSwitch, reanswer
from .guardrails import Gate, Trip, call_context, screen_decisions, stop
from .handback import caller_of
from .history_views import view_for
from .messages import to_openai
from .node_names import DYNAMIC_NODE
from .routes import first_route
from .run_control import RunControl, current_control
from .runtime import GraphRuntime, ModelCall
from .state import StateUpdate, SwarmState
from .streamed_arguments import StreamedArguments, listener_for
from .tool_calls import ToolOutcome, aexecute_tool_calls, execute_tool_calls
from .types import CALLER, Agent, AgentFunction

__all__ = ["DYNAMIC_NODE", "AgentNode", "Turn"]

# OpenAI rejects a message "name" with whitespace or <|\\/>; ChatOpenAI sends
# AIMessage.name (our sender) as that field, so unsafe senders are rewritten for it.
_UNSAFE_NAME = re.compile(r"[\s<|\\/>]")


@dataclass
class Turn:
    """One step of one agent's node, filled in as it goes: what :meth:`AgentNode.step` does
    next is what is set here.

    ``call`` and ``prompt``: the model to ask (unset when calls that waited for approval
    resume, or the budget allows no model call). ``ran``: the tool calls to run now, with
    ``tools`` to run them and ``answers`` for the calls that do not run (held, refused,
    denied). ``update``: what the step returns.
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
    #: Checks that must pass before the step goes on (guardrails, a handoff's preconditions).
    gate: Gate | None = None
    #: Go to the active agent's node even after a final answer (a fallback took over).
    forward: bool = False
    #: A typed context whose defaults the state did not hold yet: written with the step.
    filled: bool = False
    #: Where a fan-out sends the step (its branches), instead of a handoff.
    fanned: Command | None = None
    #: The run's effect ledger (None: effect tools run as any tool), and the bookkeeping of
    #: the reply whose calls run now.
    ledger: EffectLedger | None = None
    effects: RunEffects | None = None
    #: The step goes to its own node again before anything runs (a call found in doubt is
    #: asked about in a step of its own: see ``_decide``).
    again: bool = False


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
        control = current_control(config)
        turn = self._begin(state, control, ledger_for(control, config))
        if turn.again:
            return Command(update=turn.update, goto=self.name)
        self._check(turn)  # an agent taking the conversation: its input guardrails
        if turn.call is not None:  # the model speaks
            call = turn.call  # streamed argument text is held to the strict rule
            heard = listener_for(call.runnable, config, call.kwargs)
            reply = call.runnable.invoke(turn.prompt, _with(config, heard), **call.kwargs)
            self._replied(turn, call, heard.strict(reply) if heard and heard.calls else reply)
            self._check(turn)  # a final answer: output guardrails
        if turn.ran is not None:  # tools run
            outcome = execute_tool_calls(
                turn.ran,
                turn.tools,
                turn.context,
                debug=_debug(turn),
                schema=self.runtime.schema,
                effects=turn.effects,
                inputs=self.runtime.inputs_for(turn.agent, turn.control),
            )
            self._after_tools(turn, turn.ran, outcome)
            self._check(turn)  # a handoff: the target's precondition and input guardrails
        return self._next(turn)

    async def astep(self, state: SwarmState, config: RunnableConfig) -> StateUpdate | Command:
        control = current_control(config)
        ledger = ledger_for(control, config)
        if ledger is not None and self._asks_ledger(state, control):
            # Its reads and writes are sync (a database, or a store whose sync calls must not
            # run on the event loop): one thread hop, only for steps that touch it.
            turn = await asyncio.to_thread(self._begin, state, control, ledger)
        else:
            turn = self._begin(state, control, ledger)
        if turn.again:
            return Command(update=turn.update, goto=self.name)
        await self._acheck(turn)
        if turn.call is not None:
            call = turn.call
            heard = listener_for(call.runnable, config, call.kwargs)
            reply = await call.runnable.ainvoke(turn.prompt, _with(config, heard), **call.kwargs)
            self._replied(turn, call, heard.strict(reply) if heard and heard.calls else reply)
            await self._acheck(turn)
        if turn.ran is not None:
            outcome = await aexecute_tool_calls(
                turn.ran,
                turn.tools,
                turn.context,
                debug=_debug(turn),
                schema=self.runtime.schema,
                effects=turn.effects,
                inputs=self.runtime.inputs_for(turn.agent, turn.control),
            )
            self._after_tools(turn, turn.ran, outcome)
            await self._acheck(turn)
        return self._next(turn)

    # -- guardrails and preconditions: the gates a step waits at -------------------------
    @staticmethod
    def _check(turn: Turn) -> None:
        while turn.gate is not None and turn.control.exceeded is None:
            gate, turn.gate = turn.gate, None
            turn.gate = gate.run(turn.control)

    @staticmethod
    async def _acheck(turn: Turn) -> None:
        while turn.gate is not None and turn.control.exceeded is None:
            gate, turn.gate = turn.gate, None
            turn.gate = await gate.arun(turn.control)

    def _entered(self, turn: Turn, trip: Trip | None) -> Gate | None:
        """The verdict on the agent taking a new user message: a trip means its model is never
        called; its fallback's node takes the message (and checks it) instead, or the run stops."""
        if trip is None:
            return None
        turn.call = None
        fallback = turn.agent.on_trip
        if fallback is None:
            stop(turn.control, trip)
        elif self.runtime.switch(turn.agent, fallback, turn.state, turn.update, turn.control):
            turn.forward = True
        return None

    def _answered(self, turn: Turn, trip: Trip | None) -> Gate | None:
        """The verdict on a final answer: a trip hands the conversation to the fallback (its
        own checks first), or stops the run; the answer stays in the conversation."""
        if trip is None:
            return None
        fallback = turn.agent.on_trip
        if fallback is None:
            stop(turn.control, trip)
            return None
        turn.forward = True
        switch = GuardedSwitch(
            self.runtime, turn.agent, turn.state, turn.update, turn.control, turn.context
        )
        return switch.to(fallback, refused=trip)

    def _next(self, turn: Turn) -> StateUpdate | Command:
        """Where the step goes: after tools, where :meth:`GraphRuntime.next_node` says; after a
        fallback took over, its node; else nowhere (the run ends here)."""
        control = turn.control
        if turn.filled and "context_variables" not in turn.update:
            turn.update["context_variables"] = Overwrite(turn.context)
        if turn.fanned is not None:
            return turn.fanned
        if turn.ran is not None:
            return self.runtime.next_node(self.name, turn.update, turn.state, control)
        key = turn.update.get("active_agent")
        if turn.forward and key is not None and control.turns_left():
            return Command(update=turn.update, goto=self.runtime.node_for(key, control))
        return turn.update

    # -- before the model: decisions that were waiting, or the prompt ------------------
    def _begin(self, state: SwarmState, control: RunControl, ledger: EffectLedger | None) -> Turn:
        """The step's plan: run the calls that waited for approval, or ask the model."""
        agent = self._agent_of(state, control)
        context = state.get("context_variables") or {}
        filled = False
        if self.runtime.schema is not None and context is not control.valid_context:
            # The compiled graph's input may lack defaults; a valid one is not checked twice.
            given, context = context, self.runtime.schema.validate(context)
            filled = context != given
            if not filled:
                context = control.valid_context = given
        turn = Turn(agent, control, state, context, filled=filled, ledger=ledger)
        messages = state["messages"]
        # Calls wait for a human only after a reply or tool answers, never after a user message.
        if messages and isinstance(messages[-1], (AIMessage, ToolMessage)):
            waiting = self.runtime.waiting(agent, messages, control, ledger)
            if waiting is not None:  # decide, then run the approved (the reply's owner's tools)
                turn.agent, held = waiting
                self._decide(turn, held)
                return turn
        # A step that died after its model replied (the process, mid-tool) left that reply
        # with the ledger: use it. A new model call would carry new call ids, and the effect
        # would run a second time. (Only an agent with effect tools can have left one.)
        resumed = None
        if ledger is not None and any(map(is_effect, agent.tools)):
            resumed = ledger.in_flight(messages)
        if resumed is not None:
            waiting = self.runtime.waiting(agent, [*messages, resumed], control, ledger)
            if waiting is not None:
                turn.agent, held = waiting
                turn.update = {"messages": [resumed]}
                self._decide(turn, held)
                return turn
        # Instructions are rebuilt on every model call from the current context;
        # missing keys read as "" exactly as in Swarm.
        instructions = agent.instructions
        if callable(instructions):
            instructions = instructions(defaultdict(str, context))
        # The run's prompt context (a Session's long-term recall) is asked per model call and
        # per agent: a handoff changes the agent, and so what it may be told.
        with call_context(context):  # what check_outside_text gives guardrails of recall
            extra = self.runtime.extra_prompt(agent, messages, control)
        if extra:
            instructions = f"{instructions}\n\n{extra}"
        # Agent(history=...) narrows what this agent's model reads; the state stays whole.
        prompt = [SystemMessage(content=instructions), *view_for(agent, messages)]
        if control.debug:  # Swarm prints the plain message dicts it sends
            control.debug_print("Getting chat completion for...:", to_openai(prompt))
        call = self.runtime.model_for(agent, control)
        turn.prompt = [_as_sent(m) for m in prompt] if call.safe_names else prompt
        exceeded = control.ledger.before_model(agent.name, turn.prompt)
        if exceeded is None:
            turn.call = call
        else:  # the budget allows no more model calls: the run halts here
            control.exceeded = exceeded
            control.debug_print(str(exceeded))
        # A user message: the agent takes the conversation (a run's first agent, a resumed
        # Session's); handoffs into it were checked where they switched.
        if agent.input_guardrails and messages and isinstance(messages[-1], HumanMessage):
            taking = {"messages": messages, "context_variables": context}
            turn.gate = Gate(agent, "entry", taking, partial(self._entered, turn), requires=False)
        return turn

    def _asks_ledger(self, state: SwarmState, control: RunControl) -> bool:
        """Whether this step's plan reads or writes the effect ledger: its agent has effect
        tools, or the conversation ends on calls not answered yet (of any agent)."""
        messages = state["messages"]
        last = messages[-1] if messages else None
        if isinstance(last, (AIMessage, ToolMessage)) and open_calls(messages) is not None:
            return True
        return any(map(is_effect, self._agent_of(state, control).tools))

    def _agent_of(self, state: SwarmState, control: RunControl) -> Agent:
        """The agent this step runs: the node's own (the run's object of it, under Swarm), or
        for the dynamic node whichever unforeseen agent is active."""
        if self.agent is None:
            return self.runtime.agent_for(state.get("active_agent"), control)
        if control.agents is not None:  # the run's own Agent objects (Swarm)
            return control.agents[self.name]
        return self.agent

    def _decide(self, turn: Turn, held: WaitingCalls) -> None:
        """The calls to run now and the denials into ``turn``; nothing when ``Swarm.run`` must
        stop (it returns ``Response.pending``).

        With a ledger, decisions go through it first: one recorded earlier is used (nobody is
        asked twice), one given now is recorded (the first decision of a question wins; a
        later one from another turn raises ``ApprovalAlreadyDecided``). Calls it holds as done
        are answered from it; a call in doubt approved again runs as its next attempt. The
        compiled graph asks about a call found in doubt in a step of its own: the returned
        update goes back to this node first (see ``EffectLedger.asked``)."""
        control, agent, ledger = turn.control, turn.agent, turn.ledger
        effects = self._effects(turn, held.reply)
        effects.known.update({effect_key(i, held.reply.id): o for i, o in held.known.items()})
        given = dict(control.approvals or {})
        questions = self._questions(held, effects, given)
        decisions = {**given, **self._settled(ledger, questions, given)}
        missing = [p for p in held.pending if p.id not in decisions]
        if missing and control.stop_for_approval:
            # Several branches of a fan-out may each stop for one: keep every call.
            control.awaiting = [*(control.awaiting or []), *held.pending]
            return
        if missing and ledger is not None:
            unasked = [p for p in missing if p.in_doubt and not ledger.asked(questions[p.id][0])]
            if unasked:  # asked in a fresh step, so no earlier answer LangGraph replays fits it
                turn.again = True
                return
        while missing:  # the compiled graph: ask through LangGraph (needs a checkpointer)
            answers = resume_decisions(interrupt(pending_as_payload(missing)), missing)
            decisions.update({**answers, **self._settled(ledger, questions, answers)})
            missing = [p for p in held.pending if p.id not in decisions]
        for pending in held.pending:
            known = held.known.get(pending.id)
            if pending.in_doubt and known is not None and decisions[pending.id] is True:
                effects.attempts[questions[pending.id][1].key] = known.attempt + 1
        decisions = screen_decisions(agent, decisions, turn.context, held.calls)
        ran, answered = split_by_decision(held, decisions)
        doubted = {p.id for p in held.pending if p.in_doubt}
        for message in answered:
            call_id, content = message.tool_call_id, str(message.content)
            control.ledger.tool_denied(agent.name, message.name or "", call_id, content)
            if call_id in doubted:  # settled: a later look finds it answered
                call = questions[call_id][1]
                failed = content.startswith("Error:")
                effects.after(call, EffectOutcome("done", content, error=failed))
        turn.update.setdefault("messages", [])
        turn.effects = effects
        self._admit(turn, ran, agent.tools, hold=False)
        turn.answers[:0] = answered

    @staticmethod
    def _questions(
        held: WaitingCalls, effects: RunEffects, given: dict[str, Decision]
    ) -> dict[str, tuple[str, EffectCall]]:
        """What each decision answers, by call id: "may it run?" for a call waiting for
        approval, "what about attempt n?" for one in doubt, and "may it run?" for a call the
        caller decides that the ledger already holds (decided and run by someone else: the
        ledger refuses the second decision)."""
        questions: dict[str, tuple[str, EffectCall]] = {}
        for pending in held.pending:
            call = effects.call(pending.id, pending.tool, pending.arguments)
            known = held.known.get(pending.id) if pending.in_doubt else None
            attempt = known.attempt if known is not None else None
            questions[pending.id] = (question_key(call.key, attempt), call)
        for tool_call in held.calls:
            call_id = tool_call.get("id") or ""
            if call_id in given and call_id not in questions and call_id in held.known:
                call = effects.call(call_id, tool_call["name"], tool_call.get("args"))
                questions[call_id] = (question_key(call.key), call)
        return questions

    @staticmethod
    def _settled(
        ledger: EffectLedger | None,
        questions: dict[str, tuple[str, EffectCall]],
        given: dict[str, Decision],
    ) -> dict[str, Decision]:
        """Every decision the ledger holds for ``questions`` once ``given`` is recorded, by
        call id (nothing without a ledger: the given decisions are all there is)."""
        if ledger is None or not questions:
            return {}
        answers = {questions[i][0]: d for i, d in given.items() if i in questions}
        settled = ledger.settle({q: call for q, call in questions.values()}, answers)
        return {i: settled[q] for i, (q, _) in questions.items() if q in settled}

    def _effects(self, turn: Turn, reply: AIMessage) -> RunEffects:
        """The effect bookkeeping of ``reply``'s calls: the conversation before it, the agent
        that asked, the run's ledger."""
        if turn.ledger is None:  # nothing is recorded: no conversation to hand it
            return RunEffects(None, reply, (), turn.agent)
        messages = [*turn.state["messages"], *turn.update.get("messages", ())]
        history = messages
        for index in range(len(messages) - 1, -1, -1):  # the reply is the tail, or not there
            if messages[index] is reply or (reply.id and messages[index].id == reply.id):
                history = messages[:index]
                break
        control = turn.control
        return RunEffects(
            turn.ledger,
            reply,
            history,
            turn.agent,
            resolve=lambda name: self.runtime.agent_named(name, control),
        )

    def _admit(
        self, turn: Turn, reply: AIMessage, tools: list[AgentFunction], *, hold: bool = True
    ) -> None:
        """``turn.ran``: ``reply`` narrowed to the calls that run now; ``turn.answers`` for
        those that do not: approval-marked calls are held (left unanswered), calls past the
        budget are refused."""
        held: list[ToolCall] = []
        if turn.effects is None:
            turn.effects = self._effects(turn, reply)
        if hold:
            reply, held = hold_marked_calls(reply, tools)
        turn.tools = tools
        calls = reply.tool_calls
        room, bound = turn.control.ledger.tool_allowance(turn.agent.name, len(calls))
        if len(calls) <= room:
            turn.ran = reply
            return
        assert bound is not None
        turn.control.exceeded = bound
        # The run stops here: held calls are answered too, so every call has its answer.
        turn.answers = [
            ToolMessage(content=f"Error: {bound}", tool_call_id=c.get("id") or "", name=c["name"])
            for c in [*calls[int(room) :], *held]
        ]
        turn.ran = reply.model_copy(update={"tool_calls": calls[: int(room)]})

    # -- after the model answered ---------------------------------------------------
    def _replied(self, turn: Turn, call: ModelCall, reply: Any) -> None:
        """Book the reply (sender, usage, the turn's update); when it asks for tools (and
        tools run), admit its calls."""
        agent, control = turn.agent, turn.control
        if not isinstance(reply, AIMessage):
            reply = AIMessage(content=str(getattr(reply, "content", reply)))
        if reply.tool_calls and turn.ledger is not None:
            stamp_id(reply)  # its calls are named by it in the ledger
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
            control.debug_print("Ending turn.")
            if agent.output_guardrails and not asks:
                answered = {
                    "messages": [*turn.state["messages"], reply],
                    "context_variables": turn.context,
                }
                turn.gate = Gate(agent, "output", answered, partial(self._answered, turn))

    def _after_tools(self, turn: Turn, ran: AIMessage, outcome: ToolOutcome) -> None:
        """Book the tool results into the update and, when a tool (or a route) hands off,
        switch the active agent (through the target's checks: ``turn.gate``)."""
        agent, control, state, update = turn.agent, turn.control, turn.state, turn.update
        for tool_call in ran.tool_calls:
            control.ledger.tool_called(
                agent.name, tool_call["name"], tool_call.get("id") or "", tool_call["args"]
            )
        added = update.setdefault("messages", [])
        added.extend([*turn.answers, *outcome.messages])
        control.new_messages += len(turn.answers) + len(outcome.messages)
        context = turn.context
        new_context = outcome.context_variables
        if new_context is not None:
            if self.runtime.schema is not None or any(key not in new_context for key in context):
                # A tool deleted a key in place (Swarm hands tools the live dict), or a typed
                # context's reducers already ran on the tools' updates: the channel's reducer
                # would merge (or reduce) again, so the step's context replaces it.
                update["context_variables"] = Overwrite(new_context)
            else:
                update["context_variables"] = new_context
            context = new_context
            if self.runtime.schema is not None:  # the tool runner validated it
                control.valid_context = new_context
        if outcome.handoffs and self.runtime.fan_out is not None:  # Parallel, or "all"
            turn.fanned = self.runtime.fan_out(turn, outcome, context)
            if turn.fanned is not None:
                return
        target, label, call_id = self._next_agent(turn, outcome, context)
        if target is not None:
            switch = GuardedSwitch(
                self.runtime, agent, state, update, control, context, label=label, call_id=call_id
            )
            turn.gate = switch.to(target)

    def _next_agent(
        self, turn: Turn, outcome: ToolOutcome, context: dict[str, Any]
    ) -> tuple[Agent | None, str | None, str | None]:
        """Who takes over after this step's tools: ``(agent, route label or None, the
        transfer's tool call id or None)``.

        A tool's handoff first (``CALLER`` resolved to the agent that handed off to this
        one), else the first route whose condition holds. The budget is checked by the
        switch itself (:meth:`GraphRuntime.switch`).
        """
        agent, control = turn.agent, turn.control
        if control.exceeded is not None:  # a budget stopped the run (refused calls, above)
            return None, None, None
        target, label, call_id = outcome.handoff, None, outcome.handoff_call
        if target is not None and not isinstance(target, Agent):  # a Parallel nobody can run
            reanswer(turn.update.get("messages", []), call_id, _NO_FAN_OUT.format(agent.name))
            target = None
        if target is CALLER:
            added = turn.update.get("messages", [])
            caller = caller_of([*turn.state["messages"], *added])
            target = self.runtime.agent_named(caller, control)
            if target is None:
                reanswer(
                    added,
                    call_id,
                    f"Error: nobody handed the conversation to {agent.name}, so there is no "
                    "caller to return to. Carry on with the conversation yourself.",
                )
            else:  # Swarm's handoff answer names the agent, not the placeholder
                reanswer(
                    added,
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


def _debug(turn: Turn) -> Any:
    return turn.control.debug_print if turn.control.debug else None


_NO_FAN_OUT = (
    "Error: {} cannot fan out: this graph was built without the branch and join nodes (a "
    "tool that returns Parallel must name Parallel in its code, or set "
    "tool.__swarmgraph_fans_out__ = True). Carry on with the conversation yourself."
)


def _with(config: RunnableConfig, handler: StreamedArguments | None) -> RunnableConfig:
    """``config`` with ``handler`` among its callbacks (a copy: LangGraph's stays as it is)."""
    return config if handler is None else merge_configs(config, {"callbacks": [handler]})


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
