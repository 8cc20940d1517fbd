"""Approvals and effects in an agent's step: the calls a conversation ends on that wait for a
decision (``@needs_approval``, or an ``@effect`` call in doubt), decided through the run's
effect ledger and the caller (``Swarm.run(approvals=)``) or LangGraph's ``interrupt()``.

A middleware, :class:`DecisionsMiddleware`: the marks :func:`needs_approval` and :func:`effect`
(defined here) and the injected ``idempotency_key`` bring it (:func:`marked_middleware`,
registered here with graph/core/marks.py and graph/core/injected.py), so it joins
only a run one of whose tools is marked (``RunControl.marked``), and a swarm without marked
tools never loads this module. It acts at the
two moments of a step the core offers any middleware (graph/core/middleware.py): its
``before_step`` hook (:func:`decide_waiting`) runs before the model is asked, and its
``hold_calls`` hook holds a reply's approval-marked calls (``approvals.hold_marked_calls``) for
the next step to decide and hands the tool runner the reply's effect bookkeeping
(:func:`effects_of`, ``Turn.records``). Its state for a step is typed: ``Turn.own(DecisionStep)``.

Example:
    >>> from swarmgraph.graph import Agent, ScriptedChatModel, Swarm, scripted_tool_call
    >>> @needs_approval
    ... def refund(order_id: int) -> str:
    ...     '''Refund an order.'''
    ...     return f"refunded {order_id}"
    >>> swarm = Swarm(chat_model=ScriptedChatModel([
    ...     scripted_tool_call("refund", {"order_id": 7}, id="c1"), "Done."]))
    >>> agent = Agent(name="Refunds", functions=[refund])
    >>> asked = [{"role": "user", "content": "refund 7"}]
    >>> stopped = swarm.run(agent, asked)
    >>> [p.tool for p in stopped.pending]
    ['refund']
    >>> done = swarm.run(agent, asked + stopped.messages, approvals={"c1": True})
    >>> [m["content"] for m in done.messages]
    ['refunded 7', 'Done.']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langgraph.types import Command, interrupt

from ..core.injected import InjectedParam, register_injected
from ..core.marks import loaded, mark, register_mark
from ..core.messages import open_calls
from ..core.run_control import RunControl
from ..core.runtime import GraphRuntime
from ..core.state import SwarmState, current_branch
from ..core.types import Agent, AgentFunction
from .approvals import (
    APPROVAL_MARK,
    ApprovalsRun,
    Decision,
    PendingApproval,
    WaitingCalls,
    check_decisions,
    hold_marked_calls,
    pending_as_payload,
    resume_decisions,
    split_by_decision,
)
from .effect_store import ledger_for
from .effects import (
    EFFECT_MARK,
    IDEMPOTENCY_PARAM,
    EffectCall,
    EffectLedger,
    EffectOutcome,
    RunEffects,
    call_idempotency_key,
    effect_key,
    is_effect,
    question_key,
    run_ledger,
    stamp_id,
)
from .effects import waiting as waiting_in
from .guardrails import screen_decisions

if TYPE_CHECKING:
    from ..core.runtime import StepStart, Turn
    from .tracing import TracedRun

#: ``StepStart.admit``: narrow a reply to the calls that run now (graph/core/node.py).
Admit: TypeAlias = "Callable[[Turn, AIMessage, list[AgentFunction]], None]"

__all__ = [
    "DecisionStep",
    "DecisionsMiddleware",
    "asks_ledger",
    "checked_approvals",
    "decide",
    "decide_waiting",
    "effect",
    "effects_of",
    "marked_middleware",
    "needs_approval",
]

F = TypeVar("F", bound=Callable[..., Any])


def decide_waiting(runtime: GraphRuntime, turn: Turn, admit: Admit, node: str) -> bool:
    """Plan ``turn`` (a step of node ``node``) around the calls its conversation ends on that
    wait for a decision (the reply's owner's tools), or around the reply a step that died
    left with the ledger; False when there are none (the model is asked as usual)."""
    state, control, ledger = turn.state, turn.control, _ledger(turn)
    messages, agent = state["messages"], turn.agent
    # Calls wait for a human only after a reply or tool answers, never after a user message.
    if messages and isinstance(messages[-1], (AIMessage, ToolMessage)):
        waiting = waiting_in(runtime, agent, messages, control, ledger)
        if waiting is not None:  # decide, then run the approved
            turn.agent, held = waiting
            decide(runtime, turn, held, admit, node)
            return True
    # A step that died after its model replied (the process, mid-tool) left that reply
    # with the ledger: use it. A new model call would carry new call ids, and the effect
    # would run a second time. (Only an agent with effect tools can have left one.)
    if ledger is None or not runtime.has_marked_tool(agent):
        return False
    resumed = ledger.in_flight(messages)
    if resumed is None:
        return False
    waiting = waiting_in(runtime, agent, [*messages, resumed], control, ledger)
    if waiting is None:
        return False
    turn.agent, held = waiting
    turn.update = {"messages": [resumed]}
    decide(runtime, turn, held, admit, node)
    return True


@dataclass
class DecisionStep:
    """This feature's state for one step (``Turn.own(DecisionStep)``): the run's effect ledger
    (the one ``Session`` gave, or the compiled graph's store for this thread; ``None``: effect
    tools run as any tool), found at the step's start, and the graph's runtime."""

    ledger: EffectLedger | None = None
    runtime: GraphRuntime | None = None


def _ledger(turn: Turn) -> EffectLedger | None:
    """The step's effect ledger (:meth:`DecisionsMiddleware.before_step` finds it)."""
    found = turn.state_of(DecisionStep)
    return None if found is None else found.ledger


