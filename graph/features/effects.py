"""Tools whose side effect must happen at most once: ``@effect``, and the ledger the engine asks.

A tool marked ``effect`` (graph/features/decisions.py, the middleware that acts on the mark;
and every ``@needs_approval`` tool) pays, sends, deletes: running
it twice is a bug nobody can undo. When a run carries an :class:`EffectLedger`
(``Session`` gives every run one; a compiled graph with a store gets one from it, see
:mod:`swarmgraph.graph.features.effect_store`), it is asked around each such call, in the one
place tools run (:mod:`swarmgraph.graph.core.tool_calls`), through :class:`RunEffects`: the
core's ``CallRecords`` (graph/core/runtime.py), which the approvals-and-effects middleware
(graph/features/decisions.py's ``hold_calls``) hands the tool runner as ``Turn.records``:

- ``before(call, turn)``: record the call as **started**, together with the turn so far (the
  assistant message that asked for it), *before* the tool runs; it answers with what an earlier
  attempt of the same call left (``None``: nothing, run it);
- ``after(call, outcome)``: record it **done**, with the answer the model reads, right after.

A call that stops at its first ``interrupt()`` (on a compiled graph) is recorded **paused**
instead: nothing after the question ran, so the resumed graph runs it again from its start
(:meth:`RunEffects.paused`). A retry, a resume or a replay asks ``prior`` first, for the
calls the conversation ends on:
a ``done`` call is answered with its stored result and not run; a ``started`` one (the process
died while it ran) is **in doubt** and is never run again silently: it comes back as a pending
approval with ``in_doubt=True``. Approving it runs it again, denying answers the model with an
error, a string answers it as the tool's result. ``settle`` records one decision per question
(:func:`question_key`: "may it run?" for an approval, "did attempt n happen?" for a call in
doubt); the first wins, a later one from another turn gets
:class:`~swarmgraph.graph.features.errors.ApprovalAlreadyDecided`, and a recorded decision is used
without asking again.

A call is named by its tool call id *and* the id of the assistant message that asked for it
(:func:`effect_key`): models that number their calls ``call_0``, ``call_1``... every reply
never make two calls one. A tool may take ``idempotency_key: str``: injected like
``context_variables`` (hidden from the model), stable per conversation and call, for an
external API's own de-duplication.

Without a ledger (a stateless ``Swarm.run``) an effect tool runs when the model asks, as any
tool does: there is nowhere to remember that it ran.

Example:
    >>> from swarmgraph.graph import effect
    >>> @effect
    ... def charge(order_id: int, idempotency_key: str) -> str:
    ...     '''Charge an order.'''
    ...     return f"charged {order_id} once ({len(idempotency_key)}-char key)"
    >>> is_effect(charge), effect_key("call_0", "run-1")
    (True, 'call_0@run-1')
    >>> outcome = EffectOutcome("done", value="charged 7 once")
    >>> EffectOutcome.from_record(outcome.as_record()) == outcome
    True
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, runtime_checkable

from langchain_core.messages import AIMessage, BaseMessage

from ..core.marks import is_marked
from ..core.messages import open_calls
from ..core.schema import tool_spec
from ..core.state import current_branch
from .approvals import (
    APPROVAL_MARK,
    Decision,
    WaitingCalls,
    held_calls,
)

if TYPE_CHECKING:
    from ..core.run_control import RunControl
    from ..core.runtime import GraphRuntime
    from ..core.types import Agent

__all__ = [
    "IDEMPOTENCY_PARAM",
    "EffectCall",
    "EffectLedger",
    "EffectOutcome",
    "FanOutSoFar",
    "RunEffects",
    "TurnSoFar",
    "call_idempotency_key",
    "default_idempotency_key",
    "effect_key",
    "is_effect",
    "question_key",
    "recorded",
    "run_ledger",
    "stamp_id",
    "waiting",
]

#: ``@effect``'s mark (graph/core/marks.py): the call runs at most once (recorded before and
#: after, with a ledger). graph/features/decisions.py sets it and registers what it brings.
EFFECT_MARK = "__swarmgraph_effect__"
#: The parameter an effect tool gets its idempotency key in (graph/core/injected.py).
IDEMPOTENCY_PARAM = "idempotency_key"


def is_effect(func: Any) -> bool:
    """Whether ``func`` is marked ``effect`` or ``needs_approval`` (through wrappers).

    Example:
        >>> from swarmgraph.graph import needs_approval
        >>> is_effect(needs_approval(lambda: "x")), is_effect(lambda: "x")
        (True, False)
    """
    return is_marked(func, EFFECT_MARK) or is_marked(func, APPROVAL_MARK)


def default_idempotency_key(key: str, scope: str = "") -> str:
    """32 hex digits, stable for one call (``key``) in one conversation (``scope``): the
    injected ``idempotency_key`` of a tool whose run keeps no ledger that names it (a ledger
    scopes it to its conversation).

    Example:
        >>> default_idempotency_key("c1@r1", "conv-7") == default_idempotency_key("c1@r1", "conv-7")
        True
        >>> len(default_idempotency_key("c1@r1"))
        32
    """
    return hashlib.sha256(f"{scope}\x00{key}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def call_idempotency_key(call_id: str, tool: str, arguments: Any, records: Any) -> str:
    """The ``idempotency_key`` one call gets (how the tool runner makes it, through
    graph/core/injected.py): from the reply's effect bookkeeping (:class:`RunEffects`, the
    run's ledger names the call in its conversation), or from the call id alone without it.

    Example:
        >>> call_idempotency_key("c1", "charge", {}, None) == default_idempotency_key("c1")
        True
    """
    if records is None:
        return default_idempotency_key(call_id)
    return cast("RunEffects", records).idempotency_key(records.call(call_id, tool, arguments))


def effect_key(call_id: str, reply_id: str | None) -> str:
    """The ledger's name for one call: its tool call id at the assistant message that asked.

    Example:
        >>> effect_key("call_1", "run-9f")
        'call_1@run-9f'
    """
    return f"{call_id}@{reply_id or ''}"


def question_key(key: str, in_doubt: int | None = None) -> str:
    """What a decision answers: whether call ``key`` may run, or (``in_doubt=n``) what to do
    about its attempt ``n``, which may or may not have happened.

    Example:
        >>> question_key("c1@r1"), question_key("c1@r1", in_doubt=1)
        ('c1@r1', 'c1@r1#1')
    """
    return key if in_doubt is None else f"{key}#{in_doubt}"


def stamp_id(reply: AIMessage) -> AIMessage:
    """``reply`` with an id (a model that sets none gets one now; LangGraph keeps it), so its
    calls have names that survive storage."""
    if not reply.id:
        reply.id = f"run-{uuid.uuid4().hex}"
    return reply


@dataclass(frozen=True)
class EffectCall:
    """One call of an effect tool. ``attempt`` is 1, or more for a call in doubt that a human
    approved to run again."""

    key: str
    call_id: str
    tool: str
    arguments: Any
    agent: str
    attempt: int = 1


@dataclass(frozen=True)
class EffectOutcome:
    """What the ledger holds for a call: ``started`` (it may or may not have happened),
    ``paused`` (it stopped at its first ``interrupt()``, before any answer reached it: it runs
    again from its start when the graph resumes, as LangGraph runs any paused tool), or ``done``
    with the answer the model read, the context update and the handoff (an agent's name) the
    call made. ``error``: the answer is an ``Error:`` (the tool raised, or a human denied the
    call in doubt)."""

    status: Literal["started", "paused", "done"]
    value: str = ""
    context_variables: dict[str, Any] | None = None
    handoff: str | None = None
    error: bool = False
    attempt: int = 1

    def as_record(self) -> dict[str, Any]:
        """The JSON a store keeps.

        Example:
            >>> EffectOutcome("started").as_record()
            {'status': 'started', 'attempt': 1}
        """
        record: dict[str, Any] = {"status": self.status, "attempt": self.attempt}
        if self.status == "done":
            record["value"] = self.value
            if self.context_variables:
                record["context_variables"] = self.context_variables
            if self.handoff is not None:
                record["handoff"] = self.handoff
            if self.error:
                record["error"] = True
        return record

    @classmethod
    def from_record(cls, value: Any) -> EffectOutcome:
        """The outcome a stored record holds (anything unreadable counts as started: never
        run again on a guess)."""
        if not isinstance(value, dict) or value.get("status") != "done":
            attempt = value.get("attempt", 1) if isinstance(value, dict) else 1
            paused = isinstance(value, dict) and value.get("status") == "paused"
            return cls("paused" if paused else "started", attempt=int(attempt))
        return cls(
            "done",
            value=str(value.get("value", "")),
            context_variables=value.get("context_variables") or None,
            handoff=value.get("handoff"),
            error=bool(value.get("error", False)),
            attempt=int(value.get("attempt", 1)),
        )


@dataclass
class FanOutSoFar:
    """Where a fan-out is, for a call inside one of its branches: what a retry after a crash
    needs to pick the fan-out up again instead of asking the model (whose new reply would
    carry new call ids, so the effect would run twice). ``messages``: the main conversation
    the branches started from (it ends on the fan-out reply); ``context``: the context at the
    fan-out; ``agent``: the agent that fanned out; ``branches()``: every branch of the fan-out
    as a resumable record (``Response.branches``' shape, ``status: "waiting"`` with its
    messages up to the call that runs now), read when the call is recorded, so the last
    record written holds every branch's latest progress."""

    messages: list[BaseMessage]
    context: dict[str, Any]
    agent: Agent
    branches: Callable[[], Sequence[Mapping[str, Any]]]


@dataclass
class TurnSoFar:
    """What ``before`` saves with a call: the conversation as the engine has it, ending with
    the assistant message that asked for the call (every call in it, held ones too), the
    working context, and the agent that asked."""

    messages: list[BaseMessage]
    context: dict[str, Any]
    agent: Agent
    #: The parallel branch the call runs in (graph/features/branches.py), ``None`` in the main
    #: conversation: ``messages`` are then the branch's own, not the turn's.
    branch: str | None = None
    #: In a branch of a top-level fan-out: the turn's own progress (see :class:`FanOutSoFar`).
    fan_out: FanOutSoFar | None = None


@runtime_checkable
class EffectLedger(Protocol):
    """Where a run records its effect calls; see the module docstring.

    ``before`` and ``after`` wrap one call; ``prior`` reads what is recorded for calls a
    conversation ends on (``key -> outcome``, only those recorded). ``settle`` takes the
    pending questions (:func:`question_key` -> call) and the decisions the caller gives now
    (by question) and returns every decision there is, by question: those recorded earlier,
    and the given ones, recorded now; a question another turn decided first raises
    :class:`~swarmgraph.graph.features.errors.ApprovalAlreadyDecided` when a decision is given
    for it.
    ``asked`` says whether a question was put to a human in an earlier step, and notes that
    it is now (a compiled graph asks through ``interrupt()``, whose answers LangGraph replays
    by position when a step runs again: a question found in a step that ran again is asked in
    a step of its own). ``in_flight`` finds the assistant message a step that died had asked
    for, given the conversation before it (a compiled graph re-runs the step from its
    checkpoint: it must not ask the model again). ``idempotency_key`` names a call for an
    external API.
    """

    def before(self, call: EffectCall, turn: TurnSoFar) -> EffectOutcome | None: ...
    def after(self, call: EffectCall, outcome: EffectOutcome) -> None: ...
    def prior(self, calls: Sequence[EffectCall]) -> dict[str, EffectOutcome]: ...
    def settle(
        self, questions: Mapping[str, EffectCall], given: Mapping[str, Decision]
    ) -> dict[str, Decision]: ...
    def asked(self, question: str) -> bool: ...
    def in_flight(self, messages: Sequence[BaseMessage]) -> AIMessage | None: ...
    def idempotency_key(self, call: EffectCall) -> str: ...


def run_ledger(control: RunControl) -> EffectLedger | None:
    """The effect ledger the caller handed the run (``RunHooks.effects``: ``Session``'s), if
    any. The core carries it untyped; this feature is the one that reads it.

    Example:
        >>> from swarmgraph.graph.core.run_control import RunControl
        >>> run_ledger(RunControl()) is None
        True
    """
    return cast("EffectLedger | None", control.hooks.effects)


@dataclass
class RunEffects:
    """The effect bookkeeping of one reply's tool calls (what ``execute_tool_calls`` needs: it
    is a :class:`~swarmgraph.graph.core.tool_calls.CallRecords`, the core's word for it).

    ``reply`` is the whole assistant message (held calls too), ``history`` the conversation
    before it, ``ledger`` the run's (``None``: effect tools run as any tool, and
    ``idempotency_key`` is derived from the call alone). ``attempts``: calls in doubt that a
    human approved to run again, by key, with the attempt they start. ``known``: outcomes
    already read (``prior``), by key, kept up to date as calls finish.
    """

    ledger: EffectLedger | None
    reply: AIMessage
    history: Sequence[BaseMessage]
    agent: Agent
    attempts: dict[str, int] = field(default_factory=dict)
    known: dict[str, EffectOutcome] = field(default_factory=dict)
    #: The agent a stored handoff names (``None``: unknown here, the handoff is dropped).
    resolve: Callable[[str], Agent | None] = field(default=lambda name: None)
    #: In a parallel branch: records the branch's progress, given its messages so far and
    #: its context, and says where the fan-out is (graph/features/branches.py ``progress_of``).
    progress: Callable[[list[BaseMessage], dict[str, Any]], FanOutSoFar | None] | None = None

    def ledgered(self, func: Any) -> bool:
        """Whether calls of ``func`` go through the ledger."""
        return self.ledger is not None and is_effect(func)

    def call(self, call_id: str, tool: str, arguments: Any) -> EffectCall:
        key = effect_key(call_id, self.reply.id)
        attempt = self.attempts.get(key, 1)
        return EffectCall(key, call_id, tool, arguments, self.agent.name, attempt)

    def idempotency_key(self, call: EffectCall) -> str:
        if self.ledger is None:
            return default_idempotency_key(call.key)
        return self.ledger.idempotency_key(call)

    def before(self, call: EffectCall, context: dict[str, Any]) -> EffectOutcome | None:
        """Record ``call`` as started (with the turn so far); what an earlier attempt left."""
        if self.ledger is None:
            return None
        known = self.known.get(call.key)
        if (
            known is not None
            and known.status != "paused"
            and (known.status == "done" or known.attempt >= call.attempt)
        ):
            return known  # read already (a resumed call): no write to find it out again
        branch = current_branch()
        messages = [*self.history, self.reply]
        fan_out = None
        if branch is not None and self.progress is not None:
            fan_out = self.progress(messages, context)
        turn = TurnSoFar(messages, context, self.agent, branch, fan_out)
        prior = self.ledger.before(call, turn)
        if prior is None:
            self.known[call.key] = EffectOutcome("started", attempt=call.attempt)
        return prior

    def after(self, call: EffectCall, outcome: EffectOutcome) -> None:
        if self.ledger is not None:
            self.ledger.after(call, outcome)
            self.known[call.key] = outcome

    def done(
        self,
        call: EffectCall,
        value: str,
        context_variables: dict[str, Any] | None,
        handoff: str | None,
        error: bool,
    ) -> None:
        """Record ``call`` done (the tool runner's word, right after it ran): the answer the
        model read, the context change a replay applies again, the handoff it made."""
        outcome = EffectOutcome("done", value, context_variables, handoff, error, call.attempt)
        self.after(call, outcome)

    def paused(self, call: EffectCall) -> None:
        """``call`` stopped at an ``interrupt()`` (the tool runner's word). Recorded paused, so
        the resumed graph runs it again from its start, only when no ``interrupt()`` of this
        step has been answered yet: the tool cannot have got past one, and what it did before
        its first is what LangGraph runs again for any tool. After an answered one, the effect
        may lie between the two questions: it stays started, in doubt, as after a crash."""
        if self.ledger is None or _answered_interrupts():
            return
        self.after(call, EffectOutcome("paused", attempt=call.attempt))


def _answered_interrupts() -> bool:
    """Whether an ``interrupt()`` of the running graph step has been answered (LangGraph's
    per-task scratchpad holds its resume values: private, so anything unreadable counts as
    answered, which keeps the call in doubt rather than run again on a guess)."""
    from langgraph.config import get_config

    try:
        scratchpad = get_config()["configurable"]["__pregel_scratchpad"]
        return bool(scratchpad.resume)
    except (KeyError, RuntimeError, AttributeError, TypeError):
        return True


def recorded(
    ledger: EffectLedger, reply: AIMessage, calls: Sequence[Any], tools: Sequence[Any]
) -> dict[str, EffectOutcome]:
    """What ``ledger`` holds for the effect calls among ``calls`` (unanswered calls of
    ``reply``), by call id; the tools say which calls are effects.

    Example:
        >>> class Nothing:  # a ledger that holds nothing
        ...     def prior(self, calls): return {}
        >>> recorded(Nothing(), AIMessage("", id="r1"), [], [])
        {}
    """
    effects = {tool_spec(f).name for f in tools if is_effect(f)}
    asked = [
        EffectCall(
            effect_key(c.get("id") or "", reply.id),
            c.get("id") or "",
            c["name"],
            c.get("args"),
            reply.name or "",
        )
        for c in calls
        if c["name"] in effects
    ]
    if not asked:
        return {}
    found = ledger.prior(asked)
    # a paused call waits for nothing of ours: the resumed step runs it again (RunEffects.paused)
    return {
        call.call_id: found[call.key]
        for call in asked
        if call.key in found and found[call.key].status != "paused"
    }


def waiting(
    runtime: GraphRuntime,
    agent: Agent,
    messages: Sequence[BaseMessage],
    control: RunControl | None,
    ledger: EffectLedger | None = None,
) -> tuple[Agent, WaitingCalls] | None:
    """The calls ``messages`` end on that wait for a decision (approval-marked, or in doubt)
    or that ``ledger`` holds an outcome for, and the agent whose tools they are (``agent``, or
    the sender of the reply that asked for them); ``None`` for a run none of whose tools is
    marked (``runtime.marked``).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from swarmgraph.graph.models import ModelResolver
        >>> from swarmgraph.graph.core.runtime import GraphRuntime
        >>> from swarmgraph.graph.core.types import Agent
        >>> from swarmgraph.graph import needs_approval
        >>> refunds = Agent(name="Refunds", functions=[needs_approval(lambda: "refunded")])
        >>> runtime = GraphRuntime({"Refunds": refunds}, ModelResolver(), 10)
        >>> reply = AIMessage("", name="Refunds", tool_calls=[
        ...     {"name": "<lambda>", "args": {}, "id": "c1"}])
        >>> owner, held = waiting(runtime, refunds, [HumanMessage("go"), reply], None)
        >>> owner.name, [p.id for p in held.pending]
        ('Refunds', ['c1'])
    """
    from ..core.run_control import RunControl

    if not runtime.marked(control or RunControl()):  # no tool of this run waits or is recorded
        return None
    found = open_calls(messages)  # the usual case after tools ran: every call answered
    if found is None:
        return None
    reply = found[0]
    owner = agent
    if reply.name not in (None, agent.name):
        owner = runtime.agent_named(reply.name, control) or agent
    tools = runtime.tools_of(owner)
    known = recorded(ledger, reply, found[1], tools) if ledger is not None else {}
    held = held_calls(found, tools, known)
    return None if held is None else (owner, held)
