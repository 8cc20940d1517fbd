"""Human approval of risky tool calls: the calls ``@needs_approval`` holds, and the decisions.

A tool marked with ``needs_approval`` (graph/features/decisions.py, the middleware that acts on
the mark) never runs when the model asks for it. The agent node
runs the reply's other calls and leaves the marked ones unanswered; the next step of the same
agent finds them (:func:`waiting_calls`) and asks for decisions: ``Swarm.run`` stops and returns
them in ``Response.pending``, the compiled graph calls LangGraph's ``interrupt()``. Because the
waiting calls are read from the conversation itself (an assistant message whose tool calls have
no answer yet), resuming needs no stored state: pass the messages back with ``approvals``.

Why ours beside LangChain's ``HumanInTheLoopMiddleware``: it runs on a swarm agent, and on the
compiled graph with a checkpointer its ``interrupt()`` is an approval like ours
(docs/middleware.md). ``@needs_approval`` does what it cannot: ``Swarm.run``, which keeps no
state between calls, stops and resumes (the waiting calls are read from the conversation); the
reply's other calls run meanwhile; a marked call goes through the effect ledger
(graph/features/effects.py), so a process that dies mid-call never runs it twice silently; and
a decision is settled once, across processes (a second one gets
:class:`~swarmgraph.graph.features.errors.ApprovalAlreadyDecided`).

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from swarmgraph.graph import needs_approval
    >>> @needs_approval
    ... def process_refund(order_id: int) -> str:
    ...     '''Refund an order.'''
    ...     return f"Refunded {order_id}."
    >>> reply = AIMessage("", name="Refunds", tool_calls=[
    ...     {"name": "process_refund", "args": {"order_id": 7}, "id": "c1"}])
    >>> held = waiting_calls([HumanMessage("refund 7"), reply], [process_refund])
    >>> held.pending
    [PendingApproval(id='c1', agent='Refunds', tool='process_refund', arguments={'order_id': 7})]
    >>> denial("c1", "process_refund", "not without a receipt").content
    'Error: denied: not without a receipt'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from ..core.marks import is_marked
from ..core.messages import open_calls
from ..core.run_control import RunState
from ..core.schema import tool_spec
from ..core.state import current_branch


class EffectOutcome(Protocol):
    """What approvals read of an effect ledger's outcome (``effects.EffectOutcome``)."""

    @property
    def status(self) -> str: ...

    @property
    def attempt(self) -> int: ...


#: A human's answer to one waiting call: run it (True), deny it (False), or deny with a reason.
Decision = bool | str

#: ``@needs_approval``'s mark (graph/core/marks.py): the run stops for a human's decision
#: before the call. graph/features/decisions.py sets it and registers what it brings.
APPROVAL_MARK = "__swarmgraph_needs_approval__"


def requires_approval(func: Any) -> bool:
    """Whether ``func`` was marked with ``needs_approval`` (also through ``__wrapped__``)."""
    return is_marked(func, APPROVAL_MARK)


class PendingApproval(BaseModel):
    """One tool call waiting for a decision; ``id`` is the model's tool call id.

    ``in_doubt``: an effect call that started and never finished (its process died while it
    ran): it may or may not have happened. Deciding it: ``True`` runs it again, ``False``
    answers the model with an error, a string answers it as the tool's result ("it did:
    refunded").
    """

    model_config = ConfigDict(frozen=True)

    id: str
    agent: str
    tool: str
    arguments: Any = None
    in_doubt: bool = False

    def __repr_args__(self) -> Any:
        # in_doubt only when set: a plain approval prints as it always has.
        return [(k, v) for k, v in super().__repr_args__() if k != "in_doubt" or v]

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # ...and dumps as it always has (interrupt payloads, JSON of pending calls).
        dumped = handler(self)
        if not self.in_doubt:
            dumped.pop("in_doubt", None)
        return dumped

    def describe(self) -> str:
        """``process_refund(order_id=7)``: how a prompt shows the call to a human."""
        if isinstance(self.arguments, dict):
            args = ", ".join(f"{k}={v!r}" for k, v in self.arguments.items())
        else:
            args = "" if self.arguments is None else repr(self.arguments)
        return f"{self.tool}({args})"


_NOTHING_KNOWN: Mapping[str, EffectOutcome] = MappingProxyType({})