class DecisionsMiddleware(AgentMiddleware):
    """Approvals and effects as a middleware: installed for a run whose tools are marked
    (:func:`marked_middleware`; ``RunControl.marked``), it acts at the two
    moments of a step the core gives for it (graph/core/middleware.py): ``before_step`` answers
    the calls the conversation ends on that wait for a decision, or picks up the reply a step
    that died left with the ledger (:func:`decide_waiting`), and ``hold_calls`` holds a reply's
    approval-marked calls for the next step to decide, and hands the tool runner the reply's
    effect bookkeeping (:func:`effects_of`). LangChain's ``HumanInTheLoopMiddleware`` asks
    about a call through ``interrupt()`` only; this one also stops ``Swarm.run`` (which keeps
    no state to resume from) with ``Response.pending``, and keeps the decisions and the
    effects' outcomes in a ledger, so a call runs at most once across crashes and retries.

    Example:
        >>> from swarmgraph.graph.core.middleware import MiddlewareStack
        >>> stack = MiddlewareStack([DecisionsMiddleware()], [])
        >>> len(stack.step_starts), len(stack.holders)
        (1, 1)
    """

    async def before_step(self, start: StepStart) -> bool:
        turn = start.turn
        ledger = ledger_for(turn.control, start.config)
        mine = turn.own(DecisionStep)
        mine.ledger, mine.runtime = ledger, start.runtime
        if ledger is not None and asks_ledger(turn.agent, turn.state):
            # Its reads and writes are sync (a database, or a store whose sync calls must not
            # run on the event loop): off the loop, only for steps that touch it.
            return bool(
                await start.io.off_loop(
                    decide_waiting, start.runtime, turn, start.admit, start.node
                )
            )
        return decide_waiting(start.runtime, turn, start.admit, start.node)

    def hold_calls(
        self, turn: Turn, reply: AIMessage, tools: list[AgentFunction]
    ) -> tuple[AIMessage, list[ToolCall]]:
        mine = turn.state_of(DecisionStep)
        if turn.records is None and mine is not None and mine.runtime is not None:
            if reply.tool_calls and mine.ledger is not None:
                stamp_id(reply)  # its calls are named by it in the ledger
            turn.records = effects_of(mine.runtime, turn, reply)
        return hold_marked_calls(reply, tools)


def asks_ledger(agent: Agent, state: SwarmState) -> bool:
    """Whether this step's plan reads or writes the effect ledger: its agent has effect
    tools, or the conversation ends on calls not answered yet (of any agent)."""
    messages: Sequence[BaseMessage] = state["messages"]
    last = messages[-1] if messages else None
    if isinstance(last, (AIMessage, ToolMessage)) and open_calls(messages) is not None:
        return True
    return any(map(is_effect, agent.tools))


def decide(runtime: GraphRuntime, turn: Turn, held: WaitingCalls, admit: Admit, node: str) -> None:
    """The calls to run now and the denials into ``turn``; nothing when ``Swarm.run`` must
    stop (it returns ``Response.pending``).

    With a ledger, decisions go through it first: one recorded earlier is used (nobody is
    asked twice), one given now is recorded (the first decision of a question wins; a
    later one from another turn raises ``ApprovalAlreadyDecided``). Calls it holds as done
    are answered from it; a call in doubt approved again runs as its next attempt. The
    compiled graph asks about a call found in doubt in a step of its own: the step goes back
    to its node (``node``) first, ``turn.goto`` (see ``EffectLedger.asked``)."""
    control, agent, ledger = turn.control, turn.agent, _ledger(turn)
    effects = effects_of(runtime, turn, held.reply)
    stored = cast("Mapping[str, EffectOutcome]", held.known)  # the ledger's own outcomes
    effects.known.update({effect_key(i, held.reply.id): o for i, o in stored.items()})
    approvals = control.own(ApprovalsRun)
    given = dict(approvals.given)  # Swarm.run(approvals=), checked
    questions = _questions(held, effects, given)
    decisions = {**given, **_settled(ledger, questions, given)}
    missing = [p for p in held.pending if p.id not in decisions]
    if missing and control.swarm_run:
        # Several branches of a fan-out may each stop for one: keep every call.
        approvals.wait([*(approvals.awaiting() or []), *held.pending], _traced())
        return
    if missing and ledger is not None:
        unasked = [p for p in missing if p.in_doubt and not ledger.asked(questions[p.id][0])]
        if unasked:  # asked in a fresh step, so no earlier answer LangGraph replays fits it
            turn.goto = Command(update=turn.update, goto=node)
            return
    while missing:  # the compiled graph: ask through LangGraph (needs a checkpointer)
        answers = resume_decisions(interrupt(pending_as_payload(missing)), missing)
        decisions.update({**answers, **_settled(ledger, questions, answers)})
        missing = [p for p in held.pending if p.id not in decisions]
    for pending in held.pending:
        known = held.known.get(pending.id)
        if pending.in_doubt and known is not None and decisions[pending.id] is True:
            effects.attempts[questions[pending.id][1].key] = known.attempt + 1
    # A reason a person typed is outside text: it meets the agent's input guardrails first.
    decisions = screen_decisions(agent, decisions, turn.context, held.calls)
    ran, answered = split_by_decision(held, decisions)
    doubted = {p.id for p in held.pending if p.in_doubt}
    for message in answered:
        call_id, content = message.tool_call_id, str(message.content)
        # a call a human denied: on the trajectory, not counted as a tool call
        denied = {"agent": agent.name, "kind": "tool", "name": message.name or ""}
        control.ledger.book(agent.name, {**denied, "id": call_id, "denied": content}, {})
        if call_id in doubted:  # settled: a later look finds it answered
            call = questions[call_id][1]
            failed = content.startswith("Error:")
            effects.after(call, EffectOutcome("done", content, error=failed))
    turn.update.setdefault("messages", [])
    turn.records = effects
    admit(turn, ran, runtime.tools_of(agent))  # its middleware's too; none held: decided
    turn.answers[:0] = answered


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


@lru_cache(maxsize=1)  # stateless: one for every run, so the stacks that hold it are shared
def marked_middleware() -> tuple[DecisionsMiddleware]:
    """What a run with a tool marked ``@needs_approval`` or ``@effect`` (or taking an
    ``idempotency_key``) gets: one :class:`DecisionsMiddleware`, the same object every time.

    Example:
        >>> marked_middleware() is marked_middleware()
        True
    """
    return (DecisionsMiddleware(),)


# The marks are set here, beside the middleware they bring, and not in approvals.py or
# effects.py: this module reads those two, so a mark defined there could reach this middleware
# only through an import circle.
register_mark(APPROVAL_MARK, marked_middleware)
register_mark(EFFECT_MARK, marked_middleware)
register_injected(
    InjectedParam(
        IDEMPOTENCY_PARAM,
        "a key that stays the same for this one call in this conversation, for an external "
        "API's own de-duplication (every run gives it: graph/features/effects.py)",
        make=call_idempotency_key,
        brings=marked_middleware,
    )
)