class HearsAsked(Protocol):
    """Who is told of calls that wait for a human (the run's trace: graph/features/tracing.py's
    ``TracedRun``)."""

    def asked(self, calls: list[PendingApproval]) -> None: ...


@dataclass
class ApprovalsRun(RunState):
    """This feature's state for one run (``RunControl.own(ApprovalsRun)``): the decisions the
    caller gave (``Swarm.run(approvals=)``, checked; or a resumed graph's), and the calls the
    run stopped for, by parallel branch (``None``: the main run). One branch waiting for a
    human stops no other branch.

    Example:
        >>> from swarmgraph.graph.core.run_control import RunControl
        >>> control = RunControl()
        >>> approvals = control.own(ApprovalsRun)
        >>> approvals.awaiting() is None, control.turns_left()
        (True, True)
        >>> approvals.wait([], None)
        >>> approvals.awaiting(), control.turns_left()
        ([], False)
    """

    given: dict[str, Any] = field(default_factory=dict)
    waiting: dict[str | None, list[PendingApproval]] = field(default_factory=dict)

    def halts(self) -> bool:
        return self.waiting.get(current_branch()) is not None

    def awaiting(self) -> list[PendingApproval] | None:
        """The calls this branch (or the main run) stopped for: ``Swarm.run`` returns them as
        ``Response.pending``; no node of the branch goes on after it."""
        return self.waiting.get(current_branch())

    def wait(self, calls: list[PendingApproval], heard_by: HearsAsked | None) -> None:
        """Stop this branch (or the main run) for ``calls``; ``heard_by`` (the run's trace, if
        any) hears of it."""
        self.waiting[current_branch()] = calls
        if heard_by is not None:
            heard_by.asked(calls)

    def waiting_under(self, branch: str) -> bool:
        """Whether branch ``branch`` (or a branch nested in it) stopped for approval."""
        return any(
            key is not None and (key == branch or key.startswith(f"{branch}/"))
            for key in self.waiting
        )


class WaitingCalls(NamedTuple):
    """The unanswered calls of the conversation's last assistant message."""

    reply: AIMessage  # the assistant message that asked for them
    calls: list[ToolCall]  # every unanswered call, in the reply's order
    pending: list[PendingApproval]  # those that wait for a decision (approval, or in doubt)
    #: What an effect ledger holds for some of them, by call id (done: answered from it).
    known: Mapping[str, EffectOutcome] = _NOTHING_KNOWN


def as_pending(reply: AIMessage, calls: Sequence[ToolCall]) -> list[PendingApproval]:
    """``calls`` of ``reply`` as :class:`PendingApproval` s."""
    sender = reply.name or ""
    return [
        PendingApproval(id=c.get("id") or "", agent=sender, tool=c["name"], arguments=c["args"])
        for c in calls
    ]


def waiting_calls(
    messages: Sequence[BaseMessage], functions: Sequence[Callable[..., Any]]
) -> WaitingCalls | None:
    """The approval-marked calls the conversation ends on, or ``None``.

    A conversation whose unanswered calls need no approval is not waiting (``None``).
    """
    found = open_calls(messages)
    return None if found is None else held_calls(found, functions)


def held_calls(
    found: tuple[AIMessage, list[ToolCall]],
    functions: Sequence[Callable[..., Any]],
    known: Mapping[str, EffectOutcome] = _NOTHING_KNOWN,
) -> WaitingCalls | None:
    """:func:`waiting_calls` for the ``(reply, unanswered calls)`` :func:`open_calls` found.

    ``known``: what an effect ledger holds for some of the calls, by call id. A call it holds
    as done waits for nothing (its stored answer is used); one it holds as started is in doubt
    and waits for a decision, marked or not. Not ``None`` when any call waits or is known.
    """
    reply, calls = found
    marked = _marked_names(functions)
    pending: list[PendingApproval] = []
    for call, shown in zip(calls, as_pending(reply, calls), strict=True):
        outcome = known.get(shown.id)
        if outcome is not None and outcome.status == "started":
            pending.append(shown.model_copy(update={"in_doubt": True}))
        elif outcome is None and call["name"] in marked:
            pending.append(shown)
    return WaitingCalls(reply, calls, pending, known) if pending or known else None