def needs_approval(func: F) -> F:
    """Mark a tool function: the run stops for a human's decision before it is called
    (graph/features/approvals.py).

    Usable as a decorator or as ``needs_approval(func)``; the function itself is unchanged.

    Example:
        >>> from swarmgraph.graph.features.approvals import requires_approval
        >>> def delete_account(user_id: int) -> str:
        ...     return "deleted"
        >>> requires_approval(needs_approval(delete_account))
        True
    """
    return mark(func, APPROVAL_MARK)


def effect(func: F) -> F:
    """Mark a tool whose side effect must happen at most once (a payment, an email;
    graph/features/effects.py).

    With a ledger (``Session``, or a compiled graph with a store) the call is recorded before
    it runs and after; a retry never runs it again, and a call whose process died while it ran
    comes back for a human's decision (``PendingApproval.in_doubt``). Usable as a decorator
    or as ``effect(func)``; the function itself is unchanged.

    Example:
        >>> from swarmgraph.graph.features.effects import is_effect
        >>> def refund(order_id: int) -> str:
        ...     return "refunded"
        >>> is_effect(effect(refund))
        True
    """
    return mark(func, EFFECT_MARK)


def effects_of(runtime: GraphRuntime, turn: Turn, reply: AIMessage) -> RunEffects:
    """The effect bookkeeping of ``reply``'s calls: the conversation before it, the agent
    that asked, the run's ledger."""
    ledger = _ledger(turn)
    if ledger is None:  # nothing is recorded: no conversation to hand it
        return RunEffects(None, reply, (), turn.agent)
    messages = [*turn.state["messages"], *turn.update.get("messages", ())]
    history = messages
    for index in range(len(messages) - 1, -1, -1):  # the reply is the tail, or not there
        if messages[index] is reply or (reply.id and messages[index].id == reply.id):
            history = messages[:index]
            break
    control = turn.control
    progress = None
    if current_branch() is not None:
        # A call inside a branch records where the fan-out is, for a retry after a crash.
        from .branches import FanOutRun, progress_of

        if control.state_of(FanOutRun) is not None:
            progress = progress_of(runtime, turn)
    return RunEffects(
        ledger,
        reply,
        history,
        turn.agent,
        resolve=lambda name: runtime.agent_named(name, control),
        progress=progress,
    )


def checked_approvals(
    runtime: GraphRuntime,
    agent: Agent,
    history: Sequence[BaseMessage],
    approvals: Mapping[str, bool | str],
    control: RunControl,
    paused: list[PendingApproval] | None = None,
) -> dict[str, bool | str]:
    """``approvals``, checked against the calls the history waits on (or, resuming a fan-out,
    ``paused``: the calls its branches wait on): a decision for a call that is not waiting is
    a clear error (a typo would otherwise be silently ignored). Kept as this feature's state
    for the run (``ApprovalsRun.given``), and returned."""
    decisions = check_decisions(approvals)
    if paused is not None:
        ids = {p.id for p in paused}
    else:
        waiting = waiting_in(runtime, agent, history, control, run_ledger(control))
        ids = set()
        if waiting is not None:  # and calls the ledger holds (decided and run by someone
            ids = {p.id for p in waiting[1].pending} | set(waiting[1].known)  # else: it says so)
    unknown = sorted(set(decisions) - ids)
    if unknown:
        hint = ""
        if (
            paused is None
            and runtime.after_handoffs is not None
            and open_calls(history) is not None
        ):
            hint = (
                " If the run paused inside a parallel branch, pass its branches too: "
                "Swarm.run(..., approvals=..., branches=response.branches)."
            )
        raise ValueError(
            f"approvals: no tool call waits for approval with id {', '.join(map(repr, unknown))}; "
            f"waiting: {sorted(ids) or 'none'}. Pass the messages of the run that stopped "
            f"(history + response.messages) and the ids in response.pending.{hint}"
        )
    control.own(ApprovalsRun).given = decisions
    return decisions


def _traced() -> TracedRun | None:
    """The run's spans when it is traced (graph/features/tracing.py is loaded only then)."""
    tracing = loaded("tracing")
    return None if tracing is None else tracing.traced_run()