def hold_marked_calls(
    reply: AIMessage, functions: Sequence[Callable[..., Any]]
) -> tuple[AIMessage, list[ToolCall]]:
    """``reply`` without its approval-marked calls (they run after a decision), and the held
    calls. Unparseable calls stay: they never run, so they need no approval."""
    marked = _marked_names(functions)
    if not marked or not any(c["name"] in marked for c in reply.tool_calls):
        return reply, []
    keep = [c for c in reply.tool_calls if c["name"] not in marked]
    held = [c for c in reply.tool_calls if c["name"] in marked]
    return reply.model_copy(update={"tool_calls": keep}), held


def check_decisions(approvals: Mapping[str, Any] | None) -> dict[str, Decision]:
    """Validate ``approvals={id: True | False | "reason"}``; a clear error for anything else."""
    if approvals is None:
        return {}
    if not isinstance(approvals, Mapping):
        raise TypeError(
            f"approvals must be a dict {{tool_call_id: True | False | 'reason'}}, "
            f"got {type(approvals).__name__}"
        )
    for key, value in approvals.items():
        if not isinstance(key, str):
            raise TypeError(f"approvals: tool call ids are strings, got {key!r}")
        if not isinstance(value, (bool, str)):
            raise TypeError(
                f"approvals[{key!r}]: a decision is True (run it), False (deny it) or a "
                f"reason string (deny it, saying why), got {value!r}"
            )
    return dict(approvals)


def resume_decisions(value: Any, pending: Sequence[PendingApproval]) -> dict[str, Decision]:
    """What ``Command(resume=value)`` decided: ``{id: decision}``, or one decision for all."""
    if isinstance(value, (bool, str)):
        return {p.id: value for p in pending}
    return check_decisions(value)


def split_by_decision(
    held: WaitingCalls, decisions: Mapping[str, Decision]
) -> tuple[AIMessage, list[ToolMessage]]:
    """The reply narrowed to the calls to run now, and the answers of the others: denials,
    and for a call in doubt answered with a string, that string as its result.

    Unmarked unanswered calls run too: the reply asked for them and every call needs an answer.
    """
    run: list[ToolCall] = []
    answered: list[ToolMessage] = []
    in_doubt = {p.id for p in held.pending if p.in_doubt}
    for call in held.calls:
        call_id = call.get("id") or ""
        decision = decisions.get(call_id, True)
        if decision is True:
            run.append(call)
        elif call_id in in_doubt and isinstance(decision, str):  # "it did happen: ..."
            answered.append(ToolMessage(content=decision, tool_call_id=call_id, name=call["name"]))
        else:
            answered.append(denial(call_id, call["name"], decision))
    narrowed = held.reply.model_copy(update={"tool_calls": run, "invalid_tool_calls": []})
    return narrowed, answered


def denial(call_id: str, tool: str, decision: Decision) -> ToolMessage:
    """The tool message a denied call is answered with (the model reads it and goes on)."""
    reason = decision if isinstance(decision, str) and decision.strip() else None
    content = "Error: denied" + (f": {reason}" if reason else " by the user.")
    return ToolMessage(content=content, tool_call_id=call_id, name=tool)


def pending_as_payload(pending: Sequence[PendingApproval]) -> list[dict[str, Any]]:
    """The ``interrupt()`` value: plain dicts, so any checkpointer can store it
    (``in_doubt`` only on a call in doubt, so an approval's payload reads as it always has)."""
    return [p.model_dump() for p in pending]


def payload_pending(value: Any) -> list[PendingApproval]:
    """The calls an ``interrupt()`` value of :func:`pending_as_payload` asks about (what an
    trace of a compiled graph reads back from the thread); none for a value that is not
    one (another interrupt: a LangGraph member's own).

    Example:
        >>> asked = [PendingApproval(id="r1", agent="Refunds", tool="refund")]
        >>> [p.id for p in payload_pending(pending_as_payload(asked))], payload_pending("why?")
        (['r1'], [])
    """
    from pydantic import ValidationError

    if not isinstance(value, list):
        return []
    try:
        return [PendingApproval.model_validate(item) for item in value]
    except ValidationError:
        return []


def _marked_names(functions: Sequence[Callable[..., Any]]) -> set[str]:
    return {tool_spec(f).name for f in functions if requires_approval(f)}
